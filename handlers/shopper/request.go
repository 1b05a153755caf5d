package shopper

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/rules"
)

// request is what the app knows of the request being served, worked out
// once by describe before any handler or guard runs: handlers read its
// fields instead of string keys.
type request struct {
	// checkout is the open order of a /c/{token} step; nil elsewhere, or
	// when the token does not open (checkoutErr says why).
	checkout    *checkout
	checkoutErr error
	// lang speaks the shopper's language.
	lang *i18n.Localizer
	// merchant is whose page this is, once known (a checkout, a link whose
	// signature held); nil on the app's own pages.
	merchant *merchant.Merchant
	// custom is the look: the merchant's customization, or a designer's
	// draft in a sandbox preview.
	custom *rules.Customization
	// formAction lists where the page's forms may lead (CSP form-action).
	formAction string
	// audience is who reads the route's answers.
	audience Audience
}

// Audience is who reads a route's answers: people (HTML pages) or programs
// (JSON). Each route is registered for one (handlers/routes.go), and errors
// are told in its way.
type Audience int

const (
	ForPeople Audience = iota
	ForPrograms
)

// AudienceOf is who reads the answers of the request being served.
func AudienceOf(c echo.Context) Audience { return requestOf(c).audience }

// ctxRequest is the one key under which the request's description lives.
const ctxRequest = "request"

// requestOf returns the description of the request being served; an empty
// one, in English, if describe did not run.
func requestOf(c echo.Context) *request {
	if r, ok := c.Get(ctxRequest).(*request); ok {
		return r
	}
	return &request{lang: i18n.New("en"), formAction: "'self'"}
}

// forMerchant makes the page being served m's: framable by m's
// frame_ancestors and in m's look, or custom's when set.
func (r *request) forMerchant(m *merchant.Merchant, custom *rules.Customization) {
	if m == nil {
		return
	}
	if custom == nil {
		custom = m.Customization
	}
	r.merchant, r.custom = m, custom
}

// Describe works out each request's description before any guard or
// handler runs: its checkout (for a step), its language, its merchant and
// look, where its forms may lead, and its audience (audienceOf its route).
func (h *Steps) Describe(audienceOf func(route string) Audience) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return h.describe(next, audienceOf)
	}
}

func (h *Steps) describe(next echo.HandlerFunc, audienceOf func(string) Audience) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := &request{formAction: *h.formAction.Load(), audience: audienceOf(c.Path())}
		var checkoutLang string
		if token, ok := stepToken(c); ok {
			co, err := h.openToken(token)
			if err == nil {
				r.checkout = &co
			}
			r.checkoutErr, checkoutLang = err, co.order.Lang
		}
		if r.audience == ForPrograms {
			// Programs are answered in English: no cookie to read.
			r.lang = i18n.New("en")
		} else {
			r.lang = i18n.New(h.chooseLanguage(c, checkoutLang))
		}
		if co := r.checkout; co != nil {
			r.forMerchant(co.merchant, co.order.Theme)
		}
		c.Set(ctxRequest, r)
		return next(c)
	}
}

// stepToken is the token of a shopper's step, the route's :token.
func stepToken(c echo.Context) (string, bool) {
	switch c.Path() {
	case RouteCountry, RouteBanks, RoutePay, RouteReturn, RouteHandoff:
	default:
		return "", false
	}
	token := c.Param("token")
	if unescaped, err := url.PathUnescape(token); err == nil {
		token = unescaped
	}
	return token, true
}

// chooseLanguage is the one place the language of a request is chosen: the
// switcher's choice (remembered for the shopper's next checkout) or a
// merchant's link's lang; else the checkout's own; else the shopper's
// earlier choice; else their browser's (Accept-Language); else English.
func (h *Steps) chooseLanguage(c echo.Context, checkoutLang string) string {
	if lang, ok := i18n.Base(c.QueryParam(paramLang)); ok {
		if c.Path() != RouteEntry {
			// A link's lang is the checkout's, not the shopper's choice.
			h.remember(c, sessionLang, lang)
		}
		return lang
	}
	if lang, ok := i18n.Base(checkoutLang); ok {
		return lang
	}
	if lang, ok := i18n.Base(h.sessionValue(c, sessionLang)); ok {
		return lang
	}
	return i18n.Negotiate(c.Request().Header.Get("Accept-Language"))
}

// openToken opens a sealed order and finds its merchant.
func (h *Steps) openToken(token string) (checkout, error) {
	o, err := h.Sealer.Open(token, h.Now())
	switch {
	case errors.Is(err, order.ErrTokenExpired):
		return checkout{}, &pageError{status: http.StatusGone, key: "error.checkoutExpired", err: err}
	case err != nil:
		return checkout{}, &pageError{status: http.StatusNotFound, key: "error.checkoutInvalid", err: err}
	}
	m, ok := h.Merchants.Get(o.Merchant)
	if !ok {
		// The order stays, for its language.
		return checkout{order: o}, &pageError{status: http.StatusNotFound, key: "error.shopGone", err: errors.New("merchant gone: " + o.Merchant)}
	}
	return checkout{token: token, order: o, merchant: m}, nil
}
