package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

func TestMerchantsAskingForAnOrderIDWithAPercentGetThatOrder(t *testing.T) {
	a := setup(t, options{upstream: fakeProvider(t, "COMPLETED", nil)})
	for _, id := range []string{"a%41b", "50%off"} {
		a.paidOnce(id)
	}
	for escaped, want := range map[string]string{"a%2541b": "a%41b", "50%25off": "50%off", "aAb": ""} {
		status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments/"+escaped, shop1Token, "")
		switch {
		case want == "" && status != http.StatusNotFound:
			t.Errorf("%s: %d %v, want 404: order aAb was never made", escaped, status, body)
		case want != "" && (status != http.StatusOK || body["merchant_order_id"] != want):
			t.Errorf("%s: %d %v, want order %q", escaped, status, body, want)
		}
	}
}

// switchableList passes requests to the sandbox, but answers the banks list
// with an empty array while empty is set.
type switchableList struct {
	sb    *sandbox.Sandbox
	empty atomic.Bool
}

func (p *switchableList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.empty.Load() && strings.HasSuffix(r.URL.Path, "/ob-institutions") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("[]"))
		return
	}
	p.sb.ServeHTTP(w, r)
}

func TestAnEmptyBanksListFromTheProviderNeverEmptiesThePage(t *testing.T) {
	p := &switchableList{}
	a := setup(t, options{ttl: 20 * time.Millisecond, upstreamFor: func(sb *sandbox.Sandbox) http.Handler { p.sb = sb; return p }})
	checkout := a.enter("A-1", nil)
	page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	p.empty.Store(true)
	time.Sleep(50 * time.Millisecond) // past the list's lifetime
	doc := page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	if doc.Find(`a[href*="bank=credit-agricole"]`).Length() == 0 {
		t.Error("the empty list replaced the last good one")
	}
	if doc.Find(testid("stale")).Length() != 1 {
		t.Error("the last good list is not marked as possibly out of date")
	}
	if res := a.get(a.url + "/readyz"); res.StatusCode != http.StatusOK {
		t.Errorf("ready with a good list at hand: %d", res.StatusCode)
	}

	// With nothing but empty answers there is nothing to serve: not ready.
	q := &switchableList{}
	q.empty.Store(true)
	b := setup(t, options{upstreamFor: func(sb *sandbox.Sandbox) http.Handler { q.sb = sb; return q }})
	if res := b.get(b.url + "/readyz"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ready with only an empty list: %d, want 503", res.StatusCode)
	}
	page(t, b.get(b.enter("A-1", nil)), http.StatusServiceUnavailable)
}

func TestAStatusWithControlCharactersShowsAsProcessing(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		a := setup(t, options{upstream: fakeProvider(t, "ON\x00HOLD\nFOR REVIEW", nil), ledger: ledgertest.Open(t, databaseURL)})
		doc := page(t, a.get(a.paidOnce("A-1")+"/return"), http.StatusOK)
		if got := text(doc, testid("status-heading")); got != "Your payment is being processed" {
			t.Errorf("heading %q", got)
		}
		back, _ := url.Parse(doc.Find(testid("way-back")).AttrOr("href", ""))
		if back.Query().Get("status") != "UNRECOGNIZED" || !order.VerifyWayBack(secret, back.Query()) {
			t.Errorf("way back %s", back)
		}
	})
}

func TestNoFormOnAnyPageLeadsOutOfTheApp(t *testing.T) {
	a := setup(t, options{})
	res := a.get(a.url + "//evil.example/x")
	doc := page(t, res, http.StatusNotFound)
	doc.Find("form").Each(func(_ int, f *goqueryS) {
		if action := f.AttrOr("action", ""); !strings.HasPrefix(action, "/") || strings.HasPrefix(action, "//") {
			t.Errorf("a form on the 404 page leads to %q", action)
		}
	})
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") {
		t.Errorf("CSP %q does not bound where forms go", csp)
	}
	// On a step the switcher leads back to that step.
	checkout := a.enter("A-1", nil)
	doc = page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	href := doc.Find(testid("language-switch")+` a[data-lang="de"]`).AttrOr("href", "")
	if got := resolve(checkout+"/banks?country=FR", href); got != checkout+"/banks?country=FR&lang=de" {
		t.Errorf("the switcher leads to %q (%q)", got, href)
	}
}

func TestLoadBalancersCheckingWithHEADSeeTheAppUp(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	for _, u := range []string{"/healthz", "/readyz", strings.TrimPrefix(checkout, a.url), "/static/app.css"} {
		if res := a.do(http.MethodHead, a.url+u, nil, nil); res.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: %d", u, res.StatusCode)
		}
	}
}

func TestHonestShoppersBehindOneProxyAreNotSlowedDown(t *testing.T) {
	a := setup(t, options{burst: 3})
	for i := range 30 {
		checkout := a.enter("P-"+string(rune('a'+i)), nil)
		for range 2 {
			if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("shopper %d of 30 behind one address was refused", i+1)
			}
		}
	}
}

func TestInputsTheAppRefuses(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	created := a.sandbox.Stats().CreateCalls

	t.Run("a login type that is neither personal nor business", func(t *testing.T) {
		doc := page(t, a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"hypovereinsbank"}, "login_type": {"admin"}, "psu_id": {"x"}}), http.StatusUnprocessableEntity)
		if doc.Find(`#login_type[aria-invalid="true"]`).Length() == 0 && !strings.Contains(text(doc, testid("error-summary")), "personal or business") {
			t.Error("no error for the login type")
		}
	})
	t.Run("a login type sent empty", func(t *testing.T) {
		checkout := a.enter("A-empty-login", nil)
		doc := page(t, a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"hypovereinsbank"}, "login_type": {""}, "psu_id": {"ACME-4711"}}), http.StatusUnprocessableEntity)
		if got := text(doc, "#login_type-error"); !strings.Contains(got, "personal or business") {
			t.Errorf("the login type's error says %q, want it to ask for personal or business", got)
		}
		if doc.Find(`input[name="login_type"][checked]`).Length() != 0 {
			t.Error("a login type was chosen for the shopper")
		}
		if v, _ := doc.Find(`#psu_id`).Attr("value"); v != "ACME-4711" {
			t.Errorf("the login id typed was lost: %q", v)
		}
		if got := a.sandbox.Stats().CreateCalls; got != created {
			t.Errorf("the provider was asked for %d payments, want none", got-created)
		}
	})
	t.Run("a POST from an opaque origin", func(t *testing.T) {
		res := a.do(http.MethodPost, checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}, http.Header{"Origin": {"null"}})
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("Origin: null: %d, want 403", res.StatusCode)
		}
	})
	t.Run("a link's life that would overflow", func(t *testing.T) {
		status, body, _ := a.apiCall(http.MethodPost, "/api/v1/links", shop1Token,
			`{"order":"O-1","amount":"1.00","return_url":"https://shop.example/done","expires_in":9223372036854775807}`)
		if status != http.StatusBadRequest || !strings.Contains(mustJSON(body), "expires_in") {
			t.Errorf("%d %v, want 400 naming expires_in", status, body)
		}
	})
	t.Run("a request id that is not a plain token", func(t *testing.T) {
		res := a.do(http.MethodGet, a.url+"/healthz", nil, http.Header{"X-Request-Id": {"forged\",\"level\":\"ERROR"}})
		if got := res.Header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, `",:`) {
			t.Errorf("X-Request-Id %q", got)
		}
		res = a.do(http.MethodGet, a.url+"/healthz", nil, http.Header{"X-Request-Id": {"lb-7f3a.42"}})
		if got := res.Header.Get("X-Request-Id"); got != "lb-7f3a.42" {
			t.Errorf("a proxy's plain id %q was not kept", got)
		}
	})
	t.Run("the bearer scheme in lower case", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, a.url+"/api/v1/payments/none", nil)
		req.Header.Set("Authorization", "bearer "+shop1Token)
		res, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%d, want 404 (authenticated, no such order)", res.StatusCode)
		}
	})
	t.Run("a listing of the static files", func(t *testing.T) {
		if res := a.get(a.url + "/static/"); res.StatusCode != http.StatusNotFound {
			t.Errorf("/static/: %d, want 404", res.StatusCode)
		}
	})
}

func TestAnAmountWithLeadingZerosReachesTheProviderInItsPlainForm(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", func(l *order.Link) { l.Amount = "0001.50" })
	if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	if got, _ := a.sandbox.Received("shop1:A-1"); got.Amount != "1.50" {
		t.Errorf("the provider got %q, want 1.50", got.Amount)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestOperatorsAreToldOnceOfAProxyTheyDidNotTrust(t *testing.T) {
	logs := &lockedBuffer{}
	a := setup(t, options{logTo: logs})
	for range 3 {
		a.do(http.MethodGet, a.url+"/healthz", nil, http.Header{"X-Forwarded-For": {"203.0.113.7"}})
	}
	if n := strings.Count(logs.String(), "TRUSTED_PROXIES does not name"); n != 1 {
		t.Errorf("the untrusted proxy was named %d times in the log, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "proxy=127.0.0.1") {
		t.Error("the log does not name the proxy's address")
	}
}

func TestFormsMayLeadToWherePaymentLinksPoint(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	// The provider's links are on its own origin: the details form's
	// answer leads there, so later pages allow it.
	res := a.get(a.enter("A-2", nil) + "/pay?country=DE&bank=deutsche-bank")
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+a.upstream.URL+";") {
		t.Errorf("CSP %q does not let the form lead to the provider's links at %s", csp, a.upstream.URL)
	}
}
