// Package shopper serves the shopper's way through a checkout: the signed
// link's entry, the country and bank pages (kept rendered and compressed),
// the details form, the phone handoff, the status page and the way back. It
// lends its pages to the Branding page's previews and its frame to the demo
// shop, and tells a person an error, in the shopper's language and the
// merchant's look, for every page of the app but the console.
package shopper

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/logos"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/webhook"
)

// BankLists gives the banks list: the cache in production, a fake in tests.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
	Warm() bool
}

// Config is what the shopper's steps are built from.
type Config struct {
	// BaseURL is the app's public URL, without a trailing slash.
	BaseURL   string
	Merchants *merchant.Directory
	Sealer    *order.Sealer
	Banks     BankLists
	// Orders records orders and pays them through the payments ledger: one
	// payment per order, on any instance.
	Orders *payment.Service
	// Links makes a payment link's orders as its payers submit, and counts
	// their openings; the API makes and cancels the links through it.
	Links *links.Store
	// Refunds takes a payer's account on their refund's page; the API
	// makes and moves refunds through it. Nil serves no refund.
	Refunds *refunds.Service
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
	// LogoClient fetches logos from the provider and merchants; when nil, a
	// client that refuses private addresses.
	LogoClient *http.Client
	// Outage knows whether the payments ledger answers, shared with the
	// app's other audiences; one of the steps' own when nil.
	Outage *web.Outage
	Log    *slog.Logger
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

// Steps serves the shopper's pages.
type Steps struct {
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
	// pages keeps the country and bank pages rendered.
	pages pageCache
	// logos serves logos from the app itself.
	logos *logos.Logos
}

// New returns the shopper's steps.
func New(cfg Config) *Steps {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.LogoClient == nil {
		cfg.LogoClient = webhook.NewClient(false)
	}
	if cfg.Outage == nil && cfg.Orders != nil && cfg.Orders.Ledger != nil {
		cfg.Outage = &web.Outage{Ledger: cfg.Orders.Ledger, Where: cfg.Orders.Ledger.Where, Log: cfg.Log}
	}
	h := &Steps{Config: cfg}
	h.logos = logos.New(cfg.LogoClient, cfg.Banks, cfg.Now)
	// Every instance knows the merchants' logos, whichever served the page.
	if cfg.Merchants != nil {
		for _, m := range cfg.Merchants.All() {
			if m.Customization != nil {
				h.logoPath(m.Customization.LogoURL)
			}
		}
	}
	h.setFormAction()
	return h
}

// log is the logger of a request, carrying its id.
func (h *Steps) log(c echo.Context) *slog.Logger { return web.Logger(c, h.Log) }

// What the studio shares of the shopper's pages: it previews them.

// Page is the layout model of the page being served, in its merchant's
// look, or the app's own.
func (h *Steps) Page(c echo.Context, title string) views.Page { return h.page(c, title) }

// MerchantPage is the layout model of the page being served in m's look,
// titled in the request's language.
func (h *Steps) MerchantPage(c echo.Context, m *merchant.Merchant, title func(*i18n.Localizer) string) views.Page {
	web.RequestOf(c).ForMerchant(m, nil)
	return h.page(c, title(h.loc(c)))
}

// Remember keeps a convenience in the session cookie.
func (h *Steps) Remember(c echo.Context, key, value string) { h.remember(c, key, value) }

// SessionValue reads a convenience from the session cookie.
func (h *Steps) SessionValue(c echo.Context, key string) string { return h.sessionValue(c, key) }

// Render writes a page as the shopper's pages are written: whole or not at
// all, never kept by a cache, under the page's content policy.
func Render(c echo.Context, status int, page templ.Component) error {
	return web.Render(c, status, page)
}
