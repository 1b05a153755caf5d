package shopper

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// HandleError is the app's one error handler: it maps an error (classify),
// logs server faults at Error and the caller's at Warn, and answers in the
// way of the route's audience, never with internal error text.
func (h *Steps) HandleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	f := web.Classify(err)
	if f.Status() == http.StatusInternalServerError && h.Outage.Down(c, err) {
		// Logged once for the whole outage.
		h.tellOutage(c)
		return
	}
	level := slog.LevelWarn
	if f.Status() >= 500 {
		level = slog.LevelError
	}
	h.log(c).Log(c.Request().Context(), level, "request failed",
		"status", f.Status(), "method", c.Request().Method, "route", c.Path(), "err", err)
	h.tell(c, f)
}

// tell answers a failure in the way of the route's audience.
func (h *Steps) tell(c echo.Context, f web.Failure) {
	if web.RequestOf(c).Audience == web.Programs {
		h.tellProgram(c, f.API)
		return
	}
	h.tellPerson(c, f.Page)
}

// tellPerson answers with an error page in the shopper's language.
func (h *Steps) tellPerson(c echo.Context, pe *web.PageError) {
	if c.Request().Method == http.MethodHead {
		c.NoContent(pe.Status)
		return
	}
	heading, message := pe.Texts(h.loc(c))
	page := checkoutviews.ErrorPage{
		Page:     h.page(c, heading),
		Status:   pe.Status,
		Heading:  heading,
		Message:  message,
		RetryURL: pe.RetryURL,
	}
	if co := checkoutOf(c); co != nil && co.merchant != nil {
		// Inside a checkout the shopper can always go back to the shop.
		page.WayBackURL, page.ShopName, page.Linked = h.errorWayBack(c), co.merchant.Name, co.order.Link != ""
	}
	if err := web.Render(c, pe.Status, checkoutviews.Error(page)); err != nil {
		h.log(c).Error("error page failed", "err", err)
	}
}

// tellProgram answers with {"error": {"code", "message", "fields"}}.
func (h *Steps) tellProgram(c echo.Context, ae *web.APIError) {
	if err := web.TellProgram(c, ae); err != nil {
		h.log(c).Error("api error answer failed", "err", err)
	}
}

// NotFound answers a path no route matches. Under a checkout's own
// address it leads back to the checkout's first step and, as every error
// page of a checkout does, to the shop.
func (h *Steps) NotFound(c echo.Context) error {
	pe := *web.ErrNotFound
	if co := checkoutOf(c); co != nil {
		pe.RetryURL = countryURL(co.token, false)
	}
	return &pe
}

// TooMany answers a request over its budget. A shopper's details form comes
// back with everything typed and a word to wait; others get the 429 page
// (or JSON on the API).
func (h *Steps) TooMany(c echo.Context, _ string, err error) error {
	c.Response().Header().Set("Retry-After", "2")
	if c.Path() == RoutePay && c.Request().Method == http.MethodPost {
		if err := h.showPayAgain(c, http.StatusTooManyRequests, "error.tooMany.text"); answered(err) == nil {
			return nil
		}
	}
	return &web.PageError{Status: http.StatusTooManyRequests, Key: "error.tooMany", Err: err}
}
