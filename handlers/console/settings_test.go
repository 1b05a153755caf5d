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

// whoIsPaid are the settings page's new fields as an owner types them.
func whoIsPaid(fields map[string]string) url.Values {
	form := url.Values{"name": {"Shop 3"}, "return_origins": {"https://shop3.example"}}
	for k, v := range fields {
		form.Set(k, v)
	}
	return form
}

// saveSettingsAs posts the settings form of the page doc with fields.
func saveSettingsAs(b *browser, doc *goquery.Document, form url.Values) *http.Response {
	form.Set("csrf", csrfOf(doc))
	form.Set("version", doc.Find(`input[name="version"]`).AttrOr("value", ""))
	if id := doc.Find(`input[name="merchant"]`).AttrOr("value", ""); id != "" {
		form.Set("merchant", id)
	}
	return b.post("/console/settings", form)
}

// TestAnOwnerSetsWhoIsPaidAndTheRefundAccount: an owner is told every
// value refused at once, each beside its field and in the summary in the
// page's order, with everything typed kept; the values saved are the
// merchant's on every instance and the audit log names them. Support reads
// them with the IBAN masked, and cannot save.
func TestAnOwnerSetsWhoIsPaidAndTheRefundAccount(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	ann, _ := e.join(invite(t, ops, csrf, "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	sam, _ := e.join(invite(t, ops, csrf, "shop3", "sam@shop3.example", "support"), newPassword, newPassword)

	doc := page(t, ann.get("/console/settings"), http.StatusOK)
	for _, section := range []string{"payee-settings", "refunds-settings"} {
		if doc.Find(`[data-testid="`+section+`"] legend`).Length() != 1 {
			t.Errorf("the page has no %s section", section)
		}
	}
	if got := doc.Find(`#time_zone option[selected]`).AttrOr("value", ""); got != "Europe/Brussels" {
		t.Errorf("a shop that chose no zone is shown in %q", got)
	}
	if n := doc.Find(`#time_zone option`).Length(); n != len(merchant.TimeZones) {
		t.Errorf("the zones offered are %d, want %d", n, len(merchant.TimeZones))
	}
	// Saved as shown, the default zone chosen changes nothing.
	first, _ := e.settings.Dir.Get("shop3")
	if res := saveSettingsAs(ann, doc, whoIsPaid(map[string]string{"time_zone": "Europe/Brussels"})); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the page saved as shown: %d", res.StatusCode)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.Version != first.Version || m.TimeZone != "" {
		t.Errorf("the page saved as shown wrote version %d (from %d), zone %q", m.Version, first.Version, m.TimeZone)
	}

	bad := map[string]string{
		"legal_name":           "Shop \u202eThree",
		"contact_email":        "help at shop3",
		"contact_phone":        "call us",
		"contact_url":          "http://shop3.example/contact",
		"terms_url":            "javascript:alert(1)",
		"privacy_url":          "ftp://shop3.example/privacy",
		"time_zone":            "Mars/Olympus_Mons",
		"account_name":         strings.Repeat("x", 71),
		"account_iban":         "DE89 3704 0044 0532 0130 01",
		"account_bic":          "COBA",
		"refund_approval_over": "0.50",
	}
	doc = page(t, saveSettingsAs(ann, doc, whoIsPaid(bad)), http.StatusUnprocessableEntity)
	reasons := map[string]string{
		"legal_name":           "invisible formatting character",
		"contact_email":        `"help at shop3" is not a plain e-mail address`,
		"contact_phone":        "Digits, spaces and + - ( ) / only, at most 32 characters",
		"contact_url":          "An https address",
		"terms_url":            "An https address",
		"privacy_url":          "An https address",
		"time_zone":            `"Mars/Olympus_Mons" is not a time zone`,
		"account_name":         "at most 70 characters; this one has 71",
		"account_iban":         "The check digits do not match",
		"account_bic":          "8 or 11 letters and digits",
		"refund_approval_over": "From 1 to 15000 euros",
	}
	summary := doc.Find(`[data-testid="error-summary"]`)
	var order []string
	summary.Find("a").Each(func(_ int, a *goquery.Selection) {
		order = append(order, strings.TrimPrefix(a.AttrOr("href", ""), "#"))
	})
	if got := strings.Join(order, " "); got != "legal_name contact_email contact_phone contact_url terms_url privacy_url time_zone account_name account_iban account_bic refund_approval_over" {
		t.Errorf("the summary names, in this order: %s", got)
	}
	for field, want := range reasons {
		reason := doc.Find("#" + field + "-error").Text()
		if !strings.Contains(reason, want) || !strings.Contains(summary.Text(), reason) {
			t.Errorf("%s: beside it %q, want %q, in the summary too", field, reason, want)
		}
		typed := doc.Find("#"+field).AttrOr("value", "")
		if field == "time_zone" {
			typed = doc.Find(`#time_zone option[selected]`).AttrOr("value", "")
		}
		if typed != bad[field] {
			t.Errorf("%s: typed %q, the form holds %q", field, bad[field], typed)
		}
		if doc.Find("#"+field).AttrOr("aria-invalid", "") != "true" {
			t.Errorf("%s is not marked invalid", field)
		}
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.LegalName != "" || m.AccountIBAN != "" {
		t.Errorf("a refused form changed shop3: %+v", m)
	}

	good := map[string]string{
		"legal_name": "Shop Three GmbH", "contact_email": "help@shop3.example", "contact_phone": "+49 30 123 456-7",
		"contact_url": "https://shop3.example/contact", "terms_url": "https://shop3.example/terms",
		"privacy_url": "https://shop3.example/privacy", "time_zone": "Europe/Berlin", "account_name": "Shop Three GmbH",
		"account_iban": "de89 3704 0044 0532 0130 00", "account_bic": "cobadeffxxx", "refund_approval_over": "500",
	}
	res := saveSettingsAs(ann, doc, whoIsPaid(good))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the owner's save: %d", res.StatusCode)
	}
	m, _ := e.settings.Dir.Get("shop3")
	if m.LegalName != "Shop Three GmbH" || m.ContactEmail != "help@shop3.example" || m.ContactPhone != "+49 30 123 456-7" ||
		m.ContactURL != "https://shop3.example/contact" || m.TermsURL != "https://shop3.example/terms" ||
		m.PrivacyURL != "https://shop3.example/privacy" || m.Location().String() != "Europe/Berlin" ||
		m.AccountName != "Shop Three GmbH" || m.AccountIBAN != "DE89370400440532013000" || m.AccountBIC != "COBADEFFXXX" ||
		m.RefundApprovalOver == nil || m.RefundApprovalOver.StringFixed(2) != "500.00" {
		t.Errorf("shop3 after the owner's save: %+v", m)
	}
	doc = page(t, ann.get(res.Header.Get("Location")), http.StatusOK)
	for field, want := range map[string]string{"account_iban": "DE89 3704 0044 0532 0130 00", "refund_approval_over": "500.00", "legal_name": "Shop Three GmbH"} {
		if got := doc.Find("#"+field).AttrOr("value", ""); got != want {
			t.Errorf("the owner reads %s as %q, want %q", field, got, want)
		}
	}
	if got := doc.Find(`#time_zone option[selected]`).AttrOr("value", ""); got != "Europe/Berlin" {
		t.Errorf("the zone chosen reads %q", got)
	}
	audit := page(t, ops.get("/console/audit?merchant=shop3"), http.StatusOK).Find(`[data-testid="audit-row"]`).First().Text()
	for _, want := range []string{"Legal name", "Contact e-mail", "Time zone", "Refund account's IBAN", "Second owner's approval of refunds"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit line %q does not name %s", audit, want)
		}
	}
	if strings.Contains(audit, "DE89") || strings.Contains(audit, "GmbH") {
		t.Errorf("the audit line says a value: %q", audit)
	}
	// Saved again unchanged: nothing to write.
	before := m.Version
	if res := saveSettingsAs(ann, doc, whoIsPaid(good)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the same values again: %d", res.StatusCode)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.Version != before {
		t.Errorf("saving the same values moved shop3 from version %d to %d", before, m.Version)
	}

	// Support reads it all, the IBAN masked, and cannot save.
	res = sam.get("/console/settings")
	raw := readAll(t, res)
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(raw))
	if got := doc.Find(`#account_iban`).AttrOr("value", ""); res.StatusCode != http.StatusOK || got != "DE89 **** **** **** 3000" {
		t.Errorf("support reads the IBAN as %q (%d)", got, res.StatusCode)
	}
	if strings.Contains(raw, "3704") || strings.Contains(raw, "370400440532013000") {
		t.Error("the page support reads holds the IBAN's digits")
	}
	if got := doc.Find(`#account_iban-hint`).Text(); got != "Only owners see the whole IBAN." {
		t.Errorf("support is told %q under the IBAN", got)
	}
	for _, field := range []string{"legal_name", "contact_email", "account_name", "refund_approval_over"} {
		if _, ro := doc.Find("#" + field).Attr("readonly"); !ro || doc.Find("#"+field).AttrOr("value", "") == "" {
			t.Errorf("support does not read %s, read-only", field)
		}
	}
	if _, off := doc.Find(`#time_zone`).Attr("disabled"); !off || doc.Find(`[data-testid="save-settings"]`).Length() != 0 {
		t.Error("support may choose a zone, or save")
	}
	page(t, saveSettingsAs(sam, doc, whoIsPaid(map[string]string{"account_iban": "NL91 ABNA 0417 1643 00", "account_name": "Sam"})), http.StatusForbidden)
	if m, _ := e.settings.Dir.Get("shop3"); m.AccountIBAN != "DE89370400440532013000" {
		t.Errorf("support's save changed the IBAN to %q", m.AccountIBAN)
	}
	// An operator reads it whole.
	if got := page(t, ops.get("/console/settings?merchant=shop3"), http.StatusOK).Find(`#account_iban`).AttrOr("value", ""); got != "DE89 3704 0044 0532 0130 00" {
		t.Errorf("an operator reads the IBAN as %q", got)
	}
}

// TestTheSettingsPageEscapesTheLegalName: a legal name that holds markup
// is shown as the text typed, in the form and among the values saved
// meanwhile, never as markup.
func TestTheSettingsPageEscapesTheLegalName(t *testing.T) {
	e := setup(t)
	e.shop3()
	const name = `Shop "3"><script>alert(1)</script><img src=x onerror=alert(2)>`
	if err := e.settings.Update(ctx, settings.Actor{Name: operator}, "shop3", 0, func(m *merchant.Merchant) { m.LegalName = name }); err != nil {
		t.Fatal(err)
	}
	ops := e.browser()
	ops.signIn(operator)
	stale := page(t, ops.get("/console/settings?merchant=shop3"), http.StatusOK)
	// Someone saves another name meanwhile: the next save shows it beside
	// what was typed.
	if err := e.settings.Update(ctx, settings.Actor{Name: "bob@psp.example"}, "shop3", 0, func(m *merchant.Merchant) { m.LegalName = name + "!" }); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		res        *http.Response
		form, seen string
	}{
		{ops.get("/console/settings?merchant=shop3"), name + "!", ""},
		{saveSettingsAs(ops, stale, whoIsPaid(map[string]string{"legal_name": name})), name, name + "!"},
	} {
		raw := readAll(t, tt.res)
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(raw))
		if strings.Contains(raw, "<script>alert") || strings.Contains(raw, "<img src=x") || doc.Find(`img[src="x"], script:not([src])`).Length() != 0 {
			t.Errorf("%d: the legal name is rendered as markup", tt.res.StatusCode)
		}
		if got := doc.Find(`#legal_name`).AttrOr("value", ""); got != tt.form {
			t.Errorf("%d: the form holds %q, want %q", tt.res.StatusCode, got, tt.form)
		}
		if got := doc.Find(`[data-testid="newer-legal-name"]`).Text(); got != tt.seen {
			t.Errorf("%d: the legal name saved meanwhile reads %q, want %q", tt.res.StatusCode, got, tt.seen)
		}
	}
}

// TestAZoneTheConsoleDoesNotOfferIsKept: a zone outside Europe, set in
// the merchants file or before an import, is shown chosen, so that a save
// keeps it.
func TestAZoneTheConsoleDoesNotOfferIsKept(t *testing.T) {
	e := setup(t)
	e.shop3()
	if err := e.settings.Update(ctx, settings.Actor{Name: operator}, "shop3", 0, func(m *merchant.Merchant) { m.TimeZone = "America/Cayman" }); err != nil {
		t.Fatal(err)
	}
	ops := e.browser()
	ops.signIn(operator)
	doc := page(t, ops.get("/console/settings?merchant=shop3"), http.StatusOK)
	if got := doc.Find(`#time_zone option[selected]`).AttrOr("value", ""); got != "America/Cayman" {
		t.Fatalf("the zone shown chosen is %q", got)
	}
	if res := saveSettingsAs(ops, doc, whoIsPaid(map[string]string{"time_zone": "America/Cayman", "legal_name": "Shop 3 Ltd"})); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving: %d", res.StatusCode)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.TimeZone != "America/Cayman" || m.LegalName != "Shop 3 Ltd" {
		t.Errorf("after a save shop3 is in %q, named %q", m.TimeZone, m.LegalName)
	}
}
