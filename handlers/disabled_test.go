package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/merchant"
)

// withoutMerchant is the tests' merchants file without one merchant.
func withoutMerchant(t *testing.T, id string) *merchant.Directory {
	t.Helper()
	var file struct {
		Merchants []map[string]any `json:"merchants"`
	}
	if err := json.Unmarshal([]byte(merchantsFile), &file); err != nil {
		t.Fatal(err)
	}
	var kept []map[string]any
	for _, m := range file.Merchants {
		if m["id"] != id {
			kept = append(kept, m)
		}
	}
	file.Merchants = kept
	raw, _ := json.Marshal(file)
	dir, err := merchant.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestADisabledMerchantTakesNothingNewAndItsShoppersSeeTheirWayBack(t *testing.T) {
	a := setup(t, options{})
	under := a.follow(a.linkOf("shop2", "B-1", nil))
	link := a.linkOf("shop2", "B-2", nil)

	// shop2 leaves the merchants file: it is disabled, not forgotten.
	if err := a.settings.Provision(context.Background(), withoutMerchant(t, "shop2")); err != nil {
		t.Fatal(err)
	}
	if m, ok := a.merchants.Get("shop2"); !ok || !m.Disabled() {
		t.Fatal("shop2 is not disabled after leaving the file")
	}

	for name, u := range map[string]string{"a new link": link, "a checkout under way": under, "its bank page": under + "/banks?country=DE"} {
		res := a.get(u)
		doc, _ := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s of a disabled merchant: status %d, want 403", name, res.StatusCode)
			continue
		}
		if got := doc.Find("h1").Text(); !strings.Contains(got, "no longer served here") {
			t.Errorf("%s: heading %q", name, got)
		}
		if href, _ := doc.Find(`[data-testid="way-back"]`).Attr("href"); !strings.HasPrefix(href, "https://two.example/") {
			t.Errorf("%s: the way back leads to %q, want the shop's return URL", name, href)
		}
	}
	// The status page of a payment under way still answers: the shopper
	// learns how it ended.
	if res := a.get(under + "/return"); res.StatusCode != http.StatusOK {
		t.Errorf("the status page of a disabled merchant's checkout: %d, want 200", res.StatusCode)
	}
	status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments/B-1", shop2Token, "")
	if code := body["error"].(map[string]any)["code"]; status != http.StatusForbidden || code != "merchant_disabled" {
		t.Errorf("shop2's API token: %d %v, want 403 merchant_disabled", status, code)
	}
	// Another merchant is not touched.
	if res := a.get(a.link("A-1", nil)); res.StatusCode != http.StatusSeeOther {
		t.Errorf("shop1's link after shop2 was disabled: %d", res.StatusCode)
	}
}

func TestAMerchantThatLeftTheFileStillHearsOfItsOpenPayments(t *testing.T) {
	shop := newShopServer(t)
	a := setup(t, options{knobs: settleNow, webhook: shop.url})
	res := a.post(a.enter("A-1", nil)+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	atBank := res.Header.Get("Location")
	// shop1 leaves the file while its shopper is at the bank.
	if err := a.settings.Provision(context.Background(), withoutMerchant(t, "shop1")); err != nil {
		t.Fatal(err)
	}
	if m, _ := a.merchants.Get("shop1"); !m.Disabled() {
		t.Fatal("shop1 is not disabled")
	}
	if res := a.post(atBank, url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}
	a.startWorkers(t, "instance-1", nil, 0)
	waitFor(t, "the disabled merchant to be told", func() bool { return shop.handledCount() == 1 })
	shop.mu.Lock()
	defer shop.mu.Unlock()
	for _, e := range shop.handled {
		if e.Data.MerchantOrderID != "A-1" || e.Data.Status != "COMPLETED" || !e.Data.Paid {
			t.Errorf("event %+v", e)
		}
	}
}
