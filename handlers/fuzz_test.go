package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/rules"
)

// FuzzPayForm posts arbitrary bodies to the details form: the shopper gets
// a page (the form again, or the bank), never a server error.
func FuzzPayForm(f *testing.F) {
	for _, seed := range []string{
		"country=FR&bank=credit-agricole&name=Jean&iban=FR7630006000011234567890189",
		"country=FR&bank=credit-agricole&name=%00%FF&iban=%E2%80%AE",
		"country=DE&bank=hypovereinsbank&login_type=business&psu_id=",
		"country=FR&bank=caisse-d-epargne&payer_country=ZZ&address_line1=" + strings.Repeat("x", 500),
		"country=&bank=&&&=",
		"%zz",
	} {
		f.Add(seed)
	}
	a := setup(f, options{burst: 1 << 30})
	checkout := a.enter("F-1", nil)
	f.Fuzz(func(t *testing.T, body string) {
		req, _ := http.NewRequest(http.MethodPost, checkout+"/pay", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable && res.StatusCode != http.StatusBadGateway {
			t.Fatalf("body %q: status %d", body, res.StatusCode)
		}
	})
}

// FuzzOrderIDPath asks the status API for arbitrary order ids, escaped once
// as a merchant's HTTP library would: the id is read back exactly as it was
// meant (an unknown order, 404) or refused as no order id (400), never a
// server error and never another order.
func FuzzOrderIDPath(f *testing.F) {
	for _, seed := range []string{"A-1", "a%41b", "50%off", "2026/A 1", "%", "é/..", "x?y#z", "\x00", ""} {
		f.Add(seed)
	}
	a := setup(f, options{upstream: fakeProvider(f, "COMPLETED", nil), burst: 1 << 20, apiRate: 1 << 20})
	a.paidOnce("aAb")
	f.Fuzz(func(t *testing.T, id string) {
		if id == "" || id == "." || id == ".." {
			return // no path segment to ask about
		}
		req, _ := http.NewRequest(http.MethodGet, a.url+"/api/v1/payments/"+url.PathEscape(id), nil)
		req.Header.Set("Authorization", "Bearer "+shop1Token)
		res, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		status := res.StatusCode
		switch {
		case status == http.StatusOK && body["merchant_order_id"] != id:
			t.Fatalf("asked for %q, got order %v", id, body["merchant_order_id"])
		case status == http.StatusBadRequest && rules.CheckOrderID(id) == nil:
			t.Fatalf("a valid order id %q refused", id)
		case status != http.StatusOK && status != http.StatusNotFound && status != http.StatusBadRequest:
			t.Fatalf("%q: status %d %v", id, status, body)
		}
	})
}
