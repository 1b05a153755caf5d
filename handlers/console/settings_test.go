package console_test

import (
	"encoding/csv"
	"github.com/PuerkitoBio/goquery"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/settings"
)

// newMerchant makes shop3 in the console as the operator and returns the
// answer's page.
func newMerchant(t *testing.T, b *browser, csrf string, form url.Values) *http.Response {
	t.Helper()
	form.Set("csrf", csrf)
	return b.post("/console/merchants", form)
}

func TestOperatorsMakeAMerchantAndItsSecretsAreShownOnce(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(operator)
	doc := page(t, b.get("/console/merchants"), http.StatusOK)
	if got := doc.Find(`[data-merchant="shop1"] [data-testid="merchant-managed"]`).Text(); got != "managed by the merchants file" {
		t.Errorf("shop1 shows as %q; want managed by the merchants file", got)
	}
	if doc.Find(`[data-merchant="shop1"] [data-testid="disable"]`).Length() != 0 {
		t.Error("a file's merchant offers a Disable button")
	}

	// A bad origin: the form comes back with everything typed and the
	// field's reason.
	bad := url.Values{"id": {"shop3"}, "name": {"Shop Three"}, "return_origins": {"https://shop3.example\nnot a url"}}
	doc = page(t, newMerchant(t, b, csrf, bad), http.StatusUnprocessableEntity)
	if got, _ := doc.Find(`#name`).Attr("value"); got != "Shop Three" {
		t.Errorf("the name typed came back as %q", got)
	}
	if got := doc.Find(`#return_origins`).Text(); got != "https://shop3.example\nnot a url" {
		t.Errorf("the origins typed came back as %q", got)
	}
	if reason := doc.Find(`#return_origins-error`).Text(); !strings.Contains(reason, "Line 2:") || !strings.Contains(reason, "not an origin") {
		t.Errorf("the origins' reason is %q", reason)
	}

	// An id typed with a space is explained as such, never "Required".
	doc = page(t, newMerchant(t, b, csrf, url.Values{"id": {"shop 3"}, "name": {"Shop Three"}, "return_origins": {"https://shop3.example"}}), http.StatusUnprocessableEntity)
	if reason := doc.Find(`#id-error`).Text(); strings.Contains(reason, "Required") || !strings.Contains(reason, "without spaces") {
		t.Errorf("a filled id with a space: %q", reason)
	}

	good := url.Values{"id": {"shop3"}, "name": {"Shop Three"}, "return_origins": {"https://shop3.example"}}
	doc = page(t, newMerchant(t, b, csrf, good), http.StatusOK)
	token := doc.Find(`[data-testid="new-token"]`).Text()
	kid := doc.Find(`[data-testid="new-link-key-id"]`).Text()
	secret := doc.Find(`[data-testid="new-link-key-secret"]`).Text()
	if !strings.HasPrefix(token, "pbb_test_") || kid == "" || len(secret) < 32 {
		t.Fatalf("the new merchant's secrets: token %q, kid %q, secret %q", token, kid, secret)
	}
	m, ok := e.settings.Dir.ByAPIToken(token, time.Now())
	if !ok || m.ID != "shop3" || m.LinkKeys[kid] != secret || m.ReadOnly() {
		t.Errorf("the token shown does not open shop3 as made in the console: %+v", m)
	}
	// Shown once: the list afterwards holds none of them.
	res := b.get("/console/merchants")
	body := readAll(t, res)
	if strings.Contains(body, token) || strings.Contains(body, secret) {
		t.Error("the merchants page shows the new secrets again")
	}

	// The same id again is refused on the id field.
	doc = page(t, newMerchant(t, b, csrf, good), http.StatusUnprocessableEntity)
	if reason := doc.Find(`#id-error`).Text(); !strings.Contains(reason, "taken") {
		t.Errorf("a second shop3: id reason %q", reason)
	}
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOnlyOperatorsSeeTheMerchants(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/merchants"), http.StatusForbidden)
	if !strings.Contains(doc.Text(), "Only operators") {
		t.Errorf("a merchant's person asking for Merchants reads %q", doc.Find("main").Text())
	}
	page(t, b.post("/console/merchants/shop2/disable", url.Values{"csrf": {csrf}}), http.StatusForbidden)
	if doc := page(t, b.get("/console"), http.StatusOK); doc.Find(`a[href="/console/merchants"]`).Length() != 0 {
		t.Error("a merchant's person is shown the Merchants section")
	}
	if m, _ := e.settings.Dir.Get("shop2"); m.Disabled() {
		t.Error("a merchant's person disabled another merchant")
	}
}

func TestADisabledMerchantsPeopleStillSignInAndRead(t *testing.T) {
	e := setup(t)
	ops := e.browser()
	csrf := ops.signIn(operator)
	// A file's merchant cannot be disabled here: 409 with the reason.
	doc := page(t, ops.post("/console/merchants/shop1/disable", url.Values{"csrf": {csrf}}), http.StatusConflict)
	if !strings.Contains(doc.Text(), "managed by the merchants file") {
		t.Errorf("disabling a file's merchant reads %q", doc.Find("main").Text())
	}
	page(t, newMerchant(t, ops, csrf, url.Values{"id": {"shop3"}, "name": {"Shop 3"}, "return_origins": {"https://shop3.example"}}), http.StatusOK)
	res := ops.post("/console/merchants/shop3/disable", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable shop3: %d", res.StatusCode)
	}
	doc = page(t, ops.get(res.Header.Get("Location")), http.StatusOK)
	if got := doc.Find(`[data-merchant="shop3"] [data-testid="merchant-state"]`).Text(); strings.TrimSpace(got) != "disabled" {
		t.Errorf("shop3's state reads %q after Disable", got)
	}
	if m, _ := e.settings.Dir.Get("shop3"); !m.Disabled() {
		t.Error("shop3 is not disabled in the running set")
	}
	lines := auditActions(t, e, "shop3")
	if len(lines) < 2 || lines[0] != operator+" disabled the merchant." {
		t.Errorf("shop3's audit: %v", lines)
	}
	res = ops.post("/console/merchants/shop3/enable", url.Values{"csrf": {csrf}})
	if m, _ := e.settings.Dir.Get("shop3"); res.StatusCode != http.StatusSeeOther || m.Disabled() {
		t.Errorf("enable shop3: %d, disabled %v", res.StatusCode, m.Disabled())
	}

	// shop2 leaves the merchants file: disabled, and its person still
	// signs in and reads its payments.
	e.seed("shop2", "B-1", "ing", pisclient.StatusCompleted)
	u, _ := e.settings.Dir.ConsoleUser(shop1User)
	op, _ := e.settings.Dir.ConsoleUser(operator)
	file, err := merchant.Parse([]byte(`{"merchants":[{"id":"shop1","name":"Shop shop1","link_keys":{"k1":"a-long-random-secret-for-shop1-0001"},
		"api_token":"another-long-random-secret-shop1-00000","return_origins":["https://shop1.example"],
		"console_users":[{"email":"` + shop1User + `","password_hash":"` + u.PasswordHash + `"}]}],
		"operators":[{"email":"` + operator + `","password_hash":"` + op.PasswordHash + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.settings.Provision(ctx, file); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.settings.Dir.Get("shop2"); !m.Disabled() {
		t.Fatal("shop2 is not disabled after leaving the file")
	}
	shop2 := e.browser()
	shop2.signIn(shop2User)
	doc = page(t, shop2.get("/console/payments"), http.StatusOK)
	if doc.Find(`[data-testid="payment-row"]`).Length() != 1 {
		t.Error("shop2's person does not see its payment once shop2 is disabled")
	}
}

func auditActions(t *testing.T, e *env, merchantID string) []string {
	t.Helper()
	b := e.browser()
	b.signIn(operator)
	doc := page(t, b.get("/console/audit?merchant="+merchantID), http.StatusOK)
	var out []string
	doc.Find(`[data-testid="audit-action"]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
	return out
}

func TestAFilesMerchantsSettingsAreReadOnly(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/settings"), http.StatusOK)
	if got := doc.Find(`[data-testid="managed"]`).Text(); got != "managed by the merchants file" {
		t.Errorf("shop1's settings say %q", got)
	}
	if doc.Find(`[data-testid="read-only"]`).Length() != 1 || doc.Find(`[data-testid="save-settings"]`).Length() != 0 {
		t.Error("a file's merchant's settings offer a Save button")
	}
	version, _ := doc.Find(`input[name="version"]`).Attr("value")
	doc = page(t, b.post("/console/settings", url.Values{"csrf": {csrf}, "version": {version}, "name": {"Changed"},
		"return_origins": {"https://shop1.example"}}), http.StatusConflict)
	if !strings.Contains(doc.Text(), "managed by the merchants file") {
		t.Errorf("saving a file's merchant reads %q", doc.Find("main").Text())
	}
	if m, _ := e.settings.Dir.Get("shop1"); m.Name != "Shop shop1" {
		t.Errorf("shop1 is named %q after a refused save", m.Name)
	}
}

func TestTwoPeopleSavingOneMerchantSeeEachOther(t *testing.T) {
	e := setup(t)
	// shop3 is managed in the console.
	if _, err := e.settings.CreateMerchant(ctx, settings.Actor{Name: "root@psp.example"}, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
		t.Fatal(err)
	}
	ann, bob := e.browser(), e.browser()
	annCSRF, bobCSRF := ann.signIn(operator), bob.signIn(operator)
	annForm := page(t, ann.get("/console/settings?merchant=shop3"), http.StatusOK)
	page(t, bob.get("/console/settings?merchant=shop3"), http.StatusOK)
	version, _ := annForm.Find(`input[name="version"]`).Attr("value")

	save := func(b *browser, csrf, name, origins string) *http.Response {
		return b.post("/console/settings", url.Values{"csrf": {csrf}, "merchant": {"shop3"}, "version": {version},
			"name": {name}, "return_origins": {origins}, "popular_banks": {"de: ing, dkb"}})
	}
	res := save(ann, annCSRF, "Ann's Shop", "https://shop3.example\nhttps://www.shop3.example")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("Ann's save: %d", res.StatusCode)
	}
	if doc := page(t, ann.get(res.Header.Get("Location")), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "saved") {
		t.Error("Ann is not told her settings were saved")
	}
	m, _ := e.settings.Dir.Get("shop3")
	if m.Name != "Ann's Shop" || len(m.ReturnOrigins) != 2 || len(m.PopularBanks["DE"]) != 2 {
		t.Errorf("shop3 after Ann's save: %+v", m)
	}
	// Bob saves from the version he read: he sees Ann's values and keeps
	// his own, nothing overwritten.
	doc := page(t, save(bob, bobCSRF, "Bob's Shop", "https://shop3.example"), http.StatusConflict)
	if got := doc.Find(`[data-testid="newer"] h2`).Text(); !strings.Contains(got, "Changed meanwhile by root@psp.example") {
		t.Errorf("Bob is told %q", got)
	}
	if got := doc.Find(`[data-testid="newer-name"]`).Text(); got != "Ann's Shop" {
		t.Errorf("Bob is shown the newer name %q", got)
	}
	if got, _ := doc.Find(`#name`).Attr("value"); got != "Bob's Shop" {
		t.Errorf("Bob's form holds %q; want what he typed", got)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.Name != "Ann's Shop" {
		t.Errorf("Bob's save overwrote Ann's: %q", m.Name)
	}
	// Sent again from the newer version, Bob's values win, knowingly.
	newer, _ := doc.Find(`input[name="version"]`).Attr("value")
	res = bob.post("/console/settings", url.Values{"csrf": {bobCSRF}, "merchant": {"shop3"}, "version": {newer},
		"name": {"Bob's Shop"}, "return_origins": {"https://shop3.example"}})
	if m, _ := e.settings.Dir.Get("shop3"); res.StatusCode != http.StatusSeeOther || m.Name != "Bob's Shop" {
		t.Errorf("Bob's second save: %d, name %q", res.StatusCode, m.Name)
	}
	// A bad value: 422, everything typed kept, the field's reason.
	m, _ = e.settings.Dir.Get("shop3")
	doc = page(t, bob.post("/console/settings", url.Values{"csrf": {bobCSRF}, "merchant": {"shop3"}, "version": {strconv.FormatInt(m.Version, 10)},
		"name": {"Bob's Shop"}, "return_origins": {"https://shop3.example"}, "frame_ancestors": {"javascript:alert(1)"}}), http.StatusUnprocessableEntity)
	if reason := doc.Find(`#frame_ancestors-error`).Text(); !strings.Contains(reason, "not an origin") {
		t.Errorf("a bad frame ancestor's reason: %q", reason)
	}
	if got := doc.Find(`#frame_ancestors`).Text(); got != "javascript:alert(1)" {
		t.Errorf("the frame ancestor typed came back as %q", got)
	}
}

func TestTheAuditLogShowsEachPersonWhatTheyMayRead(t *testing.T) {
	e := setup(t)
	by := settings.Actor{Name: "root@psp.example", RequestID: "req-42"}
	if _, err := e.settings.CreateMerchant(ctx, by, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
		t.Fatal(err)
	}
	ops := e.browser()
	ops.signIn(operator)
	doc := page(t, ops.get("/console/audit"), http.StatusOK)
	text := doc.Find(`[data-testid="audit"]`).Text()
	for _, want := range []string{"root@psp.example added the merchant shop3, with a first link key and the API token pbb_test_", "req-42",
		"The merchants file added the merchant: Shop name, Link keys (new)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the operator's audit log lacks %q", want)
		}
	}
	shop := e.browser()
	shop.signIn(shop1User)
	doc = page(t, shop.get("/console/audit?merchant=shop3"), http.StatusOK)
	if strings.Contains(doc.Find(`[data-testid="audit"]`).Text(), "shop3") || doc.Find(`[data-testid="audit-row"]`).Length() == 0 {
		t.Error("shop1's person reads another merchant's audit lines, or none of their own")
	}
	res := ops.get("/console/audit.csv")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("audit CSV: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	res.Body.Close()
	if err != nil || len(rows) < 3 || rows[0][2] != "actor" {
		t.Fatalf("audit CSV: %v rows, %v", len(rows), err)
	}
	for _, row := range rows {
		for _, cell := range row {
			if strings.Contains(cell, "link-secret") || strings.Contains(cell, "$argon2") {
				t.Errorf("the audit CSV holds a secret: %q", cell)
			}
		}
	}
}

// TestARefusalIsSummedUpAtTheTopAndTheLineItNamesIsInSight: a refused
// form comes back with a summary at the top that takes the focus and links
// to the field, the field marked, what was typed kept, and a box tall
// enough to show the line the reason names.
func TestARefusalIsSummedUpAtTheTopAndTheLineItNamesIsInSight(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	doc := page(t, ops.get("/console/settings?merchant=shop3"), http.StatusOK)
	typed := "https://shop3.example\nhttps://a.shop3.example\nhttps://b.shop3.example\nnot a url\nhttps://c.shop3.example"
	doc = page(t, ops.post("/console/settings?merchant=shop3", url.Values{"csrf": {csrf}, "version": {doc.Find(`input[name="version"]`).AttrOr("value", "")},
		"name": {"Shop 3"}, "return_origins": {typed}}), http.StatusUnprocessableEntity)
	summary := doc.Find(`[data-testid="error-summary"]`)
	if summary.Length() != 1 || summary.Find(`a[href="#return_origins"]`).Length() != 1 || summary.AttrOr("autofocus", "no") == "no" {
		t.Fatalf("the refusal's summary: %q", summary.Text())
	}
	if first := doc.Find(`main`).Children().First(); first.AttrOr("data-testid", "") != "error-summary" {
		t.Errorf("the summary is not the first thing on the page: %q comes first", first.Text())
	}
	reason := doc.Find(`#return_origins-error`).Text()
	if !strings.Contains(reason, "4") || !strings.Contains(summary.Text(), reason) {
		t.Errorf("the field says %q, the summary %q; want line 4 named in both", reason, summary.Text())
	}
	box := doc.Find(`textarea#return_origins`)
	if box.AttrOr("aria-invalid", "") != "true" || box.Text() != typed {
		t.Errorf("the box is not marked, or lost what was typed: %q", box.Text())
	}
	if rows, _ := strconv.Atoi(box.AttrOr("rows", "0")); rows < 5 {
		t.Errorf("the box shows %d rows; the reason names line 4 of 5", rows)
	}
}

// TestTheTeamReadsTheSettingsAndOnlyOwnersChangeThem: a support person of
// a merchant the console manages reads its settings, every field read-only
// and no Save button, the words saying why; a save of theirs is refused
// (403) and changes nothing.
func TestTheTeamReadsTheSettingsAndOnlyOwnersChangeThem(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	sup, _ := e.join(invite(t, ops, csrf, "shop3", "sam@shop3.example", "support"), newPassword, newPassword)
	doc := page(t, sup.get("/console/settings"), http.StatusOK)
	if doc.Find(`nav a[href="/console/settings"]`).Length() != 1 {
		t.Error("the menu does not lead support to the settings")
	}
	if got := doc.Find(`[data-testid="read-only"]`).Text(); !strings.Contains(got, "Only the shop's owners change these settings") {
		t.Errorf("support is told %q", got)
	}
	if doc.Find(`[data-testid="save-settings"]`).Length() != 0 {
		t.Error("support is offered a Save button")
	}
	doc.Find(`[data-testid="settings-form"] input[type="text"], [data-testid="settings-form"] textarea`).Each(func(_ int, s *goquery.Selection) {
		if _, ro := s.Attr("readonly"); !ro {
			t.Errorf("support may type in %s", s.AttrOr("name", "?"))
		}
	})
	if got, _ := doc.Find(`#name`).Attr("value"); got != "Shop 3" {
		t.Errorf("support reads the name %q", got)
	}
	page(t, sup.post("/console/settings", url.Values{"csrf": {csrfOf(doc)}, "version": {doc.Find(`input[name="version"]`).AttrOr("value", "")},
		"name": {"Sam's Shop"}, "return_origins": {"https://shop3.example"}}), http.StatusForbidden)
	if m, _ := e.settings.Dir.Get("shop3"); m.Name != "Shop 3" {
		t.Errorf("support renamed shop3 %q", m.Name)
	}
}
