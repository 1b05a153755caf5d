package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/ledger/ledgertest"
)

func TestWhileTheLedgerIsDownShoppersAndProgramsAreToldToTryAgain(t *testing.T) {
	gated, g := ledgertest.Gated(t, ledgertest.PostgresURL(t))
	logs := &lockedBuffer{}
	a := setup(t, options{ledger: ledgertest.Open(t, gated), logTo: logs})
	checkout := a.enter("O-1", nil)
	form := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "name": {"Jeanne Dupont"}, "iban": {"FR7630006000011234567890189"}}

	g.Refuse()

	t.Run("opening a link", func(t *testing.T) {
		link := a.link("O-2", nil)
		res := a.do(http.MethodGet, link, nil, http.Header{"Accept-Language": {"de"}})
		if got := res.Header.Get("Retry-After"); got != "5" {
			t.Errorf("Retry-After %q, want 5", got)
		}
		doc := page(t, res, http.StatusServiceUnavailable)
		if got := text(doc, "main"); !strings.Contains(got, "Es wurde nichts abgebucht") {
			t.Errorf("the page does not say in German that nothing was charged: %q", got)
		}
		if got := doc.Find(testid("retry")).AttrOr("href", ""); resolve(a.url, got) != link {
			t.Errorf("Try again leads to %q, want the same link", got)
		}
		back := doc.Find(testid("way-back")).AttrOr("href", "")
		if !strings.HasPrefix(back, "https://shop.example/done?") || !strings.Contains(back, "status=UNKNOWN") {
			t.Errorf("the way back is %q, want the shop's return URL with status UNKNOWN", back)
		}
	})

	t.Run("submitting the details form", func(t *testing.T) {
		res := a.post(checkout+"/pay", form)
		doc := page(t, res, http.StatusServiceUnavailable)
		if got := text(doc, testid("problem")); !strings.Contains(got, "Nothing was charged") {
			t.Errorf("the form's problem says %q, want that nothing was charged", got)
		}
		if doc.Find(`input[name="bank"]`).AttrOr("value", "") != "credit-agricole" || doc.Find(`#iban`).AttrOr("value", "") != form.Get("iban") {
			t.Error("the form did not come back with the shopper's bank and IBAN")
		}
		if back := doc.Find(testid("way-back")).AttrOr("href", ""); !strings.Contains(back, "status=UNKNOWN") {
			t.Errorf("the form's way back to the shop is %q, want the return URL with status UNKNOWN", back)
		}
		if res.Header.Get("Retry-After") == "" {
			t.Error("the form came back without Retry-After")
		}
	})

	t.Run("coming back from the bank", func(t *testing.T) {
		doc := page(t, a.get(checkout+"/return"), http.StatusServiceUnavailable)
		got := text(doc, "main")
		if !strings.Contains(got, "do not pay again") || strings.Contains(got, "Nothing was charged") {
			t.Errorf("back from the bank the page says %q, want not to pay again and no word of nothing charged", got)
		}
		if doc.Find(testid("way-back")).Length() == 0 || doc.Find(testid("retry")).Length() == 0 {
			t.Error("back from the bank the page has no Try again or no way back to the shop")
		}
	})

	t.Run("programs", func(t *testing.T) {
		status, body, header := a.apiCall(http.MethodGet, "/api/v1/payments/O-1", shop1Token, "")
		if e, _ := body["error"].(map[string]any); status != http.StatusServiceUnavailable || e["code"] != "unavailable" || header.Get("Retry-After") == "" {
			t.Errorf("%d %v (Retry-After %q), want 503 unavailable with Retry-After", status, body, header.Get("Retry-After"))
		}
	})

	if n := strings.Count(logs.String(), "the payments ledger does not answer"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "request failed") {
		t.Errorf("each refused request was logged:\n%s", logs.String())
	}

	// Back again: everything works with no restart.
	g.Open()
	waitFor(t, "a link to open again", func() bool {
		res := a.get(a.link("O-3", nil))
		return res.StatusCode == http.StatusSeeOther
	})
	if res := a.post(checkout+"/pay", form); res.StatusCode != http.StatusSeeOther {
		t.Errorf("submitting after the outage: %d, want 303 to the bank", res.StatusCode)
	}
	waitFor(t, "the log to say the ledger answers again", func() bool {
		return strings.Contains(logs.String(), "the payments ledger answers again")
	})
}
