package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/password"
)

const testSettingsKey = "the-root-tests-settings-key-000000000000"

// person is someone signed in to the console of the app at base.
type person struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func signIn(t *testing.T, base, email, pw string) *person {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	p := &person{t: t, base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	_, body := p.get("/console/login")
	token := csrfField.FindStringSubmatch(body)
	if token == nil {
		t.Fatal("no form token on the sign-in page")
	}
	res, err := p.client.PostForm(base+"/console/login", url.Values{"email": {email}, "password": {pw}, "csrf": {token[1]}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in as %s: %d", email, res.StatusCode)
	}
	_, body = p.get("/console")
	p.csrf = csrfField.FindStringSubmatch(body)[1]
	return p
}

func (p *person) get(path string) (int, string) {
	p.t.Helper()
	res, err := p.client.Get(p.base + path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (p *person) post(path string, form url.Values) (int, string) {
	p.t.Helper()
	form.Set("csrf", p.csrf)
	res, err := p.client.PostForm(p.base+path, form)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// shownOnce reads a secret shown once on a console page by its data-testid.
func shownOnce(t *testing.T, body, testID string) string {
	t.Helper()
	m := regexp.MustCompile(`data-testid="` + testID + `">([^<]+)<`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the page shows no %s", testID)
	}
	return m[1]
}

// created is a merchant made in the console and its secrets.
type created struct {
	id, token, kid, secret string
}

func createMerchant(t *testing.T, p *person, id string) created {
	t.Helper()
	status, body := p.post("/console/merchants", url.Values{"id": {id}, "name": {"Shop " + id}, "return_origins": {"https://" + id + ".example"}})
	if status != http.StatusOK {
		t.Fatalf("creating %s: %d\n%.600s", id, status, body)
	}
	return created{id: id, token: shownOnce(t, body, "new-token"), kid: shownOnce(t, body, "new-link-key-id"), secret: shownOnce(t, body, "new-link-key-secret")}
}

// linkStatus is the status a merchant's new link answers with on base.
func linkStatus(t *testing.T, base, id, kid, secret string) int {
	t.Helper()
	m := &merchant.Merchant{ID: id, LinkKeys: map[string]string{kid: secret}}
	u, err := order.Link{Order: order.Order{ID: "L-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""), Amount: "10.00", Currency: "EUR",
		ReturnURL: "https://" + id + ".example/done", KID: kid}, TTL: time.Hour}.URL(base, m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// apiStatus is the status of the API's payments list with token on base.
func apiStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/payments?limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// within waits until done holds, and says how long that took; a minute
// at most, so that a slow machine is not a failure.
func within(t *testing.T, what string, done func() bool) time.Duration {
	t.Helper()
	begin := time.Now()
	for !done() {
		if time.Since(begin) > time.Minute {
			t.Fatalf("%s: not after a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(begin)
}

func TestOperatorAddGivesADeploymentWithoutAFileItsFirstPerson(t *testing.T) {
	provider := httptest.NewServer(http.NotFoundHandler())
	defer provider.Close()
	db := "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
	vars := map[string]string{"PIS_BASE_URL": provider.URL, "PIS_API_KEY": "the-deployment-key", "SETTINGS_KEYS": testSettingsKey, "DATABASE_URL": db}
	getenv := env(vars)
	var out bytes.Buffer
	if err := operatorAdd(context.Background(), []string{"add", "root@psp.example"}, getenv, strings.NewReader("a long operator password\n"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Operator root@psp.example added") {
		t.Errorf("operator add says %q", out.String())
	}
	if err := operatorAdd(context.Background(), []string{"add", "short@psp.example"}, getenv, strings.NewReader("short\n"), io.Discard, io.Discard); err == nil {
		t.Error("operator add took a password of 5 characters")
	}

	s := start(t, vars)
	ops := signIn(t, s.base, "root@psp.example", "a long operator password")
	if status, body := ops.get("/console/merchants"); status != http.StatusOK || !strings.Contains(body, "New merchant") {
		t.Fatalf("the operator's Merchants page: %d", status)
	}
	shop := createMerchant(t, ops, "shop9")
	if !strings.HasPrefix(shop.token, "pbb_live_") {
		t.Errorf("a token made outside sandbox mode is %q; want pbb_live_…", shop.token)
	}
	if status := linkStatus(t, s.base, shop.id, shop.kid, shop.secret); status != http.StatusSeeOther {
		t.Errorf("the new merchant's link: %d", status)
	}
	if status := apiStatus(t, s.base, shop.token); status != http.StatusOK {
		t.Errorf("the new merchant's token: %d", status)
	}
	if status, _ := ops.post("/console/merchants/shop9/disable", url.Values{"confirm": {"yes"}}); status != http.StatusSeeOther {
		t.Fatalf("disable: %d", status)
	}
	if status := apiStatus(t, s.base, shop.token); status != http.StatusForbidden {
		t.Errorf("a disabled merchant's token: %d, want 403", status)
	}
	// Started again without SETTINGS_KEYS, the console's merchants do not
	// open: each is disabled with the reason, and the file's merchant
	// serves all the same.
	delete(vars, "SETTINGS_KEYS")
	vars["MERCHANTS_FILE"] = writeFile(t, `{"merchants":[{"id":"f","name":"F","link_keys":{"k":"a-long-random-secret-for-f-00000001"},
		"api_token":"f-api-token-000000000000000000000000","return_origins":["https://f.example"]}]}`)
	var logs syncBuffer
	again := startLogging(t, vars, &logs)
	if said := logs.String(); !strings.Contains(said, `"merchant":"shop9"`) || !strings.Contains(said, "SETTINGS_KEYS is not set") {
		t.Errorf("the start does not say which merchant did not open and why:\n%s", said)
	}
	if status := apiStatus(t, again.base, "f-api-token-000000000000000000000000"); status != http.StatusOK {
		t.Errorf("the file's merchant, beside one that does not open: %d, want 200", status)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "merchants.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMerchantsImportLetsTheFileGo(t *testing.T) {
	const linkSecret = "a-long-random-secret-for-shopx-0001"
	path := writeFile(t, `{"merchants":[{"id":"shopx","name":"Shop X","link_keys":{"k1":"`+linkSecret+`"},
		"api_token":"shopx-api-token-0000000000000000000","return_origins":["https://shopx.example"]}]}`)
	db := "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
	vars := map[string]string{"SETTINGS_KEYS": testSettingsKey, "DATABASE_URL": db}
	getenv := env(vars)
	var out bytes.Buffer
	if err := merchantsImport(context.Background(), []string{"import", path}, getenv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported shopx") {
		t.Errorf("merchants import says %q", out.String())
	}
	// The app starts without the file and serves the imported merchant.
	s := start(t, vars)
	if status := linkStatus(t, s.base, "shopx", "k1", linkSecret); status != http.StatusSeeOther {
		t.Errorf("the imported merchant's link without the file: %d", status)
	}
	if status := apiStatus(t, s.base, "shopx-api-token-0000000000000000000"); status != http.StatusOK {
		t.Errorf("the imported merchant's token without the file: %d", status)
	}
}

func TestThreeInstancesServeOneSetOfSettings(t *testing.T) {
	db := ledgertest.PostgresURL(t)
	hash, err := password.Hash("a long operator password", password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	const oldToken, newToken = "shop1-api-token-0000000000000000000", "shop1-api-token-rolled-000000000000"
	file := func(token string) string {
		return `{"merchants":[{"id":"shop1","name":"Shop One","link_keys":{"k1":"a-long-random-secret-for-shop1-0001"},
			"api_token":"` + token + `","return_origins":["https://shop1.example"]}],
			"operators":[{"email":"root@psp.example","password_hash":"` + hash + `"}]}`
	}
	vars := map[string]string{"DATABASE_URL": db, "SETTINGS_KEYS": testSettingsKey, "MERCHANTS_FILE": writeFile(t, file(oldToken))}
	a, b, c := start(t, vars), start(t, vars), start(t, vars)
	others := []server{b, c}

	ops := signIn(t, a.base, "root@psp.example", "a long operator password")
	shop := createMerchant(t, ops, "shop9")
	for _, o := range others {
		took := within(t, "another instance takes the new merchant's link and token", func() bool {
			return linkStatus(t, o.base, shop.id, shop.kid, shop.secret) == http.StatusSeeOther && apiStatus(t, o.base, shop.token) == http.StatusOK
		})
		t.Logf("a merchant made on one instance served by another after %v", took)
	}
	if status, _ := ops.post("/console/merchants/shop9/disable", url.Values{"confirm": {"yes"}}); status != http.StatusSeeOther {
		t.Fatalf("disable: %d", status)
	}
	for _, o := range others {
		took := within(t, "another instance refuses the disabled merchant", func() bool {
			return linkStatus(t, o.base, shop.id, shop.kid, shop.secret) == http.StatusForbidden
		})
		t.Logf("a merchant disabled on one instance refused by another after %v", took)
	}
	// A fourth instance starts with the file's token rolled: the old one is
	// revoked, and every running instance refuses it.
	if status := apiStatus(t, b.base, oldToken); status != http.StatusOK {
		t.Fatalf("the file's token before the roll: %d", status)
	}
	rolled := map[string]string{"DATABASE_URL": db, "SETTINGS_KEYS": testSettingsKey, "MERCHANTS_FILE": writeFile(t, file(newToken))}
	start(t, rolled)
	for _, o := range []server{a, b, c} {
		took := within(t, "a running instance refuses the revoked token", func() bool {
			return apiStatus(t, o.base, oldToken) == http.StatusUnauthorized && apiStatus(t, o.base, newToken) == http.StatusOK
		})
		t.Logf("a token revoked by another instance refused after %v", took)
	}
}

func TestASandboxLedgerNeverGoesLiveAndALiveOneGetsNoDemoMerchant(t *testing.T) {
	provider := httptest.NewServer(http.NotFoundHandler())
	defer provider.Close()
	live := map[string]string{"PIS_BASE_URL": provider.URL, "PIS_API_KEY": "the-deployment-key", "SETTINGS_KEYS": testSettingsKey, "ADDR": "127.0.0.1:0"}

	// `go run .` was tried first in this folder; then a live start.
	sandboxDB := "sqlite:" + filepath.Join(t.TempDir(), "checkout.db")
	start(t, map[string]string{"DATABASE_URL": sandboxDB})
	live["DATABASE_URL"] = sandboxDB
	err := run(context.Background(), nil, env(live), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") || !strings.Contains(err.Error(), "sandbox start") || !strings.Contains(err.Error(), "merchants import") {
		t.Errorf("a live start on a sandbox ledger: err = %v; want it refused, naming DATABASE_URL and what to do", err)
	}

	// A live ledger; then `go run .` on it.
	liveDB := "sqlite:" + filepath.Join(t.TempDir(), "live.db")
	live["DATABASE_URL"] = liveDB
	start(t, live)
	err = run(context.Background(), nil, env(map[string]string{"DATABASE_URL": liveDB, "ADDR": "127.0.0.1:0"}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "live one") || !strings.Contains(err.Error(), "PIS_BASE_URL") {
		t.Errorf("a sandbox start on a live ledger: err = %v; want it refused, naming what to do", err)
	}
	l := ledgertest.Open(t, liveDB)
	snap, err := l.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range snap.Merchants {
		if m.ID == merchant.DemoID {
			t.Error("the live ledger was given the demo merchant")
		}
	}
}
