package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/settings"
)

const newPassword = "a long new password for the team"

// shop3 is a merchant made in the console, with no one on its team yet.
func (e *env) shop3() {
	e.t.Helper()
	if _, err := e.settings.CreateMerchant(ctx, settings.Actor{Name: operator}, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
		e.t.Fatal(err)
	}
}

// invite makes an invitation from the team page and returns its link's path.
func invite(t *testing.T, b *browser, csrf, merchantID, email, role string) string {
	t.Helper()
	form := url.Values{"csrf": {csrf}, "email": {email}, "role": {role}}
	if merchantID != "" {
		form.Set("merchant", merchantID)
	}
	doc := page(t, b.post("/console/team/invite", form), http.StatusOK)
	link := doc.Find(`[data-testid="invite-link"]`).Text()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(u.Path, "/console/invite/") {
		t.Fatalf("the invitation link is %q", link)
	}
	return u.Path
}

// join opens an invitation's link in a new browser and joins with pw.
func (e *env) join(path, pw, again string) (*browser, *http.Response) {
	e.t.Helper()
	b := e.browser()
	doc := page(e.t, b.get(path), http.StatusOK)
	form := url.Values{"csrf": {csrfOf(doc)}, "password": {pw}}
	if again != "" {
		form.Set("password_again", again)
	}
	return b, b.post(path, form)
}

func TestAnOperatorsInvitationMakesANewMerchantsFirstOwner(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	link := invite(t, ops, csrf, "shop3", "Ann@Shop3.example", "owner")
	if doc := page(t, ops.get("/console/team?merchant=shop3"), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="pending"]`).Text(), "ann@shop3.example") {
		t.Error("the team page does not list the invitation as pending")
	}

	// Two different passwords, then a short one: each said, nothing done.
	_, res := e.join(link, newPassword, newPassword+"!")
	if doc := page(t, res, http.StatusUnprocessableEntity); !strings.Contains(doc.Find(`#password_again-error`).Text(), "differ") {
		t.Errorf("two different passwords: %q", doc.Find("main").Text())
	}
	_, res = e.join(link, "short", "short")
	if doc := page(t, res, http.StatusUnprocessableEntity); !strings.Contains(doc.Find(`#password-error`).Text(), "12 characters") {
		t.Errorf("a short password: %q", doc.Find("main").Text())
	}
	_, res = e.join(link, "qwerty123456", "qwerty123456")
	if doc := page(t, res, http.StatusUnprocessableEntity); !strings.Contains(doc.Find(`#password-error`).Text(), "100,000 most used") {
		t.Errorf("a common password: %q", doc.Find("main").Text())
	}
	ann, res := e.join(link, newPassword, newPassword)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console" {
		t.Fatalf("joining: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	doc := page(t, ann.get("/console/team"), http.StatusOK)
	if got := doc.Find(`[data-testid="console-user"]`).Text(); !strings.Contains(got, "Shop 3, owner") {
		t.Errorf("after joining the header says %q", got)
	}
	if doc.Find(`[data-email="ann@shop3.example"]`).Length() != 1 {
		t.Error("the new owner is not on the team page")
	}
	// The link works once.
	doc = page(t, e.browser().get(link), http.StatusGone)
	if !strings.Contains(doc.Text(), "This invitation was used") {
		t.Errorf("a used link says %q", doc.Find("main").Text())
	}
}

func TestInvitationsRefuseWhatTheyCannotDo(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	ann, _ := e.join(invite(t, ops, csrf, "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	annCSRF := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))

	// Someone already on the team; a role outside the five; a bad e-mail.
	for _, c := range []struct{ email, role, field, says string }{
		{"ann@shop3.example", "viewer", "email", "on the team already"},
		{"bob@shop3.example", "admin", "role", `"admin" is not one of the five roles`},
		{"bob at shop3", "viewer", "email", "not a plain e-mail address"},
	} {
		doc := page(t, ann.post("/console/team/invite", url.Values{"csrf": {annCSRF}, "email": {c.email}, "role": {c.role}}), http.StatusUnprocessableEntity)
		if got := doc.Find("#" + c.field + "-error").Text(); !strings.Contains(got, c.says) {
			t.Errorf("inviting %s as %s: %s says %q", c.email, c.role, c.field, got)
		}
		if got, _ := doc.Find(`#email`).Attr("value"); got != c.email {
			t.Errorf("the e-mail typed came back as %q", got)
		}
	}
	// An expired invitation.
	link := invite(t, ann, annCSRF, "", "late@shop3.example", "viewer")
	e.skew.Store(int64(settings.InvitationValid + time.Minute))
	doc := page(t, e.browser().get(link), http.StatusGone)
	if !strings.Contains(doc.Text(), "This invitation has expired") {
		t.Errorf("an expired link says %q", doc.Find("main").Text())
	}
	e.skew.Store(0)
	page(t, e.browser().get("/console/invite/not-a-token"), http.StatusNotFound)
	// A file's merchant's team is the file's.
	owner := e.browser()
	ownerCSRF := owner.signIn(shop1User)
	page(t, owner.post("/console/team/invite", url.Values{"csrf": {ownerCSRF}, "email": {"new@shop1.example"}, "role": {"viewer"}}), http.StatusConflict)
}

func TestOwnersChangeRolesRemoveMembersAndTheLastOwnerStays(t *testing.T) {
	url2 := ledgertest.SQLiteURL(t)
	e := setupOn(t, url2)
	other := setupOn(t, url2) // a second instance on the same ledger
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	ann, _ := e.join(invite(t, ops, csrf, "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	annCSRF := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))
	_, res := e.join(invite(t, ann, annCSRF, "", "bob@shop3.example", "viewer"), newPassword, newPassword)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob joining: %d", res.StatusCode)
	}
	// Bob is signed in on the other instance too, once it knows him.
	other.knows("bob@shop3.example")
	bob := other.browser()
	bob.signInWith("bob@shop3.example", newPassword)

	member := func(email, what string) string { return "/console/team/" + url.PathEscape(email) + "/" + what }
	res = ann.post(member("bob@shop3.example", "role"), url.Values{"csrf": {annCSRF}, "role": {"support"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("changing bob's role: %d", res.StatusCode)
	}
	doc := page(t, ann.get(res.Header.Get("Location")), http.StatusOK)
	if got := doc.Find(`[data-email="bob@shop3.example"] [data-testid="member-role"]`).Text(); got != "support" {
		t.Errorf("bob's role reads %q", got)
	}
	page(t, ann.post(member("bob@shop3.example", "role"), url.Values{"csrf": {annCSRF}, "role": {"root"}}), http.StatusUnprocessableEntity)

	// The last owner can neither step down nor leave; it is said on the
	// team page, beside the roles that make someone else owner.
	for _, what := range []string{"role", "remove"} {
		doc := page(t, ann.post(member("ann@shop3.example", what), url.Values{"csrf": {annCSRF}, "role": {"viewer"}, "confirm": {"yes"}}), http.StatusConflict)
		if !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "always has an owner") || doc.Find(`[data-testid="members"] [data-testid="change-role"]`).Length() == 0 {
			t.Errorf("the last owner's %s: %q", what, doc.Find("main").Text())
		}
	}

	// Removing asks once, on a page of its own that works without a
	// script; nothing happens before the yes.
	doc = page(t, ann.post(member("bob@shop3.example", "remove"), url.Values{"csrf": {annCSRF}}), http.StatusOK)
	if q := doc.Find(`[data-testid="confirm"] h1`).Text(); !strings.Contains(q, "bob@shop3.example") || doc.Find(`[data-testid="confirm-back"]`).Length() != 1 {
		t.Errorf("removing bob asks %q", q)
	}
	if u, _ := e.settings.Dir.ConsoleUser("bob@shop3.example"); u == nil {
		t.Error("bob was removed before the owner said yes")
	}
	// Removed, Bob's session ends on the other instance as soon as it
	// knows.
	if res := ann.post(member("bob@shop3.example", "remove"), url.Values{"csrf": {annCSRF}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("removing bob: %d", res.StatusCode)
	}
	endsSoon(t, bob, "bob's session on the other instance after his removal")
}

func TestSomeoneWithAnAccountJoinsASecondTeamWithTheirOwnPassword(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	link := invite(t, ops, csrf, "shop3", shop1User, "developer")
	b := e.browser()
	doc := page(t, b.get(link), http.StatusOK)
	if doc.Find(`#password_again`).Length() != 0 || doc.Find(`#password`).Length() != 1 {
		t.Fatal("someone with an account is asked to choose a new password")
	}
	// A wrong password changes nothing and is counted.
	res := b.post(link, url.Values{"csrf": {csrfOf(doc)}, "password": {"not my password at all"}})
	if doc := page(t, res, http.StatusUnauthorized); !strings.Contains(doc.Find(`#password-error`).Text(), "not your password") {
		t.Errorf("a wrong password: %q", doc.Find("main").Text())
	}
	doc = page(t, b.get(link), http.StatusOK)
	res = b.post(link, url.Values{"csrf": {csrfOf(doc)}, "password": {secret}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("joining with the right password: %d", res.StatusCode)
	}
	doc = page(t, b.get("/console"), http.StatusOK)
	if got := doc.Find(`[data-testid="console-user"]`).Text(); !strings.Contains(got, "Shop 3, developer") {
		t.Errorf("after joining shop3 the header says %q", got)
	}
	if n := doc.Find(`[data-testid="act-for"] option`).Length(); n != 2 {
		t.Errorf("the person can act for %d merchants, want shop1 and shop3", n)
	}

}

func TestAnInvitationIsEMailedWhenTheAppCanSendMail(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	link := invite(t, ops, csrf, "shop3", "ann@shop3.example", "developer")
	e.mail.mu.Lock()
	sent := append([]string(nil), e.mail.sent...)
	e.mail.failing = true
	e.mail.mu.Unlock()
	if len(sent) != 1 || !strings.Contains(sent[0], "To: ann@shop3.example") || !strings.Contains(sent[0], link) ||
		!strings.Contains(sent[0], "Shop 3's team") || !strings.Contains(sent[0], "as developer") {
		t.Fatalf("the e-mail sent: %q", sent)
	}
	// A mail server that refuses: the link is shown all the same, and the
	// log says why without the link.
	form := url.Values{"csrf": {csrf}, "email": {"bob@shop3.example"}, "role": {"viewer"}, "merchant": {"shop3"}}
	doc := page(t, ops.post("/console/team/invite", form), http.StatusOK)
	token := strings.TrimPrefix(mustPath(t, doc.Find(`[data-testid="invite-link"]`).Text()), "/console/invite/")
	if !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "could not be e-mailed") || token == "" {
		t.Errorf("a refused e-mail: notice %q, link token %q", doc.Find(`[data-testid="notice"]`).Text(), token)
	}
	if log := e.logText(); !strings.Contains(log, "could not be e-mailed") || strings.Contains(log, token) {
		t.Error("the log does not say the e-mail failed, or holds the invitation's token")
	}
}

// TestAnInvitationIsWrittenInTheInvitersLanguage: the e-mail speaks the
// language the owner reads the console in.
func TestAnInvitationIsWrittenInTheInvitersLanguage(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))
	res := ann.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}, "back": {"/console/team"}})
	res.Body.Close()
	doc := page(t, ann.get("/console/team"), http.StatusOK)
	link := invite(t, ann, csrfOf(doc), "shop3", "bob@shop3.example", "developer")
	e.mail.mu.Lock()
	sent := append([]string(nil), e.mail.sent...)
	e.mail.mu.Unlock()
	last := sent[len(sent)-1]
	if !strings.Contains(last, "To: bob@shop3.example") || !strings.Contains(last, "Subject: Dołącz do zespołu Shop 3") ||
		!strings.Contains(last, "z rolą programista") || !strings.Contains(last, link) {
		t.Errorf("the e-mail of a Polish-speaking owner: %q", last)
	}
}

func mustPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// TestAnOperatorIsLedBackToTheMerchantTheyActedFor: after a change on a
// merchant's page, an operator lands on that merchant's page again, even
// when its id holds characters an address must escape.
func TestAnOperatorIsLedBackToTheMerchantTheyActedFor(t *testing.T) {
	e := setup(t)
	const id = "shop&4+x"
	if _, err := e.settings.CreateMerchant(ctx, settings.Actor{Name: operator}, id, "Shop 4", []string{"https://shop4.example"}); err != nil {
		t.Fatal(err)
	}
	ops := e.browser()
	csrf := ops.signIn(operator)
	for _, c := range []struct{ path, done string }{
		{"/console/team/require-two-step", "required"},
		{"/console/developers/webhook/end-overlap", "overlapEnded"},
	} {
		res := ops.post(c.path, url.Values{"csrf": {csrf}, "require": {"on"}, "merchant": {id}})
		res.Body.Close()
		to, err := url.Parse(res.Header.Get("Location"))
		if err != nil || res.StatusCode != http.StatusSeeOther || to.Query().Get("merchant") != id || to.Query().Get("done") != c.done {
			t.Errorf("%s: %d to %q, want back to %s's page", c.path, res.StatusCode, res.Header.Get("Location"), id)
		}
	}
}
