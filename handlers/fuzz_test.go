package handlers_test

import (
	"net/http"
	"strings"
	"testing"
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
