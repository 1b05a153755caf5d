// Package handlers decides what each request gets: it puts the app-wide
// guards in front of every route and registers each audience's routes, each
// audience in a package of its own (see Handler).
package handlers

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/paybybank/checkout/bankhealth"

	"github.com/gorilla/sessions"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/telemetry"
	"github.com/paybybank/checkout/views"
)

// BankLists gives the banks list: the cache in production, a fake in tests.
type BankLists = shopper.BankLists

// Config is what a Handler is built from.
type Config struct {
	// BaseURL is the app's public URL, without a trailing slash.
	BaseURL   string
	Merchants *merchant.Directory
	Sealer    *order.Sealer
	Banks     BankLists
	// Orders records orders and pays them through the payments ledger: one
	// payment per order, on any instance.
	Orders *payment.Service
	// Health tells which banks are failing right now; nil knows none.
	Health *bankhealth.Keeper
	// Sessions keeps the conveniences cookie (the language chosen, the last
	// bank used); nothing depends on it.
	Sessions sessions.Store
	// ProviderOrigin is the provider's origin (PIS_BASE_URL's), where the
	// details form's answer sends the shopper; empty when the provider is
	// the sandbox on our own origin.
	ProviderOrigin string
	// Sandbox is set when the provider is the built-in sandbox: the demo
	// shop is served and test banks are listed.
	Sandbox bool
	Assets  views.Assets
	// TrustedProxies are the networks whose X-Forwarded-For header tells the
	// shopper's address (for IP verification); from anywhere else the
	// header is ignored.
	TrustedProxies []*net.IPNet
	// LogoClient fetches logos from the provider and merchants; when nil, a
	// client that refuses private addresses.
	LogoClient *http.Client
	// Metrics, when set, times every request and serves /metrics.
	Metrics *telemetry.Metrics
	// Outage knows whether the payments ledger answers, shared with the
	// console; the shopper's steps make their own when nil.
	Outage *web.Outage
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
	Log         *slog.Logger
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

// Handler is the whole app's web side: the routes of every audience (the
// shopper's steps in handlers/shopper, the merchant API in handlers/api,
// health in handlers/health) behind the
// app-wide guards. The console (handlers/console) registers its own routes
// on the same Echo behind the same guards.
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
	steps := shopper.New(shopper.Config{
		BaseURL: cfg.BaseURL, Merchants: cfg.Merchants, Sealer: cfg.Sealer, Banks: cfg.Banks, Orders: cfg.Orders,
		Health: cfg.Health, Sessions: cfg.Sessions, ProviderOrigin: cfg.ProviderOrigin, Sandbox: cfg.Sandbox, Assets: cfg.Assets,
		LogoClient: cfg.LogoClient, Outage: cfg.Outage, Log: cfg.Log, Now: cfg.Now,
	})
	return &Handler{
		Config: cfg,
		steps:  steps,
		api: api.New(api.Config{BaseURL: cfg.BaseURL, Merchants: cfg.Merchants, Orders: cfg.Orders,
			Health: cfg.Health, Banks: cfg.Banks, APIRate: cfg.APIRate, Now: cfg.Now, Requests: cfg.APIRequests}),
	}
}

// Previews draws the shopper's pages in a designer's look, for the
// console's Branding page.
func (h *Handler) Previews() *shopper.Steps { return h.steps }
