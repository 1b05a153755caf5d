// Package handlers decides what each request gets: it checks the signed link,
// opens the sealed order, asks the banks cache and the provider, and hands a
// view model to a templ component (DESIGN.md section 2).
package handlers

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/sessions"
	"github.com/patrickmn/go-cache"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/telemetry"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/webhook"
)

// BankLists gives the banks list: the cache in production, a fake in tests.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
	Warm() bool
}

// Config is what a Handler is built from.
type Config struct {
	// BaseURL is the app's public URL, without a trailing slash.
	BaseURL   string
	Merchants *merchant.Directory
	Sealer    *order.Sealer
	Banks     BankLists
	// Orders records orders and pays them through the payments ledger: one
	// payment per order, on any instance (DESIGN.md section 7).
	Orders *payment.Service
	// Sessions keeps the conveniences of DESIGN.md section 6 (the last bank
	// used); nothing depends on it.
	Sessions sessions.Store
	// ProviderOrigin is the provider's origin (PIS_BASE_URL's), where the
	// details form's answer sends the shopper; empty when the provider is
	// the sandbox on our own origin.
	ProviderOrigin string
	// Sandbox is set when the provider is the built-in sandbox: the demo
	// shop is served and test banks are listed.
	Sandbox bool
	// StudioToken opens /studio outside sandbox mode (as the Basic auth
	// password); with none the studio is off there.
	StudioToken string
	Assets      views.Assets
	// TrustedProxies are the networks whose X-Forwarded-For header tells the
	// shopper's address (for IP verification); from anywhere else the
	// header is ignored.
	TrustedProxies []*net.IPNet
	// LogoClient fetches logos from the provider and merchants; when nil, a
	// client that refuses private addresses.
	LogoClient *http.Client
	// Metrics, when set, times every request and serves /metrics.
	Metrics *telemetry.Metrics
	// PostRate and PostBurst override the per-address limit of POSTs and
	// API calls (tests set them low).
	PostRate  rate.Limit
	PostBurst int
	Log       *slog.Logger
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

// Handler serves the shopper's pages.
type Handler struct {
	Config
	// formAction is the CSP form-action source list: our own origin, the
	// provider's, and the origins of payment links the provider gave (in
	// case they differ from ProviderOrigin). It changes only when a new
	// origin is seen, so it is kept rather than built per request.
	formAction atomic.Pointer[string]
	// linkOrigins are the payment-link origins seen so far; guarded by
	// originsMu, which also serialises updates of formAction.
	originsMu   sync.Mutex
	linkOrigins []string
	// proxyNotice says once that an untrusted proxy is in front.
	proxyNotice sync.Once
	// demoHooks are the webhooks the sandbox's demo shop received.
	demoHooks demoHooks
	// audiences says who reads each route's answers; filled by Routes.
	audiences map[string]audience
	// pages keeps the country and bank pages rendered.
	pages pageCache
	// mostPaidCache keeps the ledger's most paid banks per country.
	mostPaidCache *cache.Cache
	// logos serves logos from the app itself.
	logos *logos
	// api answers the merchants' servers.
	api *api.API
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.LogoClient == nil {
		cfg.LogoClient = webhook.NewClient(false)
	}
	h := &Handler{Config: cfg, mostPaidCache: cache.New(pageMaxAge, 2*pageMaxAge), logos: newLogos(cfg.LogoClient, cfg.Now),
		api: api.New(api.Config{BaseURL: cfg.BaseURL, Merchants: cfg.Merchants, Orders: cfg.Orders, Now: cfg.Now})}
	// Every instance knows the merchants' logos, whichever served the page.
	if cfg.Merchants != nil {
		for _, m := range cfg.Merchants.All() {
			if m.Customization != nil {
				h.logos.themePath(m.Customization.LogoURL)
			}
		}
	}
	h.setFormAction()
	return h
}
