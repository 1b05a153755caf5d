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

// faultyProvider passes requests to the sandbox, but spoils the answer to
// the first create call after the payment is made, as a provider that fails
// after doing the work: lost (the answer never comes back) or unreadable
// (cut off). With failStatus its status reads answer 503 as well.
type faultyProvider struct {
	sb         *sandbox.Sandbox
	spoil      func(w http.ResponseWriter, r *http.Request, answer *httptest.ResponseRecorder)
	mu         sync.Mutex
	calls      []string
	spoiled    bool
	failStatus bool
}

// lose waits for the client to give up: the answer never arrives.
func lose(w http.ResponseWriter, r *http.Request, _ *httptest.ResponseRecorder) { <-r.Context().Done() }

// cutOff sends half of the answer's body.
func cutOff(w http.ResponseWriter, _ *http.Request, answer *httptest.ResponseRecorder) {
	body := answer.Body.Bytes()
	w.WriteHeader(answer.Code)
	w.Write(body[:len(body)/2])
}

func (p *faultyProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	kind := "read"
	if r.Method == http.MethodPost {
		kind = "create"
	} else if !strings.HasSuffix(r.URL.Path, "/ob-institutions") {
		kind = "status"
	}
	p.calls = append(p.calls, kind)
	spoil := kind == "create" && !p.spoiled
	if spoil {
		p.spoiled = true
	}
	failStatus := kind == "status" && p.failStatus
	p.mu.Unlock()
	switch {
	case failStatus:
		http.Error(w, `{"code":"UNAVAILABLE"}`, http.StatusServiceUnavailable)
	case spoil:
		answer := httptest.NewRecorder()
		p.sb.ServeHTTP(answer, r) // the payment is made...
		p.spoil(w, r, answer)     // ...and its answer is spoiled
	default:
		p.sb.ServeHTTP(w, r)
	}
}

func (p *faultyProvider) upstreamCalls() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.calls, ",")
}

func (p *faultyProvider) setFailStatus(fail bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failStatus = fail
}

func TestASpoiledCreateAnswerStillLeadsToExactlyOnePaymentLink(t *testing.T) {
	for name, spoil := range map[string]func(http.ResponseWriter, *http.Request, *httptest.ResponseRecorder){"lost": lose, "unreadable": cutOff} {
		t.Run(name, func(t *testing.T) {
			fp := &faultyProvider{spoil: spoil}
			a := setup(t, options{timeout: 300 * time.Millisecond, upstreamFor: func(sb *sandbox.Sandbox) http.Handler { fp.sb = sb; return fp }})
			checkout := a.enter("A-1", nil)
			values := url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}
			res := a.post(checkout+"/pay", values)
			link := res.Header.Get("Location")
			if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(link, a.upstream.URL+"/checkout/") {
				t.Fatalf("after the spoiled answer: %d to %q, want a payment link", res.StatusCode, link)
			}
			if calls := fp.upstreamCalls(); !strings.HasSuffix(calls, "create,status,create") {
				t.Errorf("upstream calls %s: the status is not read between the spoiled create and the next", calls)
			}
			for range 3 {
				if res := a.post(checkout+"/pay", values); res.Header.Get("Location") != link {
					t.Errorf("a later submit goes to %q, not to the one link %q", res.Header.Get("Location"), link)
				}
			}
			if st := a.sandbox.Stats(); st.CreateCalls != 2 {
				t.Errorf("%d create calls, want the spoiled one and at most one more", st.CreateCalls)
			}
			// The spoiled payment was never handed out: the order's payment
			// is the one the shopper reached.
			status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments/A-1", shop1Token, "")
			attempts, _ := body["attempts"].([]any)
			if status != http.StatusOK || len(attempts) != 1 || body["status"] != "NOT_FOUND" {
				t.Errorf("the API reports %d %v, want the one payment handed out", status, body)
			}
		})
	}
}

func TestWhileAPaymentMayExistTheShopperIsNotToldNothingWasCharged(t *testing.T) {
	fp := &faultyProvider{spoil: lose, failStatus: true}
	a := setup(t, options{timeout: 300 * time.Millisecond, upstreamFor: func(sb *sandbox.Sandbox) http.Handler { fp.sb = sb; return fp }})
	checkout := a.enter("A-1", nil)
	values := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "name": {"Jean Dupont"}, "iban": {"FR76 3000 6000 0112 3456 7890 189"}}
	doc := page(t, a.post(checkout+"/pay", values), http.StatusServiceUnavailable)
	problem := text(doc, testid("problem"))
	if strings.Contains(problem, "Nothing was charged") || !strings.Contains(problem, "cannot tell yet") {
		t.Errorf("problem %q: the shopper must hear that it is not known yet", problem)
	}
	if doc.Find("#iban").AttrOr("value", "") != "FR76 3000 6000 0112 3456 7890 189" {
		t.Error("the typed IBAN is lost")
	}
	if st := a.sandbox.Stats(); st.CreateCalls != 1 {
		t.Errorf("%d create calls while the first one's fate is unknown, want 1", st.CreateCalls)
	}
	// Once the provider answers again, Continue settles it: one link.
	fp.setFailStatus(false)
	res := a.post(checkout+"/pay", values)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), a.upstream.URL+"/checkout/") {
		t.Fatalf("after the provider is back: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if again := a.post(checkout+"/pay", values); again.Header.Get("Location") != res.Header.Get("Location") {
		t.Error("a later submit goes to another link")
	}
	if st := a.sandbox.Stats(); st.CreateCalls != 2 {
		t.Errorf("%d create calls, want 2", st.CreateCalls)
	}
}

func TestStatusPageKeepsCheckingWhenTheProviderFails(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
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

func TestSlowProviderStillServesTheList(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{Latency: 300 * time.Millisecond}})
	page(t, a.get(a.enter("A-1", nil)+"/banks?country=FR"), http.StatusOK)
}
