package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
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

func TestThreeInstancesOneOrderOnePayment(t *testing.T) {
	databaseURL := ledgertest.PostgresURL(t)
	provider := sandbox.New(sandbox.Config{})
	var instances []*url.URL
	var first *app
	for range 3 {
		a := setup(t, options{upstream: provider, ledger: ledgertest.Open(t, databaseURL)})
		if first == nil {
			first = a
		}
		u, _ := url.Parse(a.url)
		instances = append(instances, u)
	}
	// A load balancer sending each request to the next instance.
	var next atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(instances[next.Add(1)%int64(len(instances))])
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(proxy.Close)
	link, err := url.Parse(first.link("A-1", nil))
	if err != nil {
		t.Fatal(err)
	}
	res := first.get(proxy.URL + link.RequestURI())
	checkout := proxy.URL + res.Header.Get("Location")

	const shoppers = 100
	links := make([]string, shoppers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range shoppers {
		wg.Go(func() {
			<-start
			res := first.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
			if res.StatusCode == http.StatusSeeOther {
				links[i] = res.Header.Get("Location")
			}
		})
	}
	close(start)
	wg.Wait()
	if st := provider.Stats(); st.CreateCalls != 1 || st.Payments != 1 {
		t.Errorf("%d create calls and %d payments at the provider, want 1 and 1", st.CreateCalls, st.Payments)
	}
	sent := map[string]int{}
	for _, l := range links {
		sent[l]++
	}
	if len(sent) != 1 || !strings.Contains(links[0], "/checkout/") {
		t.Errorf("the shoppers were sent to %d different places, want all %d to one payment link", len(sent), shoppers)
	}
}

func TestARestartBetweenTwoSubmitsKeepsThePayment(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		provider := sandbox.New(sandbox.Config{})
		before := setup(t, options{upstream: provider, ledger: ledgertest.Open(t, databaseURL)})
		values := url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}
		token := strings.TrimPrefix(before.enter("A-1", nil), before.url)
		first := before.post(before.url+token+"/pay", values).Header.Get("Location")
		before.ledger.Close()

		after := setup(t, options{upstream: provider, ledger: ledgertest.Open(t, databaseURL)})
		res := after.post(after.url+token+"/pay", values)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != first || first == "" {
			t.Errorf("after the restart: %d to %q, want the first payment's link %q", res.StatusCode, res.Header.Get("Location"), first)
		}
		if st := provider.Stats(); st.CreateCalls != 1 {
			t.Errorf("%d create calls, want 1", st.CreateCalls)
		}
	})
}

func TestAReusedOrderIDWithAnotherAmountIsRefused(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		a := setup(t, options{knobs: settleNow, ledger: ledgertest.Open(t, databaseURL)})
		tenEuros := func(l *order.Link) { l.Amount = "10.00" }
		checkout := a.enter("A-1", tenEuros)
		res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
		if res := a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", res.StatusCode)
		}

		// The shop makes a new link for the same order id at €99.
		ninetyNine := func(l *order.Link) { l.Amount = "99.00" }
		doc := page(t, a.get(a.link("A-1", ninetyNine)), http.StatusConflict)
		if got := text(doc, testid("error-heading")); got != "This order was already started for another amount" {
			t.Errorf("heading %q", got)
		}
		status, body, _ := a.apiCall(http.MethodPost, "/api/v1/links", shop1Token,
			`{"order":"A-1","amount":"99.00","return_url":"https://shop.example/done"}`)
		errBody, _ := body["error"].(map[string]any)
		fields, _ := errBody["fields"].([]any)
		if status != http.StatusConflict || len(fields) != 1 || fields[0].(map[string]any)["field"] != "amount" {
			t.Errorf("links API for €99: %d %v, want 409 naming amount", status, body)
		}
		// A checkout sealed for €99 some other way (before the ledger,
		// say) never shows the €10 payment as its own.
		o := order.Order{Merchant: "shop1", ID: "A-1", Amount: "99.00", Currency: "EUR", ReturnURL: "https://shop.example/done", KID: "2026-11"}
		token, err := a.sealer.Seal(o, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range []*http.Response{
			a.get(a.url + "/c/" + token + "/return"),
			a.post(a.url+"/c/"+token+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}),
		} {
			if res.StatusCode != http.StatusConflict {
				t.Errorf("%s %s with the €99 checkout: %d, want 409", res.Request.Method, res.Request.URL.Path, res.StatusCode)
			}
		}
		// The API reports the order for what it costs.
		status, body, _ = a.apiCall(http.MethodGet, "/api/v1/payments/A-1", shop1Token, "")
		if status != http.StatusOK || body["amount"] != "10.00" || body["paid"] != true {
			t.Errorf("the order: %d %v, want €10.00 paid", status, body)
		}
	})
}

func TestAfterACancelledPaymentTheShopperMayTryAgain(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	values := url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}
	first := a.post(checkout+"/pay", values).Header.Get("Location")
	if res := a.post(first, url.Values{"action": {"reject"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d", res.StatusCode)
	}
	doc := page(t, a.get(checkout+"/return"), http.StatusOK)
	if href := doc.Find(testid("try-again")).AttrOr("href", ""); !strings.Contains(href, "/banks?country=DE") {
		t.Errorf("the cancelled page offers no way to try again (%q)", href)
	}
	// It says one thing: try again here, not go back to the shop to.
	if msg := doc.Find(testid("status-message")).Text(); !strings.Contains(msg, "try again now") || strings.Contains(msg, "Go back") {
		t.Errorf("the cancelled page says %q beside its Try again button", msg)
	}
	second := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"commerzbank"}}).Header.Get("Location")
	if second == "" || second == first || !strings.Contains(second, "/checkout/") {
		t.Fatalf("after the cancel the shopper goes to %q, want a new payment link", second)
	}
	if got, ok := a.sandbox.Received("shop1~2:A-1"); !ok || got.InstitutionID != "commerzbank" {
		t.Errorf("the second attempt is not at the provider under shop1~2:A-1 with the new bank: %+v", got)
	}
	// While the second can be paid, no third is made.
	if again := a.post(checkout+"/pay", values).Header.Get("Location"); again != second {
		t.Errorf("a submit while the second payment is open goes to %q", again)
	}
}

func TestNothingPersonalIsStored(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		a := setup(t, options{ledger: ledgertest.Open(t, databaseURL)})
		typed := map[string]string{"name": "Élise Martin", "iban": "FR7630006000011234567890189", "address_line1": "3 rue de la Paix",
			"post_code": "75002", "city": "Paris", "psu_id": "ACME-4711", "email": "elise@example.com"}
		checkout := a.enter("A-1", func(l *order.Link) { l.Email = typed["email"] })
		values := url.Values{"country": {"FR"}, "bank": {"caisse-d-epargne"}, "payer_country": {"BE"}}
		for _, f := range []string{"name", "iban", "address_line1", "post_code", "city"} {
			values.Set(f, typed[f])
		}
		if res := a.post(checkout+"/pay", values); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("submit: %d", res.StatusCode)
		}
		checkout = a.enter("A-2", nil)
		if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"hypovereinsbank"}, "login_type": {"business"}, "psu_id": {typed["psu_id"]}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("submit: %d", res.StatusCode)
		}
		tables, err := a.ledger.Tables(context.Background())
		if err != nil || len(tables["orders"]) == 0 || len(tables["attempts"]) == 0 {
			t.Fatalf("tables %v, %v", tables, err)
		}
		for table, values := range tables {
			for _, v := range values {
				for field, secret := range typed {
					if strings.Contains(v, secret) {
						t.Errorf("table %s holds the shopper's %s: %q", table, field, v)
					}
				}
			}
		}
	})
}

func TestReadyIsFalseWhenTheLedgerIsUnreachable(t *testing.T) {
	a := setup(t, options{})
	if res := a.get(a.url + "/readyz"); res.StatusCode != http.StatusOK {
		t.Fatalf("ready with the ledger up: %d", res.StatusCode)
	}
	a.ledger.Close()
	if res := a.get(a.url + "/readyz"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ready with the ledger gone: %d, want 503", res.StatusCode)
	}
}

func TestWhenTheLedgerFailsMidPaymentTheShopperIsNotToldNothingWasCharged(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	page(t, a.get(checkout+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
	a.ledger.Close()
	doc := page(t, a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}), http.StatusServiceUnavailable)
	if problem := text(doc, testid("problem")); strings.Contains(problem, "Nothing was charged") || !strings.Contains(problem, "cannot tell yet") {
		t.Errorf("problem %q", problem)
	}
}

// The bank page never waits on the ledger for its popular banks: they are
// counted in the background, and a failing ledger leaves the last count
// in place instead of costing every shopper's page a query.
func TestTheBankPageShowsPopularBanksWithoutAskingTheLedger(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	a.payWith("P-1", "DE", "deutsche-bank", nil)
	checkout := a.enter("A-1", nil)
	popular := func() string {
		doc := page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
		return doc.Find(testid("popular")+" "+testid("bank")).AttrOr("data-id", "")
	}
	if got := popular(); got != "" {
		t.Errorf("popular bank %q before the count was read", got)
	}
	if err := a.health.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := popular(); got != "deutsche-bank" {
		t.Errorf("popular bank %q after a payment with deutsche-bank", got)
	}
	a.ledger.Close()
	if err := a.health.Refresh(context.Background()); err == nil {
		t.Error("the count read a closed ledger")
	}
	for range 3 {
		if got := popular(); got != "deutsche-bank" {
			t.Errorf("popular bank %q with the ledger gone, want the last count kept", got)
		}
	}
}

// TestAQuickCancelWithAReturnCountsAsCancelledAtTheBank cancels at the
// bank before anyone reads a status in between: the shopper's return
// through the return URL proves they were there, so the console's funnel
// and bank health say cancelled at the bank, not abandoned.
func TestAQuickCancelWithAReturnCountsAsCancelledAtTheBank(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("Q-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	res = a.post(res.Header.Get("Location"), url.Values{"action": {"reject"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel at the bank: %d", res.StatusCode)
	}
	doc := page(t, a.get(res.Header.Get("Location")), http.StatusOK)
	if doc.Find(testid("try-again")).Length() == 0 {
		t.Fatal("the status page after a cancellation offers no Try again")
	}
	ov, err := a.ledger.Overview(context.Background(), "shop1", time.Now().Add(-time.Hour), time.Hour, 5)
	if err != nil {
		t.Fatal(err)
	}
	if ov.Funnel.Began != 1 || ov.Attempts.Canceled != 1 || ov.Attempts.Abandoned != 0 {
		t.Errorf("funnel %+v, attempts %+v; want opened and cancelled at the bank, none abandoned", ov.Funnel, ov.Attempts)
	}
	recent, err := a.ledger.RecentBankHealth(context.Background(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(recent) != 1 || recent[0].Canceled != 1 || recent[0].Abandoned != 0 {
		t.Errorf("bank health %+v, want deutsche-bank with one cancelled at the bank", recent)
	}
}
