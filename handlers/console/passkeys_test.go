package console_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/settings"
)

// consoleOrigin is where the passkey tests' console is, as BASE_URL says.
const consoleOrigin = "http://localhost"

// setupPasskeys is setup with BASE_URL on a host name, where passkeys
// work.
func setupPasskeys(t *testing.T) *env {
	t.Helper()
	return setupAt(t, ledgertest.SQLiteURL(t), password.NewGate(16, time.Minute), consoleOrigin)
}

var b64 = base64.RawURLEncoding

// authenticator is a passkey as a phone or a security key keeps it: an
// ES256 key, its credential id and counter, answering the browser's
// WebAuthn calls for the site it is on (rpID) and the origin the browser
// reports. It is what Chromium's virtual authenticator is in the browser
// tests, in Go, so that each refusal can be tried alone.
type authenticator struct {
	t            *testing.T
	rpID, origin string
	id           []byte
	key          *ecdsa.PrivateKey
	handle       []byte
	count        uint32
}

func newAuthenticator(t *testing.T) *authenticator {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &authenticator{t: t, rpID: "localhost", origin: consoleOrigin, id: id, key: key}
}

// clone is a copy of the passkey, as someone who took its key would hold
// it: the same key, the counter where it was.
func (a *authenticator) clone() *authenticator {
	c := *a
	return &c
}

func (a *authenticator) authData(flags byte, attested []byte) []byte {
	h := sha256.Sum256([]byte(a.rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.count)
	return append(out, attested...)
}

func (a *authenticator) clientData(kind string, options map[string]any) []byte {
	challenge := options["publicKey"].(map[string]any)["challenge"].(string)
	b, _ := json.Marshal(map[string]any{"type": kind, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// create answers a begin's creation options with a new credential.
func (a *authenticator) create(options map[string]any) map[string]any {
	a.t.Helper()
	user := options["publicKey"].(map[string]any)["user"].(map[string]any)
	handle, err := b64.DecodeString(user["id"].(string))
	if err != nil {
		a.t.Fatal(err)
	}
	a.handle = handle
	point, err := a.key.PublicKey.Bytes()
	if err != nil {
		a.t.Fatal(err)
	}
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{PublicKeyData: webauthncose.PublicKeyData{KeyType: 2, Algorithm: -7},
		Curve: 1, XCoord: point[1:33], YCoord: point[33:65]})
	if err != nil {
		a.t.Fatal(err)
	}
	attested := append(make([]byte, 16), byte(len(a.id)>>8), byte(len(a.id)))
	attested = append(append(attested, a.id...), cose...)
	// User present, user verified, credential attested.
	object, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(0x45, attested)})
	if err != nil {
		a.t.Fatal(err)
	}
	return map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", options)),
			"attestationObject": b64.EncodeToString(object), "transports": []string{"internal"}}}
}

// get answers a begin's request options with an assertion, its counter
// one more than the last.
func (a *authenticator) get(options map[string]any) map[string]any {
	a.t.Helper()
	a.count++
	data := a.authData(0x05, nil)
	client := a.clientData("webauthn.get", options)
	hash := sha256.Sum256(client)
	signed := sha256.Sum256(append(append([]byte(nil), data...), hash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, signed[:])
	if err != nil {
		a.t.Fatal(err)
	}
	return map[string]any{"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(client), "authenticatorData": b64.EncodeToString(data),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(a.handle)}}
}

// answer is a ceremony's JSON answer with its status.
type answer struct {
	status int
	body   map[string]any
}

func (a answer) text(key string) string { s, _ := a.body[key].(string); return s }

func (b *browser) answerOf(req *http.Request, csrf string) answer {
	b.e.t.Helper()
	req.Header.Set("X-CSRF-Token", csrf)
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		b.e.t.Fatalf("%s %s answered %d with no JSON: %.300s", req.Method, req.URL.Path, res.StatusCode, raw)
	}
	return a
}

// begin posts a ceremony's form, as the page's script does.
func (b *browser) begin(path, csrf string, form url.Values) answer {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.answerOf(req, csrf)
}

// finish posts a ceremony's JSON, as the page's script does.
func (b *browser) finish(path, csrf string, body any) answer {
	b.e.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, b.e.url+path, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	return b.answerOf(req, csrf)
}

// addPasskey adds a passkey named name to the person signed in on b,
// confirmed with their password (the tests' merchants file's).
func (b *browser) addPasskey(csrf, name string) *authenticator {
	b.e.t.Helper()
	return b.addPasskeyWith(csrf, name, secret)
}

// addPasskeyWith is addPasskey confirmed with the password pw.
func (b *browser) addPasskeyWith(csrf, name, pw string) *authenticator {
	b.e.t.Helper()
	a := newAuthenticator(b.e.t.(*testing.T))
	options := b.begin(console.RoutePasskeysBegin, csrf, url.Values{"name": {name}, "passkey_password": {pw}})
	if options.status != http.StatusOK {
		b.e.t.Fatalf("adding a passkey: %d %v", options.status, options.body)
	}
	done := b.finish(console.RoutePasskeys, csrf, map[string]any{"name": name, "credential": a.create(options.body)})
	if done.status != http.StatusOK || done.text("redirect") != "/console/account?done=passkey-added" {
		b.e.t.Fatalf("the new passkey: %d %v", done.status, done.body)
	}
	return a
}

// givePassword gives email's password on a fresh sign-in page and returns
// the answer.
func (b *browser) givePassword(email, pw string) *http.Response {
	b.e.t.Helper()
	form := page(b.e.t, b.get("/console/login"), http.StatusOK)
	return b.post("/console/login", url.Values{"email": {email}, "password": {pw}, "csrf": {csrfOf(form)}})
}

// secondStepWithPasskey answers the second step of a sign-in (the
// password given) with a's passkey, as the page's script does, and returns
// the answer.
func (b *browser) secondStepWithPasskey(a *authenticator) answer {
	b.e.t.Helper()
	csrf, _ := page(b.e.t, b.get("/console/login/code"), http.StatusOK).Find(`[data-passkey-signin]`).Attr("data-csrf")
	options := b.begin(console.RouteLoginPasskeyBegin, csrf, nil)
	if options.status != http.StatusOK {
		return options
	}
	return b.finish(console.RouteLoginPasskey, csrf, a.get(options.body))
}

// passkeySignIn signs in on the sign-in page with a's passkey and returns
// the answer.
func (b *browser) passkeySignIn(a *authenticator) answer {
	b.e.t.Helper()
	csrf := csrfOf(page(b.e.t, b.get("/console/login"), http.StatusOK))
	options := b.begin(console.RouteLoginPasskeyBegin, csrf, nil)
	if options.status != http.StatusOK {
		b.e.t.Fatalf("the options of a passkey sign-in: %d %v", options.status, options.body)
	}
	return b.finish(console.RouteLoginPasskey, csrf, a.get(options.body))
}

func TestAPasskeyAddedWithThePasswordSignsInWithNoPasswordAndNoCode(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	other := e.browser()
	other.signIn(shop1User)

	// The sign-in page offers it; the account page has the form, hidden
	// until the script finds WebAuthn, and says what it needs.
	login := page(t, e.browser().get("/console/login"), http.StatusOK)
	if login.Find(`[data-testid="passkey-sign-in"][hidden]`).Length() != 1 || !strings.Contains(login.Find(`[data-testid="passkey-help"]`).Text(), "WebAuthn") ||
		login.Find(`input#email[autocomplete="username webauthn"]`).Length() != 1 {
		t.Errorf("the sign-in page's passkey button: %q", login.Find(`[data-passkey-signin]`).Text())
	}
	account := page(t, owner.get("/console/account"), http.StatusOK)
	if account.Find(`form[data-passkey-add][hidden] [data-testid="add-passkey"]`).Length() != 1 || account.Find(`[data-testid="no-passkeys"]`).Length() != 1 {
		t.Errorf("the account page's passkeys: %q", account.Find(`[data-testid="passkeys-section"]`).Text())
	}

	// A session alone makes no passkey: the password first, counted.
	a := newAuthenticator(t)
	refused := owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"name": {"Laptop"}, "passkey_password": {"not it"}})
	if refused.status != http.StatusUnauthorized || refused.text("field") != "passkey-password" {
		t.Errorf("a passkey with a wrong password: %d %v", refused.status, refused.body)
	}
	if refused := owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"passkey_password": {secret}}); refused.status != http.StatusUnprocessableEntity ||
		refused.text("field") != "passkey-name" || !strings.Contains(refused.text("error"), "name") {
		t.Errorf("a passkey with no name: %d %v", refused.status, refused.body)
	}
	options := owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"name": {"MacBook Touch ID"}, "passkey_password": {secret}})
	if options.status != http.StatusOK {
		t.Fatalf("the options of a new passkey: %d %v", options.status, options.body)
	}
	publicKey := options.body["publicKey"].(map[string]any)
	if rp := publicKey["rp"].(map[string]any); rp["id"] != "localhost" {
		t.Errorf("the relying party is %v, want localhost from BASE_URL", rp)
	}
	if sel := publicKey["authenticatorSelection"].(map[string]any); sel["userVerification"] != "required" || sel["residentKey"] != "required" {
		t.Errorf("a passkey that need not check its person, or name them: %v", sel)
	}
	done := owner.finish(console.RoutePasskeys, csrf, map[string]any{"name": "MacBook Touch ID", "credential": a.create(options.body)})
	if done.status != http.StatusOK || done.text("redirect") != "/console/account?done=passkey-added" {
		t.Fatalf("the new passkey: %d %v", done.status, done.body)
	}
	account = page(t, owner.get("/console/account?done=passkey-added"), http.StatusOK)
	if got := account.Find(`[data-testid="passkeys"] [data-testid="passkey-label"]`).Text(); got != "MacBook Touch ID" {
		t.Errorf("the account lists passkeys %q", got)
	}
	if !strings.Contains(account.Find(`[data-testid="passkey-events"]`).Text(), "“MacBook Touch ID” added") {
		t.Errorf("the account's passkey activity: %q", account.Find(`[data-testid="passkey-events"]`).Text())
	}
	// How the person signs in changed: their other sessions end.
	if res := other.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another session after a passkey was added: %d", res.StatusCode)
	}

	// The passkey alone signs in, in a browser that never saw a password.
	b := e.browser()
	signed := b.passkeySignIn(a)
	if signed.status != http.StatusOK || signed.text("redirect") != "/console" {
		t.Fatalf("signing in with the passkey: %d %v", signed.status, signed.body)
	}
	if doc := page(t, b.get("/console"), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="console-user"]`).Text(), shop1User) {
		t.Errorf("the session of a passkey sign-in is not %s's", shop1User)
	}
	if e.auditLines(shop1User, settings.EventPasskeyAdded, "MacBook Touch ID") != 1 {
		t.Errorf("the audit log does not say the passkey was added")
	}

	// A first sign-in from another device (a synced passkey on a phone)
	// is said on the account page and in the audit log; the next one from
	// it is not new.
	const iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1"
	for range 2 {
		if signed := e.browserAs(iPhone).passkeySignIn(a); signed.status != http.StatusOK {
			t.Fatalf("signing in from the phone: %d %v", signed.status, signed.body)
		}
	}
	events := page(t, b.get("/console/account"), http.StatusOK).Find(`[data-testid="passkey-event"]`)
	if got := events.First().Text(); !strings.Contains(got, "“MacBook Touch ID” used for the first time on Safari on iPhone") {
		t.Errorf("the latest passkey event is %q", got)
	}
	if events.Length() != 2 || e.auditLines(shop1User, settings.EventPasskeyNewDevice, "MacBook Touch ID") != 1 {
		t.Errorf("a passkey's sign-ins from one new device make %d events (%d audit lines), want 1 beside its adding",
			events.Length()-1, e.auditLines(shop1User, settings.EventPasskeyNewDevice, "MacBook Touch ID"))
	}
}

// browserAs is a browser that says it is ua.
func (e *env) browserAs(ua string) *browser {
	b := e.browser()
	b.client.Transport = userAgent{ua}
	return b
}

type userAgent struct{ ua string }

func (u userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.ua)
	return http.DefaultTransport.RoundTrip(r)
}

func TestACopiedPasskeyIsSuspendedForBothCopiesUntilItIsRemovedAndAddedAgain(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	a := owner.addPasskey(csrf, "YubiKey")
	copied := a.clone()
	// The copy is used first: its counter moves forward, and it signs in.
	thief := e.browser()
	if signed := thief.passkeySignIn(copied); signed.status != http.StatusOK {
		t.Fatalf("the copy, used first: %d %v", signed.status, signed.body)
	}
	if res := thief.get("/console"); res.StatusCode != http.StatusOK {
		t.Fatalf("the copy's session: %d", res.StatusCode)
	}
	// The real one's counter is then no further: the passkey is
	// suspended, and the real one is told so.
	refused := e.browser().passkeySignIn(a)
	if refused.status != http.StatusUnauthorized || !strings.Contains(refused.text("error"), "counter went backwards") ||
		!strings.Contains(refused.text("error"), "suspended") || !strings.Contains(refused.text("error"), "account page") {
		t.Errorf("the real passkey after its copy: %d %v", refused.status, refused.body)
	}
	// The session the copy started is over, on every instance.
	if res := thief.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the copy's session after the suspension: %d", res.StatusCode)
	}
	// Neither signs in again, however far its counter goes.
	for name, key := range map[string]*authenticator{"the copy": copied, "the real one": a} {
		key.count += 5
		if again := e.browser().passkeySignIn(key); again.status != http.StatusUnauthorized || !strings.Contains(again.text("error"), "suspended") {
			t.Errorf("%s of a suspended passkey: %d %v", name, again.status, again.body)
		}
	}
	if n := e.auditLines(shop1User, settings.EventPasskeySuspended, "YubiKey"); n != 1 {
		t.Errorf("%d audit lines say the passkey was suspended, want 1", n)
	}
	// The owner's own session (their password's) shows it suspended.
	account := page(t, owner.get("/console/account"), http.StatusOK)
	if got := account.Find(`[data-testid="passkey-suspended"]`).Text(); !strings.Contains(got, "Suspended since") {
		t.Errorf("the account page's passkey: %q", account.Find(`[data-testid="passkeys"]`).Text())
	}
	if events := account.Find(`[data-testid="passkey-events"]`).Text(); !strings.Contains(events, "“YubiKey” suspended after a sign-in from") {
		t.Errorf("the account's passkey activity: %q", events)
	}
	// With the password, the second step has no passkey to offer and no
	// app: it says what to do, and starts no session.
	b := e.browser()
	b.givePassword(shop1User, secret)
	step := page(t, b.get("/console/login/code"), http.StatusOK)
	if step.Find(`[data-testid="passkey-second-step"]`).Length() != 0 || !strings.Contains(step.Find(`[data-testid="no-way-in"]`).Text(), "operator") {
		t.Errorf("the second step of a person whose passkey is suspended: %q", step.Find("main").Text())
	}
	if res := b.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the password alone of a person whose passkey is suspended: %d", res.StatusCode)
	}
	// Removed and added again, it signs in.
	remove, _ := account.Find(`[data-testid="passkey"] form`).Attr("action")
	if res := owner.post(remove, url.Values{"csrf": {csrf}, "asked": {"1"}, "passkey_password": {secret}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("removing the suspended passkey: %d", res.StatusCode)
	}
	again := owner.addPasskey(csrf, "YubiKey")
	if signed := e.browser().passkeySignIn(again); signed.status != http.StatusOK {
		t.Errorf("the passkey added again: %d %v", signed.status, signed.body)
	}
}

func TestAnAssertionForAnotherSiteOrOriginIsRefused(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Phone")
	for _, tt := range []struct{ name, rpID, origin string }{
		{"a look-alike page's origin", "localhost", "https://console.evil.example"},
		{"another port of the same host", "localhost", "http://localhost:8081"},
		{"another relying party", "evil.example", consoleOrigin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			phished := a.clone()
			phished.t, phished.rpID, phished.origin = t, tt.rpID, tt.origin
			refused := e.browser().passkeySignIn(phished)
			if refused.status != http.StatusUnauthorized || refused.text("redirect") != "" {
				t.Errorf("%d %v", refused.status, refused.body)
			}
			// The real counter moved past the refused one: a's next sign-in
			// is its own.
			a.count = phished.count
		})
	}
	if signed := e.browser().passkeySignIn(a); signed.status != http.StatusOK {
		t.Errorf("the passkey at the console's own origin: %d %v", signed.status, signed.body)
	}
}

func TestAPasskeyAnswerIsTakenOnceWithinItsSessionAndMinutes(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Phone")

	b := e.browser()
	csrf := csrfOf(page(t, b.get("/console/login"), http.StatusOK))
	options := b.begin(console.RouteLoginPasskeyBegin, csrf, nil)
	assertion := a.get(options.body)
	if signed := b.finish(console.RouteLoginPasskey, csrf, assertion); signed.status != http.StatusOK {
		t.Fatalf("the sign-in: %d %v", signed.status, signed.body)
	}
	// The same answer again, from a fresh sign-in page of the same browser
	// and from another browser with a ceremony of its own: refused.
	replay := e.browser()
	csrf = csrfOf(page(t, replay.get("/console/login"), http.StatusOK))
	if again := replay.finish(console.RouteLoginPasskey, csrf, assertion); again.status != http.StatusConflict {
		t.Errorf("a replay with no ceremony: %d %v", again.status, again.body)
	}
	replay.begin(console.RouteLoginPasskeyBegin, csrf, nil)
	if again := replay.finish(console.RouteLoginPasskey, csrf, assertion); again.status != http.StatusUnauthorized {
		t.Errorf("a replay against a new ceremony: %d %v", again.status, again.body)
	}

	// A ceremony begun in one browser is not finished from another.
	first, second := e.browser(), e.browser()
	csrf1 := csrfOf(page(t, first.get("/console/login"), http.StatusOK))
	csrf2 := csrfOf(page(t, second.get("/console/login"), http.StatusOK))
	options = first.begin(console.RouteLoginPasskeyBegin, csrf1, nil)
	if stolen := second.finish(console.RouteLoginPasskey, csrf2, a.get(options.body)); stolen.status != http.StatusConflict {
		t.Errorf("another browser's ceremony: %d %v", stolen.status, stolen.body)
	}

	// Five minutes on, a ceremony is over.
	options = first.begin(console.RouteLoginPasskeyBegin, csrf1, nil)
	e.at(time.Now().Add(console.CeremonyWindow + time.Second))
	if late := first.finish(console.RouteLoginPasskey, csrf1, a.get(options.body)); late.status != http.StatusConflict ||
		!strings.Contains(late.text("error"), "expired") {
		t.Errorf("a ceremony past its five minutes: %d %v", late.status, late.body)
	}
	if options.body["publicKey"].(map[string]any)["timeout"] != float64(console.CeremonyWindow.Milliseconds()) {
		t.Errorf("the browser is told a timeout of %v", options.body["publicKey"].(map[string]any)["timeout"])
	}
}

func TestPasskeyTriesAreLimitedAsPasswordsAre(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Phone")
	wrongKey := a.clone()
	wrongKey.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b := e.browser()
	var statuses []int
	for range console.MaxFailures + 1 {
		csrf := csrfOf(page(t, b.get("/console/login"), http.StatusOK))
		options := b.begin(console.RouteLoginPasskeyBegin, csrf, nil)
		statuses = append(statuses, b.finish(console.RouteLoginPasskey, csrf, wrongKey.get(options.body)).status)
	}
	if statuses[console.MaxFailures-1] != http.StatusUnauthorized || statuses[console.MaxFailures] != http.StatusTooManyRequests {
		t.Errorf("wrong signatures answer %v; the one past %d should be 429", statuses, console.MaxFailures)
	}
	// The person's own passkey is turned away too for the minute from
	// that address: the limit is the address's as well as the passkey's.
	csrf := csrfOf(page(t, b.get("/console/login"), http.StatusOK))
	options := b.begin(console.RouteLoginPasskeyBegin, csrf, nil)
	if res := b.finish(console.RouteLoginPasskey, csrf, a.get(options.body)); res.status != http.StatusTooManyRequests {
		t.Errorf("the right passkey within the limit's minute: %d", res.status)
	}

	// Fifty wrong answers at once, each with a ceremony of its own: no
	// more than the limit are checked.
	e2 := setupPasskeys(t)
	owner2 := e2.browser()
	a2 := owner2.addPasskey(owner2.signIn(shop1User), "Phone")
	wrong2 := a2.clone()
	wrong2.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	type ready struct {
		b             *browser
		csrf, address string
		body          map[string]any
	}
	var all []ready
	for i := range 50 {
		b := e2.browser()
		csrf := csrfOf(page(t, b.get("/console/login"), http.StatusOK))
		address := fmt.Sprintf("203.0.113.%d", i+1)
		all = append(all, ready{b, csrf, address, wrong2.get(b.beginFrom(address, csrf))})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	checked := 0
	for _, r := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, _ := json.Marshal(r.body)
			req, _ := http.NewRequest(http.MethodPost, e2.url+console.RouteLoginPasskey, strings.NewReader(string(raw)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Real-IP", r.address)
			if res := r.b.answerOf(req, r.csrf); res.status == http.StatusUnauthorized {
				mu.Lock()
				checked++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if checked != console.MaxFailures {
		t.Errorf("50 wrong passkey answers at once: %d were checked, the limit is %d", checked, console.MaxFailures)
	}
	t.Logf("50 wrong passkey answers at once for one person: %d checked, %d refused unchecked", checked, 50-checked)
}

func TestAFloodOfPasskeyAnswersWithNoSignInUnderWayIsTurnedAway(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Phone")
	e.at(time.Now())
	// 300 answers from one address, none to a ceremony its session began.
	b := e.browser()
	csrf := csrfOf(page(t, b.get("/console/login"), http.StatusOK))
	statuses := map[int]int{}
	for range 300 {
		statuses[b.finish(console.RouteLoginPasskey, csrf, map[string]any{"id": "x"}).status]++
	}
	if statuses[http.StatusConflict] > console.PasskeyBeginBurst || statuses[http.StatusTooManyRequests] < 300-console.PasskeyBeginBurst {
		t.Errorf("300 answers with no ceremony: %v; at most %d are looked at", statuses, console.PasskeyBeginBurst)
	}
	if lines := strings.Count(e.logText(), "no ceremony under way"); lines > console.PasskeyBeginBurst {
		t.Errorf("300 answers with no ceremony wrote %d lines to the log", lines)
	}
	// Another address signs in as ever.
	req, _ := http.NewRequest(http.MethodPost, e.url+console.RouteLoginPasskeyBegin, nil)
	req.Header.Set("X-Real-IP", "198.51.100.7")
	other := e.browser()
	ocsrf := csrfOf(page(t, other.get("/console/login"), http.StatusOK))
	options := other.answerOf(req, ocsrf)
	raw, _ := json.Marshal(a.get(options.body))
	req, _ = http.NewRequest(http.MethodPost, e.url+console.RouteLoginPasskey, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Real-IP", "198.51.100.7")
	if signed := other.answerOf(req, ocsrf); signed.status != http.StatusOK {
		t.Errorf("a sign-in from another address meanwhile: %d %v", signed.status, signed.body)
	}
}

func TestWrongPasswordsTypedForAnEmailDoNotLockOutItsPasskey(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	laptop := owner.addPasskey(csrf, "Laptop")
	phone := owner.addPasskey(csrf, "Phone")
	// Anyone who knows the e-mail fills its password count, from
	// addresses of their own.
	var last int
	for i := range console.MaxFailures + 3 {
		b := e.browser()
		form := page(t, b.get("/console/login"), http.StatusOK)
		last = b.postFrom(fmt.Sprintf("203.0.113.%d", i+1), "/console/login", url.Values{"email": {shop1User}, "password": {"guess"}, "csrf": {csrfOf(form)}}).StatusCode
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the password count of the e-mail is not full: the last wrong password answered %d", last)
	}
	// The person's passkey signs them in all the same.
	if signed := e.browser().passkeySignIn(laptop); signed.status != http.StatusOK {
		t.Errorf("the passkey of an e-mail whose passwords are locked: %d %v", signed.status, signed.body)
	}
	// And proves it is them before a change.
	account := page(t, owner.get("/console/account"), http.StatusOK)
	removeLaptop, _ := account.Find(`[data-testid="passkey"]`).First().Find("form").Attr("action")
	except, _ := page(t, owner.post(removeLaptop, url.Values{"csrf": {csrf}}), http.StatusOK).Find(`[data-passkey-proof-form]`).Attr("data-except")
	options := owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"proof": {"passkey"}, "except": {except}})
	proof, _ := json.Marshal(phone.get(options.body))
	if res := owner.post(removeLaptop, url.Values{"csrf": {csrf}, "asked": {"1"}, "assertion": {string(proof)}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another passkey as the proof, the passwords being locked: %d", res.StatusCode)
	}
}

// beginFrom begins a passkey sign-in from address: each of its own, so
// that what is measured is the person's limit, not the address's.
func (b *browser) beginFrom(address, csrf string) map[string]any {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.url+console.RouteLoginPasskeyBegin, nil)
	req.Header.Set("X-Real-IP", address)
	a := b.answerOf(req, csrf)
	if a.status != http.StatusOK {
		b.e.t.Fatalf("begin: %d %v", a.status, a.body)
	}
	return a.body
}

func TestRemovingAPasskeyAsksForThePasswordOrAnotherPasskey(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	laptop := owner.addPasskey(csrf, "Laptop")
	phone := owner.addPasskey(csrf, "Phone")
	other := e.browser()
	if signed := other.passkeySignIn(phone); signed.status != http.StatusOK {
		t.Fatalf("another session, with the phone: %d %v", signed.status, signed.body)
	}

	account := page(t, owner.get("/console/account"), http.StatusOK)
	removeLaptop, _ := account.Find(`[data-testid="passkey"]`).First().Find("form").Attr("action")
	// The button asks first, on a page of its own that works without a
	// script.
	doc := page(t, owner.post(removeLaptop, url.Values{"csrf": {csrf}}), http.StatusOK)
	if !strings.Contains(doc.Find("h1").Text(), "“Laptop”") || doc.Find(`input[name="passkey_password"]`).Length() != 1 ||
		doc.Find(`[data-testid="remove-with-passkey"][hidden]`).Length() != 1 {
		t.Fatalf("the removal asks: %q", doc.Find("main").Text())
	}
	if doc := page(t, owner.post(removeLaptop, url.Values{"csrf": {csrf}, "asked": {"1"}, "passkey_password": {"not it"}}), http.StatusUnauthorized); doc.Find(`[data-testid="remove-error"]`).Length() != 1 {
		t.Errorf("a wrong password: %q", doc.Find("main").Text())
	}
	// The passkey being removed does not prove it is them; another does.
	except, _ := doc.Find(`[data-passkey-proof-form]`).Attr("data-except")
	options := owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"proof": {"passkey"}, "except": {except}})
	allowed := options.body["publicKey"].(map[string]any)["allowCredentials"].([]any)
	if options.status != http.StatusOK || len(allowed) != 1 || allowed[0].(map[string]any)["id"] != b64.EncodeToString(phone.id) {
		t.Fatalf("the proof's options: %d %v", options.status, options.body)
	}
	proof, _ := json.Marshal(laptop.get(options.body))
	if res := owner.post(removeLaptop, url.Values{"csrf": {csrf}, "asked": {"1"}, "assertion": {string(proof)}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the passkey being removed as its own proof: %d", res.StatusCode)
	}
	options = owner.begin(console.RoutePasskeysBegin, csrf, url.Values{"proof": {"passkey"}, "except": {except}})
	proof, _ = json.Marshal(phone.get(options.body))
	res := owner.post(removeLaptop, url.Values{"csrf": {csrf}, "asked": {"1"}, "assertion": {string(proof)}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/account?done=passkey-removed" {
		t.Fatalf("removing with another passkey: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	account = page(t, owner.get("/console/account?done=passkey-removed"), http.StatusOK)
	if got := account.Find(`[data-testid="passkey-label"]`).Text(); got != "Phone" {
		t.Errorf("after removing Laptop the account lists %q", got)
	}
	if !strings.Contains(account.Find(`[data-testid="passkey-events"]`).Text(), "“Laptop” removed") {
		t.Errorf("the removal is not in the account's activity")
	}
	if res := other.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another session after a passkey was removed: %d", res.StatusCode)
	}
	// The removed passkey signs in nowhere.
	if refused := e.browser().passkeySignIn(laptop); refused.status != http.StatusUnauthorized {
		t.Errorf("a removed passkey: %d %v", refused.status, refused.body)
	}
	// The last one goes with the password.
	removePhone, _ := account.Find(`[data-testid="passkey"] form`).Attr("action")
	if res := owner.post(removePhone, url.Values{"csrf": {csrf}, "asked": {"1"}, "passkey_password": {secret}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("removing with the password: %d", res.StatusCode)
	}
	if page(t, owner.get("/console/account"), http.StatusOK).Find(`[data-testid="no-passkeys"]`).Length() != 1 {
		t.Error("after removing both, passkeys are still listed")
	}
}

func TestNoAddressOrPageOfTheConsoleHoldsACredentialID(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	laptop := owner.addPasskey(csrf, "Laptop")
	owner.addPasskey(csrf, "Phone")
	// Any of the ways a credential id is written.
	ids := []string{b64.EncodeToString(laptop.id), base64.StdEncoding.EncodeToString(laptop.id), url.PathEscape(base64.StdEncoding.EncodeToString(laptop.id))}
	holds := func(text string) bool {
		for _, id := range ids {
			if strings.Contains(text, id) {
				return true
			}
		}
		return false
	}
	res := owner.get("/console/account")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if holds(string(body)) {
		t.Error("the account page holds a passkey's credential id")
	}
	account := page(t, owner.get("/console/account"), http.StatusOK)
	removeLaptop, _ := account.Find(`[data-testid="passkey"]`).First().Find("form").Attr("action")
	if !strings.HasPrefix(removeLaptop, "/console/account/passkeys/") || !strings.HasSuffix(removeLaptop, "/remove") || holds(removeLaptop) {
		t.Fatalf("a passkey's removal is at %q", removeLaptop)
	}
	res = owner.post(removeLaptop, url.Values{"csrf": {csrf}})
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || holds(string(body)) {
		t.Errorf("the removal's page: %d, holding the credential id: %v", res.StatusCode, holds(string(body)))
	}
	// The credential id names nothing in an address: a proxy's log of the
	// console's requests never learns one.
	if res := owner.post("/console/account/passkeys/"+b64.EncodeToString(laptop.id)+"/remove", url.Values{"csrf": {csrf}, "asked": {"1"},
		"passkey_password": {secret}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("a removal addressed by the credential id: %d", res.StatusCode)
	}
	if res := owner.post(removeLaptop, url.Values{"csrf": {csrf}, "asked": {"1"}, "passkey_password": {secret}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the removal at its own address: %d", res.StatusCode)
	}
	if got := page(t, owner.get("/console/account"), http.StatusOK).Find(`[data-testid="passkey-label"]`).Text(); got != "Phone" {
		t.Errorf("after removing Laptop the account lists %q", got)
	}
}

func TestAPasskeyMadeWithAnotherPersonsCredentialIDIsRefusedAsAnyFailedOne(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	theirs := owner.addPasskey(owner.signIn(shop1User), "Laptop")

	// Another person crafts a registration whose credential id is the
	// owner's (with a key of their own).
	other := e.browser()
	csrf := other.signIn(shop2User)
	copycat := newAuthenticator(t)
	copycat.id = theirs.id
	options := other.begin(console.RoutePasskeysBegin, csrf, url.Values{"name": {"Mine"}, "passkey_password": {secret}})
	if options.status != http.StatusOK {
		t.Fatalf("the options: %d %v", options.status, options.body)
	}
	refused := other.finish(console.RoutePasskeys, csrf, map[string]any{"name": "Mine", "credential": copycat.create(options.body)})
	if refused.status != http.StatusConflict || refused.text("error") != "The browser's answer could not make a passkey. Try again." {
		t.Errorf("a credential id kept already: %d %v", refused.status, refused.body)
	}
	if strings.Contains(e.logText(), "level=ERROR") || strings.Contains(strings.ToLower(e.logText()), "unique") {
		t.Errorf("the refusal is logged as a failure of the console:\n%s", e.logText())
	}
	if got := page(t, other.get("/console/account"), http.StatusOK).Find(`[data-testid="no-passkeys"]`).Length(); got != 1 {
		t.Error("the other person has a passkey after all")
	}
	// The owner's passkey is untouched: it signs them in.
	if signed := e.browser().passkeySignIn(theirs); signed.status != http.StatusOK {
		t.Errorf("the owner's passkey after: %d %v", signed.status, signed.body)
	}
}

func TestThePasswordOfAPersonWithAPasskeyLeadsToThePasskeyAsTheAppsCodeWould(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Laptop")
	// No team of theirs requires two steps, and they have no app: their
	// password alone no longer starts a session.
	b := e.browser()
	res := b.givePassword(shop1User, secret)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("the password of a person with a passkey: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := b.get("/console"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Errorf("between the password and the passkey the console answers %d", res.StatusCode)
	}
	step := page(t, b.get("/console/login/code"), http.StatusOK)
	if step.Find(`[data-testid="passkey-second-step"]`).Length() != 1 || step.Find(`input[name="code"]`).Length() != 0 {
		t.Fatalf("the second step: %q", step.Find("main").Text())
	}
	if signed := b.secondStepWithPasskey(a); signed.status != http.StatusOK {
		t.Fatalf("the passkey after the password: %d %v", signed.status, signed.body)
	}
	if res := b.get("/console"); res.StatusCode != http.StatusOK {
		t.Errorf("after the passkey: %d", res.StatusCode)
	}
	// The passkey's own button is both steps, as ever.
	if signed := e.browser().passkeySignIn(a); signed.status != http.StatusOK {
		t.Errorf("the passkey alone: %d %v", signed.status, signed.body)
	}
	// An invitation accepted with the password asks the same, through the
	// same rule.
	e.shop3()
	ops := e.browser()
	link := invite(t, ops, ops.signIn(operator), "shop3", shop1User, "viewer")
	if _, res := e.joinAs(link, secret); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Errorf("an invitation accepted with the password: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestAnOwnersTwoStepRequirementIsMetByAPasskey(t *testing.T) {
	e := setupPasskeys(t)
	e.shop3()
	dev := "dev@shop3.example"
	ops := e.browser()
	ocsrf := ops.signIn(operator)
	e.join(invite(t, ops, ocsrf, "shop3", dev, "developer"), newPassword, newPassword)
	// The team's owner requires two-step sign-in.
	if res := ops.post(console.RouteRequireTwoStep, url.Values{"csrf": {ocsrf}, "merchant": {"shop3"}, "require": {"on"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requiring two-step sign-in: %d", res.StatusCode)
	}
	b := e.browser()
	b.givePassword(dev, newPassword)
	if res := b.get("/console/payments"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/account" {
		t.Fatalf("a member without two-step sign-in reaches the payments: %d", res.StatusCode)
	}
	csrf := csrfOf(page(t, b.get("/console/account"), http.StatusOK))
	a := b.addPasskeyWith(csrf, "Laptop", newPassword)
	if res := b.get("/console/payments"); res.StatusCode != http.StatusOK {
		t.Errorf("a member with a passkey is still held on the account page: %d", res.StatusCode)
	}
	// The password alone no longer signs them in: their passkey is the
	// second step, on the code page, with no code asked.
	pw := e.browser()
	res := pw.givePassword(dev, newPassword)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("the password of a member whose passkey meets the requirement: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	step := page(t, pw.get("/console/login/code"), http.StatusOK)
	if step.Find(`[data-testid="passkey-second-step"]`).Length() != 1 || step.Find(`input[name="code"]`).Length() != 0 {
		t.Errorf("the second step of a member with a passkey only: %q", step.Find("main").Text())
	}
	scsrf := csrfOf(step)
	if scsrf == "" {
		scsrf, _ = step.Find(`[data-passkey-signin]`).Attr("data-csrf")
	}
	options := pw.begin(console.RouteLoginPasskeyBegin, scsrf, nil)
	if allowed := options.body["publicKey"].(map[string]any)["allowCredentials"].([]any); len(allowed) != 1 {
		t.Errorf("the second step allows %d passkeys, want the member's own", len(allowed))
	}
	// Another person's passkey is no second step of this one.
	if refused := pw.finish(console.RouteLoginPasskey, scsrf, newAuthenticator(t).get(options.body)); refused.status != http.StatusUnauthorized {
		t.Errorf("a passkey not the member's at the second step: %d %v", refused.status, refused.body)
	}
	options = pw.begin(console.RouteLoginPasskeyBegin, scsrf, nil)
	if signed := pw.finish(console.RouteLoginPasskey, scsrf, a.get(options.body)); signed.status != http.StatusOK {
		t.Fatalf("the passkey as the second step: %d %v", signed.status, signed.body)
	}
	if res := pw.get("/console/payments"); res.StatusCode != http.StatusOK {
		t.Errorf("after the second step: %d", res.StatusCode)
	}
	// And the passkey alone is both steps.
	if signed := e.browser().passkeySignIn(a); signed.status != http.StatusOK {
		t.Errorf("the passkey alone, where two-step sign-in is required: %d %v", signed.status, signed.body)
	}
}

func TestOperatorsMayRequirePasskeysOfOperators(t *testing.T) {
	e := setupPasskeys(t)
	ops := e.browser()
	csrf := ops.signIn(operator)
	doc := page(t, ops.get("/console/merchants"), http.StatusOK)
	if doc.Find(`[data-testid="require-operators-passkeys"]`).Length() != 1 {
		t.Fatalf("the merchants page: %q", doc.Find(`[data-testid="operators-passkeys"]`).Text())
	}
	if res := ops.post(console.RouteOperatorsPasskeys, url.Values{"csrf": {csrf}, "require": {"on"}, "passkey_password": {secret}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requiring passkeys of operators: %d", res.StatusCode)
	}
	// Without a passkey the operator adds one before anything else.
	if res := ops.get("/console/merchants"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/account" {
		t.Errorf("an operator without a passkey reaches the merchants: %d", res.StatusCode)
	}
	if doc := page(t, ops.get("/console/account"), http.StatusOK); doc.Find(`[data-testid="must-add-passkey"]`).Length() != 1 {
		t.Error("the account page does not say a passkey is needed")
	}
	a := ops.addPasskey(csrf, "Security key")
	if res := ops.get("/console/merchants"); res.StatusCode != http.StatusOK {
		t.Errorf("an operator with a passkey: %d", res.StatusCode)
	}
	// The password goes on to the passkey: no session from it alone.
	b := e.browser()
	res := b.givePassword(operator, secret)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("an operator's password: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := b.get("/console/merchants"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("between an operator's password and their passkey: %d", res.StatusCode)
	}
	if signed := e.browser().passkeySignIn(a); signed.status != http.StatusOK {
		t.Errorf("an operator's passkey: %d %v", signed.status, signed.body)
	}

	// With an authenticator app too, the second step offers the passkey
	// and takes a recovery code (every device lost), never a code of the
	// app: that is no passkey.
	now := time.Now()
	setup, err := e.settings.BeginTwoStep(ctx, operator)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := e.settings.ConfirmTwoStep(ctx, operator, codeAt(t, setup.Secret, now), now)
	if err != nil {
		t.Fatal(err)
	}
	b = e.browser()
	b.givePassword(operator, secret)
	step := page(t, b.get("/console/login/code"), http.StatusOK)
	if step.Find(`[data-testid="passkey-second-step"]`).Length() != 1 || !strings.Contains(step.Find(`label[for="code"]`).Text(), "recovery code") {
		t.Errorf("an operator's second step: %q", step.Find("main").Text())
	}
	appCode := codeAt(t, setup.Secret, now.Add(30*time.Second))
	// Typed whole, in two halves as the app shows it, or with spaces
	// around: a code of the app is never the way past a passkey.
	for _, typed := range []string{appCode, appCode[:3] + " " + appCode[3:], " " + appCode + " "} {
		refused := page(t, b.post("/console/login/code", url.Values{"csrf": {csrfOf(step)}, "code": {typed}}), http.StatusUnprocessableEntity)
		if !strings.Contains(refused.Find(`[data-testid="code-error"]`).Text(), "use your passkey") {
			t.Errorf("a code of the app where passkeys are required, %q: %q", typed, refused.Find("main").Text())
		}
	}
	res = b.post("/console/login/code", url.Values{"csrf": {csrfOf(step)}, "code": {codes[0]}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/account") {
		t.Errorf("a recovery code where passkeys are required: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}

	// Members are not concerned.
	e.browser().signIn(shop1User)
	if e.auditLines(operator, settings.EventOperatorsPasskeys) != 1 {
		t.Error("requiring passkeys of operators is not in the audit log")
	}
}

func TestASessionAloneCannotChangeHowOperatorsSignIn(t *testing.T) {
	e := setupPasskeys(t)
	ops := e.browser()
	csrf := ops.signIn(operator)
	key := ops.addPasskey(csrf, "Security key")
	rule := func(form url.Values) *http.Response {
		t.Helper()
		form.Set("csrf", csrf)
		return ops.post(console.RouteOperatorsPasskeys, form)
	}
	// Turning it on asks for the password too.
	if doc := page(t, rule(url.Values{"require": {"on"}}), http.StatusUnprocessableEntity); doc.Find(`#passkey_password[aria-invalid="true"]`).Length() != 1 {
		t.Errorf("the rule turned on with no password: %q", doc.Find(`[data-testid="operators-passkeys"]`).Text())
	}
	if e.settings.Dir.OperatorsPasskeys() {
		t.Fatal("a session alone required passkeys of operators")
	}
	if res := rule(url.Values{"require": {"on"}, "passkey_password": {secret}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requiring passkeys with the password: %d", res.StatusCode)
	}
	// A stolen session cannot take it off: no password, or a wrong one.
	doc := page(t, rule(url.Values{"require": {"off"}}), http.StatusUnprocessableEntity)
	if !strings.Contains(doc.Find(`[data-testid="operators-passkeys"]`).Text(), "Type your password to confirm.") {
		t.Errorf("the rule taken off with no password says %q", doc.Find(`[data-testid="operators-passkeys"]`).Text())
	}
	if doc.Find(`[data-testid="operators-passkeys-with-passkey"][hidden]`).Length() != 1 {
		t.Error("the operator with a passkey is not offered it instead of the password")
	}
	page(t, rule(url.Values{"require": {"off"}, "passkey_password": {"not it"}}), http.StatusUnauthorized)
	if !e.settings.Dir.OperatorsPasskeys() {
		t.Fatal("a session alone stopped requiring passkeys of operators")
	}
	if n := e.auditLines(operator, settings.EventOperatorsPasskeysNot); n != 0 {
		t.Errorf("%d audit lines say the rule was taken off", n)
	}
	// The operator's passkey proves it is them.
	options := ops.begin(console.RoutePasskeysBegin, csrf, url.Values{"proof": {"passkey"}})
	proof, _ := json.Marshal(key.get(options.body))
	if res := rule(url.Values{"require": {"off"}, "assertion": {string(proof)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("taking the rule off with a passkey: %d", res.StatusCode)
	}
	if e.settings.Dir.OperatorsPasskeys() || e.auditLines(operator, settings.EventOperatorsPasskeysNot) != 1 {
		t.Error("the rule is still on after the operator's passkey")
	}
}

func TestPasskeysAreOffWhereBaseURLIsAnIPAddress(t *testing.T) {
	e := setup(t) // BASE_URL http://127.0.0.1
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/account"), http.StatusOK)
	if off := doc.Find(`[data-testid="passkeys-off"]`).Text(); !strings.Contains(off, "http://127.0.0.1") || doc.Find(`[data-testid="add-passkey"]`).Length() != 0 {
		t.Errorf("the account page where passkeys are off: %q", doc.Find(`[data-testid="passkeys-section"]`).Text())
	}
	if refused := b.begin(console.RoutePasskeysBegin, csrf, url.Values{"name": {"x"}, "passkey_password": {secret}}); refused.status != http.StatusConflict {
		t.Errorf("adding a passkey where they are off: %d", refused.status)
	}
	if page(t, e.browser().get("/console/login"), http.StatusOK).Find(`[data-testid="passkey-sign-in"]`).Length() != 0 {
		t.Error("the sign-in page offers passkeys where they cannot work")
	}
	if !strings.Contains(e.logText(), "passkeys are off") || !strings.Contains(e.logText(), "IP address") {
		t.Errorf("the start does not log why passkeys are off")
	}
}

// passkeyOf gives email a passkey in the ledger, as an instance where
// passkeys work would have kept it.
func (e *env) passkeyOf(email, name string) {
	e.t.Helper()
	id := make([]byte, 16)
	rand.Read(id)
	if err := e.settings.AddPasskey(ctx, ledger.Passkey{ID: b64.EncodeToString(id), Email: email, UserHandle: b64.EncodeToString(id), Name: name,
		Credential: "{}"}, "Safari/macOS"); err != nil {
		e.t.Fatal(err)
	}
}

func TestWherePasskeysAreOffTheirPeopleGetNoSessionFromThePasswordAlone(t *testing.T) {
	e := setup(t) // BASE_URL http://127.0.0.1: passkeys are off
	e.shop3()
	dev, designer := "dev@shop3.example", "designer@shop3.example"
	ops := e.browser()
	ocsrf := ops.signIn(operator)
	e.join(invite(t, ops, ocsrf, "shop3", dev, "developer"), newPassword, newPassword)
	e.join(invite(t, ops, ocsrf, "shop3", designer, "designer"), newPassword, newPassword)
	// shop3 requires two-step sign-in; its developer has a passkey only
	// (made where passkeys worked), its designer a passkey and the app.
	if res := ops.post(console.RouteRequireTwoStep, url.Values{"csrf": {ocsrf}, "merchant": {"shop3"}, "require": {"on"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requiring two-step sign-in: %d", res.StatusCode)
	}
	e.passkeyOf(dev, "Laptop")
	e.passkeyOf(designer, "Phone")
	now := time.Now()
	setup, err := e.settings.BeginTwoStep(ctx, designer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.settings.ConfirmTwoStep(ctx, designer, codeAt(t, setup.Secret, now), now); err != nil {
		t.Fatal(err)
	}

	// The passkey-only member: no session, and the second step says why
	// and what to do.
	b := e.browser()
	if res := b.givePassword(dev, newPassword); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("the password of a passkey-only member where passkeys are off: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := b.get("/console/payments"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Errorf("a passkey-only member reaches the payments with the password alone: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	step := page(t, b.get("/console/login/code"), http.StatusOK)
	if !strings.Contains(step.Find(`[data-testid="passkeys-off"]`).Text(), "127.0.0.1") || step.Find(`[data-testid="no-way-in"]`).Length() != 1 ||
		step.Find(`input[name="code"]`).Length() != 0 || step.Find(`[data-testid="passkey-second-step"]`).Length() != 0 {
		t.Errorf("the second step of a passkey-only member where passkeys are off: %q", step.Find("main").Text())
	}
	// Nor does an invitation let them in.
	if _, err := e.settings.CreateMerchant(ctx, settings.Actor{Name: operator}, "shop4", "Shop 4", []string{"https://shop4.example"}); err != nil {
		t.Fatal(err)
	}
	if _, res := e.joinAs(invite(t, ops, ocsrf, "shop4", dev, "viewer"), newPassword); res.Header.Get("Location") != "/console/login/code" {
		t.Errorf("an invitation accepted by a passkey-only person where passkeys are off: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}

	// With the app too, its code finishes the sign-in.
	d := e.browser()
	d.givePassword(designer, newPassword)
	step = page(t, d.get("/console/login/code"), http.StatusOK)
	if step.Find(`input[name="code"]`).Length() != 1 || step.Find(`[data-testid="no-way-in"]`).Length() != 0 {
		t.Fatalf("the second step of a member with a passkey and the app: %q", step.Find("main").Text())
	}
	if res := d.post("/console/login/code", url.Values{"csrf": {csrfOf(step)}, "code": {codeAt(t, setup.Secret, now.Add(30*time.Second))}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the app's code where passkeys are off: %d", res.StatusCode)
	}
	if res := d.get("/console/payments"); res.StatusCode != http.StatusOK {
		t.Errorf("after the app's code: %d", res.StatusCode)
	}

	// The Merchants page says who is kept out, and why.
	mismatch := page(t, ops.get("/console/merchants"), http.StatusOK).Find(`[data-testid="passkeys-mismatch"]`)
	if mismatch.Length() != 1 || !strings.Contains(mismatch.Text(), "BASE_URL") {
		t.Errorf("the Merchants page where passkeys are off and people have some: %q", mismatch.Text())
	}
	if said := e.console.PasskeysMismatch(); !strings.Contains(said, "passkeys off") || !strings.Contains(said, "IP address") || !strings.Contains(said, "2 people have passkeys") {
		t.Errorf("/readyz would say %q", said)
	}
}

func TestWherePasskeysAreOffOperatorsUnderTheRuleSignInOnlyWithARecoveryCode(t *testing.T) {
	e := setup(t) // BASE_URL http://127.0.0.1: passkeys are off
	if e.console.PasskeysMismatch() != "" {
		t.Errorf("with no passkey and no rule, /readyz would say %q", e.console.PasskeysMismatch())
	}
	if err := e.settings.RequireOperatorsPasskeys(ctx, settings.Actor{Name: operator}, true); err != nil {
		t.Fatal(err)
	}
	// With no passkey and no app, the password alone gives no session.
	alone := e.browser()
	if res := alone.givePassword(operator, secret); res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("an operator's password alone under the rule where passkeys are off: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := alone.get("/console/merchants"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("an operator under the rule reaches the merchants with the password alone: %d", res.StatusCode)
	}
	if doc := page(t, alone.get("/console/login/code"), http.StatusOK); doc.Find(`[data-testid="no-way-in"]`).Length() != 1 {
		t.Errorf("the second step of an operator with nothing but a password: %q", doc.Find("main").Text())
	}
	now := time.Now()
	setup, err := e.settings.BeginTwoStep(ctx, operator)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := e.settings.ConfirmTwoStep(ctx, operator, codeAt(t, setup.Secret, now), now)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	if res := b.givePassword(operator, secret); res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("an operator's password under the rule where passkeys are off: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	step := page(t, b.get("/console/login/code"), http.StatusOK)
	if !strings.Contains(step.Find(`label[for="code"]`).Text(), "recovery code") || step.Find(`[data-testid="passkeys-off"]`).Length() != 1 {
		t.Errorf("the second step of an operator under the rule where passkeys are off: %q", step.Find("main").Text())
	}
	refused := page(t, b.post("/console/login/code", url.Values{"csrf": {csrfOf(step)}, "code": {codeAt(t, setup.Secret, now.Add(30*time.Second))}}), http.StatusUnprocessableEntity)
	if refused.Find(`[data-testid="code-error"]`).Length() != 1 {
		t.Errorf("the app's code of an operator under the rule: %q", refused.Find("main").Text())
	}
	if res := b.post("/console/login/code", url.Values{"csrf": {csrfOf(step)}, "code": {codes[0]}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a recovery code: %d", res.StatusCode)
	}
	mismatch := page(t, b.get("/console/merchants"), http.StatusOK).Find(`[data-testid="passkeys-mismatch"]`)
	if mismatch.Length() != 1 || !strings.Contains(mismatch.Text(), "recovery code") {
		t.Errorf("the Merchants page under the rule where passkeys are off: %q", mismatch.Text())
	}
	if said := e.console.PasskeysMismatch(); !strings.Contains(said, "operators must use passkeys") {
		t.Errorf("/readyz would say %q", said)
	}
}

func TestAnInvitationAsksForThePasskeyOfAPersonWhoHasOne(t *testing.T) {
	e := setupPasskeys(t)
	e.shop3()
	ops := e.browser()
	ocsrf := ops.signIn(operator)
	dev := roleUser("developer")
	b := e.browser()
	a := b.addPasskey(b.signInWith(dev, secret), "Laptop")
	link := invite(t, ops, ocsrf, "shop3", dev, "viewer")
	joining, res := e.joinAs(link, secret)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("accepting with the password of a person with a passkey: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if signed := joining.secondStepWithPasskey(a); signed.status != http.StatusOK {
		t.Fatalf("the passkey accepting an invitation: %d %v", signed.status, signed.body)
	}
	u, _ := e.settings.Dir.ConsoleUser(dev)
	if _, joined := u.RoleAt("shop3"); !joined {
		t.Error("the invitation was not accepted after the passkey")
	}
}

func TestNothingOfACredentialReachesTheLog(t *testing.T) {
	e := setupPasskeys(t)
	owner := e.browser()
	a := owner.addPasskey(owner.signIn(shop1User), "Phone")
	e.browser().passkeySignIn(a)
	copied := a.clone()
	copied.count = 0
	e.browser().passkeySignIn(copied)
	evil := a.clone()
	evil.origin = "https://evil.example"
	e.browser().passkeySignIn(evil)
	rows, err := e.ledger.Passkeys(ctx, shop1User)
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	point, _ := a.key.PublicKey.Bytes()
	logs := e.logText()
	for name, secretish := range map[string]string{
		"the credential id":  rows[0].ID,
		"its public key":     b64.EncodeToString(point[1:33]),
		"the user handle":    rows[0].UserHandle,
		"the stored record":  rows[0].Credential[:40],
		"the raw id, padded": base64.StdEncoding.EncodeToString(a.id),
	} {
		if strings.Contains(logs, secretish) {
			t.Errorf("%s is in the log", name)
		}
	}
	if !strings.Contains(logs, "counter did not move forward") || !strings.Contains(logs, "console passkey sign-in refused") {
		t.Errorf("the refusals are not logged at all:\n%s", logs)
	}
}
