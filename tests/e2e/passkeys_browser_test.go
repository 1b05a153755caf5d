package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/password"
)

// virtualAuthenticator gives the browser of ctx a platform authenticator
// (a laptop's Touch ID, say) that keeps passkeys and checks its person
// without a finger: Chromium's DevTools WebAuthn domain.
func virtualAuthenticator(t *testing.T, ctx context.Context) webauthn.AuthenticatorID {
	t.Helper()
	open(t, ctx)
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	added, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		// This cdproto always sends a credential's generateCmtgKeyOnNextOperation
		// (false), which Chromium takes only from an authenticator that has
		// the extension.
		HasCmtgKey: true,
	}})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return added.AuthenticatorID
}

// noAutofill makes the browser of ctx one that offers no passkeys in a
// field's autofill (as many still do not), so that a page waits for its
// button; Chromium's virtual authenticator would otherwise answer the
// autofill's request at once, with no person to choose. It returns the
// way to offer autofill again.
func noAutofill(t *testing.T, ctx context.Context) (again func()) {
	t.Helper()
	open(t, ctx)
	added, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = async () => false;`})
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if _, err := chromedp.Call(ctx, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: added.Identifier}); err != nil {
			t.Fatal(err)
		}
	}
}

// passkeysOf are the passkeys the authenticator holds.
func passkeysOf(t *testing.T, ctx context.Context, id webauthn.AuthenticatorID) []*webauthn.Credential {
	t.Helper()
	got, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
	if err != nil {
		t.Fatalf("WebAuthn.getCredentials: %v", err)
	}
	return got.Credentials
}

// copyOf is a passkey as someone who took it from an authenticator would
// hold it: its key, its user handle, its counter where it was.
func copyOf(c *webauthn.Credential) *webauthn.Credential {
	return &webauthn.Credential{CredentialID: c.CredentialID, IsResidentCredential: true, RpID: c.RpID,
		PrivateKey: c.PrivateKey, UserHandle: c.UserHandle, SignCount: c.SignCount}
}

// holding swaps the browser's authenticator for one that holds the
// passkeys given (none: a new one, to make a passkey on), and returns it.
func holding(t *testing.T, ctx context.Context, old webauthn.AuthenticatorID, passkeys ...*webauthn.Credential) webauthn.AuthenticatorID {
	t.Helper()
	if _, err := chromedp.Call(ctx, webauthn.RemoveVirtualAuthenticator, webauthn.RemoveVirtualAuthenticatorParams{AuthenticatorID: old}); err != nil {
		t.Fatal(err)
	}
	id := virtualAuthenticator(t, ctx)
	for _, c := range passkeys {
		if _, err := chromedp.Call(ctx, webauthn.AddCredential, webauthn.AddCredentialParams{AuthenticatorID: id, Credential: c}); err != nil {
			t.Fatalf("WebAuthn.addCredential: %v", err)
		}
	}
	return id
}

// TestPasskeysInABrowser is a shop owner on a deployment of two instances
// over one ledger: they add a passkey on one instance (with their
// password) and a second one on their phone, sign in with the first alone
// on the other instance (its button, and the browser's autofill), see a
// copy of it with an older counter suspend it, sign in with the password
// and the phone's passkey as the second step, find the laptop's passkey
// suspended on their account page, and remove it. The pages with the
// passkey controls are checked by axe-core and kept as screenshots at 390
// and 1280 px.
func TestPasskeysInABrowser(t *testing.T) {
	db := ledgertest.PostgresURL(t)
	ctx := browser(t)
	axe := loadAxe(t)
	const email, pw = "owner@shop1.example", "a long console password"
	hash, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, `{"merchants":[{"id":"shop1","name":"Shop One","link_keys":{"k1":"a-long-random-secret-for-shop1-0001"},
		"api_token":"shop1-api-token-0000000000000000000","return_origins":["https://shop1.example"],
		"console_users":[{"email":"`+email+`","password_hash":"`+hash+`"}]}]}`)
	vars := map[string]string{"DATABASE_URL": db, "SETTINGS_KEYS": testSettingsKey, "MERCHANTS_FILE": file}
	a, b := start(t, vars), start(t, vars)
	// A passkey is bound to a host name: the browser is on localhost, as
	// BASE_URL says, never 127.0.0.1.
	if !strings.HasPrefix(a.base, "http://localhost:") || !strings.HasPrefix(b.base, "http://localhost:") {
		t.Fatalf("the instances are at %s and %s, not on localhost", a.base, b.base)
	}
	laptop := virtualAuthenticator(t, ctx)
	autofill := noAutofill(t, ctx)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	text := func(css string) string {
		t.Helper()
		return strings.TrimSpace(value(t, ctx, css, chromedp.Text(chromedp.CSS(css), chromedp.NodeVisible)))
	}
	signInWithPassword := func(base, then string) {
		t.Helper()
		do("sign in with the password at "+base, chromedp.Navigate(base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(then))
	}
	signOut := func() {
		t.Helper()
		do("sign out", menu(), click(`[data-testid="sign-out"]`), chromedp.WaitVisible(chromedp.ID("email")))
	}
	addPasskey := func(name string) {
		t.Helper()
		do("add the passkey "+name, chromedp.Navigate(a.base+"/console/account"), visible(`[data-testid="add-passkey"]`),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="passkey-name"]`), name), chromedp.SendKeys(chromedp.CSS(`[data-testid="passkey-password"]`), pw),
			click(`[data-testid="add-passkey"]`), visible(`[data-testid="notice"]`))
	}

	// On instance A: the account page, with the password.
	signInWithPassword(a.base, `[data-testid="funnel"]`)
	do("the account page", chromedp.Navigate(a.base+"/console/account"), visible(`[data-testid="add-passkey"]`))
	if help := value(t, ctx, "the help under the heading", chromedp.Evaluate[bool](`document.querySelector('[data-testid="passkey-help"]').hidden`)); !help {
		t.Error("with WebAuthn the account page still says a passkey needs JavaScript")
	}
	addPasskey("Laptop")
	if got := text(`[data-testid="passkey-label"]`); got != "Laptop" {
		t.Errorf("the account lists the passkey %q", got)
	}
	if notice := text(`[data-testid="notice"]`); !strings.Contains(notice, "Passkey added") {
		t.Errorf("after adding, the page says %q", notice)
	}
	checkConsolePage(t, ctx, axe, "account-passkeys")
	held := passkeysOf(t, ctx, laptop)
	if len(held) != 1 || !held[0].IsResidentCredential || held[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v", held)
	}
	// Taken now, before the laptop signs in again: its counter stays here.
	copied := copyOf(held[0])
	// A second passkey, on the phone.
	phone := holding(t, ctx, laptop)
	addPasskey("Phone")
	phoneKey := copyOf(passkeysOf(t, ctx, phone)[0])
	laptop = holding(t, ctx, phone, copyOf(held[0]))
	signOut()

	// On instance B, which never saw the passkey made: the passkey alone.
	do("the sign-in page of B", chromedp.Navigate(b.base+"/console/login"), visible(`[data-testid="passkey-sign-in"]`))
	checkConsolePage(t, ctx, axe, "login-passkey")
	do("sign in with the passkey on B", click(`[data-testid="passkey-sign-in"]`), visible(`[data-testid="funnel"]`))
	if at := value(t, ctx, "where the browser is", chromedp.Location()); at != b.base+"/console" {
		t.Errorf("after the passkey the browser is at %s", at)
	}
	signOut()
	// Where the browser offers passkeys in the e-mail field's autofill,
	// the page asks for one as it opens: the virtual authenticator, with
	// no person to choose, answers at once, and the person is signed in.
	autofill()
	do("the autofill signs in on B", chromedp.Navigate(b.base+"/console/login"), visible(`[data-testid="funnel"]`))
	noAutofill(t, ctx)
	signOut()

	// A copy of the laptop's passkey, taken before those two sign-ins, in
	// another authenticator: its counter is behind, and the passkey is
	// suspended, for the copy and the laptop alike.
	thief := holding(t, ctx, laptop, copied)
	do("the copy signs in", chromedp.Navigate(b.base+"/console/login"), visible(`[data-testid="passkey-sign-in"]`),
		click(`[data-testid="passkey-sign-in"]`), visible(`[data-testid="passkey-error"]`))
	until(t, ctx, "the refusal", `document.querySelector('[data-testid="passkey-error"]').textContent.length > 0`)
	if refusal := text(`[data-testid="passkey-error"]`); !strings.Contains(refusal, "counter went backwards") || !strings.Contains(refusal, "suspended") {
		t.Errorf("the copy's refusal reads %q", refusal)
	}
	if at := value(t, ctx, "where the browser is", chromedp.Location()); !strings.HasSuffix(at, "/console/login") {
		t.Errorf("the copy led to %s", at)
	}

	// Back with the password: the phone's passkey is the second step (the
	// laptop's is suspended), the suspension is on the account page, and
	// the laptop's passkey is removed, confirmed with the password.
	phone = holding(t, ctx, thief, phoneKey)
	signInWithPassword(a.base, `[data-testid="passkey-second-step"]`)
	checkConsolePage(t, ctx, axe, "login-code-passkey")
	do("the phone's passkey as the second step", click(`[data-testid="passkey-second-step"]`), visible(`[data-testid="funnel"]`))
	do("the account page again", chromedp.Navigate(a.base+"/console/account"), visible(`[data-testid="passkey-events"]`))
	if events := text(`[data-testid="passkey-events"]`); !strings.Contains(events, "“Laptop” suspended") || !strings.Contains(events, "“Laptop” added") {
		t.Errorf("the passkey activity reads %q", events)
	}
	if suspended := text(`[data-testid="passkey-suspended"]`); !strings.Contains(suspended, "Suspended since") {
		t.Errorf("the suspended passkey reads %q", suspended)
	}
	checkConsolePage(t, ctx, axe, "account-passkey-suspended")
	do("remove it", click(`[data-testid="remove-passkey"]`), visible(`[data-testid="remove-passkey-page"]`))
	checkConsolePage(t, ctx, axe, "remove-passkey")
	do("confirm with the password", chromedp.SendKeys(chromedp.CSS(`[data-testid="passkey-password"]`), pw), click(`[data-testid="confirm-remove-passkey"]`),
		visible(`[data-testid="notice"]`))
	if got := text(`[data-testid="passkeys"]`); strings.Contains(got, "Laptop") || !strings.Contains(got, "Phone") {
		t.Errorf("after removing the laptop's passkey the account lists %q", got)
	}
	signOut()
	holding(t, ctx, phone, copied)
	do("the removed passkey", chromedp.Navigate(b.base+"/console/login"), visible(`[data-testid="passkey-sign-in"]`),
		click(`[data-testid="passkey-sign-in"]`))
	until(t, ctx, "the refusal of a removed passkey", `(document.querySelector('[data-testid="passkey-error"]') || {textContent: ""}).textContent.length > 0`)
}

// TestTheSignInWithoutJavaScriptIsAsBefore: with scripts off the sign-in
// page signs in with the e-mail and password, shows no passkey button (a
// button that could do nothing) and says what a passkey needs; the account
// page says so too, and keeps its other forms.
func TestTheSignInWithoutJavaScriptIsAsBefore(t *testing.T) {
	ctx := browser(t)
	s := start(t, nil)
	open(t, ctx)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	do("the sign-in page", chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.WaitNotVisible(chromedp.CSS(`[data-testid="passkey-sign-in"]`)))
	help := strings.TrimSpace(value(t, ctx, "the passkey's help", chromedp.Text(chromedp.CSS(`[data-testid="passkey-help"]`), chromedp.NodeVisible)))
	if !strings.Contains(help, "WebAuthn") || !strings.Contains(help, "JavaScript") || !strings.Contains(help, "password") {
		t.Errorf("without JavaScript the sign-in page says %q beside the passkey", help)
	}
	do("sign in with the password", chromedp.SendKeys(chromedp.ID("email"), s.consoleEmail), chromedp.SendKeys(chromedp.ID("password"), s.consolePassword),
		click(`[data-testid="sign-in"]`), visible(`[data-testid="funnel"]`))
	do("the account page", chromedp.Navigate(s.base+"/console/account"), visible(`[data-testid="passkey-help"]`),
		chromedp.WaitNotVisible(chromedp.CSS(`[data-testid="add-passkey"]`)), visible(`[data-testid="change-password"]`))
	if help := value(t, ctx, "the account's passkey help", chromedp.Text(chromedp.CSS(`[data-testid="passkey-help"]`), chromedp.NodeVisible)); !strings.Contains(help, "JavaScript") {
		t.Errorf("without JavaScript the account page says %q about passkeys", help)
	}
}
