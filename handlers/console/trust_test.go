package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/settings"
)

// auditLines counts the audit log's lines of event, by actor when it is
// not empty, whose first values are args.
func (e *env) auditLines(actor, event string, args ...string) int {
	e.t.Helper()
	audit, err := e.ledger.Audit(ctx, ledger.AuditQuery{Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, a := range audit {
		if a.Event != event || (actor != "" && a.Actor != actor) || len(a.Args) < len(args) {
			continue
		}
		same := true
		for i, v := range args {
			same = same && a.Args[i].Value == v
		}
		if same {
			n++
		}
	}
	return n
}

// joinAs opens an invitation's link as a person the settings hold and gives
// pw, their own password.
func (e *env) joinAs(path, pw string) (*browser, *http.Response) {
	e.t.Helper()
	b := e.browser()
	doc := page(e.t, b.get(path), http.StatusOK)
	return b, b.post(path, url.Values{"csrf": {csrfOf(doc)}, "password": {pw}})
}

func TestAnInvitationAsksForTheCodeOfAPersonWhoSignsInWithTwoSteps(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	_, secret, _ := e.twoStepOn(t, step)
	if _, err := e.settings.CreateMerchant(ctx, settings.Actor{Name: operator}, "shop4", "Shop 4", []string{"https://shop4.example"}); err != nil {
		t.Fatal(err)
	}
	ops := e.browser()
	link := invite(t, ops, ops.signIn(operator), "shop4", "ann@shop3.example", "owner")

	// Her password alone starts no session: the code step comes next.
	ann, res := e.joinAs(link, newPassword)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("accepting with the password of a person with two-step sign-in: %d to %q, want the code step", res.StatusCode, res.Header.Get("Location"))
	}
	if res := ann.get("/console"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Errorf("between the password and the code the console answers %d", res.StatusCode)
	}
	if _, ok := e.settings.Dir.ConsoleUser("ann@shop3.example"); ok {
		if u, _ := e.settings.Dir.ConsoleUser("ann@shop3.example"); func() bool { _, on := u.RoleAt("shop4"); return on }() {
			t.Error("ann joined shop4's team before her code")
		}
	}
	csrf := csrfOf(page(t, ann.get("/console/login/code"), http.StatusOK))
	next := e.at(step.Add(30 * time.Second))
	res = ann.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {codeAt(t, secret, next)}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console" {
		t.Fatalf("the code after the invitation: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if doc := page(t, ann.get("/console"), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="console-user"]`).Text(), "Shop 4, owner") {
		t.Errorf("after the code ann acts for %q, want Shop 4 as owner", doc.Find(`[data-testid="console-user"]`).Text())
	}
	// The link was used once, by the code's sign-in.
	page(t, e.browser().get(link), http.StatusGone)
}

func TestOwnersRevokeInvitationsAndOnlyTheNewestLinkWorks(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupOn(t, databaseURL)
		e.shop3()
		ops := e.browser()
		ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
		csrf := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))

		first := invite(t, ann, csrf, "", "bob@shop3.example", "owner")
		second := invite(t, ann, csrf, "", "bob@shop3.example", "viewer")
		if doc := page(t, e.browser().get(first), http.StatusGone); !strings.Contains(doc.Text(), "withdrawn") {
			t.Errorf("an invitation replaced by a newer one says %q", doc.Find("main").Text())
		}
		doc := page(t, ann.get("/console/team"), http.StatusOK)
		if n := doc.Find(`[data-testid="pending-invitation"][data-email="bob@shop3.example"]`).Length(); n != 1 {
			t.Errorf("bob has %d pending invitations listed, want the newest only", n)
		}
		res := ann.post("/console/team/invitations/revoke", url.Values{"csrf": {csrf}, "email": {"bob@shop3.example"}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("revoking: %d", res.StatusCode)
		}
		if doc := page(t, ann.get(res.Header.Get("Location")), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "revoked") ||
			doc.Find(`[data-testid="pending-invitation"]`).Length() != 0 {
			t.Errorf("after revoking the team page says %q", doc.Find("main").Text())
		}
		if doc := page(t, e.browser().get(second), http.StatusGone); !strings.Contains(doc.Text(), "withdrawn") {
			t.Errorf("a revoked invitation opens: %q", doc.Find("main").Text())
		}
		if _, ok := e.settings.Dir.Person("bob@shop3.example"); ok {
			t.Error("bob has an account after a revoked invitation")
		}
		// Revoking what is not there says so; a viewer may not revoke.
		page(t, ann.post("/console/team/invitations/revoke", url.Values{"csrf": {csrf}, "email": {"bob@shop3.example"}}), http.StatusNotFound)
		if revoked := e.auditLines("", settings.EventInvitationRevoked, "bob@shop3.example"); revoked != 1 {
			t.Errorf("the audit log has %d revocations of bob's invitation, want 1", revoked)
		}
	})
}

func TestAnInvitationIsNoLongerGoodOnceItsInviterMayNotInvite(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	opsCSRF := ops.signIn(operator)
	ann, _ := e.join(invite(t, ops, opsCSRF, "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	e.join(invite(t, ops, opsCSRF, "shop3", "olga@shop3.example", "owner"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))
	link := invite(t, ann, csrf, "", "carl@shop3.example", "owner")
	// Ann is made a viewer: what she handed out no longer lets anyone in.
	if res := ops.post("/console/team/ann%40shop3.example/role?merchant=shop3", url.Values{"csrf": {opsCSRF}, "role": {"viewer"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("making ann a viewer: %d", res.StatusCode)
	}
	_, res := e.join(link, newPassword, newPassword)
	if doc := page(t, res, http.StatusGone); !strings.Contains(doc.Text(), "withdrawn") {
		t.Errorf("an invitation of a former owner accepted: %q", doc.Find("main").Text())
	}
	if _, ok := e.settings.Dir.Person("carl@shop3.example"); ok {
		t.Error("carl joined through a former owner's link")
	}
}

// An invitation made before a change to the person's place on the team is
// never a way round it: accepting re-checks in the same change of the
// settings, and a member's role never moves through a link.
func TestAcceptingNeverChangesAMembersRoleNorLeavesATeamWithoutOwner(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupOn(t, databaseURL)
		e.shop3()
		ops := e.browser()
		e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
		// A viewer link for ann, the sole owner, as an older build or a
		// race would have left it.
		if _, err := e.ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
			return tx.AddInvitation(ctx, ledger.Invitation{TokenHash: settings.HashToken("stale-viewer-link"), MerchantID: "shop3",
				Email: "ann@shop3.example", Role: "viewer", InvitedBy: operator, Expires: time.Now().Add(time.Hour)})
		}); err != nil {
			t.Fatal(err)
		}
		_, res := e.joinAs("/console/invite/stale-viewer-link", newPassword)
		if doc := page(t, res, http.StatusConflict); !strings.Contains(doc.Text(), "on this team already") {
			t.Errorf("the sole owner accepting a viewer link: %q", doc.Find("main").Text())
		}
		u, _ := e.settings.Dir.ConsoleUser("ann@shop3.example")
		if role, _ := u.RoleAt("shop3"); role != "owner" {
			t.Errorf("after a viewer link ann is %q at shop3, want owner still", role)
		}
	})
}

func TestARemovedPersonInvitedAgainKeepsTheirOwnPasswordAndTwoStepSignIn(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	_, secret, _ := e.twoStepOn(t, step)
	ops := e.browser()
	opsCSRF := ops.signIn(operator)
	e.join(invite(t, ops, opsCSRF, "shop3", "olga@shop3.example", "owner"), newPassword, newPassword)
	if res := ops.post("/console/team/ann%40shop3.example/remove?merchant=shop3", url.Values{"csrf": {opsCSRF}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("removing ann: %d", res.StatusCode)
	}
	link := invite(t, ops, opsCSRF, "shop3", "ann@shop3.example", "viewer")
	doc := page(t, e.browser().get(link), http.StatusOK)
	if doc.Find(`#password_again`).Length() != 0 {
		t.Error("the link of a person the settings hold asks to choose a new password")
	}
	// Whoever holds the link cannot choose her password.
	_, res := e.join(link, "a password the link holder chose", "a password the link holder chose")
	page(t, res, http.StatusUnauthorized)
	// She gives hers, then her code, and is on the team again.
	ann, res := e.joinAs(link, newPassword)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("ann accepting with her password: %d to %q, want her code asked", res.StatusCode, res.Header.Get("Location"))
	}
	csrf := csrfOf(page(t, ann.get("/console/login/code"), http.StatusOK))
	next := e.at(step.Add(30 * time.Second))
	if res := ann.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {codeAt(t, secret, next)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("ann's code: %d", res.StatusCode)
	}
	u, ok := e.settings.Dir.ConsoleUser("ann@shop3.example")
	if !ok || !u.TwoStep || !u.Matches(newPassword) {
		t.Errorf("ann after joining again: on a team %v, two-step %v, her own password %v", ok, ok && u.TwoStep, ok && u.Matches(newPassword))
	}
}

func TestFiftyWrongPasswordsAtOnceAreCheckedNoMoreThanTheLimit(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupOn(t, databaseURL)
		const tries = 50
		browsers := make([]*browser, tries)
		forms := make([]string, tries)
		for i := range browsers {
			browsers[i] = e.browser()
			forms[i] = csrfOf(page(t, browsers[i].get("/console/login"), http.StatusOK))
		}
		before := e.gate.Hashed()
		codes := make([]int, tries)
		var wg sync.WaitGroup
		for i, b := range browsers {
			wg.Go(func() {
				// Each from an address of its own: the e-mail's count alone
				// holds.
				res := b.postFrom(fmt.Sprintf("198.51.100.%d", i+1), "/console/login",
					url.Values{"email": {shop1User}, "password": {"not the password"}, "csrf": {forms[i]}})
				res.Body.Close()
				codes[i] = res.StatusCode
			})
		}
		wg.Wait()
		checked, limited := 0, 0
		for _, c := range codes {
			switch c {
			case http.StatusUnauthorized:
				checked++
			case http.StatusTooManyRequests:
				limited++
			default:
				t.Errorf("a wrong password answered %d", c)
			}
		}
		if hashed := e.gate.Hashed() - before; checked > 5 || hashed > 5 || checked+limited != tries {
			t.Errorf("50 wrong passwords at once: %d checked (%d hashed), %d refused unchecked; the limit is 5", checked, hashed, limited)
		}
	})
}

func TestFiftyWrongCodesAtOnceAreCheckedNoMoreThanTheLimit(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupOn(t, databaseURL)
		step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
		e.at(step)
		e.twoStepOn(t, step)
		// Past the minute of the wrong code typed while setting it up.
		e.at(step.Add(2 * time.Minute))
		const tries = 50
		browsers := make([]*browser, tries)
		forms := make([]string, tries)
		for i := range browsers {
			browsers[i], forms[i] = e.passwordStep(t)
		}
		var wg sync.WaitGroup
		for i, b := range browsers {
			wg.Go(func() {
				res := b.post("/console/login/code", url.Values{"csrf": {forms[i]}, "code": {"000000"}})
				res.Body.Close()
				if res.StatusCode != http.StatusUnauthorized && res.StatusCode != http.StatusTooManyRequests {
					t.Errorf("a wrong code answered %d", res.StatusCode)
				}
			})
		}
		wg.Wait()
		if checked := strings.Count(e.logText(), `msg="console code refused" `); checked > 5 || checked == 0 {
			t.Errorf("50 wrong codes at once: %d checked, want at most the limit's 5", checked)
		}
	})
}

func TestPasswordsAreHashedAFewAtATimeAndTheRestAskedToComeBack(t *testing.T) {
	gate := password.NewGate(2, time.Millisecond)
	e := setupGated(t, ledgertest.SQLiteURL(t), gate)
	const tries = 40
	browsers := make([]*browser, tries)
	forms := make([]string, tries)
	for i := range browsers {
		browsers[i] = e.browser()
		forms[i] = csrfOf(page(t, browsers[i].get("/console/login"), http.StatusOK))
	}
	busy := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, b := range browsers {
		wg.Go(func() {
			res := b.postFrom(fmt.Sprintf("203.0.113.%d", i+1), "/console/login",
				url.Values{"email": {fmt.Sprintf("nobody%d@unknown.example", i)}, "password": {"a guess of a password"}, "csrf": {forms[i]}})
			res.Body.Close()
			switch {
			case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
				mu.Lock()
				busy++
				mu.Unlock()
			case res.StatusCode != http.StatusUnauthorized:
				t.Errorf("an unknown e-mail answered %d (Retry-After %q)", res.StatusCode, res.Header.Get("Retry-After"))
			}
		})
	}
	wg.Wait()
	if gate.Peak() > 2 || int(gate.Hashed())+busy != tries {
		t.Errorf("40 sign-ins at once: %d hashed, at most %d at once (2 allowed), %d asked to come back", gate.Hashed(), gate.Peak(), busy)
	}
}

func TestChangingTwoStepSignInEndsThePersonsOtherSessions(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	elsewhere := e.browser()
	elsewhere.signInWith("ann@shop3.example", newPassword)
	csrf := csrfOf(page(t, ann.get("/console/account"), http.StatusOK))
	doc := page(t, ann.post("/console/account/totp", url.Values{"csrf": {csrf}, "twostep_password": {newPassword}}), http.StatusOK)
	secret := doc.Find(`[data-testid="totp-secret"]`).Text()
	page(t, ann.post("/console/account/totp/confirm", url.Values{"csrf": {csrf}, "secret": {secret}, "code": {codeAt(t, secret, step)}}), http.StatusOK)
	if res := elsewhere.get("/console"); res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "ended=1") {
		t.Errorf("ann's other session after two-step sign-in went on: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	page(t, ann.get("/console"), http.StatusOK)
}

func TestAnOperatorResetsTheTwoStepSignInOfAPersonWhoLostTheirPhone(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	ann, _, _ := e.twoStepOn(t, step)
	ops := e.browser()
	opsCSRF := ops.signIn(operator)
	doc := page(t, ops.get("/console/team?merchant=shop3"), http.StatusOK)
	if doc.Find(`[data-email="ann@shop3.example"] [data-testid="reset-two-step"]`).Length() != 1 {
		t.Fatal("the operator's team page offers no reset of ann's two-step sign-in")
	}
	// Not a teammate's action: ann's own team page has no such button, and
	// the route refuses her.
	annCSRF := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))
	page(t, ann.post("/console/team/ann%40shop3.example/reset-two-step", url.Values{"csrf": {annCSRF}}), http.StatusForbidden)
	res := ops.post("/console/team/ann%40shop3.example/reset-two-step?merchant=shop3", url.Values{"csrf": {opsCSRF}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the reset: %d", res.StatusCode)
	}
	// Whoever held a session of hers lost it with the reset.
	if res := ann.get("/console"); res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "ended=1") {
		t.Errorf("ann's session after the reset: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	// An unknown person, and an operator, are not reset here.
	page(t, ops.post("/console/team/nobody%40shop3.example/reset-two-step?merchant=shop3", url.Values{"csrf": {opsCSRF}}), http.StatusNotFound)
	e.browser().signInWith("ann@shop3.example", newPassword)
	if e.auditLines(operator, settings.EventTwoStepReset, "ann@shop3.example") != 1 {
		t.Error("the reset is not in the audit log")
	}
}

func TestASettingsFormWithoutItsVersionNeverOverwritesANewerSave(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	csrf := ops.signIn(operator)
	for _, version := range []string{"", "0"} {
		form := url.Values{"csrf": {csrf}, "merchant": {"shop3"}, "name": {"An old form's name"}, "return_origins": {"https://shop3.example"}}
		if version != "" {
			form.Set("version", version)
		}
		doc := page(t, ops.post("/console/settings", form), http.StatusConflict)
		if got, _ := doc.Find(`#name`).Attr("value"); got != "An old form's name" {
			t.Errorf("version %q: the name typed came back as %q", version, got)
		}
		if m, _ := e.settings.Dir.Get("shop3"); m.Name != "Shop 3" {
			t.Errorf("a form with version %q overwrote the merchant's name with %q", version, m.Name)
		}
	}
}

func TestALanguageChosenAgainWritesNothing(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	for range 3 {
		if res := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}, "back": {"/console/account"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("choosing Polish: %d", res.StatusCode)
		}
	}
	v := e.settings.Version()
	b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}, "back": {"/console/account"}})
	if e.settings.Version() != v {
		t.Errorf("choosing the language already chosen moved the settings version from %d to %d", v, e.settings.Version())
	}
	if lines := e.auditLines("", settings.EventLanguageChosen); lines != 1 {
		t.Errorf("choosing Polish four times wrote %d audit lines, want 1", lines)
	}
}

func TestADisabledMerchantsConsoleMakesNoNewSecrets(t *testing.T) {
	e := setup(t)
	e.shop3()
	if err := e.settings.SetState(ctx, settings.Actor{Name: operator}, "shop3", "disabled"); err != nil {
		t.Fatal(err)
	}
	before, _ := e.ledger.MerchantTokens(ctx, "shop3")
	ops := e.browser()
	csrf := ops.signIn(operator)
	doc := page(t, ops.post("/console/developers/tokens", url.Values{"csrf": {csrf}, "merchant": {"shop3"}, "name": {"shop server"}}), http.StatusConflict)
	if !strings.Contains(doc.Text(), "disabled") || doc.Find(`[data-testid="new-token"]`).Length() != 0 {
		t.Errorf("a token made for a disabled merchant: %q", doc.Find("main").Text())
	}
	if toks, _ := e.ledger.MerchantTokens(ctx, "shop3"); len(toks) != len(before) {
		t.Errorf("a disabled merchant has %d tokens, had %d", len(toks), len(before))
	}
}
