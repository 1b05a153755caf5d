package handlers_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

func TestPersonalOrBusinessLogin(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/pay?country=DE&bank=hypovereinsbank"), http.StatusOK)
	if doc.Find(`input[name="login_type"]`).Length() != 2 || doc.Find(`#login_type[checked]`).Length() != 1 {
		t.Fatal("a bank taking psuId and psuCorporateId does not offer personal or business login, personal chosen")
	}
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"hypovereinsbank"}, "login_type": {"business"}, "psu_id": {"ACME-4711"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d", res.StatusCode)
	}
	got, _ := a.sandbox.Received("shop1:A-1")
	if got.Payer == nil || got.Payer.PSUCorporateID != "ACME-4711" || got.Payer.PSUID != "" {
		t.Errorf("payer %+v, want the business login only", got.Payer)
	}
}

func TestAddressFormFillsCountryAndCountryCode(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	doc := page(t, a.get(checkout+"/pay?country=FR&bank=caisse-d-epargne"), http.StatusOK)
	for id, autocomplete := range map[string]string{
		"name": "name", "address_line1": "address-line1", "post_code": "postal-code", "city": "address-level2", "payer_country": "country",
	} {
		if got := doc.Find("#"+id).AttrOr("autocomplete", ""); got != autocomplete {
			t.Errorf("#%s autocomplete %q, want %q", id, got, autocomplete)
		}
	}
	if got := doc.Find(`#payer_country option[selected]`).AttrOr("value", ""); got != "FR" {
		t.Errorf("country preselected %q, want the bank's FR", got)
	}
	values := url.Values{"country": {"FR"}, "bank": {"caisse-d-epargne"}, "name": {"Élise Martin"},
		"iban": {"FR7630006000011234567890189"}, "address_line1": {"3 rue de la Paix"}, "post_code": {"75002"},
		"city": {"Paris"}, "payer_country": {"BE"}}
	if res := a.post(checkout+"/pay", values); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d", res.StatusCode)
	}
	got, _ := a.sandbox.Received("shop1:A-1")
	p := got.Payer
	if p == nil || p.Country != "Belgium" || p.CountryCode != "BE" || p.City != "Paris" || p.PostCode != "75002" ||
		len(p.AddressLines) != 1 || p.AddressLines[0] != "3 rue de la Paix" || p.Name != "Élise Martin" {
		t.Errorf("payer %+v", p)
	}
}

func TestProviderFailureOnCreateKeepsTheForm(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK) // the list is cached now
	a.sandbox.SetKnobs(sandbox.Knobs{ErrorRate: 1})
	values := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}, "name": {"Jean Dupont"}, "iban": {"FR76 3000 6000 0112 3456 7890 189"}}
	doc := page(t, a.post(checkout+"/pay", values), http.StatusServiceUnavailable)
	if got := text(doc, testid("problem")); !strings.Contains(got, "Nothing was charged") {
		t.Errorf("problem %q does not reassure the shopper", got)
	}
	if doc.Find("#name").AttrOr("value", "") != "Jean Dupont" || doc.Find("#iban").AttrOr("value", "") != "FR76 3000 6000 0112 3456 7890 189" {
		t.Error("the typed values are lost after a provider failure")
	}
	// Pressing Continue again once the provider is back creates the payment.
	a.sandbox.SetKnobs(sandbox.Knobs{})
	if res := a.post(checkout+"/pay", values); res.StatusCode != http.StatusSeeOther {
		t.Errorf("retry: status %d", res.StatusCode)
	}
}

func TestLastUsedBankComesFirst(t *testing.T) {
	a := setup(t, options{})
	jar, _ := cookiejar.New(nil)
	a.client.Jar = jar
	checkout := a.enter("A-1", nil)
	if res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"targobank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d", res.StatusCode)
	}
	next := a.enter("A-2", nil)
	doc := page(t, a.get(next+"/banks?country=DE"), http.StatusOK)
	first := doc.Find(testid("bank")).First()
	if first.AttrOr("data-id", "") != "targobank" || !strings.Contains(first.Text(), "Last used") {
		t.Errorf("first bank %q, want TARGOBANK marked last used", first.Text())
	}
	countries := page(t, a.get(next), http.StatusOK)
	if got := countries.Find(testid("country")).First().AttrOr("data-code", ""); got != "DE" {
		t.Errorf("first country %q, want the last bank's DE", got)
	}
}

// The shop knows the bank its customer paid with last time and says so with
// last_bank: the list offers it first, marked, with no cookie at all (as in a
// frame whose cookies are blocked), and the shopper still chooses.
func TestShopPassedLastBankComesFirstWithoutCookie(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", func(l *order.Link) { l.Country = "DE"; l.LastBank = "targobank" })
	res := a.get(checkout)
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/banks?country=DE") {
		t.Fatalf("entry with last_bank: status %d to %q, want the DE bank list (the step is not skipped)", res.StatusCode, res.Header.Get("Location"))
	}
	doc := page(t, a.get(checkout+"/banks?country=DE"), http.StatusOK)
	first := doc.Find(testid("bank")).First()
	if first.AttrOr("data-id", "") != "targobank" || !strings.Contains(first.Text(), "Last used") {
		t.Errorf("first bank %q, want TARGOBANK marked last used", first.Text())
	}
	if n := doc.Find(testid("last-used")).Length(); n != 1 {
		t.Errorf("%d last-used lists", n)
	}
	// In another country the hint names no bank there: nothing is marked.
	doc = page(t, a.get(checkout+"/banks?country=FR"), http.StatusOK)
	if doc.Find(testid("last-used")).Length() != 0 {
		t.Error("a German last bank marked in France")
	}
	// The shop's last_bank wins over the link's bank hint.
	both := a.enter("A-2", func(l *order.Link) { l.Country = "DE"; l.Bank = "postbank"; l.LastBank = "targobank" })
	doc = page(t, a.get(both+"/banks?country=DE"), http.StatusOK)
	if got := doc.Find(testid("last-used")+" "+testid("bank")).AttrOr("data-id", ""); got != "targobank" {
		t.Errorf("last used %q, want the shop's last_bank", got)
	}
}

func TestLastBankNeedsCountry(t *testing.T) {
	a := setup(t, options{})
	for name, change := range map[string]func(*order.Link){
		"no country": func(l *order.Link) { l.LastBank = "targobank" },
		"too long":   func(l *order.Link) { l.Country = "DE"; l.LastBank = strings.Repeat("x", 101) },
	} {
		doc := page(t, a.get(a.link("A-"+name, change)), http.StatusBadRequest)
		if got := doc.Text(); !strings.Contains(got, "last_bank") {
			t.Errorf("%s: the error page does not name last_bank: %q", name, got)
		}
	}
}
