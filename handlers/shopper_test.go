package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/rules"
)

func TestEntryRefusesBadLinksWithAClearPage(t *testing.T) {
	a := setup(t, options{})
	genuine := a.link("A-1", nil)
	tampered := strings.Replace(genuine, "amount=49.90", "amount=1.00", 1)
	u, _ := url.Parse(genuine)
	q := u.Query()
	q.Set("sig", strings.Repeat("x", 43))
	wrongSig := a.url + "/checkout?" + q.Encode()
	q = u.Query()
	q.Set("merchant", "shop2")
	unknownMerchant := a.url + "/checkout?" + q.Encode()
	expired := a.link("A-1", func(l *order.Link) { l.TTL = -time.Minute })
	badOrigin := a.link("A-1", func(l *order.Link) { l.ReturnURL = "https://evil.example/done" })

	tests := []struct {
		name, url string
		status    int
		heading   string
	}{
		{"tampered amount", tampered, http.StatusForbidden, "This payment link is not valid"},
		{"wrong signature", wrongSig, http.StatusForbidden, "This payment link is not valid"},
		{"unknown merchant", unknownMerchant, http.StatusForbidden, "This payment link is not valid"},
		{"expired", expired, http.StatusForbidden, "This payment link has expired"},
		{"return origin not allowed", badOrigin, http.StatusBadRequest, "This payment link cannot be used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := page(t, a.get(tt.url), tt.status)
			if got := text(doc, testid("error-heading")); got != tt.heading {
				t.Errorf("heading %q, want %q", got, tt.heading)
			}
			if msg := text(doc, testid("error-message")); !strings.Contains(msg, "shop") {
				t.Errorf("message %q does not tell the shopper what to do", msg)
			}
		})
	}
	if res := a.get(genuine); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/c/") {
		t.Errorf("genuine link: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	doc := page(t, a.get(a.url+"/c/not-a-token"), http.StatusNotFound)
	if got := text(doc, testid("error-heading")); got != "This checkout address is not valid" {
		t.Errorf("forged token: heading %q", got)
	}
}

func TestCountryPage(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.do(http.MethodGet, checkout, nil, http.Header{"Accept-Language": {"de-AT,de;q=0.9"}}), http.StatusOK)
	first := doc.Find(testid("country")).First()
	if first.AttrOr("data-code", "") != "AT" || !strings.Contains(first.Text(), "Österreich") || !strings.Contains(first.Text(), "Vorschlag") {
		t.Errorf("first country %q, want Österreich suggested, in German, from Accept-Language", first.Text())
	}
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "de" {
		t.Errorf("<html lang=%q>, want de", lang)
	}
	if n := doc.Find(testid("country")).Length(); n < 15 {
		t.Errorf("%d countries, want the sandbox's 15+", n)
	}
	if got := doc.Find(testid("amount")).Text(); got != "49,90\u00a0€" {
		t.Errorf("amount %q, want the German way", got)
	}
	if got := text(doc, testid("payee")); !strings.HasPrefix(got, "Shop <One>") {
		t.Errorf("merchant name %q, want it shown as text", got)
	}
	if got := text(doc, testid("merchant")); got != "Shop One" {
		t.Errorf("header %q, want the theme's title", got)
	}

	// A link naming the country skips this step.
	withCountry := a.enter("A-2", func(l *order.Link) { l.Country = "FR" })
	res := a.get(withCountry)
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/banks?country=FR") {
		t.Errorf("link with country: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	// ... and naming the bank too skips to the details.
	withBank := a.enter("A-3", func(l *order.Link) { l.Country, l.Bank = "FR", "credit-agricole" })
	res = a.get(withBank)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/pay?") || !strings.Contains(loc, "bank=credit-agricole") {
		t.Errorf("link with bank: %d to %q", res.StatusCode, loc)
	}
}

func TestBanksPageSearch(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	all := page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	total := all.Find(testid("bank")).Length()
	if total < 5 {
		t.Fatalf("%d French banks", total)
	}
	if all.Find(`[data-id^="test-bank"]`).Length() != 0 {
		t.Error("test banks listed outside sandbox mode")
	}
	tests := []struct{ query, want string }{
		{"credit agri", "Crédit Agricole"},
		{"CRÉDIT-AGRICOLE", "Crédit Agricole"},
		{"AGRIFR", "Crédit Agricole"},
	}
	for _, tt := range tests {
		doc := page(t, a.get(checkout+"/banks?country=FR&q="+url.QueryEscape(tt.query)), http.StatusOK)
		names := doc.Find(testid("bank-name"))
		if names.Length() != 1 || text(doc, testid("bank-name")) != tt.want {
			t.Errorf("search %q found %q, want only %q", tt.query, text(doc, testid("bank-name")), tt.want)
		}
		if got := doc.Find(testid("query")).AttrOr("value", ""); got != tt.query {
			t.Errorf("search box holds %q, want %q kept", got, tt.query)
		}
		if got := text(doc, testid("count")); got != fmt.Sprintf("Matching banks: 1 of %d", total) {
			t.Errorf("count %q", got)
		}
	}
	doc := page(t, a.get(checkout+"/banks?country=FR&q=zzzz"), http.StatusOK)
	if got := text(doc, testid("count")); got != "No bank matches your search." {
		t.Errorf("no match: count %q", got)
	}
	// A country without banks goes back to the country list.
	if res := a.get(checkout + "/banks?country=US"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("unknown country: %d", res.StatusCode)
	}
}

func TestDetailsFormKeepsValuesAndNamesTheField(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	form := page(t, a.get(checkout+"/pay?country=FR&bank=credit-agricole"), http.StatusOK)
	if form.Find(`label[for="iban"]`).Text() != "IBAN" || form.Find(`input#name[autocomplete="name"]`).Length() != 1 {
		t.Fatalf("form lacks a labelled IBAN and name: %s", text(form, testid("pay-form")))
	}
	// The form posts where it is, so that in a merchant's frame its errors
	// are answered inside the frame.
	if target, ok := form.Find(testid("pay-form")).Attr("target"); ok {
		t.Errorf("the form posts to %q, not where it is", target)
	}

	values := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "name": {"Jean <b>Dupont</b>"}, "iban": {"FR76 3000 6000 0112 3456 7890 188"}}
	doc := page(t, a.post(checkout+"/pay", values), http.StatusUnprocessableEntity)
	if got := text(doc, testid("error-summary")); !strings.Contains(got, "IBAN") {
		t.Errorf("error summary %q does not name the IBAN", got)
	}
	if got := doc.Find(`#error-summary a[href="#iban"]`).Length(); got != 1 {
		t.Error("the summary does not link to the IBAN field")
	}
	if got := text(doc, testid("field-iban")+" "+testid("field-error")); !strings.Contains(got, "check digits") {
		t.Errorf("error beside the IBAN %q", got)
	}
	if doc.Find(`#iban`).AttrOr("aria-invalid", "") != "true" || doc.Find(`#name`).AttrOr("aria-invalid", "") != "" {
		t.Error("aria-invalid is not on the IBAN alone")
	}
	if got := doc.Find("#name").AttrOr("value", ""); got != "Jean <b>Dupont</b>" {
		t.Errorf("name kept as %q", got)
	}
	if got := doc.Find("#iban").AttrOr("value", ""); got != "FR76 3000 6000 0112 3456 7890 188" {
		t.Errorf("IBAN kept as %q", got)
	}
	if a.sandbox.Stats().CreateCalls != 0 {
		t.Error("an invalid form reached the provider")
	}

	empty := page(t, a.post(checkout+"/pay", url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "iban": {"FR7630006000011234567890189"}}), http.StatusUnprocessableEntity)
	if got := text(empty, testid("field-name")+" "+testid("field-error")); got != "Enter the account holder's name." {
		t.Errorf("empty name: %q", got)
	}
	if got := empty.Find("#iban").AttrOr("value", ""); got != "FR7630006000011234567890189" {
		t.Errorf("a good IBAN was not kept beside a missing name: %q", got)
	}
}

func TestOneClickSummaryWhenTheBankNeedsNothing(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
	if doc.Find(`form input:not([type="hidden"])`).Length() != 0 {
		t.Error("a bank without extraFields asks for details")
	}
	if got := text(doc, "h1"); got != "Pay €49.90 with Deutsche Bank" {
		t.Errorf("heading %q", got)
	}
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/checkout/") {
		t.Fatalf("continue: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	got, ok := a.sandbox.Received("shop1:A-1")
	if !ok || got.InstitutionID != "deutsche-bank" || got.InstitutionCountryCode != "DE" || got.Payer != nil || got.Amount != "49.90" {
		t.Errorf("provider received %+v", got)
	}
	if got.Customization == nil || rules.Customization(*got.Customization) != *a.shop.Customization {
		t.Errorf("provider received customization %+v, want the merchant's %+v", got.Customization, a.shop.Customization)
	}
	if !strings.HasPrefix(got.ReturnURL, a.url+"/c/") || !strings.HasSuffix(got.ReturnURL, "/return") {
		t.Errorf("return_url %q is not our status page", got.ReturnURL)
	}
}

func TestSecondSubmitGoesToTheSamePayment(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{Latency: 100 * time.Millisecond}})
	checkout := a.enter("A-1", nil)
	values := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "name": {"Jean Dupont"}, "iban": {"FR76 3000 6000 0112 3456 7890 189"}}

	const n = 8
	locations := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := a.post(checkout+"/pay", values)
			if res.StatusCode == http.StatusSeeOther {
				locations[i] = res.Header.Get("Location")
			}
		})
	}
	wg.Wait()
	again := a.post(checkout+"/pay", values)
	for i, loc := range append(locations, again.Header.Get("Location")) {
		if loc == "" || loc != locations[0] {
			t.Errorf("submit %d went to %q, want %q", i, loc, locations[0])
		}
	}
	if st := a.sandbox.Stats(); st.CreateCalls != 1 || st.Payments != 1 {
		t.Errorf("provider saw %d create calls and has %d payments, want 1 and 1", st.CreateCalls, st.Payments)
	}
	if got, _ := a.sandbox.Received("shop1:A-1"); got.Payer == nil || got.Payer.IBAN != "FR7630006000011234567890189" || got.Payer.Name != "Jean Dupont" {
		t.Errorf("payer %+v", got.Payer)
	}
}

func TestStatusPageAndTheWayBack(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{SettleDelay: time.Nanosecond}})
	checkout := a.enter("A-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	link := res.Header.Get("Location")

	pending := page(t, a.get(checkout+"/return"), http.StatusOK)
	if got := text(pending, testid("status-heading")); got != "Waiting for your bank" {
		t.Errorf("pending heading %q", got)
	}
	refresh := metaRefresh(t, pending)
	if !strings.HasPrefix(refresh, "2;url=") || !strings.HasSuffix(refresh, "/return?n=1") {
		t.Errorf("refresh %q, want 2 seconds to attempt 1", refresh)
	}
	status := pending.Find(testid("status"))
	if status.AttrOr("data-refresh", "") != "2" || !strings.HasSuffix(status.AttrOr("data-next", ""), "/return?n=1") {
		t.Errorf("the script's schedule: refresh %q, next %q", status.AttrOr("data-refresh", ""), status.AttrOr("data-next", ""))
	}
	later := page(t, a.get(checkout+"/return?n=4"), http.StatusOK)
	if refresh := metaRefresh(t, later); !strings.HasPrefix(refresh, "13;") {
		t.Errorf("refresh after 4 checks %q, want a longer pause", refresh)
	}

	// Approve at the sandbox's hosted page, as the shopper would.
	approve := a.post(link, url.Values{"action": {"approve"}})
	if approve.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", approve.StatusCode)
	}
	back, _ := url.Parse(approve.Header.Get("Location"))
	if back.Path != strings.TrimPrefix(checkout, a.url)+"/return" {
		t.Fatalf("the provider sent the shopper to %q", back)
	}
	paid := page(t, a.get(back.String()), http.StatusOK)
	if got := text(paid, testid("status-heading")); got != "Paid" {
		t.Errorf("after approval: %q", got)
	}
	if metaRefresh(t, paid) != "" || paid.Find(testid("status")).AttrOr("data-next", "") != "" {
		t.Error("a final status still refreshes")
	}
	wayBack, _ := url.Parse(paid.Find(testid("way-back")).AttrOr("href", ""))
	q := wayBack.Query()
	if wayBack.Host != "shop.example" || q.Get("merchant_order_id") != "A-1" || q.Get("status") != "COMPLETED" || q.Get("kid") != "2026-11" {
		t.Errorf("way back %s", wayBack)
	}
	if !order.VerifyWayBack(secret, q) {
		t.Errorf("way back %s does not verify", wayBack)
	}
}

func TestStatusPageWordsForEveryStatus(t *testing.T) {
	for status, want := range map[string]string{
		"NOT_FOUND": "Waiting for your bank", "IN_PROGRESS": "Waiting for your bank",
		"ACCEPTED_SETTLEMENT_IN_PROCESS": "Payment accepted", "COMPLETED": "Paid",
		"CANCELED": "Payment cancelled", "ON_HOLD_FOR_REVIEW": "Your payment is being processed",
	} {
		t.Run(status, func(t *testing.T) {
			a := setup(t, options{upstream: fakeProvider(t, status, nil)})
			doc := page(t, a.get(a.paidOnce("A-1")+"/return"), http.StatusOK)
			if got := text(doc, testid("status-heading")); got != want {
				t.Errorf("heading %q, want %q", got, want)
			}
		})
	}
}

func TestUpstreamAndShopperTextIsShownAsText(t *testing.T) {
	evil := `<img src=x onerror=alert(1)>Bank`
	a := setup(t, options{upstream: fakeProvider(t, "NOT_FOUND", []string{evil})})
	checkout := a.enter(`<script>alert("order")</script>`, nil)

	banksPage := a.get(checkout + "/banks?country=FR")
	doc := page(t, banksPage, http.StatusOK)
	if got := text(doc, testid("bank-name")); got != evil {
		t.Errorf("bank name shown as %q", got)
	}
	if doc.Find("img[onerror]").Length() != 0 || doc.Find("script:not([src])").Length() != 0 {
		t.Error("HTML from the provider or the order id became markup")
	}
	pay := page(t, a.get(checkout+"/pay?country=FR&bank=evil"), http.StatusOK)
	if got := text(pay, testid("order-id")); got != `<script>alert("order")</script>` {
		t.Errorf("order id shown as %q", got)
	}
	if got := text(pay, "h1"); !strings.Contains(got, evil) || pay.Find("img[onerror]").Length() != 0 {
		t.Errorf("pay heading %q", got)
	}
	status := page(t, a.get(checkout+"/return"), http.StatusOK)
	if status.Find("script:not([src])").Length() != 0 {
		t.Error("the order id became a script on the status page")
	}
}

// metaRefresh is the content of the page's no-script refresh, "" for none.
func metaRefresh(t *testing.T, doc *goquery.Document) string {
	t.Helper()
	var content string
	doc.Find("head noscript").Each(func(_ int, s *goquery.Selection) {
		inner, err := goquery.NewDocumentFromReader(strings.NewReader(s.Text()))
		if err != nil {
			t.Fatal(err)
		}
		content = inner.Find(`meta[http-equiv="refresh"]`).AttrOr("content", "")
	})
	return content
}

// From a merchant's frame the payment's link is not followed in the frame
// (banks refuse to be framed): a page leads to it in the whole window.
func TestFromAFrameTheBankOpensInTheWholeWindow(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	form := url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}
	// At top level the shopper goes straight to the bank.
	res := a.post(checkout+"/pay", form)
	link := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(link, "/checkout/") {
		t.Fatalf("top level: %d to %q", res.StatusCode, link)
	}
	for _, header := range []http.Header{{"Sec-Fetch-Dest": {"iframe"}}, {"X-Checkout-Frame": {"1"}}} {
		res := a.do(http.MethodPost, checkout+"/pay", form, header)
		doc := page(t, res, http.StatusOK)
		bank := doc.Find(testid("to-bank"))
		if bank.AttrOr("target", "") != "_top" || bank.AttrOr("href", "") != link {
			t.Errorf("%v: the way to the bank leads to %q in %q, want %q in _top", header, bank.AttrOr("href", ""), bank.AttrOr("target", ""), link)
		}
	}
}

// The IBAN's example follows the bank's country, not the page's language,
// and the login's hint says why it is asked and that no password is.
func TestTheFormSpeaksOfTheBanksCountry(t *testing.T) {
	a := setup(t, options{})
	for _, c := range []struct{ lang, country, bank, example string }{
		{"en", "ES", "santander", "ES91 2100 0418 4502 0005 1332"},
		{"de", "FR", "credit-agricole", "FR76 3000 6000 0112 3456 7890 189"},
		{"fr", "DE", "santander", "DE89 3704 0044 0532 0130 00"},
	} {
		checkout := a.enter("A-"+c.lang, func(l *order.Link) { l.Lang = c.lang })
		doc := page(t, a.get(checkout+"/pay?country="+c.country+"&bank="+c.bank), http.StatusOK)
		if hint := text(doc, "#iban-hint"); !strings.Contains(hint, c.example) {
			t.Errorf("%s page, bank in %s: IBAN hint %q, want the example %s", c.lang, c.country, hint, c.example)
		}
	}
	checkout := a.enter("B-1", nil)
	doc := page(t, a.get(checkout+"/pay?country=DE&bank=hypovereinsbank"), http.StatusOK)
	if hint := text(doc, "#psu_id-hint"); !strings.Contains(hint, "password") || !strings.Contains(hint, "right account") {
		t.Errorf("the login hint %q does not say why it is asked or that no password is", hint)
	}
}

// An error inside a checkout leads back to the shop, with the order's true
// status signed; outside a checkout there is no shop to go back to. The
// error here: the provider has never answered with a banks list.
func TestAnErrorPageLeadsBackToTheShop(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	listDown := func(sb *sandbox.Sandbox) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/ob-institutions") {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			sb.ServeHTTP(w, r)
		})
	}
	// Another instance on the same ledger whose provider never lists banks.
	down := setup(t, options{ledger: a.ledger, upstreamFor: listDown, timeout: 200 * time.Millisecond})
	doc := page(t, down.get(down.enter("A-1", nil)+"/banks?country=FR"), http.StatusServiceUnavailable)
	back, err := url.Parse(doc.Find(testid("way-back")).AttrOr("href", ""))
	if err != nil || back.Host != "shop.example" || back.Query().Get("status") != "NOT_FOUND" || !order.VerifyWayBack(secret, back.Query()) {
		t.Errorf("the error page's way back is %v", back)
	}
	// Once paid, the way back from an error says so.
	a.payWith("A-2", "DE", "deutsche-bank", nil)
	doc = page(t, down.get(down.enter("A-2", nil)+"/banks?country=FR"), http.StatusServiceUnavailable)
	if back, _ := url.Parse(doc.Find(testid("way-back")).AttrOr("href", "")); back.Query().Get("status") != "COMPLETED" {
		t.Errorf("after paying, the error page's way back says %q", back.Query().Get("status"))
	}
	if doc := page(t, a.get(a.url+"/c/forged"), http.StatusNotFound); doc.Find(testid("way-back")).Length() != 0 {
		t.Error("a page of no checkout offers a way back")
	}
}
