package console

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/views/console/manage"
	"github.com/paybybank/checkout/views/console/passkeys"
)

// Passkeys: WebAuthn credentials, bound to the console's host name, that
// sign a person in with no password and no code (the authenticator checks
// it is them: a fingerprint, a face, a PIN). A look-alike site gets
// nothing from one: the browser signs for the host it is on, and the
// server takes only its own origin. The ceremonies are JSON between
// static/passkeys.js and these handlers; everything else works without a
// script.

// Routes of passkeys.
const (
	RoutePasskeysBegin     = "/console/account/passkeys/begin"
	RoutePasskeys          = "/console/account/passkeys"
	RoutePasskeyRemove     = "/console/account/passkeys/:id/remove"
	RouteLoginPasskeyBegin = "/console/login/passkey/begin"
	RouteLoginPasskey      = "/console/login/passkey"
	RouteOperatorsPasskeys = "/console/merchants/operators-passkeys"
)

// Limits of the WebAuthn ceremonies.
const (
	// CeremonyWindow is how long a ceremony may take, from the options
	// sent to the browser to its answer; the browser is told the same.
	CeremonyWindow = 5 * time.Minute
	// passkeyBeginRate and passkeyBeginBurst bound the sign-in ceremonies
	// one address may begin (a page begins one as it opens and one a
	// click), and the answers it may send when none is under way.
	passkeyBeginRate  = 1
	passkeyBeginBurst = 10
	// maxCeremonyBody is the most of a browser's answer that is read.
	maxCeremonyBody = 32 << 10
	// passkeyPassword is the field of the person's password on the forms
	// that change their passkeys.
	passkeyPassword = "passkey_password"
	// passkeyEvents is how many of a person's passkey events their
	// account page lists.
	passkeyEvents = 10
)

// relyingParty is the console as WebAuthn names it: its host name (the
// relying party id) and origin, from BASE_URL. A passkey is bound to a
// host name, never to an IP address, and browsers offer passkeys only to
// https sites and to localhost; any other BASE_URL leaves passkeys off,
// with the reason, and everything else works as before.
func relyingParty(baseURL string) (*webauthn.WebAuthn, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("BASE_URL %q names no host", baseURL)
	}
	host := strings.ToLower(u.Hostname())
	if net.ParseIP(host) != nil {
		return nil, fmt.Errorf("BASE_URL's host %s is an IP address, and a passkey is bound to a host name: set BASE_URL to the console's name, such as https://pay.example.com (http://localhost:8080 in development)", host)
	}
	if u.Scheme != "https" && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
		return nil, fmt.Errorf("BASE_URL %s is not https, and browsers offer passkeys only to https sites (and to localhost)", baseURL)
	}
	return webauthn.New(&webauthn.Config{
		RPID:          host,
		RPDisplayName: settings.Issuer,
		RPOrigins:     []string{u.Scheme + "://" + strings.ToLower(u.Host)},
		// Whose passkey it is, not which maker's: no attestation.
		AttestationPreference: protocol.PreferNoAttestation,
		// A passkey is both steps: the authenticator must check it is its
		// person, and keep the credential so that it can name them.
		AuthenticatorSelection: protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(), UserVerification: protocol.VerificationRequired},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: CeremonyWindow, TimeoutUVD: CeremonyWindow},
			Registration: webauthn.TimeoutConfig{Timeout: CeremonyWindow, TimeoutUVD: CeremonyWindow},
		},
	})
}

// passkeysOff says, in the reader's language, why this deployment cannot
// use passkeys; "" when it can.
func (c *Console) passkeysOff(ec echo.Context) string {
	if c.rp != nil {
		return ""
	}
	return t(ec, "console.passkeys.off", c.BaseURL)
}

// hasPasskeys reports whether u signs in with passkeys here: they have one,
// and the deployment can use them.
func (c *Console) hasPasskeys(u *merchant.ConsoleUser) bool { return c.rp != nil && u.Passkeys > 0 }

// passkeysRequired reports whether the deployment's rule has u sign in
// with a passkey: an operator, where operators must.
func (c *Console) passkeysRequired(u *merchant.ConsoleUser) bool {
	return u.Operator && c.Merchants.OperatorsPasskeys()
}

// passkeysOnly reports whether u signs in with a passkey alone (or a
// recovery code when every device is lost): an operator under the rule,
// once they have one, and every operator under it while passkeys are off
// here, for the rule does not lapse because BASE_URL changed.
func (c *Console) passkeysOnly(u *merchant.ConsoleUser) bool {
	return c.passkeysRequired(u) && (u.Passkeys > 0 || c.rp == nil)
}

// mustAddPasskey reports whether u is an operator who must add a passkey
// before anything else: the deployment requires it, and they have none.
func (c *Console) mustAddPasskey(u *merchant.ConsoleUser) bool {
	return c.passkeysRequired(u) && c.rp != nil && u.Passkeys == 0
}

// PasskeysMismatch says, for /readyz, who cannot sign in as their settings
// say while passkeys are off on this deployment (people who have passkeys,
// operators under the rule that they use one): they get no session from a
// password alone, only with the app's code or a recovery code. It is ""
// when passkeys work here, or nobody is concerned.
func (c *Console) PasskeysMismatch() string {
	if c.rp != nil {
		return ""
	}
	people := 0
	for _, u := range c.Merchants.ConsoleUsers() {
		if u.Passkeys > 0 {
			people++
		}
	}
	var said []string
	if people > 0 {
		said = append(said, fmt.Sprintf("%d people have passkeys this deployment cannot use: they sign in only with their authenticator app's code or a recovery code, "+
			"and those with neither cannot sign in", people))
	}
	if c.Merchants.OperatorsPasskeys() {
		said = append(said, "operators must use passkeys: they sign in only with a recovery code")
	}
	if len(said) == 0 {
		return ""
	}
	return "passkeys off (" + c.passkeysOffWhy + "); " + strings.Join(said, "; ")
}

// passkeysMismatchSaid is PasskeysMismatch for the operators' Merchants
// page, in the reader's language: a line for the people with passkeys, one
// for the operators' rule.
func (c *Console) passkeysMismatchSaid(ec echo.Context) []string {
	if c.rp != nil {
		return nil
	}
	var said []string
	if slices.ContainsFunc(c.Merchants.ConsoleUsers(), func(u *merchant.ConsoleUser) bool { return u.Passkeys > 0 }) {
		said = append(said, t(ec, "console.passkeys.offPeople"))
	}
	if c.Merchants.OperatorsPasskeys() {
		said = append(said, t(ec, "console.passkeys.offRule"))
	}
	return said
}

// passkeyUser is a person as WebAuthn sees them: their user handle (the
// same for each of their passkeys, random, never their e-mail) and their
// credentials that may sign (creds, with their rows): none suspended. all
// are every passkey of theirs.
type passkeyUser struct {
	email  string
	handle []byte
	creds  []webauthn.Credential
	rows   []ledger.Passkey
	all    []ledger.Passkey
}

func (u *passkeyUser) WebAuthnID() []byte                         { return u.handle }
func (u *passkeyUser) WebAuthnName() string                       { return u.email }
func (u *passkeyUser) WebAuthnDisplayName() string                { return u.email }
func (u *passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// row is the ledger's passkey of a credential id.
func (u *passkeyUser) row(id []byte) (ledger.Passkey, bool) {
	for _, r := range u.rows {
		if r.ID == credentialID(id) {
			return r, true
		}
	}
	return ledger.Passkey{}, false
}

// credentialID is how the ledger names a credential: its id, base64url.
func credentialID(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// passkeyUserOf reads a person's passkeys; those that may sign are all but
// the suspended ones and except (the Ref of one being removed).
// A person without passkeys has the handle given (the one a registration
// began with), else a new one.
func (c *Console) passkeyUserOf(ec echo.Context, email, except string, handle []byte) (*passkeyUser, error) {
	rows, err := c.Ledger.Passkeys(ec.Request().Context(), email)
	if err != nil {
		return nil, err
	}
	u := &passkeyUser{email: strings.ToLower(email), handle: handle, all: rows}
	for i, r := range rows {
		if i == 0 {
			if u.handle, err = base64.RawURLEncoding.DecodeString(r.UserHandle); err != nil {
				return nil, fmt.Errorf("console: the passkeys of %s have an unreadable user handle: %w", maskEmail(email), err)
			}
		}
		if r.Ref == except || !r.Suspended.IsZero() {
			continue
		}
		var cred webauthn.Credential
		if err := json.Unmarshal([]byte(r.Credential), &cred); err != nil {
			return nil, fmt.Errorf("console: a passkey of %s does not read: %w", maskEmail(email), err)
		}
		// The ledger's counter is the one that counts.
		cred.Authenticator.SignCount = r.SignCount
		u.creds, u.rows = append(u.creds, cred), append(u.rows, r)
	}
	if u.handle == nil {
		u.handle = make([]byte, 32)
		rand.Read(u.handle)
	}
	return u, nil
}

// ceremonyKey names a ceremony in the ledger by a digest of the token its
// browser session holds: the ledger alone cannot finish it.
func ceremonyKey(token string) string { return digest("webauthn ceremony " + token) }

// beginCeremony keeps a ceremony in the ledger, within CeremonyWindow, for
// the browser session of the request alone (its cookie holds the token),
// in place of any it began before. extra are kept in the session too.
func (c *Console) beginCeremony(ec echo.Context, kind, email string, data *webauthn.SessionData, extra map[string]string) error {
	sess, err := c.store.Get(ec.Request(), cookieName)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	replaces := ""
	if old, _ := sess.Values["ceremony"].(string); old != "" {
		replaces = ceremonyKey(old)
	}
	token := randomToken()
	if err := c.Ledger.BeginCeremony(ec.Request().Context(), ledger.Ceremony{Key: ceremonyKey(token), Kind: kind, Email: email,
		Data: string(raw), Expires: c.Now().Add(CeremonyWindow)}, replaces); err != nil {
		return err
	}
	sess.Values["ceremony"] = token
	for k, v := range extra {
		sess.Values[k] = v
	}
	return sess.Save(ec.Request(), ec.Response())
}

// takeCeremony takes the request's session's ceremony of kind, once: on
// every instance it is gone whatever the answer, so that an answer sent
// twice (a replay) finds none. ledger.ErrNoCeremony when there is none:
// none began, it was taken, it expired, or another session began it.
func (c *Console) takeCeremony(ec echo.Context, kind string) (ledger.Ceremony, webauthn.SessionData, error) {
	var data webauthn.SessionData
	sess, err := c.store.Get(ec.Request(), cookieName)
	token, _ := sess.Values["ceremony"].(string)
	if err != nil || token == "" {
		return ledger.Ceremony{}, data, ledger.ErrNoCeremony
	}
	cer, err := c.Ledger.TakeCeremony(ec.Request().Context(), ceremonyKey(token), kind, c.Now())
	if err != nil {
		return cer, data, err
	}
	return cer, data, json.Unmarshal([]byte(cer.Data), &data)
}

// passkeyAnswer is the JSON of a ceremony's step: the options for the
// browser, where to go once it is done, or why not (in the person's
// language, with the field it is about).
type passkeyAnswer struct {
	PublicKey any `json:"publicKey,omitempty"`
	// Proof marks options that prove it is the person, before a change.
	Proof    bool   `json:"proof,omitempty"`
	Redirect string `json:"redirect,omitempty"`
	Error    string `json:"error,omitempty"`
	Field    string `json:"field,omitempty"`
}

func answerJSON(ec echo.Context, status int, a passkeyAnswer) error {
	ec.Response().Header().Set("Cache-Control", "no-store")
	return ec.JSON(status, a)
}

func refuseJSON(ec echo.Context, status int, problem, field string) error {
	return answerJSON(ec, status, passkeyAnswer{Error: problem, Field: field})
}

// sentCSRF is the CSRF token a POST carries: its form field, or the
// X-CSRF-Token header of a script's JSON.
func sentCSRF(ec echo.Context) string {
	if r := ec.Request(); strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEMultipartForm) {
		// An upload's file waits on disk, not in memory (FormValue would
		// hold 32 MB of it), before the person's role is even known.
		if err := r.ParseMultipartForm(uploadMemory); err != nil {
			return ""
		}
	}
	if v := ec.FormValue("csrf"); v != "" {
		return v
	}
	return ec.Request().Header.Get("X-CSRF-Token")
}

// whyRefused is what the log may say of a refused ceremony: the WebAuthn
// library's kind of error and its fixed words, never its debugging
// details, and nothing of the credential.
func whyRefused(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe.Type + ": " + pe.Details
	}
	var unknown *protocol.ErrorUnknownCredential
	if errors.As(err, &unknown) && unknown.Err != nil {
		return unknown.Err.Type + ": " + unknown.Err.Details
	}
	return "not a WebAuthn answer"
}

// readCeremony reads a script's JSON answer, within maxCeremonyBody.
func readCeremony(ec echo.Context) ([]byte, error) {
	return io.ReadAll(io.LimitReader(ec.Request().Body, maxCeremonyBody))
}

// beginSignInWithPasskey answers POST /console/login/passkey/begin: the
// options of a sign-in by passkey. On the sign-in page any passkey of the
// console's may answer (it says whose it is); on the second step only one
// of the person whose password was right.
func (c *Console) beginSignInWithPasskey(ec echo.Context) error {
	if c.rp == nil {
		return refuseJSON(ec, http.StatusConflict, c.passkeysOff(ec), "")
	}
	pre, err := c.store.Get(ec.Request(), cookieName)
	want, _ := pre.Values["csrf"].(string)
	if err != nil || want == "" || !sameToken(sentCSRF(ec), want) {
		return refuseJSON(ec, http.StatusForbidden, t(ec, "console.passkeys.expired"), "")
	}
	if !c.spendSignInBudget(ec) {
		return refuseJSON(ec, http.StatusTooManyRequests, t(ec, "console.login.tooMany"), "")
	}
	if u, _, pending := c.pendingCode(ec); pending {
		return c.beginAssertion(ec, ledger.CeremonySignIn, u.Email, "")
	}
	options, data, err := c.rp.BeginDiscoverableLogin()
	if err != nil {
		return err
	}
	if err := c.beginCeremony(ec, ledger.CeremonySignIn, "", data, map[string]string{"next": ec.FormValue("next")}); err != nil {
		return err
	}
	return answerJSON(ec, http.StatusOK, passkeyAnswer{PublicKey: options.Response})
}

// spendSignInBudget takes one from the address's budget of passkey
// sign-ins (passkeyBeginRate, passkeyBeginBurst on this instance), and
// says so; when it is spent the answer says when to try again.
func (c *Console) spendSignInBudget(ec echo.Context) bool {
	spend := c.budgets.Spend("passkey sign-in "+ec.RealIP(), passkeyBeginRate, passkeyBeginBurst, c.Now())
	if !spend.OK {
		ec.Response().Header().Set("Retry-After", strconv.Itoa(max(spend.RetryAfter, 1)))
	}
	return spend.OK
}

// beginAssertion answers with the options of an assertion by one of the
// passkeys of email (but except), kept as a ceremony of kind: the second
// step of a sign-in, or a proof before a change.
func (c *Console) beginAssertion(ec echo.Context, kind, email, except string) error {
	user, err := c.passkeyUserOf(ec, email, except, nil)
	if err != nil {
		return err
	}
	if len(user.creds) == 0 {
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.none"), "")
	}
	options, data, err := c.rp.BeginLogin(user)
	if err != nil {
		return err
	}
	if err := c.beginCeremony(ec, kind, email, data, nil); err != nil {
		return err
	}
	return answerJSON(ec, http.StatusOK, passkeyAnswer{PublicKey: options.Response, Proof: kind == ledger.CeremonyProof})
}

// signInWithPasskey answers POST /console/login/passkey: the browser's
// assertion signs its person in, both steps at once. It is counted at the
// address and at the credential (MaxFailures a minute each, reserved
// before the signature is checked), refused when its counter went
// backwards (a copy of the passkey may exist), and taken once.
func (c *Console) signInWithPasskey(ec echo.Context) error {
	if c.rp == nil {
		return refuseJSON(ec, http.StatusConflict, c.passkeysOff(ec), "")
	}
	ctx := ec.Request().Context()
	pre, err := c.store.Get(ec.Request(), cookieName)
	want, _ := pre.Values["csrf"].(string)
	if err != nil || want == "" || !sameToken(sentCSRF(ec), want) {
		return refuseJSON(ec, http.StatusForbidden, t(ec, "console.passkeys.expired"), "")
	}
	raw, err := readCeremony(ec)
	if err != nil {
		return err
	}
	cer, data, err := c.takeCeremony(ec, ledger.CeremonySignIn)
	if errors.Is(err, ledger.ErrNoCeremony) {
		// Nothing to check it against: it spends what beginning one
		// would, so that a flood of them is turned away (unlogged) at the
		// pace ceremonies may begin.
		if !c.spendSignInBudget(ec) {
			return refuseJSON(ec, http.StatusTooManyRequests, t(ec, "console.login.tooMany"), "")
		}
		c.log(ec).Warn("console passkey sign-in refused: no ceremony under way (expired, taken, or another session's)", "address", ec.RealIP())
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.expired"), "")
	}
	if err != nil {
		return err
	}
	byAddress := &tries{c: c, ec: ec, limit: MaxFailures, keys: []string{addressKey(ec)}}
	if ok, err := byAddress.reserve(); err != nil {
		return err
	} else if !ok {
		c.log(ec).Warn("console passkey sign-in refused: too many tries", "address", ec.RealIP())
		return refuseJSON(ec, http.StatusTooManyRequests, t(ec, "console.login.tooMany"), "")
	}
	wrong := func(reason, key string) error {
		c.log(ec).Warn("console passkey sign-in refused", "reason", reason, "address", ec.RealIP())
		return refuseJSON(ec, http.StatusUnauthorized, t(ec, key), "")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(raw)
	if err != nil {
		return wrong(whyRefused(err), "console.passkeys.wrong")
	}
	row, err := c.Ledger.Passkey(ctx, credentialID(parsed.RawID))
	if errors.Is(err, ledger.ErrNoPasskey) || err == nil && cer.Email != "" && row.Email != cer.Email {
		return wrong("not a passkey of this console's (or of the person whose password was right)", "console.passkeys.unknown")
	}
	if err != nil {
		return err
	}
	// Counted at the credential, never at the person's e-mail: wrong
	// passwords typed by anyone who knows it do not stop their passkey.
	byCredential := &tries{c: c, ec: ec, limit: MaxFailures, keys: []string{passkeyKey(row.ID)}}
	if ok, err := byCredential.reserve(); err != nil {
		return errors.Join(err, byAddress.right())
	} else if !ok {
		c.log(ec).Warn("console passkey sign-in refused: too many tries of the passkey", "email", maskEmail(row.Email), "address", ec.RealIP())
		return errors.Join(byAddress.right(), refuseJSON(ec, http.StatusTooManyRequests, t(ec, "console.login.tooMany"), ""))
	}
	if !row.Suspended.IsZero() {
		// Suspended: it signs in nowhere, whoever holds it. Nothing was
		// checked, so nothing is counted.
		c.log(ec).Warn("console passkey sign-in refused: the passkey is suspended", "email", maskEmail(row.Email), "address", ec.RealIP())
		return errors.Join(byAddress.right(), byCredential.right(), refuseJSON(ec, http.StatusUnauthorized, t(ec, "console.passkeys.suspended", row.Name), ""))
	}
	user, err := c.passkeyUserOf(ec, row.Email, "", nil)
	if err != nil {
		return err
	}
	if cer.Email != "" {
		_, err = c.rp.ValidateLogin(user, data, parsed)
	} else {
		// The library checks that the user handle the passkey gave is
		// the person's.
		_, _, err = c.rp.ValidatePasskeyLogin(func(_, _ []byte) (webauthn.User, error) { return user, nil }, data, parsed)
	}
	if err != nil {
		return wrong(whyRefused(err), "console.passkeys.wrong")
	}
	if problem, err := c.takePasskey(ec, row, parsed); err != nil || problem != "" {
		if err != nil {
			return err
		}
		return refuseJSON(ec, http.StatusUnauthorized, problem, "")
	}
	u, known := c.Merchants.ConsoleUser(row.Email)
	if !known {
		// On no team any more, and no operator: nothing to sign in to.
		return wrong("the passkey's person is on no team", "console.passkeys.unknown")
	}
	if err := errors.Join(byAddress.right(), byCredential.right(), c.Ledger.ClearTries(ctx, codeKey(u.Email))); err != nil {
		return err
	}
	next, _ := pre.Values["next"].(string)
	act := ""
	if cer.Email != "" {
		// The second step of a sign-in (or of an invitation accepted).
		pu, values, ok := c.pendingCode(ec)
		if !ok || !strings.EqualFold(pu.Email, u.Email) {
			return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.expired"), "")
		}
		next, _ = values["next"].(string)
		if u, act, next, err = c.acceptPendingInvitation(ec, u, values, next); err != nil {
			return err
		}
	}
	if err := c.startSessionBy(ec, u, act, row.Ref); err != nil {
		return err
	}
	c.log(ec).Info("console sign-in with a passkey", "email", maskEmail(u.Email), "address", ec.RealIP())
	return answerJSON(ec, http.StatusOK, passkeyAnswer{Redirect: nextPage(next)})
}

// takePasskey takes a verified assertion of row's passkey: its counter must
// move forward, in the ledger, on every instance. When it does not, two
// authenticators hold it, the real one and a copy, and which is which
// cannot be told: the passkey is suspended (it signs in nowhere until its
// person removes it and adds it again), the sessions it started end on
// every instance, and it is said to the person and written in their
// passkey events and the audit log. A first use from a device the passkey
// never signed in from is written there too.
func (c *Console) takePasskey(ec echo.Context, row ledger.Passkey, parsed *protocol.ParsedCredentialAssertionData) (string, error) {
	ctx, now := ec.Request().Context(), c.Now()
	device := deviceOf(ec.Request().UserAgent())
	by := settings.Actor{Name: row.Email, RequestID: ec.Response().Header().Get(echo.HeaderXRequestID)}
	use, err := c.Ledger.UsePasskey(ctx, row.ID, parsed.Response.AuthenticatorData.Counter, now)
	switch {
	case err != nil:
		return "", err
	case use == ledger.PasskeySuspendedNow:
		c.log(ec).Warn("console: a passkey's counter did not move forward: suspended, a copy of it exists", "email", maskEmail(row.Email),
			"address", ec.RealIP())
		if err := errors.Join(c.Ledger.EndSessionsOfPasskey(ctx, row.Ref, now), c.Settings.PasskeySuspended(ctx, by, row, device)); err != nil {
			return "", err
		}
		return t(ec, "console.passkeys.suspended", row.Name), nil
	case use == ledger.PasskeyWasSuspended:
		c.log(ec).Warn("console: a suspended passkey refused", "email", maskEmail(row.Email), "address", ec.RealIP())
		return t(ec, "console.passkeys.suspended", row.Name), nil
	}
	fresh, err := c.Ledger.PasskeySeenOn(ctx, row.ID, row.Email, device, now)
	if err != nil || !fresh {
		return "", err
	}
	return "", c.Settings.PasskeyOnNewDevice(ctx, by, row, device)
}

// beginPasskey answers POST /console/account/passkeys/begin: with the
// person's password (or an assertion of another of their passkeys) and a
// name, the options that make a passkey; with proof=passkey, the options
// that prove it is them with one of their passkeys (but except, the ref
// of one being removed).
func (c *Console) beginPasskey(ec echo.Context) error {
	if c.rp == nil {
		return refuseJSON(ec, http.StatusConflict, c.passkeysOff(ec), "")
	}
	s := sessionOf(ec)
	if ec.FormValue("proof") == "passkey" {
		return c.beginAssertion(ec, ledger.CeremonyProof, s.user.Email, ec.FormValue("except"))
	}
	name, err := settings.PasskeyName(ec.FormValue("name"))
	if err != nil {
		return refuseJSON(ec, http.StatusUnprocessableEntity, passkeyNameSaid(ec, err), "passkey-name")
	}
	user, err := c.passkeyUserOf(ec, s.user.Email, "", nil)
	if err != nil {
		return err
	}
	if len(user.all) >= ledger.MaxPasskeys {
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.full", ledger.MaxPasskeys), "")
	}
	for _, r := range user.all {
		if strings.EqualFold(r.Name, name) {
			return refuseJSON(ec, http.StatusUnprocessableEntity, passkeyNameSaid(ec, settings.ErrPasskeyNameTaken), "passkey-name")
		}
	}
	if problem, status, err := c.proveItIsThem(ec, s, ""); err != nil {
		return err
	} else if problem != "" {
		return refuseJSON(ec, status, problem, "passkey-password")
	}
	// The person's passkeys are not made again on the same authenticator.
	options, data, err := c.rp.BeginRegistration(user, webauthn.WithExclusions(webauthn.Credentials(user.creds).CredentialDescriptors()))
	if err != nil {
		return err
	}
	if err := c.beginCeremony(ec, ledger.CeremonyRegister, s.user.Email, data, nil); err != nil {
		return err
	}
	return answerJSON(ec, http.StatusOK, passkeyAnswer{PublicKey: options.Response})
}

// proveItIsThem checks the person's own proof before their passkeys
// change: their password (counted as sign-ins are), or an assertion of
// another of their passkeys (but except), taken from the proof ceremony
// their session began and counted as a sign-in by passkey is. It returns the refusal to show, with its status, or
// "" when it is them.
func (c *Console) proveItIsThem(ec echo.Context, s *session, except string) (string, int, error) {
	assertion := ec.FormValue("assertion")
	if assertion == "" {
		return c.ownPassword(ec, s.user, ec.FormValue(passkeyPassword))
	}
	if c.rp == nil {
		return c.passkeysOff(ec), http.StatusConflict, nil
	}
	cer, data, err := c.takeCeremony(ec, ledger.CeremonyProof)
	if errors.Is(err, ledger.ErrNoCeremony) || err == nil && !strings.EqualFold(cer.Email, s.user.Email) {
		return t(ec, "console.passkeys.expired"), http.StatusConflict, nil
	}
	if err != nil {
		return "", 0, err
	}
	refused := func(reason string) (string, int, error) {
		c.log(ec).Warn("console: a passkey refused where the person proves who they are", "reason", reason, "email", maskEmail(s.user.Email))
		return t(ec, "console.passkeys.proofWrong"), http.StatusUnauthorized, nil
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(assertion))
	if err != nil {
		return refused(whyRefused(err))
	}
	user, err := c.passkeyUserOf(ec, s.user.Email, except, nil)
	if err != nil {
		return "", 0, err
	}
	row, ok := user.row(parsed.RawID)
	if !ok {
		return refused("not one of the person's other passkeys")
	}
	// Counted as a sign-in by passkey is: the address and the credential,
	// never the person's password count.
	tries := c.passkeyTries(ec, row.ID)
	if ok, err := tries.reserve(); err != nil {
		return "", 0, err
	} else if !ok {
		return t(ec, "console.login.tooMany"), http.StatusTooManyRequests, nil
	}
	if _, err := c.rp.ValidateLogin(user, data, parsed); err != nil {
		return refused(whyRefused(err))
	}
	if problem, err := c.takePasskey(ec, row, parsed); err != nil || problem != "" {
		return problem, http.StatusUnauthorized, err
	}
	return "", 0, tries.right()
}

// passkeyTries counts the signatures of one passkey checked where a person
// proves who they are: from the request's address and at the credential.
func (c *Console) passkeyTries(ec echo.Context, credential string) *tries {
	return &tries{c: c, ec: ec, limit: MaxFailures, keys: []string{addressKey(ec), passkeyKey(credential)}}
}

// passkeyKey counts the tries of one passkey, wherever it signs: a
// digest, nothing of the credential kept.
func passkeyKey(credential string) string { return "passkey:" + digest(credential) }

// addPasskey answers POST /console/account/passkeys: the browser's new
// credential, from the registration its session began, with the name the
// person gave it. The person's other sessions end: how they sign in
// changed.
func (c *Console) addPasskey(ec echo.Context) error {
	if c.rp == nil {
		return refuseJSON(ec, http.StatusConflict, c.passkeysOff(ec), "")
	}
	s := sessionOf(ec)
	ctx := ec.Request().Context()
	raw, err := readCeremony(ec)
	if err != nil {
		return err
	}
	var body struct {
		Name       string          `json:"name"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return refuseJSON(ec, http.StatusBadRequest, t(ec, "console.passkeys.failed"), "")
	}
	name, err := settings.PasskeyName(body.Name)
	if err != nil {
		return refuseJSON(ec, http.StatusUnprocessableEntity, passkeyNameSaid(ec, err), "passkey-name")
	}
	cer, data, err := c.takeCeremony(ec, ledger.CeremonyRegister)
	if errors.Is(err, ledger.ErrNoCeremony) || err == nil && !strings.EqualFold(cer.Email, s.user.Email) {
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.expired"), "")
	}
	if err != nil {
		return err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body.Credential)
	if err != nil {
		c.log(ec).Warn("console: a new passkey refused", "reason", whyRefused(err), "email", maskEmail(s.user.Email))
		return refuseJSON(ec, http.StatusBadRequest, t(ec, "console.passkeys.failed"), "")
	}
	user, err := c.passkeyUserOf(ec, s.user.Email, "", data.UserID)
	if err != nil {
		return err
	}
	cred, err := c.rp.CreateCredential(user, data, parsed)
	if err != nil {
		c.log(ec).Warn("console: a new passkey refused", "reason", whyRefused(err), "email", maskEmail(s.user.Email))
		return refuseJSON(ec, http.StatusBadRequest, t(ec, "console.passkeys.failed"), "")
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	err = c.Settings.AddPasskey(ctx, ledger.Passkey{ID: credentialID(cred.ID), Email: s.user.Email, UserHandle: credentialID(user.handle),
		Name: name, Credential: string(record), SignCount: cred.Authenticator.SignCount}, deviceOf(ec.Request().UserAgent()))
	switch {
	case errors.Is(err, settings.ErrTooManyPasskeys):
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.full", ledger.MaxPasskeys), "")
	case errors.Is(err, settings.ErrPasskeyNameTaken):
		return refuseJSON(ec, http.StatusUnprocessableEntity, passkeyNameSaid(ec, err), "passkey-name")
	case errors.Is(err, settings.ErrPasskeyTaken):
		// Another person's credential (or one of theirs made again by a
		// crafted answer): refused as any registration that fails, never
		// an error page that tells whose it is.
		c.log(ec).Warn("console: a new passkey refused", "reason", "its credential id is kept already", "email", maskEmail(s.user.Email))
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.failed"), "")
	case errors.Is(err, settings.ErrPasskeyUser):
		c.log(ec).Warn("console: a new passkey refused", "reason", "made for another user handle than the person's others", "email", maskEmail(s.user.Email))
		return refuseJSON(ec, http.StatusConflict, t(ec, "console.passkeys.failed"), "")
	case err != nil:
		return err
	}
	if err := c.endOthers(ec, s); err != nil {
		return err
	}
	c.log(ec).Info("console: passkey added", "email", maskEmail(s.user.Email))
	return answerJSON(ec, http.StatusOK, passkeyAnswer{Redirect: RouteAccount + "?done=passkey-added"})
}

// passkeyNameSaid is why a passkey's name was refused, in the reader's
// language.
func passkeyNameSaid(ec echo.Context, err error) string {
	switch {
	case errors.Is(err, settings.ErrPasskeyNameLong):
		return t(ec, "console.passkeys.nameLong", settings.MaxPasskeyName)
	case errors.Is(err, settings.ErrPasskeyNameTaken):
		return t(ec, "console.passkeys.nameTaken")
	}
	return t(ec, "console.passkeys.nameMissing")
}

// removePasskey answers POST /console/account/passkeys/{id}/remove, {id}
// being the passkey's ref (never its credential id, which a proxy's access
// log would keep): first a page that asks for the person's password (or
// another of their passkeys), then, with it, the passkey is gone on every
// instance and the person's other sessions end.
func (c *Console) removePasskey(ec echo.Context) error {
	s := sessionOf(ec)
	ctx := ec.Request().Context()
	ref := ec.Param("id")
	rows, err := c.Ledger.Passkeys(ctx, s.user.Email)
	if err != nil {
		return err
	}
	var name string
	for _, r := range rows {
		if r.Ref == ref {
			name = r.Name
		}
	}
	if name == "" {
		return errNotFound
	}
	page := passkeys.Removal{ConsolePage: c.frame(ec, t(ec, "console.passkeys.removeTitle"), "account"), Ref: ref, Name: name,
		Action: removalOf(ref), Others: c.rp != nil && len(rows) > 1}
	page.Scripts = []string{c.Assets.PasskeysJS}
	if ec.FormValue("asked") == "" {
		return render(ec, http.StatusOK, passkeys.RemovalPage(page))
	}
	if ec.FormValue(passkeyPassword) == "" && ec.FormValue("assertion") == "" {
		page.Error = t(ec, "console.passkeys.passwordMissing")
		return render(ec, http.StatusUnprocessableEntity, passkeys.RemovalPage(page))
	}
	if problem, status, err := c.proveItIsThem(ec, s, ref); err != nil {
		return err
	} else if problem != "" {
		page.Error = problem
		return render(ec, status, passkeys.RemovalPage(page))
	}
	switch _, err := c.Settings.RemovePasskey(ctx, actor(ec), s.user.Email, ref); {
	case errors.Is(err, settings.ErrNoPasskey):
		// Removed meanwhile, on another page or instance.
		return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=passkey-removed")
	case err != nil:
		return err
	}
	if err := c.endOthers(ec, s); err != nil {
		return err
	}
	c.log(ec).Info("console: passkey removed", "email", maskEmail(s.user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=passkey-removed")
}

// removalOf is the address that removes the passkey of ref.
func removalOf(ref string) templ.SafeURL {
	return templ.SafeURL(strings.Replace(RoutePasskeyRemove, ":id", url.PathEscape(ref), 1))
}

// passkeysOfAccount is the account page's passkeys: the list, and what
// happened to them lately.
func (c *Console) passkeysOfAccount(ec echo.Context, email string) (passkeys.Account, error) {
	ctx, l := ec.Request().Context(), localizerOf(ec)
	m := passkeys.Account{Off: c.passkeysOff(ec), Max: ledger.MaxPasskeys}
	rows, err := c.Ledger.Passkeys(ctx, email)
	if err != nil {
		return m, err
	}
	for _, r := range rows {
		p := passkeys.Key{Name: r.Name, When: t(ec, "console.passkeys.whenUnused", when(l, r.Created)), Remove: removalOf(r.Ref)}
		if !r.LastUsed.IsZero() {
			p.When = t(ec, "console.passkeys.when", when(l, r.Created), when(l, r.LastUsed))
		}
		if !r.Suspended.IsZero() {
			p.Suspended = t(ec, "console.passkeys.suspendedSince", when(l, r.Suspended))
		}
		m.List = append(m.List, p)
	}
	m.Full = len(rows) >= ledger.MaxPasskeys
	events, err := c.Ledger.PasskeyEvents(ctx, email, passkeyEvents)
	if err != nil {
		return m, err
	}
	for _, e := range events {
		line := passkeys.Event{When: when(l, e.At)}
		switch e.Kind {
		case ledger.PasskeyAdded:
			line.Text = t(ec, "console.passkeys.event.added", e.Name, deviceSaid(ec, e.Device))
		case ledger.PasskeyRemoved:
			line.Text = t(ec, "console.passkeys.event.removed", e.Name)
		case ledger.PasskeyNewDevice:
			line.Text = t(ec, "console.passkeys.event.newDevice", e.Name, deviceSaid(ec, e.Device))
		case ledger.PasskeySuspended:
			line.Text, line.Warning = t(ec, "console.passkeys.event.suspended", e.Name, deviceSaid(ec, e.Device)), true
		default:
			continue
		}
		m.Events = append(m.Events, line)
	}
	return m, nil
}

// requireOperatorsPasskeys answers POST
// /console/merchants/operators-passkeys (operators): from now on operators
// sign in with a passkey alone (a recovery code when every device is
// lost), or not. An operator without a passkey adds one before anything
// else. Either way it takes the operator's own proof (their password, or
// one of their passkeys): a session alone never changes how every
// operator signs in.
func (c *Console) requireOperatorsPasskeys(ec echo.Context) error {
	on := ec.FormValue("require") == "on"
	if on && c.rp == nil {
		return &consoleError{status: http.StatusConflict, key: "console.passkeys.cannotRequire", err: errors.New("passkeys are off on this deployment"),
			args: []any{c.BaseURL}}
	}
	problem, status := t(ec, "console.passkeys.passwordMissing"), http.StatusUnprocessableEntity
	if ec.FormValue(passkeyPassword) != "" || ec.FormValue("assertion") != "" {
		var err error
		if problem, status, err = c.proveItIsThem(ec, sessionOf(ec), ""); err != nil {
			return err
		}
	}
	if problem != "" {
		page := c.merchantsPage(ec, manage.ConsoleNewMerchant{})
		page.OperatorsPasskeysError = problem
		refused(&page.ConsolePage, map[string]string{passkeyPassword: problem})
		return render(ec, status, manage.ConsoleMerchantsPage(page))
	}
	if err := c.Settings.RequireOperatorsPasskeys(ec.Request().Context(), actor(ec), on); err != nil {
		return err
	}
	done := "operatorsPasskeys"
	if !on {
		done = "operatorsAnyway"
	}
	c.log(ec).Info("console: operators' passkeys", "required", on, "by", maskEmail(sessionOf(ec).user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteMerchants+"?done="+done)
}
