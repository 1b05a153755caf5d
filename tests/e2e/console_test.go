package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
)

// TestTheConsoleIsServedWithTheAppsGuards starts the app with a console
// user and checks what only the whole app shows: the console's own
// stylesheet is served, and a sign-in posted from another site is refused
// by the app's Origin check before any password is looked at.
func TestTheConsoleIsServedWithTheAppsGuards(t *testing.T) {
	hash, err := password.Hash("a long console password", password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`{"merchants":[{"id":"shop1","name":"Shop One","link_keys":{"k":"a-long-random-secret-for-shop1-00001"},
		"api_token":"another-long-random-secret-00000000","return_origins":["https://shop.example"],
		"console_users":[{"email":"ops@shop.example","password_hash":%q}]}]}`, hash)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, map[string]string{"MERCHANTS_FILE": file})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	res, err := client.Get(s.base + "/console")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" {
		t.Fatalf("GET /console signed out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = client.Get(s.base + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	css := regexp.MustCompile(`href="(/static/console\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(string(body))
	if css == nil {
		t.Fatalf("the sign-in page links no console stylesheet:\n%.500s", body)
	}
	if res, err := client.Get(s.base + css[1]); err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Errorf("the console stylesheet: %v %v", res, err)
	}

	req, _ := http.NewRequest(http.MethodPost, s.base+"/console/login", strings.NewReader(url.Values{
		"email": {"ops@shop.example"}, "password": {"a long console password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || strings.Contains(res.Header.Get("Set-Cookie"), "console=") {
		t.Errorf("a sign-in from another site: %d, cookie %q; want 403 and no session", res.StatusCode, res.Header.Get("Set-Cookie"))
	}
}

// TestTheDemoConsoleOpensWithThePrintedPassword signs in to the console of
// a plain `go run .` with the password it printed.
func TestTheDemoConsoleOpensWithThePrintedPassword(t *testing.T) {
	s := start(t, nil)
	if s.consoleEmail != merchant.DemoConsoleEmail || len(s.consolePassword) < password.MinLength {
		t.Fatalf("the demo console line gave %q / %q", s.consoleEmail, s.consolePassword)
	}
	status, body := signIn(t, s.base, s.consoleEmail, s.consolePassword).get("/console")
	if status != http.StatusOK || !strings.Contains(body, "Checkouts, counted per order") || !strings.Contains(body, "Demo Shop") {
		t.Errorf("signing in with the printed password: %d\n%.400s", status, body)
	}
}
