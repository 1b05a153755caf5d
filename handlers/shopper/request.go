package shopper

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// checkoutOf is the open checkout of the /c/{token} step being served; nil
// elsewhere, or when the token does not open (checkoutErrOf says why).
func checkoutOf(c echo.Context) *checkout {
	co, _ := web.RequestOf(c).Step.(*checkout)
	return co
}

func checkoutErrOf(c echo.Context) error { return web.RequestOf(c).StepErr }

// Describe works out each request's description before any guard or
// handler runs: its checkout (for a step), its language, its merchant and
// look, where its forms may lead, and its audience (audienceOf its route).
func (h *Steps) Describe(audienceOf func(route string) web.Audience) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return h.describe(next, audienceOf)
	}
}

func (h *Steps) describe(next echo.HandlerFunc, audienceOf func(string) web.Audience) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The description and the checkout it names are made together:
		// one allocation on every request instead of two.
		d := &described{Request: web.Request{FormAction: *h.formAction.Load(), Audience: audienceOf(c.Path())}}
		r := &d.Request
		var checkoutLang string
		if token, ok := stepToken(c); ok {
			co, err := h.openToken(token)
			if err == nil && co.merchant.Disabled() && c.Path() != RouteReturn {
				// Nothing new for a disabled merchant; a payment under way
				// can still be seen to its end. The page leads back to the
				// shop.
				err = errMerchantDisabled(co.merchant)
			}
			if co.merchant != nil {
				d.checkout = co
				r.Step = &d.checkout
			}
			r.StepErr, checkoutLang = err, co.order.Lang
		}
		if r.Audience == web.Programs {
			// Programs are answered in English: no cookie to read.
			r.Lang = i18n.New("en")
		} else {
			r.Lang = i18n.New(h.chooseLanguage(c, checkoutLang))
		}
		if co, ok := r.Step.(*checkout); ok {
			r.ForMerchant(co.merchant, co.order.Theme)
		}
		web.SetRequest(c, r)
		return next(c)
	}
}

// described is a request's description with the checkout it names.
type described struct {
	web.Request
	checkout checkout
}

// stepToken is the token of a shopper's step, the route's :token.
func stepToken(c echo.Context) (string, bool) {
	switch c.Path() {
	case RouteCountry, RouteBanks, RoutePay, RouteReturn, RouteHandoff, RouteUnknownStep:
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

// errMerchantDisabled answers a step of a disabled merchant's checkout.
func errMerchantDisabled(m *merchant.Merchant) error {
	return &web.PageError{Status: http.StatusForbidden, Key: "error.shopGone", Err: errors.New("merchant disabled: " + m.ID)}
}

// openToken opens a sealed order and finds its merchant.
func (h *Steps) openToken(token string) (checkout, error) {
	o, err := h.Sealer.Open(token, h.Now())
	switch {
	case errors.Is(err, order.ErrTokenExpired):
		return checkout{}, &web.PageError{Status: http.StatusGone, Key: "error.checkoutExpired", Err: err}
	case err != nil:
		return checkout{}, &web.PageError{Status: http.StatusNotFound, Key: "error.checkoutInvalid", Err: err}
	}
	m, ok := h.Merchants.Get(o.Merchant)
	if !ok {
		// The order stays, for its language.
		return checkout{order: o}, &web.PageError{Status: http.StatusNotFound, Key: "error.shopGone", Err: errors.New("merchant gone: " + o.Merchant)}
	}
	return checkout{token: token, order: o, merchant: m}, nil
}
