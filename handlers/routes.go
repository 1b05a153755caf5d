package handlers

import (
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/merchant"
)

// Route paths of DESIGN.md sections 2 and 4. Other programs rely on them.
const (
	RouteEntry        = "/checkout"
	RouteCountry      = "/c/:token"
	RouteBanks        = "/c/:token/banks"
	RoutePay          = "/c/:token/pay"
	RouteReturn       = "/c/:token/return"
	RouteAPILinks     = "/api/v1/links"
	RouteAPIPayment   = "/api/v1/payments/*"
	RouteAPIPayments  = "/api/v1/payments"
	RouteAPIEvents    = "/api/v1/events"
	RouteAPIRedeliver = "/api/v1/events/:id/redeliver"
	RouteHealth       = "/healthz"
	RouteReady        = "/readyz"
	RouteMetrics      = "/metrics"
	RouteStatic       = "/static/*"
	RouteDemoShop     = "/sandbox/shop/return"
	RouteSandbox      = "/sandbox/*"
	SandboxPrefix     = "/sandbox"
)

// Routes registers every route of the app on e. sandbox is the provider
// stand-in, mounted under /sandbox in sandbox mode; nil otherwise.
func (h *Handler) Routes(e *echo.Echo, static http.Handler, sandbox http.Handler) {
	e.HTTPErrorHandler = h.handleError
	e.IPExtractor = ipExtractor(h.TrustedProxies)
	if h.Metrics != nil {
		e.Use(h.Metrics.Middleware)
		e.GET(RouteMetrics, echo.WrapHandler(h.Metrics.Handler()))
		e.HEAD(RouteMetrics, echo.WrapHandler(h.Metrics.Handler()))
	}
	h.guard(e)
	// Every GET route answers HEAD too: load balancers check with it.
	get := func(path string, handler echo.HandlerFunc, m ...echo.MiddlewareFunc) {
		e.GET(path, handler, m...)
		e.HEAD(path, handler, m...)
	}
	e.Use(h.logRequests)
	get(RouteEntry, h.enter)
	get(RouteCountry, h.showCountries, h.switchLanguage)
	get(RouteBanks, h.showBanks, h.switchLanguage)
	get(RoutePay, h.showPay, h.switchLanguage)
	e.POST(RoutePay, h.createPayment)
	get(RouteReturn, h.showStatus, h.switchLanguage)
	e.POST(RouteAPILinks, h.createLink)
	get(RouteAPIPayment, h.showPaymentStatus)
	get(RouteAPIPayments, h.listPayments)
	get(RouteAPIEvents, h.listEvents)
	e.POST(RouteAPIRedeliver, h.redeliverEvent)
	get(RouteStudio, h.showStudio)
	e.POST(RouteStudio, h.updateStudio)
	get(RouteStudioCheck, h.studioCheck)
	get(RouteHealth, h.health)
	get(RouteReady, h.ready)
	get(RouteStatic, echo.WrapHandler(static))
	if sandbox != nil {
		get(RouteDemoShop, h.showDemoShop)
		e.POST(merchant.DemoWebhookPath, h.receiveDemoWebhook)
		e.Any(RouteSandbox, echo.WrapHandler(http.StripPrefix(SandboxPrefix, sandbox)))
	}
}

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

// returnPath is the status page; attempt counts the refreshes so far.
func returnPath(token string, attempt int) string {
	u := "/c/" + url.PathEscape(token) + "/return"
	if attempt > 0 {
		u += "?n=" + strconv.Itoa(attempt)
	}
	return u
}

// ipExtractor reads the shopper's address from X-Forwarded-For only when the
// request comes from one of the trusted proxies; otherwise it is the
// connection's address, so nobody can claim another address by a header.
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
