package handlers

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

// audience is who reads a route's answers: people (HTML pages) or programs
// (JSON). Each route is registered for one (routes.go), and errors are told
// in its way.
type audience int

const (
	forPeople audience = iota
	forPrograms
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

// handleError is the app's one error handler: it maps an error (classify),
// logs server faults at Error and the caller's at Warn, and answers in the
// way of the route's audience, never with internal error text.
func (h *Handler) handleError(err error, c echo.Context) {
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
	if requestOf(c).audience == forPrograms {
		h.tellProgram(c, f.api)
		return
	}
	h.tellPerson(c, f.page)
}

// tellPerson answers with an error page in the shopper's language.
func (h *Handler) tellPerson(c echo.Context, pe *pageError) {
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
func (h *Handler) tellProgram(c echo.Context, ae *web.APIError) {
	if err := web.TellProgram(c, ae); err != nil {
		h.log(c).Error("api error answer failed", "err", err)
	}
}
