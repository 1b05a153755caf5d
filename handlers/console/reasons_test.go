package console_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paybybank/checkout/i18n"
)

// TestEveryRefusalHasItsSentenceInTheConsolesCatalog reads the code that
// refuses settings, passwords, logos and refunds: every key a refusal
// names must be a sentence of the console's catalog (whose test holds
// every language to English), or a person would read the catalog's marker
// for a missing key.
func TestEveryRefusalHasItsSentenceInTheConsolesCatalog(t *testing.T) {
	// Refusals name their key as .Says("key"), logoRefused("key"),
	// Key: "key", and in the password package refuse("key").
	named := regexp.MustCompile(`(?:\.Says|logoRefused)\("([A-Za-z]+)"|Key: "([A-Za-z]+)"`)
	inPassword := regexp.MustCompile(`refuse\("([A-Za-z]+)"()`)
	// The console names the look's refusals itself.
	literal := regexp.MustCompile(`"console\.reason\.([A-Za-z]+)"()`)
	english := i18n.Staff("en")
	found := 0
	for _, dir := range []string{"../../merchant", "../../settings", "../../password", "../../refunds", "."} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			matches := named.FindAllStringSubmatch(string(src), -1)
			if dir == "../../password" {
				matches = append(matches, inPassword.FindAllStringSubmatch(string(src), -1)...)
			}
			matches = append(matches, literal.FindAllStringSubmatch(string(src), -1)...)
			for _, m := range matches {
				key := m[1] + m[2]
				found++
				if got := english.T("console.reason." + key); strings.HasPrefix(got, i18n.Missing) {
					t.Errorf("%s: the refusal %q has no sentence console.reason.%s", file, key, key)
				}
			}
		}
	}
	if found < 30 {
		t.Fatalf("found %d refusals' keys; the pattern no longer matches the code", found)
	}
}

// TestARefusalIsSaidInThePersonsLanguage: an owner who reads the console
// in Polish is told in Polish why a value was refused, whichever part of
// the app refused it, and loses nothing typed; the words the console makes
// of data (a session's device, the embed snippet) are Polish too.
func TestARefusalIsSaidInThePersonsLanguage(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/account"), http.StatusOK))
	chosen := ann.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}})
	chosen.Body.Close()

	says := func(what, got, polish, english string) {
		t.Helper()
		if !strings.Contains(got, polish) || strings.Contains(got, english) {
			t.Errorf("%s: the reason reads %q, want Polish %q", what, got, polish)
		}
	}

	// The shop's settings: merchant.Check.
	doc := page(t, ann.get("/console/settings"), http.StatusOK)
	doc = page(t, ann.post("/console/settings", url.Values{"csrf": {csrfOf(doc)}, "version": {doc.Find(`input[name="version"]`).AttrOr("value", "")},
		"name": {"Shop 3"}, "return_origins": {"https://shop3.example\nnot a url"}}), http.StatusUnprocessableEntity)
	says("an origin", doc.Find(`#return_origins-error`).Text(), `Wiersz 2: "not a url" nie jest originem`, "is not an origin")
	if got := doc.Find(`#return_origins`).Text(); got != "https://shop3.example\nnot a url" {
		t.Errorf("the origins typed came back as %q", got)
	}
	doc = page(t, ann.post("/console/settings", url.Values{"csrf": {csrfOf(doc)}, "version": {doc.Find(`input[name="version"]`).AttrOr("value", "")},
		"name": {"Shop 3"}, "return_origins": {"https://shop3.example"}, "popular_banks": {"DE ing"}}), http.StatusUnprocessableEntity)
	says("a pin", doc.Find(`#popular_banks-error`).Text(), "Wiersz 1: wpisz kod kraju", "write a country code")

	// A token: the settings' developers' rules.
	doc = page(t, ann.get("/console/developers"), http.StatusOK)
	if got := doc.Text(); !strings.Contains(got, "/checkout?…podpisany link…") {
		t.Error("the developers' embed snippet does not say its link in Polish")
	}
	doc = page(t, ann.post("/console/developers/tokens", url.Values{"csrf": {csrfOf(doc)}, "name": {""}, "expires": {"2001-01-01"}}), http.StatusUnprocessableEntity)
	says("a token's date", doc.Find(`#expires-error`).Text(), "Ta data już minęła", "The date is past")

	// An invitation: the team's rules.
	doc = page(t, ann.get("/console/team"), http.StatusOK)
	doc = page(t, ann.post("/console/team/invite", url.Values{"csrf": {csrfOf(doc)}, "email": {"bob at shop3"}, "role": {"viewer"}}), http.StatusUnprocessableEntity)
	says("an e-mail", doc.Find(`#email-error`).Text(), `"bob at shop3" nie jest zwykłym adresem e-mail`, "not a plain e-mail address")

	// A new password: the password's rules. The account page names the
	// sessions' devices in Polish too (this client is no browser it knows).
	doc = page(t, ann.get("/console/account"), http.StatusOK)
	if got := doc.Find(`[data-testid="session"]`).First().Text(); !strings.Contains(got, "przeglądarka (nieznany system)") {
		t.Errorf("a session's device reads %q", got)
	}
	doc = page(t, ann.post("/console/account/password", url.Values{"csrf": {csrfOf(doc)}, "current": {newPassword}, "password": {"short"}, "password_again": {"short"}}), http.StatusUnprocessableEntity)
	says("a short password", doc.Find(`#password-error`).Text(), "Za krótkie: hasło wymaga co najmniej 12 zn., a to ma ich 5.", "needs at least")

	// The look: the provider's rules for a customization, and a logo.
	doc = page(t, ann.get("/console/branding"), http.StatusOK)
	bad := page(t, ann.post("/console/branding", editor(doc, map[string]string{"primaryColor": "red", "radius": "huge"})), http.StatusUnprocessableEntity)
	says("a colour", bad.Find(`[data-testid="field-primaryColor"] [data-testid="field-error"]`).Text(), "Kolor w rodzaju #0B5FFF", "colour must be")
	says("corners", bad.Find(`[data-testid="field-radius"] [data-testid="field-error"]`).Text(), "Wybierz jedno z: "+i18n.Staff("pl").T("console.branding.enum.none"), "must be one of")
	svg := page(t, upload(t, ann, doc, "logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)), http.StatusUnprocessableEntity)
	says("an SVG logo", svg.Find(`[data-testid="field-logo"] [data-testid="field-error"]`).Text(), "SVG nie jest przyjmowany", "SVG is not taken")
}
