package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// getPage reads the page at url as a browser asking for lang would, with
// its status.
func getPage(t *testing.T, url, lang string) (int, *goquery.Document) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Language", lang)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, doc
}

// TestTheAppsOwnAddressIsAStart: a newcomer who opens the address the app
// prints finds, in their language, a demo checkout of its own (a new order
// each visit, which opens) and the console's address; in live mode a payer
// who lands there reads what the service is and where the console is.
func TestTheAppsOwnAddressIsAStart(t *testing.T) {
	s := start(t, nil)
	status, doc := getPage(t, s.base+"/", "de-DE,de;q=0.9")
	if status != http.StatusOK || doc.Find("html").AttrOr("lang", "") != "de" {
		t.Fatalf("/ answers %d in %q", status, doc.Find("html").AttrOr("lang", ""))
	}
	demo := doc.Find(`[data-testid="demo-link"]`).AttrOr("href", "")
	if !strings.HasPrefix(demo, s.base+"/checkout?") {
		t.Fatalf("the demo link is %q", demo)
	}
	if got := doc.Find(`[data-testid="console-link"]`).AttrOr("href", ""); got != s.base+"/console" {
		t.Errorf("the console's address is %q", got)
	}
	_, again := getPage(t, s.base+"/", "en")
	if again.Find(`[data-testid="demo-link"]`).AttrOr("href", "") == demo {
		t.Error("a second visit offers the same demo order")
	}
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(demo)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/c/") {
		t.Errorf("the demo link answers %d to %q, want a checkout", res.StatusCode, res.Header.Get("Location"))
	}

	// Live mode, in front of a provider (never asked here).
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Error(w, "not in this test", http.StatusServiceUnavailable)
	}))
	defer provider.Close()
	file := filepath.Join(t.TempDir(), "merchants.json")
	if err := os.WriteFile(file, []byte(`{"merchants":[{"id":"shop1","name":"Shop One","link_keys":{"k1":"a-long-random-secret-for-shop1-0001"},
		"api_token":"another-long-random-secret-shop1-00000","return_origins":["https://shop1.example"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	live := start(t, map[string]string{"PIS_BASE_URL": provider.URL, "PIS_API_KEY": "a-provider-key", "MERCHANTS_FILE": file})
	status, doc = getPage(t, live.base+"/", "en")
	if status != http.StatusOK || doc.Find(`[data-testid="demo-link"]`).Length() != 0 {
		t.Fatalf("live mode: / answers %d, with a demo link: %v", status, doc.Find(`[data-testid="demo-link"]`).Length() > 0)
	}
	if got := doc.Find(`[data-testid="start-heading"]`).Text(); got != "Pay by bank" {
		t.Errorf("live mode's heading is %q", got)
	}
	if !strings.Contains(doc.Text(), "go back to the shop") || doc.Find(`[data-testid="console-link"]`).AttrOr("href", "") != live.base+"/console" {
		t.Error("live mode's page does not say what the service is and where the console is")
	}
}
