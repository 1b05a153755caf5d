package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/settings"
)

// linkStore makes shop1's payment links, as the console does.
func (a *app) linkStore() *links.Store {
	return &links.Store{Ledger: a.ledger, Keys: testSettingsKeys, BaseURL: a.url}
}

// paymentLink makes one of shop1's payment links.
func (a *app) paymentLink(d links.Draft) ledger.PaymentLink {
	a.t.Helper()
	made, err := a.linkStore().Make(context.Background(), settings.Actor{Name: "support@shop.example"}, a.shop, d)
	if err != nil {
		a.t.Fatal(err)
	}
	return made.Link
}

// openLink opens a payment link as its payer and returns the checkout it
// leads to.
func (a *app) openLink(id string) string {
	a.t.Helper()
	res := a.get(a.url + links.Route + id)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/c/") {
		a.t.Fatalf("opening link %s: %d to %q, want 303 to a checkout", id, res.StatusCode, res.Header.Get("Location"))
	}
	return a.url + res.Header.Get("Location")
}

var atTheBank = url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}

// TestASingleLinkIsPaidOnceHoweverOftenItIsSubmitted: twenty submits at
// once of the link's checkout make one payment; a checkout of the link
// opened in another browser is told the link is being paid and starts
// nothing; once paid, the link shows its receipt in the payer's language
// and starts nothing.
func TestASingleLinkIsPaidOnceHoweverOftenItIsSubmitted(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		a := setup(t, options{knobs: settleNow, ledger: ledgertest.Open(t, databaseURL)})
		p := a.paymentLink(links.Draft{Amount: "120", Description: "Invoice 2026-117, kitchen repair", Reference: "INV-2026-117", Lang: "de"})
		checkouts := []string{a.openLink(p.ID), a.openLink(p.ID)}
		doc := page(t, a.get(checkouts[0]+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
		if got := text(doc, testid("description")); got != "Invoice 2026-117, kitchen repair" {
			t.Errorf("the checkout shows the description %q", got)
		}
		if got := text(doc, testid("order-id")); got != "INV-2026-117" {
			t.Errorf("the checkout shows the reference %q", got)
		}
		if lang := doc.Find("html").AttrOr("lang", ""); lang != "de" {
			t.Errorf("the checkout speaks %q, want the link's de", lang)
		}
		const submits = 20
		sent := make([]string, submits)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range submits {
			wg.Go(func() {
				<-start
				if res := a.post(checkouts[0]+"/pay", atTheBank); res.StatusCode == http.StatusSeeOther {
					sent[i] = res.Header.Get("Location")
				}
			})
		}
		close(start)
		wg.Wait()
		if st := a.sandbox.Stats(); st.CreateCalls != 1 || st.Payments != 1 {
			t.Fatalf("%d create calls, %d payments at the provider; want one", st.CreateCalls, st.Payments)
		}
		for i, to := range sent {
			if to != sent[0] || to == "" {
				t.Fatalf("submit %d went to %q, submit 0 to %q", i, to, sent[0])
			}
		}
		// The other browser's checkout is told, and handed nothing.
		other := a.post(checkouts[1]+"/pay", atTheBank)
		doc = page(t, other, http.StatusConflict)
		if doc.Find(testid("link-ended")).AttrOr("data-state", "") != "in-progress" || strings.Contains(doc.Text(), "Deutsche Bank") {
			t.Errorf("another browser's submit while the link is paid: %q", text(doc, testid("link-ended-heading")))
		}
		if res := a.post(sent[0], url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", res.StatusCode)
		}
		status := page(t, a.get(checkouts[0]+"/return"), http.StatusOK)
		back := status.Find(testid("way-back")).AttrOr("href", "")
		if !strings.HasPrefix(back, a.url+links.Route+p.ID+"?r=") || text(status, testid("way-back")) != "Ihre Quittung ansehen" {
			t.Errorf("the way back is %q (%q), want the payer's receipt", back, text(status, testid("way-back")))
		}
		// The payer's own receipt names their bank; the link's address,
		// which anyone may open, nothing of the payer's.
		for at, bank := range map[string]string{back: "Deutsche Bank", a.url + links.Route + p.ID: ""} {
			doc := page(t, a.get(at), http.StatusOK)
			r := doc.Find(testid("receipt"))
			if r.AttrOr("data-kind", "") != "paid" || text(doc, testid("receipt-status")) != "Bezahlt" ||
				text(doc, testid("amount")) != "120,00 €" || text(doc, testid("payee")) != "Shop <One>" ||
				text(doc, testid("order-id")) != "INV-2026-117" || text(doc, testid("receipt-bank")) != bank || text(doc, testid("receipt-date")) == "" {
				t.Errorf("receipt at %s: kind %q, status %q, amount %q, payee %q, reference %q, bank %q", at, r.AttrOr("data-kind", ""),
					text(doc, testid("receipt-status")), text(doc, testid("amount")), text(doc, testid("payee")), text(doc, testid("order-id")), text(doc, testid("receipt-bank")))
			}
		}
		// The checkout opened before it was paid starts nothing either.
		if res := a.post(checkouts[1]+"/pay", url.Values{"country": {"DE"}, "bank": {"commerzbank"}}); res.StatusCode != http.StatusSeeOther ||
			!strings.Contains(res.Header.Get("Location"), "/return") {
			t.Errorf("a submit after paying: %d to %q, want the status page", res.StatusCode, res.Header.Get("Location"))
		}
		if st := a.sandbox.Stats(); st.CreateCalls != 1 {
			t.Errorf("%d create calls after paying, want 1", st.CreateCalls)
		}
	})
}

// TestAReusableLinksLimitHoldsForPayersArrivingAtOnce: a link for two
// payments, eight payers submitting at once: two payments are made, the
// others are told every payment is under way, and nothing is charged them.
func TestAReusableLinksLimitHoldsForPayersArrivingAtOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		a := setup(t, options{ledger: ledgertest.Open(t, databaseURL)})
		p := a.paymentLink(links.Draft{Amount: "15", Description: "Club fee", Reference: "FEE", Kind: ledger.LinkReusable, MaxPayments: "2"})
		const payers = 8
		checkouts := make([]string, payers)
		for i := range payers {
			checkouts[i] = a.openLink(p.ID)
		}
		codes := make([]int, payers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range payers {
			wg.Go(func() {
				<-start
				codes[i] = a.post(checkouts[i]+"/pay", atTheBank).StatusCode
			})
		}
		close(start)
		wg.Wait()
		paying, busy := 0, 0
		for _, c := range codes {
			switch c {
			case http.StatusSeeOther:
				paying++
			case http.StatusConflict:
				busy++
			}
		}
		if paying != 2 || busy != payers-2 || a.sandbox.Stats().Payments != 2 {
			t.Errorf("%d payers sent to the bank, %d told it is busy, %d payments at the provider: want 2, %d, 2 (codes %v)",
				paying, busy, a.sandbox.Stats().Payments, payers-2, codes)
		}
		doc := page(t, a.get(a.url+links.Route+p.ID), http.StatusConflict)
		if doc.Find(testid("link-ended")).AttrOr("data-state", "") != "busy" {
			t.Errorf("a new payer of a busy link is not told so")
		}
	})
}

// TestACancelIsSeenByEveryInstance: one instance cancels, the other, on the
// same database, neither opens the link nor starts a payment its payer
// had begun to choose.
func TestACancelIsSeenByEveryInstance(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one := setup(t, options{ledger: ledgertest.Open(t, databaseURL)})
		two := setup(t, options{upstream: one.sandbox, ledger: ledgertest.Open(t, databaseURL)})
		p := one.paymentLink(links.Draft{Amount: "49.90", Description: "Phone order 7", Lang: "fr"})
		if !strings.HasPrefix(p.Reference, "PL-") {
			t.Errorf("a link made without a reference has %q", p.Reference)
		}
		checkout := two.openLink(p.ID)
		if _, err := one.linkStore().Cancel(context.Background(), settings.Actor{Name: "owner@shop.example"}, "shop1", p.ID); err != nil {
			t.Fatal(err)
		}
		doc := page(t, two.post(checkout+"/pay", atTheBank), http.StatusGone)
		if doc.Find(testid("link-ended")).AttrOr("data-state", "") != ledger.LinkCancelled || text(doc, testid("link-ended-heading")) != "Ce lien de paiement a été annulé" {
			t.Errorf("a submit after the cancel: %q", text(doc, testid("link-ended-heading")))
		}
		doc = page(t, two.get(two.url+links.Route+p.ID), http.StatusGone)
		// The payer is told whom to ask for a new link: the shop, by name.
		if msg := text(doc, testid("link-ended-message")); !strings.HasSuffix(msg, "demandez un nouveau lien à Shop <One>.") || strings.Contains(msg, "%!") {
			t.Errorf("the cancelled link's page reads %q", msg)
		}
		if st := one.sandbox.Stats(); st.CreateCalls != 0 {
			t.Errorf("%d payments made after the cancel", st.CreateCalls)
		}
	})
}

func TestAnExpiredLinkSaysSoInThePayersLanguage(t *testing.T) {
	a := setup(t, options{})
	p := a.paymentLink(links.Draft{Amount: "10", Description: "Parking", Lang: "de", Expiry: time.Hour})
	a.ledger.UseClock(func() time.Time { return time.Now().Add(2 * time.Hour) })
	doc := page(t, a.get(a.url+links.Route+p.ID), http.StatusGone)
	if doc.Find(testid("link-ended")).AttrOr("data-state", "") != ledger.LinkExpired || text(doc, testid("link-ended-heading")) != "Dieser Zahlungslink ist abgelaufen" {
		t.Errorf("an expired link: %q", text(doc, testid("link-ended-heading")))
	}
	if doc.Find(testid("receipt")).Length() != 0 {
		t.Error("an expired link that was never paid shows a receipt")
	}
}

// TestUnknownLinksAreAllAlike: a malformed id, a well-formed unknown one and
// a receipt that is not the link's answer the same 404 page.
func TestUnknownLinksAreAllAlike(t *testing.T) {
	a := setup(t, options{})
	p := a.paymentLink(links.Draft{Amount: "10", Description: "Parking"})
	other := a.paymentLink(links.Draft{Amount: "10", Description: "Other"})
	checkout := a.openLink(other.ID)
	token := strings.TrimPrefix(checkout, a.url+"/c/")
	var bodies []string
	for _, path := range []string{"/l/short", "/l/" + strings.Repeat("z", 14), "/l/" + strings.ToUpper(p.ID), "/l/" + p.ID + "?r=" + token, "/l/" + p.ID + "?r=garbage"} {
		doc := page(t, a.get(a.url+path), http.StatusNotFound)
		bodies = append(bodies, text(doc, "h1"))
	}
	for _, b := range bodies {
		if b != bodies[0] {
			t.Errorf("unknown links read differently: %q", bodies)
		}
	}
}

// TestTheAPIMakesFollowsAndCancelsPaymentLinks: every answer is held to
// the OpenAPI document by the tests' wrapper.
func TestTheAPIMakesFollowsAndCancelsPaymentLinks(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	const base = "/api/v1/payment-links"
	code, body, _ := a.apiCall("POST", base, shop1Token, `{"amount":"25.00","description":"Club fee 2026","reference":"FEE-26","lang":"de","kind":"reusable","max_payments":2,"expires_in":86400}`)
	if code != http.StatusCreated || body["state"] != "open" || body["kind"] != "reusable" || body["reference"] != "FEE-26" || body["payments"] != float64(0) || body["paid_amount"] != "0.00" {
		t.Fatalf("create: %d %v", code, body)
	}
	id, _ := body["id"].(string)
	if body["url"] != a.url+links.Route+id || !links.ValidID(id) {
		t.Errorf("url %v for id %q", body["url"], id)
	}
	code, body, _ = a.apiCall("POST", base, shop1Token, `{"amount":"1","description":"Again","reference":"FEE-26"}`)
	if code != http.StatusConflict || errorCode(body) != "reference_taken" || !strings.Contains(fmt.Sprint(body), id) {
		t.Errorf("a reference in use: %d %v", code, body)
	}
	code, body, _ = a.apiCall("POST", base, shop1Token, `{"amount":"12.345","description":"","lang":"xx","expires_in":60,"kind":"single","max_payments":3}`)
	if got := fmt.Sprint(fieldNames(body)); code != http.StatusBadRequest || !strings.Contains(got, "amount") || !strings.Contains(got, "description") ||
		!strings.Contains(got, "lang") || !strings.Contains(got, "expires_in") || !strings.Contains(got, "max_payments") {
		t.Errorf("a bad link: %d, fields %s", code, got)
	}
	// A payer pays through the link; the payment and its events say so.
	checkout := a.openLink(id)
	res := a.post(checkout+"/pay", atTheBank)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %d", res.StatusCode)
	}
	a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}})
	page(t, a.get(checkout+"/return"), http.StatusOK)
	code, body, _ = a.apiCall("GET", "/api/v1/payments/FEE-26-1", shop1Token, "")
	if code != http.StatusOK || body["payment_link"] != id || body["paid"] != true {
		t.Errorf("the link's payment: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", "/api/v1/events", shop1Token, "")
	if events, _ := body["events"].([]any); code != http.StatusOK || len(events) == 0 || !strings.Contains(fmt.Sprint(events), "payment_link:"+id) {
		t.Errorf("the link's events: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", base+"/"+id, shop1Token, "")
	if code != http.StatusOK || body["payments"] != float64(1) || body["paid_amount"] != "25.00" || body["state"] != "open" {
		t.Errorf("after one payment: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", base+"?state=open", shop1Token, "")
	if list, _ := body["payment_links"].([]any); code != http.StatusOK || len(list) != 1 {
		t.Errorf("list: %d %v", code, body)
	}
	if code, body, _ = a.apiCall("GET", base+"/"+id, shop2Token, ""); code != http.StatusNotFound {
		t.Errorf("another merchant's link: %d %v", code, body)
	}
	code, body, _ = a.apiCall("POST", base+"/"+id+"/cancel", shop1Token, "")
	if code != http.StatusOK || body["state"] != "cancelled" {
		t.Errorf("cancel: %d %v", code, body)
	}
	if code, body, _ = a.apiCall("POST", base+"/"+id+"/cancel", shop1Token, ""); code != http.StatusConflict || errorCode(body) != "link_ended" {
		t.Errorf("cancel again: %d %v", code, body)
	}
	lines, err := a.ledger.Audit(context.Background(), ledger.AuditQuery{MerchantID: "shop1", Limit: 10})
	if err != nil || len(lines) < 2 || !strings.HasPrefix(lines[0].Actor, "API token") || lines[0].Event != "paymentLinkCancelled" ||
		len(lines[0].Args) != 1 || lines[0].Args[0].Value != "FEE-26" {
		t.Errorf("audit %+v, %v", lines, err)
	}
}

func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}
