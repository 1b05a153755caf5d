package handlers_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/order"
)

// apiCall sends a merchants' API request and decodes the JSON answer.
func (a *app) apiCall(method, path, token, body string) (int, map[string]any, http.Header) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		a.t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return res.StatusCode, out, res.Header
}

// fieldNames lists the fields an API error names.
func fieldNames(body map[string]any) []string {
	var names []string
	e, _ := body["error"].(map[string]any)
	fields, _ := e["fields"].([]any)
	for _, f := range fields {
		names = append(names, f.(map[string]any)["field"].(string))
	}
	return names
}

func TestLinksAPI(t *testing.T) {
	a := setup(t, options{})
	good := `{"order":"A-7","amount":"49.90","return_url":"https://shop.example/done"}`

	for name, token := range map[string]string{"no token": "", "wrong token": "not-a-token-of-anyone-00000000000"} {
		status, body, header := a.apiCall(http.MethodPost, "/api/v1/links", token, good)
		if status != http.StatusUnauthorized || body["error"].(map[string]any)["code"] != "unauthorized" || header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}

	tests := []struct{ name, body, field string }{
		{"amount too large", `{"order":"A-7","amount":"15000.01","return_url":"https://shop.example/done"}`, "amount"},
		{"amount as a number", `{"order":"A-7","amount":49.9,"return_url":"https://shop.example/done"}`, "amount"},
		{"return origin not allowed", `{"order":"A-7","amount":"49.90","return_url":"https://evil.example/done"}`, "return_url"},
		{"no order", `{"amount":"49.90","return_url":"https://shop.example/done"}`, "order"},
		{"unknown field", `{"order":"A-7","amount":"49.90","return_url":"https://shop.example/done","amout":"1"}`, "amout"},
		{"life too long", `{"order":"A-7","amount":"49.90","return_url":"https://shop.example/done","expires_in":99999999}`, "expires_in"},
		{"last bank without country", `{"order":"A-7","amount":"49.90","return_url":"https://shop.example/done","last_bank":"targobank"}`, "last_bank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := a.apiCall(http.MethodPost, "/api/v1/links", shop1Token, tt.body)
			if status != http.StatusBadRequest || !strings.Contains(strings.Join(fieldNames(body), ","), tt.field) {
				t.Errorf("%d %v, want 400 naming %s", status, body, tt.field)
			}
		})
	}

	status, body, _ := a.apiCall(http.MethodPost, "/api/v1/links", shop1Token, good)
	link, _ := body["url"].(string)
	if status != http.StatusCreated || !strings.HasPrefix(link, a.url+"/checkout?") || body["expires_at"] == nil {
		t.Fatalf("%d %v", status, body)
	}
	u, _ := url.Parse(link)
	if q := u.Query(); q.Get("kid") != "2026-11" || q.Get("merchant") != "shop1" {
		t.Errorf("link %s is not signed by shop1's newest key", link)
	}
	doc := page(t, a.get(a.follow(link)), http.StatusOK)
	if got := text(doc, testid("amount")); got != "€49.90" {
		t.Errorf("the API's link leads to a checkout of %q", got)
	}

	// The shop passes the bank its customer used last time: it comes first.
	_, body, _ = a.apiCall(http.MethodPost, "/api/v1/links", shop1Token,
		`{"order":"A-8","amount":"5.00","return_url":"https://shop.example/done","country":"DE","last_bank":"targobank"}`)
	link, _ = body["url"].(string)
	doc = page(t, a.get(a.follow(link)+"/banks?country=DE"), http.StatusOK)
	if got := doc.Find(testid("last-used")+" "+testid("bank")).AttrOr("data-id", ""); got != "targobank" {
		t.Errorf("last used %q from the API's last_bank, want targobank", got)
	}
}

func TestStatusAPIShowsOnlyTheMerchantsOwnOrders(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", res.StatusCode)
	}
	if res := a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}

	if status, _, _ := a.apiCall(http.MethodGet, "/api/v1/payments/A-1", "", ""); status != http.StatusUnauthorized {
		t.Errorf("no token: %d", status)
	}
	status, own, _ := a.apiCall(http.MethodGet, "/api/v1/payments/A-1", shop1Token, "")
	if status != http.StatusOK || own["merchant_order_id"] != "A-1" || own["status"] == "NOT_FOUND" {
		t.Errorf("shop1 asking for its own order: %d %v", status, own)
	}
	status, other, _ := a.apiCall(http.MethodGet, "/api/v1/payments/A-1", shop2Token, "")
	if errBody, _ := other["error"].(map[string]any); status != http.StatusNotFound || errBody["code"] != "not_found" {
		t.Errorf("shop2 asking for shop1's order: %d %v, want 404 not_found", status, other)
	}
}

func TestStatusAPIWithASlashInTheOrderID(t *testing.T) {
	a := setup(t, options{upstream: fakeProvider(t, "COMPLETED", nil)})
	a.paidOnce("2026/A 1")
	status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments/"+url.PathEscape("2026/A 1"), shop1Token, "")
	if status != http.StatusOK || body["merchant_order_id"] != "2026/A 1" || body["paid"] != true || body["final"] != true {
		t.Errorf("%d %v", status, body)
	}
}

func TestKeyRotation(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	// A link made with the previous key still works, and its way back is
	// signed with that same key, which the merchant still holds.
	checkout := a.enter("A-1", func(l *order.Link) { l.KID = "2026-10" })
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit with the previous key's checkout: %d", res.StatusCode)
	}
	if res := a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}
	doc := page(t, a.get(checkout+"/return"), http.StatusOK)
	back, _ := url.Parse(doc.Find(testid("way-back")).AttrOr("href", ""))
	if back.Query().Get("kid") != "2026-10" || !order.VerifyWayBack(oldSecret, back.Query()) {
		t.Errorf("way back %s is not signed with the link's key 2026-10", back)
	}
	// A key the merchant dropped no longer opens anything.
	dropped := a.link("A-2", func(l *order.Link) { l.KID = "2026-10" })
	dropped = strings.Replace(dropped, "kid=2026-10", "kid=2025-01", 1)
	if res := a.get(dropped); res.StatusCode != http.StatusForbidden {
		t.Errorf("unknown kid: %d", res.StatusCode)
	}
}

func TestIPVerificationSendsAddressAndFullName(t *testing.T) {
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	tests := []struct {
		name    string
		trusted bool
		wantIP  string
	}{
		{"forwarding header ignored from an untrusted peer", false, "127.0.0.1"},
		{"forwarding header believed from a trusted proxy", true, "203.0.113.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := options{}
			if tt.trusted {
				opts.trusted = append(opts.trusted, loopback)
			}
			a := setup(t, opts)
			checkout := a.follow(a.linkOf("shop3", "B-1", nil))
			form := page(t, a.get(checkout+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
			if form.Find(`#full_name[autocomplete="name"][required]`).Length() != 1 {
				t.Fatal("no full name field for a merchant with IP verification")
			}
			header := http.Header{"X-Forwarded-For": {"203.0.113.9"}}
			empty := a.do(http.MethodPost, checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}, header)
			if got := text(page(t, empty, http.StatusUnprocessableEntity), testid("field-full_name")+" "+testid("field-error")); got != "Enter your full name." {
				t.Errorf("empty full name: %q", got)
			}
			res := a.do(http.MethodPost, checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}, "full_name": {"Erika Mustermann"}}, header)
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("create: %d", res.StatusCode)
			}
			got, _ := a.sandbox.Received("shop3:B-1")
			if got.ClientIP != tt.wantIP || got.CustomerFullName != "Erika Mustermann" {
				t.Errorf("client_ip %q, customer_full_name %q; want %q and the typed name", got.ClientIP, got.CustomerFullName, tt.wantIP)
			}
		})
	}

	// A merchant without IP verification sends neither.
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	a.do(http.MethodPost, checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}, http.Header{"X-Forwarded-For": {"203.0.113.9"}})
	if got, _ := a.sandbox.Received("shop1:A-1"); got.ClientIP != "" || got.CustomerFullName != "" {
		t.Errorf("sent client_ip %q and name %q without IP verification", got.ClientIP, got.CustomerFullName)
	}
}

func TestFramingFollowsTheMerchantsList(t *testing.T) {
	a := setup(t, options{})
	framing := func(res *http.Response) string {
		for _, d := range strings.Split(res.Header.Get("Content-Security-Policy"), ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(d), "frame-ancestors "); ok {
				return v
			}
		}
		return ""
	}
	shop1 := a.enter("A-1", nil)
	if got := framing(a.get(shop1)); got != "https://shop.example https://www.shop.example" {
		t.Errorf("shop1's page: frame-ancestors %q", got)
	}
	if got := framing(a.get(a.follow(a.linkOf("shop2", "C-1", nil)))); got != "'none'" {
		t.Errorf("a merchant without frame_ancestors: %q", got)
	}
	if got := framing(a.get(a.url + "/c/forged")); got != "'none'" {
		t.Errorf("a page of no merchant: %q", got)
	}
	if res := a.get(shop1); res.Header.Get("X-Frame-Options") != "" {
		t.Error("X-Frame-Options on an embeddable page")
	}

	// In an iframe the conveniences cookie is third-party: SameSite=None,
	// Secure, Partitioned.
	res := a.do(http.MethodPost, shop1+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}, http.Header{"Sec-Fetch-Dest": {"iframe"}})
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{"SameSite=None", "Secure", "Partitioned", "HttpOnly"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("cookie in a frame %q lacks %s", cookie, want)
		}
	}
}

func TestAMerchantsRecentAPIRequestsAreKeptWithoutBodiesOrIDs(t *testing.T) {
	a := setup(t, options{requests: true})
	a.apiCall(http.MethodGet, "/api/v1/payments", shop1Token, "")
	a.apiCall(http.MethodGet, "/api/v1/payments/SECRET-ORDER-1", shop1Token, "")
	a.apiCall(http.MethodGet, "/api/v1/payments", "not-a-token-of-anyone-000000000000000", "")
	var got []ledger.APIRequest
	for deadline := time.Now().Add(time.Minute); len(got) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute the ledger holds %d of shop1's requests", len(got))
		}
		var err error
		if got, err = a.ledger.RecentAPIRequests(context.Background(), "shop1", 20); err != nil {
			t.Fatal(err)
		}
	}
	if got[0].Route != "/api/v1/payments/*" || got[0].Status != http.StatusNotFound || got[1].Route != "/api/v1/payments" || got[1].Status != http.StatusOK {
		t.Errorf("shop1's recent requests: %+v", got)
	}
	for _, r := range got {
		if strings.Contains(r.Route, "SECRET") {
			t.Errorf("a request kept its id: %+v", r)
		}
	}
}
