package handlers

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/merchant"
)

// Limits of every request (DESIGN.md section 6 and issue 7).
const (
	// MaxBody is the largest request body: a details form or an API call is
	// a few kilobytes.
	MaxBody = "64K"
	// RequestTimeout bounds a request's work, upstream calls included.
	RequestTimeout = 30 * time.Second
	// PostRate and PostBurst limit POSTs and API calls per client address.
	PostRate  = rate.Limit(2)
	PostBurst = 20
)

// guard puts the app-wide protections in front of every route: security
// headers, a request deadline and a body limit; and on POSTs and the API a
// per-address rate limit and a refusal of cross-site requests.
func (h *Handler) guard(e *echo.Echo) {
	e.Use(middleware.RequestID())
	e.Use(h.securityHeaders)
	e.Use(middleware.ContextTimeout(RequestTimeout))
	e.Use(middleware.BodyLimit(MaxBody))
	limiter := middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Skipper: func(c echo.Context) bool {
			return c.Request().Method != http.MethodPost && !strings.HasPrefix(c.Path(), "/api/")
		},
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: h.limit(), Burst: h.burst(), ExpiresIn: 3 * time.Minute,
		}),
		IdentifierExtractor: func(c echo.Context) (string, error) { return c.RealIP(), nil },
		DenyHandler: func(c echo.Context, _ string, err error) error {
			return &pageError{status: http.StatusTooManyRequests, key: "error.tooMany", err: err}
		},
	})
	e.Use(limiter)
	e.Use(h.sameOrigin)
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
	return func(c echo.Context) error {
		header := c.Response().Header()
		header.Set("X-Content-Type-Options", "nosniff")
		header.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(c.Request().URL.Path, SandboxPrefix+"/") {
			// The sandbox plays the provider and sends its own pages' rules.
			header.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		}
		if strings.HasPrefix(h.BaseURL, "https://") {
			header.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
		}
		return next(c)
	}
}

// sameOrigin refuses a POST that a page of another site sent (DESIGN.md
// section 6): by Sec-Fetch-Site where the browser sends it, by Origin
// otherwise. Requests without either (servers calling the API) pass; the
// API authenticates them by token.
func (h *Handler) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	own := originOf(h.BaseURL)
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
			return &pageError{status: http.StatusForbidden, key: "error.crossSite", err: errCrossSite(site, from)}
		case from != "" && from != "null" && originOf(from) != own:
			return &pageError{status: http.StatusForbidden, key: "error.crossSite", err: errCrossSite(site, from)}
		}
		return next(c)
	}
}

type crossSite struct{ site, origin string }

func (e crossSite) Error() string {
	return "cross-site POST refused (Sec-Fetch-Site " + e.site + ", Origin " + e.origin + ")"
}

func errCrossSite(site, from string) error { return crossSite{site, from} }

// originOf is the origin of a URL as text, "" when it does not parse.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return merchant.Origin(u)
}

// logRequests writes one line per request: its id (also sent to the client
// as X-Request-Id), route pattern (never the path, which holds a token),
// status and duration. Failed requests are logged by handleError instead.
func (h *Handler) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err == nil {
			h.log(c).LogAttrs(c.Request().Context(), slog.LevelInfo, "request",
				slog.String("method", c.Request().Method), slog.String("route", c.Path()),
				slog.Int("status", c.Response().Status), slog.Duration("duration", time.Since(start)))
		}
		return err
	}
}

// log is the logger of a request, carrying its id.
func (h *Handler) log(c echo.Context) *slog.Logger {
	id := c.Response().Header().Get(echo.HeaderXRequestID)
	if id == "" {
		return h.Log
	}
	return h.Log.With("request_id", id)
}
