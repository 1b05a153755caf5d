// Package handlers decides what each request gets: it puts the app-wide
// guards in front of every route and registers each audience's routes, each
// audience in a package of its own (see Handler).
package handlers

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/telemetry"
)

// BankLists gives the banks list: the cache in production, a fake in tests.
type BankLists = shopper.BankLists

// Config is what a Handler is built from.
type Config struct {
	// Config is what the shopper's steps are built from (the merchants,
	// the orders, the banks, the clock…); the API and the app-wide guards
	// read the same.
	shopper.Config
	// TrustedProxies are the networks whose X-Forwarded-For header tells the
	// shopper's address (for IP verification); from anywhere else the
	// header is ignored.
	TrustedProxies []*net.IPNet
	// Metrics, when set, times every request and serves /metrics.
	Metrics *telemetry.Metrics
	// PostRate and PostBurst override the limit of a checkout's POSTs
	// (tests set them low).
	PostRate  rate.Limit
	PostBurst int
	// APIRate is the API requests a second each token may make, with bursts
	// of twice that (API_RATE); api.DefaultRate when 0.
	APIRate rate.Limit
	// APIRequests keeps merchants' recent API requests for their
	// Developers page; none when nil.
	APIRequests *ledger.RequestLog
	// Console serves the console's pages; Routes registers its routes with
	// every other. None when nil.
	Console *console.Console
}

// Handler is the whole app's web side: the routes of every audience (the
// shopper's steps in handlers/shopper, the merchant API in handlers/api,
// the console in handlers/console, health in handlers/health) behind the
// app-wide guards, registered from one table (routes.go).
type Handler struct {
	Config
	// proxyNotice says once that an untrusted proxy is in front.
	proxyNotice sync.Once
	// audiences says who reads each route's answers; filled by Routes.
	audiences map[string]web.Audience
	steps     *shopper.Steps
	api       *api.API
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	steps := shopper.New(cfg.Config)
	return &Handler{
		Config: cfg,
		steps:  steps,
		api: api.New(api.Config{BaseURL: cfg.BaseURL, Merchants: cfg.Merchants, Orders: cfg.Orders,
			Health: cfg.Health, Banks: cfg.Banks, APIRate: cfg.APIRate, Now: cfg.Now, Requests: cfg.APIRequests, Links: cfg.Links,
			Refunds: cfg.Refunds}),
	}
}

// Previews draws the shopper's pages in a designer's look, for the
// console's Branding page.
func (h *Handler) Previews() *shopper.Steps { return h.steps }
