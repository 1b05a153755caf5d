package handlers_test

import (
	"context"
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
// once of the link's checkout, opened twice, make one payment; once paid,
// the link shows its receipt in the payer's language and starts nothing.
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
				if res := a.post(checkouts[i%2]+"/pay", atTheBank); res.StatusCode == http.StatusSeeOther {
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
		if res := a.post(sent[0], url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", res.StatusCode)
		}
		status := page(t, a.get(checkouts[0]+"/return"), http.StatusOK)
		back := status.Find(testid("way-back")).AttrOr("href", "")
		if !strings.HasPrefix(back, a.url+links.Route+p.ID+"?r=") || text(status, testid("way-back")) != "Ihre Quittung ansehen" {
			t.Errorf("the way back is %q (%q), want the payer's receipt", back, text(status, testid("way-back")))
		}
		for _, at := range []string{back, a.url + links.Route + p.ID} {
			doc := page(t, a.get(at), http.StatusOK)
			r := doc.Find(testid("receipt"))
			if r.AttrOr("data-kind", "") != "paid" || text(doc, testid("receipt-status")) != "Bezahlt" ||
				text(doc, testid("amount")) != "120,00 €" || text(doc, testid("payee")) != "Shop <One>" ||
				text(doc, testid("order-id")) != "INV-2026-117" || text(doc, testid("receipt-bank")) == "" || text(doc, testid("receipt-date")) == "" {
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
		page(t, two.get(two.url+links.Route+p.ID), http.StatusGone)
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
