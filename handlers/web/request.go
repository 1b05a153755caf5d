package web

import (
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Audience is who reads a route's answers: people (HTML pages) or programs
// (JSON). Each route is registered for one (handlers/routes.go), and errors
// are told in its way.
type Audience int

const (
	People Audience = iota
	Programs
)

// Request is what the app knows of the request being served, worked out
// once before any guard or handler runs (the shopper's Describe): handlers
// read its fields instead of string keys.
type Request struct {
	// Lang speaks the person's language.
	Lang *i18n.Localizer
	// Merchant is whose page this is, once known (a checkout, a link whose
	// signature held); nil on the app's own pages.
	Merchant *merchant.Merchant
	// Custom is the look: the merchant's customization, or a designer's
	// draft in a sandbox preview.
	Custom *rules.Customization
	// FormAction lists where the page's forms may lead (CSP form-action).
	FormAction string
	// Audience is who reads the route's answers.
	Audience Audience
	// Step is the audience's own description of the request (the
	// shopper's open checkout), and StepErr why there is none.
	Step    any
	StepErr error
}

// ctxRequest is the one key under which the request's description lives.
const ctxRequest = "request"

// RequestOf returns the description of the request being served; an empty
// one, in English, if none was made.
func RequestOf(c echo.Context) *Request {
	if r, ok := c.Get(ctxRequest).(*Request); ok {
		return r
	}
	return &Request{Lang: i18n.New("en"), FormAction: "'self'"}
}

// SetRequest makes r the description of the request being served.
func SetRequest(c echo.Context, r *Request) { c.Set(ctxRequest, r) }

// Localizer is the language of the request.
func Localizer(c echo.Context) *i18n.Localizer { return RequestOf(c).Lang }

// ForMerchant makes the page being served m's: framable by m's
// frame_ancestors and in m's look, or custom's when set.
func (r *Request) ForMerchant(m *merchant.Merchant, custom *rules.Customization) {
	if m == nil {
		return
	}
	if custom == nil {
		custom = m.Customization
	}
	r.Merchant, r.Custom = m, custom
}
