package handlers

import (
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/health"
	"github.com/paybybank/checkout/merchant"
)

// Route paths of DESIGN.md sections 2 and 4. Other programs rely on them.
const (
	RouteEntry        = "/checkout"
	RouteCountry      = "/c/:token"
	RouteBanks        = "/c/:token/banks"
	RoutePay          = "/c/:token/pay"
	RouteReturn       = "/c/:token/return"
	RouteAPILinks     = api.RouteLinks
	RouteAPIPayment   = api.RoutePayment
	RouteAPIPayments  = api.RoutePayments
	RouteAPIEvents    = api.RouteEvents
	RouteAPIRedeliver = api.RouteRedeliver
	RouteHealth       = "/healthz"
	RouteReady        = "/readyz"
	RouteMetrics      = "/metrics"
	RouteStatic       = "/static/*"
	RouteDemoShop     = merchant.DemoShopPath
	RouteSandbox      = "/sandbox/*"
	SandboxPrefix     = "/sandbox"
)

// Routes registers every route of the app on e, each for its audience.
// sandbox is the provider stand-in, mounted under /sandbox in sandbox mode;
// nil otherwise.
func (h *Handler) Routes(e *echo.Echo, static http.Handler, sandbox http.Handler) {
	e.HTTPErrorHandler = h.handleError
	e.IPExtractor = ipExtractor(h.TrustedProxies)
	// The bank page comes compressed ahead (pagecache.go).
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{Skipper: func(c echo.Context) bool { return c.Path() == RouteBanks }}))
	h.audiences = map[string]audience{}
	people := router{e: e, h: h, audience: forPeople}
	programs := router{e: e, h: h, audience: forPrograms}
	if h.Metrics != nil {
		e.Use(h.Metrics.Middleware)
		programs.get(RouteMetrics, echo.WrapHandler(h.Metrics.Handler()))
	}
	h.guard(e)
	e.Use(h.logRequests)

	// Shoppers: the steps of DESIGN.md section 2.
	people.get(RouteEntry, h.enter)
	people.get(RouteCountry, h.showCountries, h.switchLanguage)
	people.get(RouteBanks, h.showBanks, h.switchLanguage)
	people.get(RoutePay, h.showPay, h.switchLanguage)
	people.post(RoutePay, h.createPayment)
	people.get(RouteReturn, h.showStatus, h.switchLanguage)
	people.get(RouteHandoff, h.showHandoff, h.switchLanguage)
	people.get(RouteHandoffCode, h.openHandoff)
	people.get(RouteStatic, echo.WrapHandler(static))
	programs.get(RouteLogo, h.serveLogo)

	// Merchants' servers: the API (package handlers/api).
	programs.post(RouteAPILinks, h.api.CreateLink)
	programs.get(RouteAPIPayment, h.api.ShowPaymentStatus)
	programs.get(RouteAPIPayments, h.api.ListPayments)
	programs.get(RouteAPIEvents, h.api.ListEvents)
	programs.post(RouteAPIRedeliver, h.api.RedeliverEvent)

	// Designers: the studio.
	people.get(RouteStudio, h.showStudio)
	people.post(RouteStudio, h.updateStudio)
	people.get(RouteStudioCheck, h.studioCheck)

	// Operators: health (package handlers/health).
	checks := health.Checks{Ledger: h.Orders.Ledger, Banks: h.Banks, Log: h.Log}
	programs.get(RouteHealth, checks.Health)
	programs.get(RouteReady, checks.Ready)

	// Sandbox mode: the demo shop and the provider stand-in.
	if sandbox != nil {
		people.get(RouteDemoShop, h.showDemoShop)
		programs.post(merchant.DemoWebhookPath, h.receiveDemoWebhook)
		e.Any(RouteSandbox, echo.WrapHandler(http.StripPrefix(SandboxPrefix, sandbox)))
	}
}

// router registers routes for one audience. Every GET route answers HEAD
// too: load balancers check with it.
type router struct {
	e        *echo.Echo
	h        *Handler
	audience audience
}

func (r router) get(path string, handler echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.h.audiences[path] = r.audience
	r.e.GET(path, handler, m...)
	r.e.HEAD(path, handler, m...)
}

func (r router) post(path string, handler echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.h.audiences[path] = r.audience
	r.e.POST(path, handler, m...)
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
