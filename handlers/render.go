package handlers

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/views"
)

// render writes component as the response. It renders into a buffer first,
// so that a failing component gives an error page, not half a page.
func render(c echo.Context, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	header := c.Response().Header()
	header.Set("Cache-Control", "no-store")
	header.Set("Content-Security-Policy", contentSecurityPolicy(c))
	return c.HTMLBlob(status, buf.Bytes())
}

// ctxFrameAncestors holds the origins that may frame the page being served:
// the merchant's frame_ancestors, once the merchant is known.
const ctxFrameAncestors = "frame_ancestors"

// allowFraming lets m's frame_ancestors embed the page being served.
func allowFraming(c echo.Context, m *merchant.Merchant) {
	if m != nil {
		c.Set(ctxFrameAncestors, m.FrameAncestors)
	}
}

// contentSecurityPolicy allows our own styles and scripts, logos over https
// (the provider's) and framing by the merchant's allowed origins only
// (DESIGN.md section 6); a page with no known merchant cannot be framed.
func contentSecurityPolicy(c echo.Context) string {
	ancestors := "'none'"
	if origins, _ := c.Get(ctxFrameAncestors).([]string); len(origins) > 0 {
		ancestors = strings.Join(origins, " ")
	}
	return "default-src 'self'; img-src 'self' https: data:; object-src 'none'; base-uri 'none'; frame-ancestors " + ancestors
}

// pageError is an error a shopper is shown: its heading and message are
// written for them. err, when set, is the cause, for the log only.
type pageError struct {
	status   int
	heading  string
	message  string
	retryURL templ.SafeURL
	err      error
}

func (e *pageError) Error() string {
	if e.err != nil {
		return e.heading + ": " + e.err.Error()
	}
	return e.heading
}

func (e *pageError) Unwrap() error { return e.err }

// Errors a shopper may meet more than once.
var (
	errNotFound = &pageError{status: http.StatusNotFound, heading: "Page not found",
		message: "This address does not lead anywhere. Go back to the shop and start the payment again."}
	errInternal = &pageError{status: http.StatusInternalServerError, heading: "Something went wrong on our side",
		message: "Nothing was charged. Please try again in a moment; if it keeps happening, go back to the shop."}
)

// handleError is the app's one error handler: it maps an error to a status
// and a page, logs server faults at Error and the shopper's at Warn, and never
// shows internal error text.
func (h *Handler) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		h.handleAPIError(err, c)
		return
	}
	pe := errInternal
	var he *echo.HTTPError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &he):
		pe = &pageError{status: he.Code, heading: http.StatusText(he.Code),
			message: "This request cannot be served. Go back to the shop and start the payment again."}
		if he.Code == http.StatusNotFound {
			pe = errNotFound
		}
	}
	level := slog.LevelWarn
	if pe.status >= 500 {
		level = slog.LevelError
	}
	h.Log.Log(c.Request().Context(), level, "request failed",
		"status", pe.status, "method", c.Request().Method, "route", c.Path(), "err", err)
	page := views.ErrorPage{
		Page:     h.page(pe.heading, ""),
		Status:   pe.status,
		Heading:  pe.heading,
		Message:  pe.message,
		RetryURL: pe.retryURL,
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(pe.status)
		return
	}
	if err := render(c, pe.status, views.Error(page)); err != nil {
		h.Log.Error("error page failed", "err", err)
	}
}

// handleAPIError answers an error of the merchants' API as JSON.
func (h *Handler) handleAPIError(err error, c echo.Context) {
	ae := &apiError{status: http.StatusInternalServerError, code: "internal_error", message: "something went wrong on our side"}
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &he):
		ae = &apiError{status: he.Code, code: strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_")), message: http.StatusText(he.Code)}
	}
	level := slog.LevelWarn
	if ae.status >= 500 {
		level = slog.LevelError
	}
	h.Log.Log(c.Request().Context(), level, "api request failed",
		"status", ae.status, "method", c.Request().Method, "route", c.Path(), "err", err)
	if ae.status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
	}
	if err := c.JSON(ae.status, ae.body()); err != nil {
		h.Log.Error("api error answer failed", "err", err)
	}
}

// page is the layout model of a page for merchantName ("" for none known).
func (h *Handler) page(title, merchantName string) views.Page {
	if merchantName == "" {
		merchantName = "Pay by bank"
	}
	return views.Page{Title: title, Merchant: merchantName, Assets: h.Assets}
}
