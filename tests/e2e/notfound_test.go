package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestUnknownPathsAnswer404 walks the paths no route knows as a shopper with
// a mistyped link, a merchant's program with a wrong API path and a browser
// asking for the site's icon would: none of them is ever sent to the
// console's sign-in.
func TestUnknownPathsAnswer404(t *testing.T) {
	s := start(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, s.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode/100 == 3 {
			t.Errorf("%s: %d to %s, want no redirect", path, res.StatusCode, res.Header.Get("Location"))
		}
		return res, string(body)
	}

	t.Run("people get the app's 404 page in their language", func(t *testing.T) {
		for _, path := range []string{"/no-such-page", "/c/", "/robots.txt", "/checkout/extra", "/static/nothing.css"} {
			res, body := get(path, http.Header{"Accept-Language": {"de"}})
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, res.StatusCode)
			}
			if !strings.Contains(body, "Seite nicht gefunden") || strings.Contains(strings.ToLower(body), "console") {
				t.Errorf("%s: not the shopper's 404 page in German:\n%s", path, body)
			}
		}
	})

	t.Run("inside a checkout the 404 page leads back to it and to the shop", func(t *testing.T) {
		res, err := client.Get(s.demoLink)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		checkout := res.Header.Get("Location")
		res, body := get(checkout+"/no-such-step", nil)
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("%s/no-such-step: %d, want 404", checkout, res.StatusCode)
		}
		for _, want := range []string{`href="` + checkout + `"`, "Back to Demo Shop"} {
			if !strings.Contains(body, want) {
				t.Errorf("the checkout's 404 page lacks %q:\n%s", want, body)
			}
		}
	})

	t.Run("programs get the JSON error", func(t *testing.T) {
		for _, path := range []string{"/api/v1/nothing", "/api/", "/api/v2/links"} {
			res, body := get(path, http.Header{"Authorization": {"Bearer whatever"}})
			var e struct {
				Error struct{ Code, Message string }
			}
			if res.StatusCode != http.StatusNotFound || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "not_found" || e.Error.Message == "" {
				t.Errorf("%s: %d %s, want 404 with the JSON error not_found", path, res.StatusCode, body)
			}
		}
	})

	t.Run("the console answers its own unknown paths", func(t *testing.T) {
		res, body := get("/console/no-such-page", nil)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "console.css") {
			t.Errorf("/console/no-such-page: %d, want the console's 404 page\n%s", res.StatusCode, body)
		}
		res, _ = client.Get(s.base + "/console/payments")
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
			t.Errorf("/console/payments signed out: %d to %q, want the sign-in", res.StatusCode, res.Header.Get("Location"))
		}
	})

	t.Run("the browser's icon request gets the app's icon", func(t *testing.T) {
		res, body := get("/favicon.ico", nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/x-icon" || !strings.HasPrefix(body, "\x00\x00\x01\x00") {
			t.Errorf("/favicon.ico: %d %s, want the app's icon", res.StatusCode, res.Header.Get("Content-Type"))
		}
	})
}

// TestTheSandboxBankIsNotLimitedByTheShoppersBudget approves more payments
// from one address than a checkout's budget (20 at once, 2 a second) would
// let through: the sandbox's buttons stand for a bank's, in sandbox mode only.
func TestTheSandboxBankIsNotLimitedByTheShoppersBudget(t *testing.T) {
	s := start(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := range 60 {
		res, err := client.Get(demoOrderLink(t, s.base, "SBX-"+strconv.Itoa(i), "en", nil))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		back := payAtSandboxBank(t, client, s.base+res.Header.Get("Location"), nil)
		if !strings.Contains(back, "/return") {
			t.Fatalf("approval %d at the sandbox bank led to %q, want the checkout's return", i+1, back)
		}
	}
}
