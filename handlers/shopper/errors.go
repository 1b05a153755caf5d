package shopper

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/views"
)

// failure is an error mapped once, in both the ways it can be told: a page
// for people and a JSON error for programs.
type failure struct {
	page *pageError
	api  *web.APIError
}

func (f failure) status() int { return f.api.Status }

// classify is the one error mapper: our own errors keep their status and
// words, Echo's become their status, anything else is an internal error
// whose text nobody outside sees.
func classify(err error) failure {
	var pe *pageError
	var ae *web.APIError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return failure{page: &pageError{status: ae.Status, key: "error.request"}, api: ae}
	case errors.As(err, &pe):
		_, message := pe.texts(i18n.New("en"))
		return failure{page: pe, api: &web.APIError{Status: pe.status, Code: strings.TrimPrefix(pe.key, "error."), Message: message}}
	case errors.As(err, &he):
		page := &pageError{status: he.Code, key: "error.request"}
		if he.Code == http.StatusNotFound {
			page = errNotFound
		}
		code := strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_"))
		return failure{page: page, api: &web.APIError{Status: he.Code, Code: code, Message: http.StatusText(he.Code)}}
	}
	return failure{page: errInternal, api: &web.APIError{Status: http.StatusInternalServerError, Code: "internal_error", Message: "something went wrong on our side"}}
}

// HandleError is the app's one error handler: it maps an error (classify),
// logs server faults at Error and the caller's at Warn, and answers in the
// way of the route's audience, never with internal error text.
func (h *Steps) HandleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	f := classify(err)
	level := slog.LevelWarn
	if f.status() >= 500 {
		level = slog.LevelError
	}
	h.log(c).Log(c.Request().Context(), level, "request failed",
		"status", f.status(), "method", c.Request().Method, "route", c.Path(), "err", err)
	if requestOf(c).audience == ForPrograms {
		h.tellProgram(c, f.api)
		return
	}
	h.tellPerson(c, f.page)
}

// tellPerson answers with an error page in the shopper's language.
func (h *Steps) tellPerson(c echo.Context, pe *pageError) {
	if c.Request().Method == http.MethodHead {
		c.NoContent(pe.status)
		return
	}
	heading, message := pe.texts(h.loc(c))
	page := views.ErrorPage{
		Page:     h.page(c, heading),
		Status:   pe.status,
		Heading:  heading,
		Message:  message,
		RetryURL: pe.retryURL,
	}
	if co := requestOf(c).checkout; co != nil && co.merchant != nil {
		// Inside a checkout the shopper can always go back to the shop.
		page.WayBackURL, page.ShopName = h.errorWayBack(c), co.merchant.Name
	}
	if err := render(c, pe.status, views.Error(page)); err != nil {
		h.log(c).Error("error page failed", "err", err)
	}
}

// tellProgram answers with {"error": {"code", "message", "fields"}}.
func (h *Steps) tellProgram(c echo.Context, ae *web.APIError) {
	if err := web.TellProgram(c, ae); err != nil {
		h.log(c).Error("api error answer failed", "err", err)
	}
}

// TooMany answers a request over its budget. A shopper's details form comes
// back with everything typed and a word to wait; others get the 429 page
// (or JSON on the API).
func (h *Steps) TooMany(c echo.Context, _ string, err error) error {
	c.Response().Header().Set("Retry-After", "2")
	if c.Path() == RoutePay && c.Request().Method == http.MethodPost {
		if err := h.showPayAgain(c, http.StatusTooManyRequests, "error.tooMany.text"); err == nil {
			return nil
		}
	}
	return &pageError{status: http.StatusTooManyRequests, key: "error.tooMany", err: err}
}

// NewError is an error a person is shown in their language: key names its
// heading in the catalog of package i18n, key+".text" its message; err is
// the cause, for the log only.
func NewError(status int, key string, err error) error {
	return &pageError{status: status, key: key, err: err}
}

// StaffError is an error shown as it is, to staff (the studio is English).
func StaffError(status int, heading, message string) error {
	return &pageError{status: status, heading: heading, message: message}
}
