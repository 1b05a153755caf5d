package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/webhook"
)

// logoClient fetches the logos the app serves: from the provider and
// merchants' sites, never a private address. In sandbox mode the sandbox's
// logos are fetched in process (the app need not reach its own public
// address); nothing else is fetched from private addresses there either.
func logoClient(cfg Config, sb *sandbox.Sandbox) *http.Client {
	guarded := webhook.NewClient(false)
	if sb == nil {
		return guarded
	}
	prefix := cfg.BaseURL + handlers.SandboxPrefix + "/"
	inner := guarded.Transport
	guarded.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		if rest, ok := strings.CutPrefix(r.URL.String(), prefix); ok {
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = "/"+strings.SplitN(rest, "?", 2)[0], ""
			return sb.RoundTrip(r)
		}
		return inner.RoundTrip(r)
	})
	return guarded
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// providers holds one provider client per provider key: the deployment's
// PIS_API_KEY and each merchant's own pis_api_key. A reload of the
// merchants file builds the merchants' clients again.
type providers struct {
	deployment  *pisclient.Client
	byMerchant  atomic.Pointer[map[string]*pisclient.Client]
	baseURL     string
	sandboxMode bool
	log         *slog.Logger
	opts        []pisclient.Option
}

func newProviders(baseURL, key string, merchants *merchant.Directory, sandboxMode bool, log *slog.Logger, opts ...pisclient.Option) (*providers, error) {
	p := &providers{baseURL: baseURL, sandboxMode: sandboxMode, log: log, opts: opts}
	var err error
	if p.deployment, err = pisclient.New(baseURL, key, opts...); err != nil {
		return nil, fmt.Errorf("PIS_BASE_URL: %w", err)
	}
	byMerchant, err := p.clients(merchants)
	if err != nil {
		return nil, err
	}
	p.byMerchant.Store(&byMerchant)
	return p, nil
}

// clients makes the clients of the merchants with their own key.
func (p *providers) clients(merchants *merchant.Directory) (map[string]*pisclient.Client, error) {
	byMerchant := map[string]*pisclient.Client{}
	byKey := map[string]*pisclient.Client{}
	for _, m := range merchants.All() {
		if m.PISAPIKey == "" {
			continue
		}
		if p.sandboxMode {
			p.log.Warn("sandbox mode: the sandbox accepts only PIS_API_KEY, so this merchant's own pis_api_key is not used", "merchant", m.ID)
			continue
		}
		c, ok := byKey[m.PISAPIKey]
		if !ok {
			var err error
			if c, err = pisclient.New(p.baseURL, m.PISAPIKey, p.opts...); err != nil {
				return nil, fmt.Errorf("MERCHANTS_FILE: merchant %s: pis_api_key: %w", m.ID, err)
			}
			byKey[m.PISAPIKey] = c
		}
		byMerchant[m.ID] = c
	}
	return byMerchant, nil
}

// For returns the client that serves merchant m.
func (p *providers) For(m *merchant.Merchant) *pisclient.Client {
	if c, ok := (*p.byMerchant.Load())[m.ID]; ok {
		return c
	}
	return p.deployment
}

// providerOrigin is the origin shoppers are sent to for the provider's pages:
// PIS_BASE_URL's, or none beyond our own for the mounted sandbox.
func providerOrigin(cfg Config) string {
	if cfg.SandboxMode() {
		return ""
	}
	u, err := url.Parse(cfg.PISBaseURL)
	if err != nil {
		return ""
	}
	return merchant.Origin(u)
}
