// Package handlers decides what each request gets: it checks the signed link,
// opens the sealed order, asks the banks cache and the provider, and hands a
// view model to a templ component (DESIGN.md section 2).
package handlers

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/gorilla/sessions"
	gocache "github.com/patrickmn/go-cache"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/telemetry"
	"github.com/paybybank/checkout/views"
)

// BankLists gives the banks list: the cache in production, a fake in tests.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
	Warm() bool
}

// Payments creates payments and reads their status at the provider.
type Payments interface {
	CreatePayment(ctx context.Context, r pisclient.PaymentRequest) (*pisclient.Payment, error)
	PaymentStatus(ctx context.Context, merchantOrderID string) (*pisclient.PaymentStatus, error)
}

// Config is what a Handler is built from.
type Config struct {
	// BaseURL is the app's public URL, without a trailing slash.
	BaseURL   string
	Merchants *merchant.Directory
	Sealer    *order.Sealer
	Banks     BankLists
	// PaymentsFor gives the provider client of a merchant: one with the
	// merchant's own provider key, or the deployment's.
	PaymentsFor func(m *merchant.Merchant) Payments
	// Sessions keeps the conveniences of DESIGN.md section 6 (the last bank
	// used); nothing depends on it.
	Sessions sessions.Store
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
	// links remembers the payment link of each order created here, so that a
	// second submit goes to the same payment; creating shares one call per
	// order among concurrent submits.
	links    *gocache.Cache
	creating singleflight.Group
}

// linkMemory is how long a created payment's link is remembered: longer than
// a sealed order lives, so every submit of a live order finds it.
const linkMemory = order.TokenTTL + time.Hour

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{Config: cfg, links: gocache.New(linkMemory, 10*time.Minute)}
}
