package shopper

import (
	"net/url"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/logos"
)

// Routes of the shopper's steps. Other programs rely on them: shops send
// shoppers to /checkout (docs/integrate.md) and the provider sends them back
// to the return step.
const (
	RouteEntry   = "/checkout"
	RouteCountry = "/c/:token"
	RouteBanks   = "/c/:token/banks"
	RoutePay     = "/c/:token/pay"
	RouteReturn  = "/c/:token/return"
	// RouteUnknownStep is every other path under a checkout's address: a
	// mistyped or cut link, answered with the 404 page and its ways back.
	RouteUnknownStep = "/c/:token/*"
)

// The URLs of the shopper's steps, built from the token and query values.

// stepPath is the path of the shopper's step serving c, built from its
// route and its token, never from the path the request named; false on any
// other page.
func stepPath(c echo.Context, token string) (string, bool) {
	base := "/c/" + url.PathEscape(token)
	switch c.Path() {
	case RouteCountry:
		return base, true
	case RouteBanks:
		return base + "/banks", true
	case RoutePay:
		return base + "/pay", true
	case RouteReturn:
		return base + "/return", true
	case RouteHandoff:
		return base + "/phone", true
	}
	return "", false
}

func countryURL(token string, choose bool) templ.SafeURL {
	u := "/c/" + url.PathEscape(token)
	if choose {
		u += "?choose=1"
	}
	return templ.SafeURL(u)
}

func banksURL(token, country, query string) templ.SafeURL {
	q := url.Values{"country": {country}}
	if query != "" {
		q.Set("q", query)
	}
	return templ.SafeURL("/c/" + url.PathEscape(token) + "/banks?" + q.Encode())
}

func banksAction(token string) templ.SafeURL {
	return templ.SafeURL("/c/" + url.PathEscape(token) + "/banks")
}

func payURL(token, country, bank string) templ.SafeURL {
	q := url.Values{"country": {country}, "bank": {bank}}
	return templ.SafeURL("/c/" + url.PathEscape(token) + "/pay?" + q.Encode())
}

func payAction(token string) templ.SafeURL {
	return templ.SafeURL("/c/" + url.PathEscape(token) + "/pay")
}

// ParamVia marks the status page's address as the app's own pages lead to
// it (statusPath), apart from the provider's redirect from the bank.
const ParamVia = "via"

// statusPath is the status page as the app's own pages lead to it: the
// phone handoff's result (which the computer's page also polls), a payment
// already under way. Unlike the provider's redirect to returnPath, coming
// this way is no sign that the shopper was at the bank.
func statusPath(token string) string {
	return returnPath(token, 0) + "?" + ParamVia + "=app"
}

// returnPath is the status page; attempt counts the refreshes so far.
func returnPath(token string, attempt int) string {
	u := "/c/" + url.PathEscape(token) + "/return"
	if attempt > 0 {
		u += "?n=" + strconv.Itoa(attempt)
	}
	return u
}

// Router registers a route for one audience (handlers.Routes gives one per
// audience); GET routes answer HEAD too.
type Router interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
}

// Routes registers the shopper's steps for people and the logos for
// programs.
func (h *Steps) Routes(people, programs Router) {
	people.GET(RouteEntry, h.enter)
	people.GET(RouteCountry, h.showCountries, h.switchLanguage)
	people.GET(RouteBanks, h.showBanks, h.switchLanguage)
	people.GET(RoutePay, h.showPay, h.switchLanguage)
	people.POST(RoutePay, h.createPayment)
	people.GET(RouteReturn, h.showStatus, h.switchLanguage)
	people.GET(RouteHandoff, h.showHandoff, h.switchLanguage)
	people.GET(RouteHandoffCode, h.openHandoff)
	people.GET(RoutePaymentLink, h.openLink)
	people.GET(RouteRefund, h.showRefund)
	people.POST(RouteRefund, h.takeRefundAccount)
	programs.GET(logos.Route, h.logos.Serve)
}
