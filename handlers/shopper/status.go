package shopper

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// refreshSteps are the growing pauses, in seconds, between checks of a
// pending payment; the last one repeats.
var refreshSteps = []int{2, 3, 5, 8, 13, 20, 30}

// showStatus is where the provider sends the shopper back: it reads the
// status, shows it, refreshes while pending and offers the signed way back
// to the merchant (docs/integrate.md).
func (h *Steps) showStatus(c echo.Context) error {
	co, err := h.open(c)
	if err != nil {
		return err
	}
	if co.order.Link != "" && co.order.ID == "" {
		// A reusable link's checkout from before its payer's order was
		// made: that order, or the link's door when none was.
		_, mine, err := h.Orders.Ledger.PayerOrder(c.Request().Context(), co.order.Link, order.PayerDigest(co.order.Payer))
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			return c.Redirect(http.StatusSeeOther, links.Route+co.order.Link)
		case err != nil:
			return err
		}
		co.order.ID = mine.OrderID
		if co.token, err = h.Sealer.Seal(co.order, h.Now()); err != nil {
			return err
		}
	}
	attempt, _ := strconv.Atoi(c.QueryParam("n"))
	attempt = max(0, min(attempt, 1000))

	if attempt == 0 && c.QueryParam(ParamVia) == "" {
		// The provider's redirect from the bank (refreshes count on n, the
		// app's own links say via): the shopper was at the bank, whatever
		// status is read next.
		if err := h.Orders.Returned(c.Request().Context(), co.payment()); err != nil {
			return err
		}
	}
	l := h.loc(c)
	view := checkoutviews.StatusPage{Summary: co.summary(l)}
	st, err := h.Orders.StatusOf(c.Request().Context(), co.payment())
	switch {
	case errors.Is(err, payment.ErrOrderChanged):
		return errOrderChanged(err)
	case err != nil:
		return err
	}
	view.Begun = st.Attempt != nil
	status := pisclient.Status("")
	theirs := st.Attempt != nil && !payment.Mine(*st.Attempt, order.PayerDigest(co.order.Payer)) && !st.Paid
	switch {
	case theirs && !st.Final():
		// Another checkout's payment under way: nothing of it is shown.
		view.Begun = false
		view.Kind = checkoutviews.StatusPending
		view.Heading, view.Message = l.T("error.inProgress"), l.T("error.inProgress.text")
		status = pisclient.StatusNotFound
	case !st.Known:
		view.Kind = checkoutviews.StatusChecking
		view.Heading = l.T("status.checking")
		view.Message = l.T("status.checking.text")
	default:
		status = st.Status
		var key string
		view.Kind, key = describeStatus(status)
		view.Heading, view.Message = l.T(key), l.T(key+".text", co.merchant.Name)
	}
	if !status.Final() {
		view.Refresh = refreshSteps[min(attempt, len(refreshSteps)-1)]
		view.RefreshURL = returnPath(co.token, attempt+1)
	}
	switch {
	case status == pisclient.StatusCanceled && theirs:
		// Another checkout's payment ended unpaid: this one may begin.
		view.TryAgainURL = countryURL(co.token, false)
	case status == pisclient.StatusCanceled && st.Attempt != nil:
		// A new payment may be made now, at this bank or another.
		view.TryAgainURL = banksURL(co.token, st.Attempt.Country, "")
	}
	back, err := h.wayBackURL(co, status)
	if err != nil {
		return err
	}
	view.WayBackURL = back
	view.Page = h.page(c, view.Heading)
	view.Page.Scripts = []string{h.Assets.StatusJS}
	return web.Render(c, http.StatusOK, checkoutviews.Status(view))
}

// wayBackURL is the signed way back to the merchant with the order's status
// (UNKNOWN while it cannot be read).
func (h *Steps) wayBackURL(co checkout, status pisclient.Status) (templ.SafeURL, error) {
	if co.order.Link != "" {
		return h.receiptURL(co)
	}
	s := string(status)
	if s == "" {
		s = "UNKNOWN"
	}
	back, err := co.order.WayBack(co.merchant, s, h.Now())
	return templ.SafeURL(back), err
}

// errorWayBack is the way back to the merchant from an error page of a
// checkout, with the order's status as the ledger and the provider tell it,
// or UNKNOWN while they cannot (the ledger not answering); none for an order
// the shop changed, whose id is another sum's.
func (h *Steps) errorWayBack(c echo.Context) templ.SafeURL {
	co := checkoutOf(c)
	if co == nil || co.merchant == nil || h.Orders == nil {
		return ""
	}
	// The request's own deadline has ended by the time its error is told.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), 5*time.Second)
	defer cancel()
	status := pisclient.Status("")
	// Asking a ledger that does not answer would only wait for it.
	if !h.Outage.Known() {
		st, err := h.Orders.StatusOf(ctx, co.payment())
		if errors.Is(err, payment.ErrOrderChanged) {
			return ""
		}
		if err == nil && st.Known {
			status = st.Status
		}
	}
	back, err := h.wayBackURL(*co, status)
	if err != nil {
		return ""
	}
	return back
}

// describeStatus tells which of the shopper's kinds a status is, and the
// catalog key of its words (docs/provider.md says what each status means).
// A status nobody documented is "processing", never an error.
func describeStatus(s pisclient.Status) (kind, key string) {
	switch {
	case s.Pending():
		return checkoutviews.StatusPending, "status.pending"
	case s == pisclient.StatusAccepted:
		return checkoutviews.StatusAccepted, "status.accepted"
	case s.Paid():
		return checkoutviews.StatusPaid, "status.paid"
	case s == pisclient.StatusCanceled:
		return checkoutviews.StatusCanceled, "status.canceled"
	}
	return checkoutviews.StatusProcessing, "status.processing"
}
