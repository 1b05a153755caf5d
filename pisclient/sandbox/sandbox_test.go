package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
)

func TestCatalogueCoversWhatTestsNeed(t *testing.T) {
	countries, ids := map[string]bool{}, map[string]map[string]bool{}
	fields := map[string]bool{}
	var absent, tests int
	logoKeys := map[string]bool{}
	for _, b := range catalogue {
		countries[b.Country] = true
		if ids[b.ID] == nil {
			ids[b.ID] = map[string]bool{}
		}
		ids[b.ID][b.Country] = true
		for _, f := range b.ExtraFields {
			fields[f] = true
		}
		if b.ExtraFields == nil {
			absent++
		}
		if b.IsForTest {
			tests++
		}
		if b.Logo {
			logoKeys[b.LogoKey] = true
		}
		if rules.CheckBIC("bic", b.BIC) != nil || rules.CheckCountryCode("cc", b.Country) != nil {
			t.Errorf("%s/%s: BIC %q or country is malformed", b.ID, b.Country, b.BIC)
		}
	}
	multi := 0
	for _, cs := range ids {
		if len(cs) > 1 {
			multi++
		}
	}
	if len(catalogue) < 300 || len(countries) < 15 || multi < 10 || absent == 0 || tests < 3 || len(logoKeys) != 2 {
		t.Errorf("%d entries, %d countries, %d multi-country banks, %d without extraFields, %d test banks, logo keys %v",
			len(catalogue), len(countries), multi, absent, tests, logoKeys)
	}
	for _, f := range pisclient.KnownExtraFields {
		if !fields[f] {
			t.Errorf("no bank asks for %q", f)
		}
	}
}

func TestAPIRefusesWithoutKeyAndEnforcesRules(t *testing.T) {
	srv := httptest.NewServer(New(Config{}))
	defer srv.Close()
	for _, path := range []string{"/api/v2/pis/payment/ob-institutions", "/api/v2/pis/payment/A-1"} {
		res, err := http.Get(srv.URL + path)
		if err != nil || res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without key: %v %v, want 401", path, res, err)
		}
	}
	post := func(body string) (*http.Response, apiError) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v2/pis/payment", strings.NewReader(body))
		req.Header.Set("x-api-key", DefaultAPIKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		json.NewDecoder(res.Body).Decode(&e)
		return res, e
	}
	res, e := post(`{"merchant_order_id":"A-1","payment_amount":"15000.01","payment_currency":"EUR","return_url":"https://s.example/"}`)
	if res.StatusCode != http.StatusBadRequest || len(e.Errors) != 1 || e.Errors[0].Field != "payment_amount" {
		t.Errorf("over the limit: %d %+v, want 400 naming payment_amount", res.StatusCode, e)
	}
	ok := `{"merchant_order_id":"A-2","payment_amount":"10","payment_currency":"EUR","return_url":"https://s.example/"}`
	if res, _ := post(ok); res.StatusCode != http.StatusCreated {
		t.Errorf("valid creation: %d, want 201", res.StatusCode)
	}
	if res, e := post(ok); res.StatusCode != http.StatusConflict {
		t.Errorf("duplicate: %d %+v, want 409", res.StatusCode, e)
	}
}
