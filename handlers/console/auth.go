package console

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	consoleviews "github.com/paybybank/checkout/views/console"
)

// Limits of a console session and of sign-in tries.
const (
	// IdleTimeout ends a session nobody used for this long.
	IdleTimeout = 30 * time.Minute
	// MaxSession ends a session this long after sign-in, used or not.
	MaxSession = 12 * time.Hour
	// MaxFailures is how many refused sign-ins an address or an e-mail may
	// have in FailureWindow before every try is refused unchecked.
	MaxFailures   = 5
	FailureWindow = time.Minute
	// cookieName is the console's cookie, apart from the shopper's.
	cookieName = "console"
	// PersonRate and PersonBurst bound a signed-in person's POSTs: far
	// more than anyone clicks, far less than a script gone wrong sends.
	PersonRate  = 10
	PersonBurst = 20
	// seenEvery is how often a session's last use is written back: not on
	// every page, so that a page is not a cookie each time.
	seenEvery = time.Minute
)

// newStore keeps console sessions in a cookie signed and encrypted under
// keys derived from SESSION_KEYS for the console alone: a shopper's cookie
// can never be read as a console session.
func newStore(secrets [][]byte, secure bool) (*sessions.CookieStore, error) {
	var pairs [][]byte
	for _, s := range secrets {
		auth, err := hkdf.Key(sha256.New, s, nil, "paybybank console cookie auth", 32)
		if err != nil {
			return nil, err
		}
		enc, err := hkdf.Key(sha256.New, s, nil, "paybybank console cookie encryption", 32)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, auth, enc)
	}
	store := sessions.NewCookieStore(pairs...)
	store.Options = &sessions.Options{
		Path: "/console", MaxAge: int(MaxSession.Seconds()), HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
	}
	store.MaxAge(int(MaxSession.Seconds()))
	return store, nil
}

// session is a signed-in user's session.
type session struct {
	user *merchant.ConsoleUser
	// id names the session in the ledger's sign-outs.
	id   string
	csrf string
	// start is the sign-in.
	start time.Time
	// merchant is the merchant the person acts for, with their role
	// there; nil (and no role) for an operator, who acts for every
	// merchant.
	merchant *merchant.Merchant
	role     merchant.Role
}

// may reports whether the person may do action: an operator anything,
// anyone else what their role at the merchant they act for allows.
func (s *session) may(action merchant.Action) bool {
	return s.user.Operator || s.role.May(action)
}

// acting is the merchant a person acts for: the one they chose (the
// session's "act"), while they still belong to it, or else their first.
func acting(u *merchant.ConsoleUser, chosen string) (*merchant.Merchant, merchant.Role) {
	if u.Operator || len(u.Memberships) == 0 {
		return nil, ""
	}
	for _, m := range u.Memberships {
		if m.Merchant.ID == chosen {
			return m.Merchant, m.Role
		}
	}
	return u.Memberships[0].Merchant, u.Memberships[0].Role
}

const ctxSession = "console.session"

// sessionOf is the request's session; nil before sign-in.
func sessionOf(ec echo.Context) *session {
	s, _ := ec.Get(ctxSession).(*session)
	return s
}

// randomToken is 32 random bytes in hex.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fingerprint ties a session to the password hash it signed in with: a new
// hash in the merchants file ends every session of the old password.
func fingerprint(u *merchant.ConsoleUser) string {
	sum := sha256.Sum256([]byte(u.PasswordHash))
	return hex.EncodeToString(sum[:8])
}

// signedIn lets a request through only with a live session, and a POST only
// with the session's CSRF token; anything else goes to the sign-in page.
func (c *Console) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		s, ended, err := c.openSession(ec)
		if err != nil {
			return err
		}
		if s == nil {
			if ec.Request().Method != http.MethodGet {
				return errForbidden
			}
			q := url.Values{}
			if ended {
				q.Set("ended", "1")
			}
			if next := ec.Request().URL.RequestURI(); next != RouteOverview {
				q.Set("next", next)
			}
			to := RouteLogin
			if len(q) > 0 {
				to += "?" + q.Encode()
			}
			return ec.Redirect(http.StatusSeeOther, to)
		}
		if ec.Request().Method == http.MethodPost {
			if !sameToken(sentCSRF(ec), s.csrf) {
				return &consoleError{status: http.StatusForbidden, key: "console.error.forbidden", err: errCSRF}
			}
			spend := c.budgets.Spend("person "+strings.ToLower(s.user.Email), PersonRate, PersonBurst, c.Now())
			spend.Tell(ec, "console")
			if !spend.OK {
				return &consoleError{status: http.StatusTooManyRequests, key: "console.error.tooMany", err: errTooMany}
			}
		}
		ec.Set(ctxSession, s)
		speak(ec, s.user.Language)
		if (c.mustSetUpTwoStep(s.user) || c.mustAddPasskey(s.user)) && !whileSettingUp[ec.Path()] {
			// Their team requires two-step sign-in, or the deployment a
			// passkey of its operators: nothing else first.
			return ec.Redirect(http.StatusSeeOther, RouteAccount)
		}
		return next(ec)
	}
}

type tooManyError struct{}

func (tooManyError) Error() string { return "console POSTs over the person's budget" }

var errTooMany = tooManyError{}

type csrfError struct{}

func (csrfError) Error() string { return "console POST without its session's CSRF token" }

var errCSRF = csrfError{}

// openSession reads the request's session. It returns nil when nobody is
// signed in, with ended set when a session was there but is over: idle,
// too old, signed out, or its user or password gone from the merchants
// file.
func (c *Console) openSession(ec echo.Context) (*session, bool, error) {
	r := ec.Request()
	sess, err := c.store.Get(r, cookieName)
	if err != nil || sess.IsNew {
		return nil, false, nil
	}
	email, _ := sess.Values["user"].(string)
	if email == "" {
		return nil, false, nil
	}
	id, _ := sess.Values["sid"].(string)
	csrf, _ := sess.Values["csrf"].(string)
	start, _ := sess.Values["start"].(int64)
	seen, _ := sess.Values["seen"].(int64)
	pw, _ := sess.Values["pw"].(string)
	now := c.Now()
	u, ok := c.Merchants.ConsoleUser(email)
	switch {
	case !ok, id == "", csrf == "", pw != fingerprint(u),
		now.Sub(time.Unix(start, 0)) > MaxSession, now.Sub(time.Unix(seen, 0)) > IdleTimeout:
		return nil, true, nil
	}
	out, err := c.Ledger.IsSignedOut(r.Context(), id)
	if err != nil {
		return nil, false, err
	}
	if out {
		return nil, true, nil
	}
	if now.Sub(time.Unix(seen, 0)) > seenEvery {
		sess.Values["seen"] = now.Unix()
		if err := sess.Save(r, ec.Response()); err != nil {
			return nil, false, err
		}
		if err := c.Ledger.SessionSeen(r.Context(), id, ec.RealIP(), now); err != nil {
			return nil, false, err
		}
	}
	act, _ := sess.Values["act"].(string)
	m, role := acting(u, act)
	return &session{user: u, id: id, csrf: csrf, start: time.Unix(start, 0), merchant: m, role: role}, false, nil
}

// showLogin shows the sign-in form, with a fresh token for it.
func (c *Console) showLogin(ec echo.Context) error {
	if s, _, err := c.openSession(ec); err == nil && s != nil {
		return ec.Redirect(http.StatusSeeOther, nextPage(ec.QueryParam("next")))
	}
	m := consoleviews.ConsoleLogin{Next: ec.QueryParam("next")}
	switch {
	case ec.QueryParam("out") == "1":
		m.Notice = t(ec, "console.signedOut")
	case ec.QueryParam("ended") == "1":
		m.Notice = t(ec, "console.sessionEnded")
	}
	return c.loginForm(ec, http.StatusOK, m)
}

// loginForm renders the sign-in form under a new pre-session holding only
// its CSRF token: a sign-in must come from this form.
func (c *Console) loginForm(ec echo.Context, status int, m consoleviews.ConsoleLogin) error {
	sess, _ := c.store.New(ec.Request(), cookieName)
	sess.Values = map[any]any{"csrf": randomToken()}
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	m.ConsolePage = consoleviews.ConsolePage{Title: t(ec, "console.login.title"), Assets: c.Assets, CSRF: sess.Values["csrf"].(string),
		Notice: m.Notice}
	if m.Passkeys = c.rp != nil; m.Passkeys {
		m.Scripts = []string{c.Assets.PasskeysJS}
	}
	return render(ec, status, consoleviews.ConsoleLoginPage(m))
}

// signIn checks an e-mail and password. Every refusal says the same, takes
// about as long whether the e-mail is known or not, and counts against the
// address and the e-mail; past MaxFailures a minute nothing is checked.
func (c *Console) signIn(ec echo.Context) error {
	r := ec.Request()
	email := strings.TrimSpace(ec.FormValue("email"))
	pw := ec.FormValue("password")
	next := ec.FormValue("next")
	form := consoleviews.ConsoleLogin{Email: email, Next: next}

	pre, err := c.store.Get(r, cookieName)
	want, _ := pre.Values["csrf"].(string)
	if err != nil || want == "" || subtle.ConstantTimeCompare([]byte(ec.FormValue("csrf")), []byte(want)) != 1 {
		c.log(ec).Warn("console sign-in refused: no valid form token", "email", maskEmail(email))
		form.Error = t(ec, "console.login.expired")
		return c.loginForm(ec, http.StatusForbidden, form)
	}
	if email == "" || pw == "" {
		form.Error = t(ec, "console.login.missing")
		return c.loginForm(ec, http.StatusUnprocessableEntity, form)
	}
	tries := c.passwordTries(ec, email)
	if ok, err := tries.reserve(); err != nil {
		return err
	} else if !ok {
		c.log(ec).Warn("console sign-in refused: too many tries", "email", maskEmail(email), "address", ec.RealIP())
		form.Error = t(ec, "console.login.tooMany")
		return c.loginForm(ec, http.StatusTooManyRequests, form)
	}
	u, known := c.Merchants.ConsoleUser(email)
	if !known {
		u = nil
	}
	ok, err := c.checkPassword(ec, u, pw)
	if errors.Is(err, errBusy) {
		form.Error = t(ec, "console.error.busy.text")
		return errors.Join(tries.right(), c.loginForm(ec, http.StatusServiceUnavailable, form))
	}
	if err != nil {
		return err
	}
	if !ok {
		c.log(ec).Warn("console sign-in refused: wrong e-mail or password", "email", maskEmail(email), "address", ec.RealIP())
		form.Error = t(ec, "console.login.wrong")
		return c.loginForm(ec, http.StatusUnauthorized, form)
	}
	if err := tries.right(); err != nil {
		return err
	}
	if c.secondStep(u) {
		// The password was right; the code (or the passkey) comes next,
		// within minutes, from this browser.
		return c.askForCode(ec, u, next, "")
	}
	if err := c.startSession(ec, u, ""); err != nil {
		return err
	}
	who := "(operator)"
	if !u.Operator && len(u.Memberships) > 0 {
		who = u.Memberships[0].Merchant.ID
	}
	c.log(ec).Info("console sign-in", "email", maskEmail(u.Email), "merchant", who, "address", ec.RealIP())
	return ec.Redirect(http.StatusSeeOther, nextPage(next))
}

// startSession signs u in: a new session, nothing from before it carried
// over, acting for merchant act (their first when empty), and the sign-in
// recorded for the team's list.
func (c *Console) startSession(ec echo.Context, u *merchant.ConsoleUser, act string) error {
	return c.startSessionBy(ec, u, act, "")
}

// startSessionBy is startSession for a sign-in by the passkey of ref, kept
// with the session: it ends when that passkey is suspended.
func (c *Console) startSessionBy(ec echo.Context, u *merchant.ConsoleUser, act, passkey string) error {
	sess, _ := c.store.New(ec.Request(), cookieName)
	now := c.Now()
	sess.Values = map[any]any{"user": strings.ToLower(u.Email), "sid": randomToken(), "csrf": randomToken(),
		"start": now.Unix(), "seen": now.Unix(), "pw": fingerprint(u)}
	if act != "" {
		sess.Values["act"] = act
	}
	r := ec.Request()
	if err := c.Ledger.StartSession(r.Context(), ledger.Session{ID: sess.Values["sid"].(string), Email: u.Email,
		Device: deviceOf(r.UserAgent()), Address: ec.RealIP(), Created: now, Ends: now.Add(MaxSession), Passkey: passkey}); err != nil {
		return err
	}
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	return c.Ledger.SignedIn(ec.Request().Context(), u.Email, now)
}

// deviceOf names a browser as its person would recognise it, from its
// User-Agent, without keeping the rest of it: the browser's name and the
// system's ("" for one not recognised), kept as "Firefox/Linux" so that
// the account page says it in its reader's language (deviceSaid).
func deviceOf(ua string) string {
	var browser, system string
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, o := range []struct{ token, name string }{
		{"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Android", "Android"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	return browser + "/" + system
}

// deviceSaid is a session's device in the reader's language: "Firefox on
// Linux", "Firefox (Linux)". A device an earlier build kept in words reads
// as it was kept.
func deviceSaid(ec echo.Context, device string) string { return deviceIn(localizerOf(ec), device) }

// deviceIn is deviceSaid in l's language.
func deviceIn(l *i18n.Localizer, device string) string {
	browser, system, ok := strings.Cut(device, "/")
	if !ok {
		return device
	}
	if browser == "" {
		browser = l.T("console.device.browser")
	}
	if system == "" {
		system = l.T("console.device.system")
	}
	return l.T("console.device.on", browser, system)
}

// signOut ends the session here and, through the ledger, on every
// instance: a copy of the cookie opens nothing afterwards.
func (c *Console) signOut(ec echo.Context) error {
	s, _, err := c.openSession(ec)
	if err != nil {
		return err
	}
	if s == nil {
		return ec.Redirect(http.StatusSeeOther, RouteLogin)
	}
	if subtle.ConstantTimeCompare([]byte(ec.FormValue("csrf")), []byte(s.csrf)) != 1 {
		return &consoleError{status: http.StatusForbidden, key: "console.error.forbidden", err: errCSRF}
	}
	if err := c.Ledger.SignedOut(ec.Request().Context(), s.id, s.start.Add(MaxSession)); err != nil {
		return err
	}
	sess, _ := c.store.New(ec.Request(), cookieName)
	sess.Options.MaxAge = -1
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	c.log(ec).Info("console sign-out", "email", maskEmail(s.user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteLogin+"?out=1")
}

// nextPage is where a sign-in leads: the console page asked for, never
// another site.
func nextPage(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || strings.HasPrefix(next, "//") ||
		!(u.Path == RouteOverview || strings.HasPrefix(u.Path, RouteOverview+"/")) || strings.Contains(next, "\\") {
		return RouteOverview
	}
	return next
}

// tries are the counted tries of one check (a password, a code), under
// every key that counts them, on every instance through the ledger. Each
// try is reserved before it is checked, so that however many arrive at
// once no more than the limit are checked in FailureWindow; a try that was
// right is given back, a wrong one stays counted.
type tries struct {
	c     *Console
	ec    echo.Context
	keys  []string
	limit int
	// taken are the keys a try was reserved under, with the window each
	// was counted in.
	taken []takenTry
	// locked is set when a refusal came from a lock rather than a full
	// window.
	locked bool
}

// passwordTries counts passwords from the request's address and at email:
// sign-ins, an account's password check, an invitation's.
func (c *Console) passwordTries(ec echo.Context, email string) *tries {
	return &tries{c: c, ec: ec, limit: MaxFailures, keys: []string{addressKey(ec), mailKey(email)}}
}

// addressKey and mailKey count the tries of an address (passwords and
// passkeys alike), and the passwords at an e-mail.
func addressKey(ec echo.Context) string { return "addr:" + digest(ec.RealIP()) }
func mailKey(email string) string       { return "mail:" + digest(strings.ToLower(email)) }

// sameToken compares a token sent with the one kept, in constant time.
func sameToken(sent, kept string) bool {
	return subtle.ConstantTimeCompare([]byte(sent), []byte(kept)) == 1
}

// codeTries counts a person's two-step codes, wherever they are typed: at
// sign-in and on their account page alike.
func (c *Console) codeTries(ec echo.Context, email string) *tries {
	return &tries{c: c, ec: ec, limit: MaxWrongCodes, keys: []string{codeKey(email)}}
}

func codeKey(email string) string { return "code:" + digest(strings.ToLower(email)) }

// reserve takes a try under every key, or none: when a key refuses, the
// answer says when to try again (Retry-After) and nothing is checked.
func (tr *tries) reserve() (bool, error) {
	ctx, now := tr.ec.Request().Context(), tr.c.Now()
	for _, k := range tr.keys {
		ok, state, err := tr.c.Ledger.ReserveTry(ctx, k, tr.limit, FailureWindow, now)
		if err != nil {
			return false, errors.Join(err, tr.giveBack())
		}
		if !ok {
			tr.locked = state.LockedUntil.After(now)
			wait := max(state.LockedUntil.Sub(now), state.Start.Add(FailureWindow).Sub(now), time.Second)
			tr.ec.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			return false, tr.giveBack()
		}
		tr.taken = append(tr.taken, takenTry{key: k, window: state.Start})
	}
	return true, nil
}

type takenTry struct {
	key    string
	window time.Time
}

// right gives the tries back: the check passed.
func (tr *tries) right() error { return tr.giveBack() }

func (tr *tries) giveBack() error {
	var errs []error
	for _, k := range tr.taken {
		errs = append(errs, tr.c.Ledger.GiveBackTry(tr.ec.Request().Context(), k.key, k.window))
	}
	tr.taken = nil
	return errors.Join(errs...)
}

// spent reports whether the tries of the window are all taken now.
func (tr *tries) spent() (bool, error) {
	for _, k := range tr.keys {
		state, err := tr.c.Ledger.TriesOf(tr.ec.Request().Context(), k)
		if err != nil {
			return false, err
		}
		if state.Used >= tr.limit && state.Start.Add(FailureWindow).After(tr.c.Now()) {
			return true, nil
		}
	}
	return false, nil
}

// checkPassword reports whether pw is u's password (u nil: checked against
// the decoy, as long, never right), through the hashing gate.
func (c *Console) checkPassword(ec echo.Context, u *merchant.ConsoleUser, pw string) (bool, error) {
	ok := false
	err := c.Hashing.Do(ec.Request().Context(), func() {
		if u != nil {
			ok = u.Matches(pw)
		} else {
			c.decoy.Matches(pw)
		}
	})
	return ok, c.busy(ec, err)
}

// ownPassword checks a person's own password where they prove who they are
// (their account, their two-step settings, an invitation), counted as
// sign-ins are. It returns the refusal to show under the field, with its
// status, or "" when the password is right.
func (c *Console) ownPassword(ec echo.Context, u *merchant.ConsoleUser, pw string) (string, int, error) {
	tries := c.passwordTries(ec, u.Email)
	if ok, err := tries.reserve(); err != nil {
		return "", 0, err
	} else if !ok {
		return t(ec, "console.login.tooMany"), http.StatusTooManyRequests, nil
	}
	ok, err := c.checkPassword(ec, u, pw)
	switch {
	case errors.Is(err, errBusy):
		return t(ec, "console.error.busy.text"), http.StatusServiceUnavailable, tries.right()
	case err != nil:
		return "", 0, err
	case !ok:
		c.log(ec).Warn("console: a wrong password where the person proves who they are", "email", maskEmail(u.Email), "address", ec.RealIP())
		return t(ec, "console.invite.wrongPassword"), http.StatusUnauthorized, nil
	}
	return "", 0, tries.right()
}

// hashPassword hashes a new password through the hashing gate.
func (c *Console) hashPassword(ec echo.Context, pw string) (phc string, err error) {
	if gateErr := c.Hashing.Do(ec.Request().Context(), func() { phc, err = password.Hash(pw, password.Default) }); gateErr != nil {
		return "", c.busy(ec, gateErr)
	}
	return phc, err
}

// busy turns the gate's refusal into the answer that asks to come back in
// a few seconds.
func (c *Console) busy(ec echo.Context, err error) error {
	if !errors.Is(err, password.ErrBusy) {
		return err
	}
	ec.Response().Header().Set("Retry-After", strconv.Itoa(busyRetry))
	c.log(ec).Warn("console: every password slot busy; a try was turned away", "address", ec.RealIP())
	return errBusy
}

// busyRetry is the Retry-After, in seconds, of a try turned away by the
// hashing gate.
const busyRetry = 2

var errBusy = &consoleError{status: http.StatusServiceUnavailable, key: "console.error.busy", err: password.ErrBusy}

// digest names a value in the ledger's sign-in records without keeping it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// maskEmail shows enough of an e-mail to tell accounts apart in the log,
// not the whole address (nor a password typed into the wrong field).
func maskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" {
		return "(not an e-mail)"
	}
	return string([]rune(local)[:1]) + "…@" + domain
}
