package handlers

import (
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/views"
)

// refreshSteps are the growing pauses, in seconds, between checks of a
// pending payment; the last one repeats.
var refreshSteps = []int{2, 3, 5, 8, 13, 20, 30}

// showStatus is where the provider sends the shopper back: it reads the
// status, shows it, refreshes while pending and offers the signed way back
// to the merchant (DESIGN.md sections 2.6 and 3).
func (h *Handler) showStatus(c echo.Context) error {
	co, err := h.open(c)
	if err != nil {
		return err
	}
	attempt, _ := strconv.Atoi(c.QueryParam("n"))
	attempt = max(0, min(attempt, 1000))

	view := views.StatusPage{Summary: co.summary()}
	status := pisclient.Status("")
	ps, err := h.PaymentsFor(co.merchant).PaymentStatus(c.Request().Context(), co.merchant.UpstreamOrderID(co.order.ID))
	if err != nil {
		h.Log.Warn("payment status unavailable", "merchant", co.merchant.ID, "err", err)
		view.Kind = views.StatusChecking
		view.Heading = "Still checking your payment"
		view.Message = "We cannot reach the payment service just now. Your payment is not lost: this page keeps checking."
	} else {
		status = ps.Status
		view.Kind, view.Heading, view.Message = describeStatus(status, co.merchant.Name)
	}
	if !status.Final() {
		view.Refresh = refreshSteps[min(attempt, len(refreshSteps)-1)]
		view.RefreshURL = returnPath(co.token, attempt+1)
	}
	wayBackStatus := string(status)
	if wayBackStatus == "" {
		wayBackStatus = "UNKNOWN"
	}
	back, err := co.order.WayBack(co.merchant, wayBackStatus, h.Now())
	if err != nil {
		return err
	}
	view.WayBackURL = templ.SafeURL(back)
	view.Page = h.page(c, view.Heading)
	return render(c, http.StatusOK, views.Status(view))
}

// describeStatus puts a status in a shopper's words (DESIGN.md section 3).
// A status nobody documented is "processing", never an error.
func describeStatus(s pisclient.Status, merchantName string) (kind, heading, message string) {
	switch {
	case s.Pending():
		return views.StatusPending, "Waiting for your bank",
			"Approve the payment in your bank's app or website. This page updates by itself."
	case s == pisclient.StatusAccepted:
		return views.StatusAccepted, "Payment accepted",
			"Your bank accepted the payment and the money is on its way to " + merchantName + "."
	case s.Paid():
		return views.StatusPaid, "Paid",
			"Your payment is complete. " + merchantName + " has received the money."
	case s == pisclient.StatusCanceled:
		return views.StatusCanceled, "Payment cancelled",
			"The payment was cancelled at your bank or not approved in time. Nothing was charged. Go back to " + merchantName + " to try again."
	}
	return views.StatusProcessing, "Your payment is being processed",
		"Your bank is still working on it. This page updates by itself."
}
