package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/pisclient/sandbox"
)

// losingProvider passes requests to the sandbox, but the answer to the first
// create call never comes back, as on a timeout after the provider acted.
type losingProvider struct {
	sb    *sandbox.Sandbox
	mu    sync.Mutex
	calls []string
	lost  bool
}

func (p *losingProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	kind := "read"
	if r.Method == http.MethodPost {
		kind = "create"
	} else if !strings.HasSuffix(r.URL.Path, "/ob-institutions") {
		kind = "status"
	}
	p.calls = append(p.calls, kind)
	lose := kind == "create" && !p.lost
	if lose {
		p.lost = true
	}
	p.mu.Unlock()
	if lose {
		p.sb.ServeHTTP(httptest.NewRecorder(), r) // the payment is made...
		<-r.Context().Done()                      // ...and the answer is lost
		return
	}
	p.sb.ServeHTTP(w, r)
}

func TestCreateTimeoutReadsTheStatusAndNeverChargesTwice(t *testing.T) {
	lp := &losingProvider{}
	a := setup(t, options{timeout: 300 * time.Millisecond, upstreamFor: func(sb *sandbox.Sandbox) http.Handler { lp.sb = sb; return lp }})
	checkout := a.enter("A-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "/return") {
		t.Fatalf("after the lost answer: %d to %q, want the payment's status page", res.StatusCode, res.Header.Get("Location"))
	}
	lp.mu.Lock()
	calls := strings.Join(lp.calls, ",")
	lp.mu.Unlock()
	if !strings.Contains(calls, "create,status,create") {
		t.Errorf("upstream calls %s: the status is not read between the lost create and the next", calls)
	}
	if st := a.sandbox.Stats(); st.Payments != 1 {
		t.Errorf("%d payments exist, want 1", st.Payments)
	}
	doc := page(t, a.get(a.url+res.Header.Get("Location")), http.StatusOK)
	if got := text(doc, testid("status-heading")); got != "Waiting for your bank" {
		t.Errorf("status page %q", got)
	}
}

func TestStatusPageKeepsCheckingWhenTheProviderFails(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	a.sandbox.SetKnobs(sandbox.Knobs{ErrorRate: 1})
	doc := page(t, a.get(checkout+"/return"), http.StatusOK)
	if got := text(doc, testid("status-heading")); got != "Still checking your payment" {
		t.Errorf("heading %q", got)
	}
	if doc.Find(testid("status")).AttrOr("data-next", "") == "" {
		t.Error("the page does not check again")
	}
	if back := doc.Find(testid("way-back")).AttrOr("href", ""); !strings.Contains(back, "status=UNKNOWN") {
		t.Errorf("the way back %q claims a status nobody read", back)
	}
}

func TestMalformedAnswersGiveTheRetryPage(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{MalformedRate: 1}})
	doc := page(t, a.get(a.enter("A-1", nil)+"/banks?country=FR"), http.StatusServiceUnavailable)
	if doc.Find(testid("retry")).Length() != 1 {
		t.Error("no way to try again")
	}
}

func TestABankMissingFromTheListSendsTheShopperBackToIt(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{MissingBanks: 1}})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/pay?country=FR&bank=credit-agricole"), http.StatusNotFound)
	if got := text(doc, testid("error-heading")); got != "This bank is not available" {
		t.Errorf("heading %q", got)
	}
	if href := doc.Find(testid("retry")).AttrOr("href", ""); !strings.Contains(href, "/banks?country=FR") {
		t.Errorf("retry goes to %q, want the French bank list", href)
	}
}

func TestSlowProviderStillServesTheList(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{Latency: 300 * time.Millisecond}})
	page(t, a.get(a.enter("A-1", nil)+"/banks?country=FR"), http.StatusOK)
}
