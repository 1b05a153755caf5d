package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

// A bank that leaves the provider's list while a link, the shop or the
// shopper's last payment still names it is shown as temporarily
// unavailable above the country's other banks: never a dead end.
func TestABankGoneFromTheListIsTemporarilyUnavailable(t *testing.T) {
	a := setup(t, options{knobs: settleNow, ttl: time.Nanosecond})
	// Paid with DKB while it is listed: this browser remembers it.
	checkout := a.enter("C-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"dkb"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("paying with DKB while listed: %d", res.StatusCode)
	}
	cookie := res.Header.Get("Set-Cookie")
	if cookie == "" {
		t.Fatal("no cookie remembers the bank")
	}
	cookie, _, _ = strings.Cut(cookie, ";")

	a.sandbox.SetKnobs(sandbox.Knobs{SettleDelay: time.Nanosecond, UnlistedBanks: map[string]bool{"DE:dkb": true}})
	const notice = "DKB Deutsche Kreditbank is temporarily unavailable. Choose another bank below."
	shows := func(what string, doc *goquery.Document) {
		t.Helper()
		if got := text(doc, testid("unavailable")); got != notice {
			t.Errorf("%s: notice %q, want %q", what, got, notice)
		}
		if doc.Find(`[data-id="dkb"]`).Length() != 0 || doc.Find(testid("banks")+" "+testid("bank")).Length() < 5 {
			t.Errorf("%s: DKB listed, or the other German banks missing", what)
		}
	}

	// The details step of a bank gone, by address or by its form.
	checkout = a.enter("C-2", nil)
	for _, res := range []*http.Response{
		a.get(checkout + "/pay?country=DE&bank=dkb"),
		a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"dkb"}}),
	} {
		to := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(to, "/banks?country=DE") || !strings.Contains(to, "unavailable=dkb") {
			t.Fatalf("the details step of a bank gone: %d to %q, want the German banks", res.StatusCode, to)
		}
		shows("details step", page(t, a.get(resolve(a.url, to)), http.StatusOK))
	}
	// A link that names it, or names it as the shopper's last bank.
	for name, change := range map[string]func(*order.Link){
		"bank":      func(l *order.Link) { l.Country, l.Bank = "DE", "dkb" },
		"last_bank": func(l *order.Link) { l.Country, l.LastBank = "DE", "dkb" },
	} {
		res := a.get(a.enter("L-"+name, change))
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("link with %s: %d", name, res.StatusCode)
		}
		shows("link with "+name, page(t, a.get(resolve(a.url, res.Header.Get("Location"))), http.StatusOK))
	}
	// This browser's last bank.
	res = a.do(http.MethodGet, a.enter("C-3", nil)+"/banks?country=DE", nil, http.Header{"Cookie": {cookie}})
	shows("the browser's last bank", page(t, res, http.StatusOK))

	// A bank no list this instance saw held: said without a name.
	fresh := setup(t, options{knobs: sandbox.Knobs{UnlistedBanks: map[string]bool{"DE:dkb": true}}})
	res = fresh.get(fresh.enter("F-1", func(l *order.Link) { l.Country, l.Bank = "DE", "dkb" }))
	doc := page(t, fresh.get(resolve(fresh.url, res.Header.Get("Location"))), http.StatusOK)
	if got := text(doc, testid("unavailable")); got != "The bank chosen for this payment is temporarily unavailable. Choose another bank below." {
		t.Errorf("a bank never seen: notice %q", got)
	}
	// A listed bank says nothing of the kind.
	if doc := page(t, fresh.get(fresh.enter("F-2", nil)+"/banks?country=DE&unavailable=commerzbank"), http.StatusOK); doc.Find(testid("unavailable")).Length() != 0 {
		t.Error("a listed bank said to be unavailable")
	}
}

// failAt makes n payments at a bank of Germany fail, each approved by the
// shopper and cancelled by the bank.
func (a *app) failAt(prefix, bank string, n int) {
	a.t.Helper()
	k := a.sandbox.Knobs()
	k.FailingBanks = map[string]float64{sandbox.BankKey("DE", bank): 1}
	a.sandbox.SetKnobs(k)
	for i := range n {
		a.payWith(prefix+"-"+string(rune('a'+i)), "DE", bank, nil)
	}
	k.FailingBanks = nil
	a.sandbox.SetKnobs(k)
}

// A bank whose payments fail for most shoppers in the last hour says so on
// its row and its details step, in every language, can still be chosen,
// and is not put among the popular banks by the ledger's counts.
func TestAFailingBankIsMarkedDegradedButCanStillBeChosen(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	for i := range 3 {
		a.payWith("OK-"+string(rune('a'+i)), "DE", "commerzbank", nil)
	}
	a.payWith("DB-1", "DE", "deutsche-bank", nil)
	a.failAt("KO", "commerzbank", 6)
	if err := a.health.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkout := a.enter("A-1", nil)
	// 3 paid of 9: failing, but 9 payments are under the 10 to judge on.
	doc := page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
	if doc.Find(testid("degraded")).Length() != 0 {
		t.Error("a bank judged on 9 payments")
	}
	a.failAt("KO2", "commerzbank", 1)
	a.health.Refresh(context.Background())

	doc = page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
	const notice = "Payments with Commerzbank are failing more often than usual right now."
	row := doc.Find(testid("banks") + ` [data-id="commerzbank"]`)
	if row.AttrOr("data-degraded", "no") == "no" || text(doc, testid("banks")+` [data-id="commerzbank"] `+testid("degraded")) != notice {
		t.Errorf("commerzbank's row: degraded %q, notice %q", row.AttrOr("data-degraded", "no"), text(doc, `[data-id="commerzbank"] `+testid("degraded")))
	}
	if doc.Find(`[data-id="deutsche-bank"] `+testid("degraded")).Length() != 0 {
		t.Error("deutsche-bank, which paid, is marked degraded")
	}
	var popular []string
	doc.Find(testid("popular") + " " + testid("bank")).Each(func(_ int, s *goqueryS) { popular = append(popular, s.AttrOr("data-id", "")) })
	if strings.Join(popular, ",") != "deutsche-bank" {
		t.Errorf("popular banks %v: commerzbank was paid with most but is failing now, want deutsche-bank alone", popular)
	}
	// Its details step says so and still lets the shopper pay.
	doc = page(t, a.get(checkout+"/pay?country=DE&bank=commerzbank"), http.StatusOK)
	if got := text(doc, testid("degraded")); got != notice {
		t.Errorf("details step notice %q", got)
	}
	if doc.Find(testid("pay-form")).Length() != 1 {
		t.Error("no way to go on with the failing bank")
	}
	// The merchant's own pins stand, marked.
	m, _ := a.merchants.Get("shop1")
	m.PopularBanks = map[string][]string{"DE": {"commerzbank"}}
	doc = page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
	if doc.Find(testid("popular")+` [data-id="commerzbank"] `+testid("degraded")).Length() != 1 {
		t.Error("a merchant's pinned bank that fails is not shown marked among the popular banks")
	}
	m.PopularBanks = nil

	// Every language says it.
	for _, choice := range i18n.Choices {
		lang := choice.Code
		checkout := a.enter("L-"+lang, func(l *order.Link) { l.Lang = lang })
		doc := page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
		want := i18n.New(lang).T("banks.degraded", "Commerzbank")
		if got := text(doc, testid("banks")+` [data-id="commerzbank"] `+testid("degraded")); got != want || strings.Contains(got, "banks.degraded") {
			t.Errorf("%s: notice %q, want %q", lang, got, want)
		}
	}
}

// bankHealthAnswer is GET /api/v1/banks/health's body.
type bankHealthAnswer struct {
	Window      string    `json:"window"`
	GeneratedAt time.Time `json:"generated_at"`
	Banks       []struct {
		InstitutionID       string   `json:"institution_id"`
		Country             string   `json:"country"`
		Name                string   `json:"name"`
		Started             int64    `json:"started"`
		Completed           int64    `json:"completed"`
		Canceled            int64    `json:"canceled"`
		Abandoned           int64    `json:"abandoned"`
		Open                int64    `json:"open"`
		SuccessRate         *float64 `json:"success_rate"`
		MedianSecondsToPaid *float64 `json:"median_seconds_to_paid"`
		Degraded            bool     `json:"degraded"`
	} `json:"banks"`
}

func TestTheBankHealthAPIPerWindowAndCountry(t *testing.T) {
	a := setup(t, options{knobs: settleNow, health: bankhealth.Thresholds{MinFinished: 2, MinSuccess: 0.5}})
	get := func(token, query string) (*http.Response, bankHealthAnswer) {
		t.Helper()
		res := a.do(http.MethodGet, a.url+"/api/v1/banks/health"+query, nil, http.Header{"Authorization": {"Bearer " + token}})
		var body bankHealthAnswer
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		return res, body
	}
	if res, _ := get(shop1Token, ""); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("before the first reading: %d, Retry-After %q; want 503 and when to come back", res.StatusCode, res.Header.Get("Retry-After"))
	}
	a.payWith("P-1", "DE", "deutsche-bank", nil)
	a.payWith("P-2", "FR", "boursobank", nil)
	a.failAt("KO", "commerzbank", 2)
	// An order of the other shop is counted too.
	checkout := a.follow(a.linkOf("shop2", "S-1", nil))
	if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("shop2's payment: %d", res.StatusCode)
	}
	a.health.Refresh(context.Background())

	for _, window := range []string{"", "?window=1h", "?window=24h", "?window=7d"} {
		res, body := get(shop1Token, window)
		if res.StatusCode != http.StatusOK || body.Window != map[string]string{"": "1h"}[window]+strings.TrimPrefix(window, "?window=") {
			t.Fatalf("%q: %d, window %q", window, res.StatusCode, body.Window)
		}
		if time.Since(body.GeneratedAt) > time.Minute {
			t.Errorf("%q: generated at %v", window, body.GeneratedAt)
		}
		byID := map[string]int{}
		for i, b := range body.Banks {
			byID[b.Country+":"+b.InstitutionID] = i
		}
		if len(body.Banks) != 3 {
			t.Fatalf("%q: banks %+v, want three", window, body.Banks)
		}
		db := body.Banks[byID["DE:deutsche-bank"]]
		if db.Name != "Deutsche Bank" || db.Started != 2 || db.Completed != 1 || db.Open != 1 || db.SuccessRate == nil || *db.SuccessRate != 1 || db.Degraded {
			t.Errorf("%q: deutsche-bank %+v, want 2 started (one of shop2, open), 1 paid, rate 1", window, db)
		}
		if db.MedianSecondsToPaid == nil || *db.MedianSecondsToPaid > 60 {
			t.Errorf("%q: deutsche-bank's median time to pay %v", window, db.MedianSecondsToPaid)
		}
		cb := body.Banks[byID["DE:commerzbank"]]
		if cb.Started != 2 || cb.Completed != 0 || cb.Canceled+cb.Abandoned != 2 || cb.SuccessRate == nil || *cb.SuccessRate != 0 ||
			cb.MedianSecondsToPaid != nil || !cb.Degraded {
			t.Errorf("%q: commerzbank %+v, want 2 failed, rate 0, no median, degraded", window, cb)
		}
	}
	_, de := get(shop2Token, "?window=24h&country=de")
	_, it := get(shop2Token, "?country=IT")
	if len(de.Banks) != 2 || len(it.Banks) != 0 || it.Banks == nil {
		t.Errorf("by country: DE %d banks, IT %v; want 2 and an empty list", len(de.Banks), it.Banks)
	}
	for query, field := range map[string]string{"?window=2h": "window", "?country=Germany": "country"} {
		res := a.do(http.MethodGet, a.url+"/api/v1/banks/health"+query, nil, http.Header{"Authorization": {"Bearer " + shop1Token}})
		var body struct {
			Error struct {
				Fields []struct{ Field string } `json:"fields"`
			} `json:"error"`
		}
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || len(body.Error.Fields) != 1 || body.Error.Fields[0].Field != field {
			t.Errorf("%s: %d %+v, want 400 naming %s", query, res.StatusCode, body, field)
		}
	}
	if res, _ := get("wrong", ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", res.StatusCode)
	}
}
