package handlers

import (
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/brand"
	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/handlers/demoshop"
	"github.com/paybybank/checkout/handlers/health"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
	assets "github.com/paybybank/checkout/static"
)

// Route paths other programs rely on: shops' links and API calls
// (docs/integrate.md), operators' probes and metrics (docs/operate.md).
const (
	RouteStart         = shopper.RouteStart
	RouteEntry         = shopper.RouteEntry
	RouteCountry       = shopper.RouteCountry
	RouteBanks         = shopper.RouteBanks
	RoutePay           = shopper.RoutePay
	RouteReturn        = shopper.RouteReturn
	RouteAPILinks      = api.RouteLinks
	RouteAPIPayment    = api.RoutePayment
	RouteAPIPayments   = api.RoutePayments
	RouteAPIEvents     = api.RouteEvents
	RouteAPIRedeliver  = api.RouteRedeliver
	RouteAPIBankHealth = api.RouteBankHealth
	RouteAPIContract   = api.RouteContract
	RouteHealth        = "/healthz"
	RouteReady         = "/readyz"
	RouteMetrics       = "/metrics"
	RouteStatic        = "/static/*"
	RouteAnyOther      = "/*"
	RouteAPIAnyOther   = "/api/*"
	RouteDemoShop      = demoshop.RouteShop
	RouteSandbox       = "/sandbox/*"
	SandboxPrefix      = "/sandbox"
)

// Routes registers every route of the app on e, each for its audience.
// sandbox is the provider stand-in, mounted under /sandbox in sandbox mode;
// nil otherwise.
func (h *Handler) Routes(e *echo.Echo, static http.Handler, sandbox http.Handler) {
	e.HTTPErrorHandler = h.steps.HandleError
	e.IPExtractor = ipExtractor(h.TrustedProxies)
	// The bank page and the details page's first showing come compressed
	// ahead (shopper/pagecache.go); compress skips them.
	everyRequest := []echo.MiddlewareFunc{compress()}
	h.audiences = map[string]web.Audience{}
	people := router{e: e, h: h, audience: web.People}
	programs := router{e: e, h: h, audience: web.Programs}
	if h.Metrics != nil {
		everyRequest = append(everyRequest, h.Metrics.Middleware)
		programs.GET(RouteMetrics, echo.WrapHandler(h.Metrics.Handler()))
	}
	everyRequest = append(everyRequest, h.guard()...)
	e.Use(chained(append(everyRequest, h.logRequests)...))

	// Shoppers: the steps of a checkout (package handlers/shopper), and
	// the app's own address for whoever types it.
	h.steps.Routes(people, programs)
	people.GET(RouteStart, h.steps.ShowStart(console.RouteOverview))
	files := echo.WrapHandler(static)
	people.GET(RouteStatic, func(c echo.Context) error {
		if !assets.Known(c.Param("*")) {
			// A file we never had is a page not found, as any other path.
			return web.ErrNotFound
		}
		return files(c)
	})
	people.GET(assets.FaviconPath, echo.WrapHandler(assets.Favicon()))

	// Merchants' servers: the API (package handlers/api).
	programs.POST(RouteAPILinks, h.api.Logged(h.api.CreateLink))
	programs.GET(RouteAPIPayment, h.api.Logged(h.api.ShowPaymentStatus))
	programs.GET(RouteAPIPayments, h.api.Logged(h.api.ListPayments))
	programs.GET(RouteAPIEvents, h.api.Logged(h.api.ListEvents))
	programs.POST(RouteAPIRedeliver, h.api.Logged(h.api.RedeliverEvent))
	programs.GET(RouteAPIBankHealth, h.api.Logged(h.api.ShowBankHealth))
	programs.GET(RouteAPIContract, h.api.ShowContract)
	programs.POST(api.RoutePaymentLinks, h.api.Logged(h.api.CreatePaymentLink))
	programs.GET(api.RoutePaymentLinks, h.api.Logged(h.api.ListPaymentLinks))
	programs.GET(api.RoutePaymentLink, h.api.Logged(h.api.ShowPaymentLink))
	programs.POST(api.RoutePaymentLinkCancel, h.api.Logged(h.api.CancelPaymentLink))
	if h.Refunds != nil {
		programs.POST(RouteAPIPayment, h.api.Logged(h.api.PaymentAction))
		programs.GET(api.RouteRefunds, h.api.Logged(h.api.ListRefunds))
		programs.GET(api.RouteRefund, h.api.Logged(h.api.ShowRefund))
		programs.POST(api.RouteRefundCancel, h.api.Logged(h.api.CancelRefund))
	}

	// The people who run a shop: the console (package handlers/console),
	// its pages under /console with their own sign-in, errors and roles.
	if h.Console != nil {
		h.Console.Routes(e)
	}

	// Designers' uploaded logos (package handlers/brand); their Branding
	// page is the console's.
	if h.Orders != nil && h.Orders.Ledger != nil {
		uploaded := &brand.Logos{Store: h.Orders.Ledger}
		people.GET(brand.Route, uploaded.Serve)
	}

	// Operators: health (package handlers/health).
	checks := health.Checks{Ledger: h.Orders.Ledger, Banks: h.Banks, Log: h.Log, Unopened: func() []string {
		var why []string
		for _, m := range h.Merchants.All() {
			if m.Unopened != "" {
				why = append(why, m.Unopened)
			}
		}
		return why
	}}
	if h.Console != nil {
		checks.Mismatches = func() []string {
			if said := h.Console.PasskeysMismatch(); said != "" {
				return []string{said}
			}
			return nil
		}
	}
	programs.GET(RouteHealth, checks.Health)
	programs.GET(RouteReady, checks.Ready)

	// Paths no route matches: people get the 404 page in their language
	// (inside a checkout, with its ways back), programs the JSON error. The
	// console answers its own under /console/.
	people.notFound(shopper.RouteUnknownStep, h.steps.NotFound)
	people.notFound(RouteAnyOther, h.steps.NotFound)
	programs.notFound(RouteAPIAnyOther, h.api.NotFound)

	// Sandbox mode: the demo shop (package handlers/demoshop) and the
	// provider stand-in.
	if sandbox != nil {
		shop := &demoshop.Shop{Merchants: h.Merchants, Frame: h.steps, Now: h.Now}
		people.GET(demoshop.RouteShop, shop.ShowShop)
		programs.POST(demoshop.RouteWebhook, shop.ReceiveWebhook)
		e.Any(RouteSandbox, echo.WrapHandler(http.StripPrefix(SandboxPrefix, sandbox)))
	}
}

// router registers routes for one audience. Every GET route answers HEAD
// too: load balancers check with it.
type router struct {
	e        *echo.Echo
	h        *Handler
	audience web.Audience
}

func (r router) GET(path string, handler echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.h.audiences[path] = r.audience
	handler = applied(handler, m...)
	r.e.GET(path, handler)
	r.e.HEAD(path, handler)
}

// notFound answers every method on paths under path that no route
// matches.
func (r router) notFound(path string, handler echo.HandlerFunc) {
	r.h.audiences[path] = r.audience
	r.e.RouteNotFound(path, handler)
}

func (r router) POST(path string, handler echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	r.h.audiences[path] = r.audience
	r.e.POST(path, applied(handler, m...))
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
