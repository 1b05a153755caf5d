package handlers_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCrossSitePostsAreRefused(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	form := url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}
	tests := []struct {
		name   string
		header http.Header
		want   int
	}{
		{"another site, by Sec-Fetch-Site", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"a sibling subdomain", http.Header{"Sec-Fetch-Site": {"same-site"}}, http.StatusForbidden},
		{"another origin, by Origin alone", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"our own page", http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {a.url}}, http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.do(http.MethodPost, checkout+"/pay", form, tt.header)
			if res.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.want)
			}
			if tt.want == http.StatusForbidden {
				if got := text(page(t, res, http.StatusForbidden), testid("error-heading")); got != "This request came from another site" {
					t.Errorf("heading %q", got)
				}
			}
		})
	}
	if st := a.sandbox.Stats(); st.CreateCalls != 1 {
		t.Errorf("%d payments created, want only the same-origin one", st.CreateCalls)
	}
}

func TestATwoMegabyteBodyIsRefused(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	big := "country=DE&bank=deutsche-bank&name=" + strings.Repeat("x", 2<<20)
	req, _ := http.NewRequest(http.MethodPost, checkout+"/pay", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := a.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB form: %d, want 413", res.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, a.url+"/api/v1/links", bytes.NewReader(bytes.Repeat([]byte(" "), 2<<20)))
	req.Header.Set("Authorization", "Bearer "+shop1Token)
	res, err = a.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB API body: %d, want 413", res.StatusCode)
	}
	if a.sandbox.Stats().CreateCalls != 0 {
		t.Error("an oversized request reached the provider")
	}
}

func TestRateLimitAnswers429(t *testing.T) {
	a := setup(t, options{burst: 3})
	checkout := a.enter("A-1", nil)
	form := url.Values{"country": {"FR"}, "bank": {"credit-agricole"}}
	var last *http.Response
	for range 4 {
		last = a.post(checkout+"/pay", form)
	}
	if last.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th POST in a burst of 3: %d, want 429", last.StatusCode)
	}
	// The shopper gets the form back as they sent it, with a word to wait.
	doc := page(t, last, http.StatusTooManyRequests)
	if got := text(doc, testid("problem")); !strings.Contains(got, "Please wait a moment") {
		t.Errorf("problem %q does not say to wait", got)
	}
	if doc.Find(`input[name="bank"]`).AttrOr("value", "") != "credit-agricole" {
		t.Error("the 429 page is not the shopper's form")
	}
	// Reading pages is not limited.
	if res := a.get(checkout); res.StatusCode != http.StatusOK {
		t.Errorf("GET after the burst: %d", res.StatusCode)
	}
	// The phone handoff is: each of its pages writes a code to the ledger.
	other := a.enter("B-1", nil)
	for range 3 {
		last = a.get(other + "/phone?country=FR")
	}
	if last.StatusCode != http.StatusOK {
		t.Fatalf("3rd handoff page in a burst of 3: %d", last.StatusCode)
	}
	doc = page(t, a.get(other+"/phone?country=FR"), http.StatusTooManyRequests)
	if got := text(doc, testid("error-heading")); got != "Too many requests" {
		t.Errorf("4th handoff page in a burst of 3 says %q", got)
	}
}

func TestSecurityHeaders(t *testing.T) {
	a := setup(t, options{})
	res := a.get(a.enter("A-1", nil))
	h := res.Header
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
	csp := h.Get("Content-Security-Policy")
	if strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "img-src 'self' data:;") {
		t.Errorf("CSP %q", csp)
	}
	doc := page(t, res, http.StatusOK)
	if doc.Find("script:not([src])").Length() != 0 {
		t.Error("an inline script on the page")
	}
	// The theme's style element is allowed by its own hash, and only it.
	sum := sha256.Sum256([]byte(doc.Find("style").Text()))
	if doc.Find("style").Length() != 1 || !strings.Contains(csp, "style-src 'self' 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"';") {
		t.Errorf("CSP %q does not allow the page's one style element by its hash", csp)
	}
	if h.Get("Strict-Transport-Security") != "" {
		t.Error("HSTS over plain http")
	}
	if api := a.get(a.url + "/healthz"); api.Header.Get("Content-Security-Policy") != "default-src 'none'; frame-ancestors 'none'" {
		t.Errorf("non-page CSP %q", api.Header.Get("Content-Security-Policy"))
	}
}
