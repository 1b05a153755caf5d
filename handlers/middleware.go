package handlers

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
)

// Limits of every request; docs/operate.md tells operators of them.
const (
	// MaxBody is the largest request body but on the routes of
	// largerBodies: a details form or an API call is a few kilobytes.
	MaxBody = "64K"
	// RequestTimeout bounds a request's work, upstream calls included.
	RequestTimeout = 30 * time.Second
	// PostRate and PostBurst limit a checkout's POSTs (and the phone
	// handoff's codes): a person types, so 2 a second is ample.
	PostRate  = rate.Limit(2)
	PostBurst = 20
	// addressShare is how many checkouts' worth of POSTs one address may
	// send: behind a proxy or a carrier's NAT many honest shoppers share one.
	addressShare = 50
)

// largerBodies are the routes whose bodies may be larger than MaxBody,
// each with its own limit in bytes: the console's logo upload carries an
// image (console.MaxLogoForm), its statement upload a bank statement
// (console.MaxStatementForm).
var largerBodies = map[string]int64{console.RouteBrandingLogo: console.MaxLogoForm, console.RouteStatements: console.MaxStatementForm}

// guard is the app-wide protections in front of every route, in order:
// request ids, security headers, a request deadline and a body limit; and
// on POSTs, the rate limits and a refusal of cross-site requests.
//
// Budgets are each audience's own: a checkout's POSTs (and the phone
// handoff) spend the checkout's, within a generous one of their address;
// the API spends its token's (package api), the console its signed-in
// person's (package console); the sandbox provider plays the bank and is
// not limited at all.
func (h *Handler) guard() []echo.MiddlewareFunc {
	guards := []echo.MiddlewareFunc{
		requestID,
		h.steps.Describe(func(route string) web.Audience { return h.audiences[route] }),
		h.securityHeaders,
		middleware.ContextTimeoutWithConfig(middleware.ContextTimeoutConfig{Timeout: RequestTimeout, Skipper: servedFromMemory}),
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: MaxBody, Skipper: func(c echo.Context) bool {
			_, own := largerBodies[c.Path()]
			return own
		}}),
	}
	for route, limit := range largerBodies {
		guards = append(guards, middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: strconv.FormatInt(limit, 10), Skipper: func(c echo.Context) bool {
			return c.Path() != route
		}}))
	}
	limiter := func(r rate.Limit, burst int, skip middleware.Skipper, who func(echo.Context) string) echo.MiddlewareFunc {
		return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
			Skipper: skip,
			Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
				Rate: r, Burst: burst, ExpiresIn: 3 * time.Minute,
			}),
			IdentifierExtractor: func(c echo.Context) (string, error) { return who(c), nil },
			DenyHandler:         h.steps.TooMany,
		})
	}
	// A generous budget per address, then a tight one per checkout: one
	// shopper going fast is slowed, their neighbours behind the same
	// address are not.
	return append(guards,
		h.noticeUntrustedProxy,
		limiter(h.limit()*addressShare, h.burst()*addressShare, h.unlimited, func(c echo.Context) string { return c.RealIP() }),
		limiter(h.limit(), h.burst(), func(c echo.Context) bool { return checkoutKey(c) == "" }, checkoutKey),
		h.sameOrigin)
}

// chained is middlewares, first outermost, put together once around the
// handler of whatever route a request found. Echo puts a request's chain
// together anew for every request, a closure for each middleware, which on
// a page answered from memory, like the bank page, was a good part of its
// work.
func chained(middlewares ...echo.MiddlewareFunc) echo.MiddlewareFunc {
	chain := applied(func(c echo.Context) error { return c.Handler()(c) }, middlewares...)
	return func(echo.HandlerFunc) echo.HandlerFunc { return chain }
}

// applied is handler behind middlewares, first outermost.
func applied(handler echo.HandlerFunc, middlewares ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(middlewares) - 1; i >= 0; i-- {
		handler = middlewares[i](handler)
	}
	return handler
}

// servedFromMemory reports whether a request's route is answered from
// pages kept rendered: the country and bank pages, which every shopper
// loads. They wait on nothing but the banks list, whose fetch has a bound
// of its own (banks.Cache): a deadline of their own would only cost a timer
// and a copy of the request on every one of them.
func servedFromMemory(c echo.Context) bool {
	return c.Path() == shopper.RouteBanks || c.Path() == shopper.RouteCountry
}

// unlimited reports whether a request spends no address budget: reading a
// page, the API (limited per token), and the sandbox provider's pages,
// whose buttons stand for a bank's.
func (h *Handler) unlimited(c echo.Context) bool {
	path := c.Path()
	switch {
	case strings.HasPrefix(path, "/api/"), strings.HasPrefix(path, SandboxPrefix+"/"):
		return true
	case path == shopper.RouteHandoff || path == shopper.RouteHandoffCode:
		return false
	}
	return c.Request().Method != http.MethodPost
}

// checkoutKey names the checkout budget a request spends: a checkout's
// POSTs spend its own; the phone handoff's pages (whose codes must not be
// worth guessing) spend their checkout's or their address's. Other
// requests spend none ("").
func checkoutKey(c echo.Context) string {
	token := c.Param("token")
	switch path := c.Path(); {
	case path == shopper.RouteHandoff || path == shopper.RouteHandoffCode:
		if token == "" {
			return "address " + c.RealIP()
		}
	case c.Request().Method != http.MethodPost || token == "":
		return ""
	}
	return "checkout " + token
}

// requestID gives every request an id, sent back as X-Request-Id and logged.
// A caller's own id is kept only when it is a plain token (a proxy's, say):
// anything else could forge or break log lines, so it is replaced.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !plainID(id) {
			id = newRequestID()
		}
		c.Response().Header()[echo.HeaderXRequestID] = []string{id}
		return next(c)
	}
}

// requestIDs make ids of 32 hex digits, unique across instances and
// restarts without asking the system for randomness on every request: a
// random prefix of the process, then a counter scrambled by a random odd
// multiplier and mask (a bijection of 64 bits), so that ids neither repeat
// nor tell how many requests came.
var requestIDs = newIDMaker()

type idMaker struct {
	prefix    [8]byte
	mul, mask uint64
	count     atomic.Uint64
}

func newIDMaker() *idMaker {
	var seed [24]byte
	rand.Read(seed[:])
	m := &idMaker{mul: binary.LittleEndian.Uint64(seed[8:]) | 1, mask: binary.LittleEndian.Uint64(seed[16:])}
	copy(m.prefix[:], seed[:8])
	return m
}

func newRequestID() string {
	var b [16]byte
	copy(b[:8], requestIDs.prefix[:])
	binary.BigEndian.PutUint64(b[8:], requestIDs.count.Add(1)*requestIDs.mul^requestIDs.mask)
	var out [32]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// plainID reports whether s is 1 to 64 letters, digits, '-', '_' or '.'.
func plainID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// noticeUntrustedProxy says once, at the first such request, that requests
// come through a proxy TRUSTED_PROXIES does not name: every shopper then
// seems to come from the proxy's address, for IP verification and limits.
func (h *Handler) noticeUntrustedProxy(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Header.Get(echo.HeaderXForwardedFor) != "" && !h.trusted(c.Request().RemoteAddr) {
			h.proxyNotice.Do(func() {
				h.Log.Warn("requests arrive through a proxy that TRUSTED_PROXIES does not name: every shopper seems to come from its address; add it to TRUSTED_PROXIES",
					"proxy", peerIP(c.Request().RemoteAddr))
			})
		}
		return next(c)
	}
}

// trusted reports whether a peer address is one of TrustedProxies.
func (h *Handler) trusted(remoteAddr string) bool {
	ip := net.ParseIP(peerIP(remoteAddr))
	for _, n := range h.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

func peerIP(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

func (h *Handler) limit() rate.Limit {
	if h.PostRate > 0 {
		return h.PostRate
	}
	return PostRate
}

func (h *Handler) burst() int {
	if h.PostBurst > 0 {
		return h.PostBurst
	}
	return PostBurst
}

// securityHeaders are sent with every answer. Pages set their own CSP (with
// the merchant's frame-ancestors); everything else cannot be framed.
func (h *Handler) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	https := strings.HasPrefix(h.BaseURL, "https://")
	return func(c echo.Context) error {
		// Each header's value is one shared slice, made once: the header
		// map is filled, never appended to in place.
		header := c.Response().Header()
		header["X-Content-Type-Options"] = noSniff
		header["Referrer-Policy"] = noReferrer
		if !strings.HasPrefix(c.Request().URL.Path, SandboxPrefix+"/") {
			// The sandbox plays the provider and sends its own pages' rules.
			header["Content-Security-Policy"] = nothingAllowed
		}
		if https {
			header["Strict-Transport-Security"] = strictTransport
		}
		return next(c)
	}
}

var (
	noSniff         = []string{"nosniff"}
	noReferrer      = []string{"no-referrer"}
	nothingAllowed  = []string{"default-src 'none'; frame-ancestors 'none'"}
	strictTransport = []string{"max-age=63072000; includeSubDomains"}
)

// sameOrigin refuses a POST that a page of another site sent, by its origin
// rather than by a cookie: by Sec-Fetch-Site where the browser sends it, by
// Origin otherwise. Requests without either (servers calling the API) pass; the
// API authenticates them by token.
func (h *Handler) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	own := web.OriginOf(h.BaseURL)
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodPost {
			return next(c)
		}
		site := r.Header.Get("Sec-Fetch-Site")
		from := r.Header.Get("Origin")
		switch {
		case site == "same-origin" || site == "none":
		case site != "":
			return &web.PageError{Status: http.StatusForbidden, Key: "error.crossSite", Err: errCrossSite(site, from)}
		case from == "null":
			// An opaque origin (a sandboxed frame, a data: page) is never ours.
			return &web.PageError{Status: http.StatusForbidden, Key: "error.crossSite", Err: errCrossSite(site, from)}
		case from != "" && web.OriginOf(from) != own:
			return &web.PageError{Status: http.StatusForbidden, Key: "error.crossSite", Err: errCrossSite(site, from)}
		}
		return next(c)
	}
}

type crossSite struct{ site, origin string }

func (e crossSite) Error() string {
	return "cross-site POST refused (Sec-Fetch-Site " + e.site + ", Origin " + e.origin + ")"
}

func errCrossSite(site, from string) error { return crossSite{site, from} }

// logRequests writes one line per request: its id (also sent to the client
// as X-Request-Id), route pattern (never the path, which holds a token),
// status and duration. Failed requests are logged by handleError instead.
func (h *Handler) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err == nil {
			// The id goes in as the first attribute, as log(c) would put
			// it, without building a logger for one line.
			h.Log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request",
				slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
				slog.String("method", c.Request().Method), slog.String("route", c.Path()),
				slog.Int("status", c.Response().Status), slog.Duration("duration", time.Since(start)))
		}
		return err
	}
}

// log is the logger of a request, carrying its id.
func (h *Handler) log(c echo.Context) *slog.Logger { return web.Logger(c, h.Log) }
