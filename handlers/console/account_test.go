package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
)

// waitFor waits until ok holds, a minute at most: how soon another
// instance follows a change is the machine's business, not the test's.
func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
	}
}

// knows waits until this instance's settings hold the person email.
func (e *env) knows(email string) {
	e.t.Helper()
	waitFor(e.t, "an instance knows "+email, func() bool {
		_, ok := e.settings.Dir.ConsoleUser(email)
		return ok
	})
}

// endsSoon waits until b's session is over: the console sends it to sign
// in.
func endsSoon(t *testing.T, b *browser, why string) {
	t.Helper()
	waitFor(t, why, func() bool {
		res := b.get("/console")
		res.Body.Close()
		return res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/console/login")
	})
}

func TestChangingAPasswordEndsEveryOtherSessionOnEveryInstance(t *testing.T) {
	db := ledgertest.SQLiteURL(t)
	e := setupOn(t, db)
	other := setupOn(t, db)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	other.knows("ann@shop3.example")
	elsewhere := other.browser()
	elsewhere.signInWith("ann@shop3.example", newPassword)

	doc := page(t, ann.get("/console/account"), http.StatusOK)
	if n := doc.Find(`[data-testid="session"]`).Length(); n != 2 {
		t.Errorf("ann's account lists %d sessions, want 2", n)
	}
	csrf := csrfOf(doc)
	change := func(current, pw, again string) *http.Response {
		return ann.post("/console/account/password", url.Values{"csrf": {csrf}, "current": {current}, "password": {pw}, "password_again": {again}})
	}
	const next = "the next long password of ann"
	if doc := page(t, change("a wrong current password", next, next), http.StatusUnauthorized); !strings.Contains(doc.Find(`#current-error`).Text(), "not your password") {
		t.Errorf("a wrong current password: %q", doc.Find("main").Text())
	}
	if doc := page(t, change(newPassword, next, next+"?"), http.StatusUnprocessableEntity); !strings.Contains(doc.Find(`#password_again-error`).Text(), "differ") {
		t.Errorf("two different new passwords: %q", doc.Find("main").Text())
	}
	res := change(newPassword, next, next)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("changing the password: %d", res.StatusCode)
	}
	// This session goes on; the other instance's ends.
	if doc := page(t, ann.get(res.Header.Get("Location")), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "password is changed") {
		t.Error("ann is not told her password changed")
	}
	endsSoon(t, elsewhere, "ann's session on the other instance after her password changed")
	again := e.browser()
	form := page(t, again.get("/console/login"), http.StatusOK)
	if res := again.post("/console/login", url.Values{"email": {"ann@shop3.example"}, "password": {newPassword}, "csrf": {csrfOf(form)}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old password still signs in: %d", res.StatusCode)
	}
	again.signInWith("ann@shop3.example", next)
}

func TestSignOutEverywhereElse(t *testing.T) {
	e := setup(t)
	laptop, phone := e.browser(), e.browser()
	csrf := laptop.signIn(shop1User)
	phone.signIn(shop1User)
	if res := laptop.post("/console/account/sessions", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out everywhere else: %d", res.StatusCode)
	}
	endsSoon(t, phone, "the phone's session after 'sign out everywhere else'")
	doc := page(t, laptop.get("/console/account"), http.StatusOK)
	if n := doc.Find(`[data-testid="session"]`).Length(); n != 1 || !strings.Contains(doc.Find(`[data-testid="session"]`).Text(), "this session") {
		t.Errorf("after signing out elsewhere the list holds %d sessions: %q", n, doc.Find(`[data-testid="sessions"]`).Text())
	}
	// A person of the merchants file changes their password there.
	if doc.Find(`[data-testid="password-form"]`).Length() != 0 || doc.Find(`[data-testid="password-from-file"]`).Length() != 1 {
		t.Error("a person of the merchants file is offered a password form")
	}
	page(t, laptop.post("/console/account/password", url.Values{"csrf": {csrf}, "current": {secret}, "password": {newPassword}, "password_again": {newPassword}}), http.StatusConflict)
}

func TestAPersonsLanguageIsKeptOnEveryInstance(t *testing.T) {
	db := ledgertest.SQLiteURL(t)
	e := setupOn(t, db)
	other := setupOn(t, db)
	// Someone the console made: each instance of the tests hashes the
	// file's people anew.
	e.shop3()
	ops := e.browser()
	b, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "viewer"), newPassword, newPassword)
	doc := page(t, b.get("/console"), http.StatusOK)
	csrf := csrfOf(doc)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "en" {
		t.Errorf("the console's <html lang> is %q", lang)
	}
	// A language the console does not speak is refused, saying so.
	if res := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"xx"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown language: %d", res.StatusCode)
	}
	res := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"en"}, "back": {"/console/payments"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/payments" {
		t.Fatalf("choosing English: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	waitFor(t, "the other instance knows the choice", func() bool {
		u, ok := other.settings.Dir.ConsoleUser("ann@shop3.example")
		return ok && u.Language == "en"
	})
	// A way back elsewhere than the console is not taken.
	if res := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {""}, "back": {"//evil.example/"}}); res.Header.Get("Location") != "/console/account" {
		t.Errorf("a foreign way back: %d, led to %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestTheConsoleSpeaksTheBrowsersLanguageUntilAPersonChooses(t *testing.T) {
	e := setup(t)
	b := e.browser()
	req, _ := http.NewRequest(http.MethodGet, e.url+"/console/login", nil)
	req.Header.Set("Accept-Language", "pl-PL,pl;q=0.9,en;q=0.5")
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	doc := page(t, res, http.StatusOK)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "pl" || !strings.Contains(doc.Find("h1").Text(), "Zaloguj") {
		t.Errorf("the sign-in page for a Polish browser is in %q: %q", lang, doc.Find("h1").Text())
	}
	csrf := b.signIn(shop1User)
	doc = page(t, b.get("/console"), http.StatusOK)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "en" {
		t.Errorf("without Accept-Language the console is in %q", lang)
	}
	res = b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"el"}, "back": {"/console/payments"}})
	res.Body.Close()
	doc = page(t, b.get("/console/payments"), http.StatusOK)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "el" || !strings.Contains(doc.Find("h1").Text(), "Πληρωμές") {
		t.Errorf("after choosing Greek the payments page is in %q: %q", lang, doc.Find("h1").Text())
	}
	if doc.Find(`[data-testid="language-switch"] option[selected]`).AttrOr("value", "") != "el" {
		t.Error("the switcher does not show the language chosen")
	}
}
