package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	consoleviews "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of two-step sign-in.
const (
	RouteLoginCode      = "/console/login/code"
	RouteTOTP           = "/console/account/totp"
	RouteTOTPConfirm    = "/console/account/totp/confirm"
	RouteTOTPOff        = "/console/account/totp/off"
	RouteRequireTwoStep = "/console/team/require-two-step"
)

// Limits of the code step.
const (
	// CodeWindow is how long after the password the code may come.
	CodeWindow = 5 * time.Minute
	// MaxWrongCodes is how many wrong codes a person may send a minute;
	// past it every code is refused unchecked.
	MaxWrongCodes = 5
)

// askForCode keeps, in a pre-session of this browser, that the person's
// password was right, and sends them to the code step. invitation is the
// token of an invitation they accept once the code is right ("" for a
// plain sign-in).
func (c *Console) askForCode(ec echo.Context, u *merchant.ConsoleUser, next, invitation string) error {
	sess, _ := c.store.New(ec.Request(), cookieName)
	sess.Values = map[any]any{"csrf": randomToken(), "pending": strings.ToLower(u.Email), "pw": fingerprint(u),
		"at": c.Now().Unix(), "next": next, "invite": invitation}
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteLoginCode)
}

// pendingCode is the person whose password this browser gave, while the
// second step (a code, or a passkey) is open: CodeWindow, the same
// password.
func (c *Console) pendingCode(ec echo.Context) (*merchant.ConsoleUser, map[any]any, bool) {
	sess, err := c.store.Get(ec.Request(), cookieName)
	if err != nil {
		return nil, nil, false
	}
	email, _ := sess.Values["pending"].(string)
	pw, _ := sess.Values["pw"].(string)
	at, _ := sess.Values["at"].(int64)
	u, ok := c.Merchants.Person(email)
	if email == "" || !ok || !c.secondStep(u) || pw != fingerprint(u) || c.Now().Sub(time.Unix(at, 0)) > CodeWindow {
		return nil, nil, false
	}
	return u, sess.Values, true
}

// showCodeStep answers GET /console/login/code.
func (c *Console) showCodeStep(ec echo.Context) error {
	if u, values, ok := c.pendingCode(ec); ok {
		return c.codeStep(ec, http.StatusOK, u, values, "")
	}
	return ec.Redirect(http.StatusSeeOther, RouteLogin+"?ended=1")
}

// codeStep shows the second step of u with status: the code of their app
// (a recovery code alone where a passkey is the way in), their passkey
// where they have one that may sign here, and, where neither is left,
// what to do.
func (c *Console) codeStep(ec echo.Context, status int, u *merchant.ConsoleUser, values map[any]any, problem string) error {
	csrf, _ := values["csrf"].(string)
	m := manage.ConsoleCode{ConsolePage: consoleviews.ConsolePage{Title: t(ec, "console.code.title"), Assets: c.Assets, CSRF: csrf}, Error: problem,
		Code: u.TwoStep, RecoveryOnly: u.TwoStep && c.passkeysOnly(u)}
	if u.Passkeys > 0 || c.passkeysRequired(u) {
		if m.PasskeysOff = c.passkeysOff(ec); m.PasskeysOff == "" && u.Passkeys > 0 {
			user, err := c.passkeyUserOf(ec, u.Email, "", nil)
			if err != nil {
				return err
			}
			m.Passkey = len(user.creds) > 0
		}
	}
	if m.Passkey {
		m.Scripts = []string{c.Assets.PasskeysJS}
	}
	if !m.Code && !m.Passkey {
		m.NoWay = t(ec, "console.code.noWay")
	}
	return render(ec, status, manage.ConsoleCodePage(m))
}

// checkCodeStep answers POST /console/login/code: a code of the person's
// authenticator, good once, or one of their recovery codes, good once. A
// code is reserved before it is checked (MaxWrongCodes a minute, on every
// instance); when they are spent the person's codes are locked, each lock
// longer than the last, and the sign-in starts again from the password.
func (c *Console) checkCodeStep(ec echo.Context) error {
	u, values, ok := c.pendingCode(ec)
	if !ok {
		return ec.Redirect(http.StatusSeeOther, RouteLogin+"?ended=1")
	}
	want, _ := values["csrf"].(string)
	if subtle.ConstantTimeCompare([]byte(ec.FormValue("csrf")), []byte(want)) != 1 {
		return &consoleError{status: http.StatusForbidden, key: "console.error.forbidden", err: errCSRF}
	}
	code := ec.FormValue("code")
	passkeyOnly := c.passkeysOnly(u)
	if !u.TwoStep || passkeyOnly && !settings.IsRecoveryCode(code) {
		// A passkey is the way in: a code of the app is not taken (nor
		// counted), a recovery code still is.
		return c.codeStep(ec, http.StatusUnprocessableEntity, u, values, t(ec, "console.code.passkeyOnly"))
	}
	ctx := ec.Request().Context()
	tries := c.codeTries(ec, u.Email)
	if ok, err := tries.reserve(); err != nil {
		return err
	} else if !ok {
		c.log(ec).Warn("console code refused: too many tries", "email", maskEmail(u.Email))
		return c.codesPaused(ec, u)
	}
	recovery, err := true, error(nil)
	if passkeyOnly {
		err = c.Settings.CheckRecoveryCode(ctx, u, code, c.Now())
	} else {
		recovery, err = c.Settings.CheckCode(ctx, u, code, c.Now())
	}
	switch {
	case errors.Is(err, settings.ErrWrongCode), errors.Is(err, settings.ErrCodeUsed):
		c.log(ec).Warn("console code refused", "email", maskEmail(u.Email), "reason", err.Error())
		if spent, err := tries.spent(); err != nil {
			return err
		} else if spent {
			return c.codesPaused(ec, u)
		}
		problem := t(ec, "console.code.wrong")
		if errors.Is(err, settings.ErrCodeUsed) {
			problem = t(ec, "console.code.used")
		}
		return c.codeStep(ec, http.StatusUnauthorized, u, values, problem)
	case err != nil:
		return err
	}
	// A whole sign-in: the person's past wrong codes and locks are
	// forgiven.
	if err := c.Ledger.ClearTries(ctx, codeKey(u.Email)); err != nil {
		return err
	}
	next, _ := values["next"].(string)
	u, act, next, err := c.acceptPendingInvitation(ec, u, values, next)
	if err != nil {
		return err
	}
	if err := c.startSession(ec, u, act); err != nil {
		return err
	}
	c.log(ec).Info("console sign-in with two steps", "email", maskEmail(u.Email), "recovery_code", recovery)
	if recovery {
		return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=recovery")
	}
	return ec.Redirect(http.StatusSeeOther, nextPage(next))
}

// codeLock is how long a person's codes are locked after the lock's
// strikes earlier ones: a minute, doubling each time, at most a day. A
// guesser who has the password gets about 60 codes a day, not 7,200.
func codeLock(strikes int) time.Duration {
	return min(FailureWindow<<min(strikes, 12), 24*time.Hour)
}

// pauseCodes locks the person's codes (unless they are locked already)
// and says until when; the request that starts a lock tells the person by
// e-mail, where there is mail.
func (c *Console) pauseCodes(ec echo.Context, u *merchant.ConsoleUser) (time.Time, error) {
	now := c.Now()
	started, until, err := c.Ledger.LockTries(ec.Request().Context(), codeKey(u.Email), now, codeLock)
	if err != nil {
		return until, err
	}
	ec.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(until.Sub(now), time.Second).Seconds()))))
	if started {
		c.log(ec).Warn("console: two-step codes locked after wrong codes", "email", maskEmail(u.Email), "until", until.UTC().Format(time.RFC3339))
		c.tellCodesPaused(ec, u, until)
	}
	return until, nil
}

// codesPaused locks the person's codes and ends the code step: the next
// sign-in starts from the password, once the lock is over.
func (c *Console) codesPaused(ec echo.Context, u *merchant.ConsoleUser) error {
	until, err := c.pauseCodes(ec, u)
	if err != nil {
		return err
	}
	return c.loginForm(ec, http.StatusTooManyRequests, consoleviews.ConsoleLogin{Email: u.Email,
		Error: t(ec, "console.code.paused", whenBare(localizerOf(ec), until))})
}

// tellCodesPaused e-mails the person, in their console's language, that
// wrong codes followed their password: whoever typed them knows it.
func (c *Console) tellCodesPaused(ec echo.Context, u *merchant.ConsoleUser, until time.Time) {
	if c.Mail == nil {
		return
	}
	l := i18n.Staff(i18n.StaffLanguage(u.Language, ""))
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ec.Request().Context()), 20*time.Second)
	defer cancel()
	body := l.T("console.code.pausedMailBody", l.DateTime(until), c.BaseURL+RouteAccount)
	if err := c.Mail.Send(sendCtx, u.Email, l.T("console.code.pausedMailSubject"), body); err != nil {
		c.log(ec).Warn("console: the two-step lock could not be e-mailed", "email", maskEmail(u.Email), "err", err)
	}
}

// teamRequiresTwoStep reports whether a team of the person requires
// two-step sign-in.
func teamRequiresTwoStep(u *merchant.ConsoleUser) bool {
	return slices.ContainsFunc(u.Memberships, func(m merchant.Membership) bool { return m.Merchant.RequireTwoStep })
}

// mustSetUpTwoStep reports whether the person's team requires two-step
// sign-in and they have neither an authenticator app nor a passkey, which
// meets it too.
func (c *Console) mustSetUpTwoStep(u *merchant.ConsoleUser) bool {
	return !u.TwoStep && !c.hasPasskeys(u) && teamRequiresTwoStep(u)
}

// secondStep reports whether a right password leads on to a second step
// before any session: the code of a person with two-step sign-in, the
// passkey of a person who has one (a passkey is a second step as strong as
// the app, and the password alone no longer does what it does), or either.
// A sign-in and an invitation accepted by a person who exists ask the
// same, through this.
//
// Where passkeys are off (BASE_URL on an IP address), it fails closed: a
// person with a passkey, and an operator whom the deployment's rule holds
// to one, still get no session from the password alone; the second step
// then takes the app's code or a recovery code (only a recovery code of
// an operator under the rule), and says what to do to one who has neither.
func (c *Console) secondStep(u *merchant.ConsoleUser) bool {
	return u.TwoStep || u.Passkeys > 0 || c.rp == nil && c.passkeysRequired(u)
}

// whileSettingUp are the pages a person whose team requires two-step
// sign-in (or an operator who must add a passkey) may use before they set
// it up.
var whileSettingUp = map[string]bool{RouteAccount: true, RouteTOTP: true, RouteTOTPConfirm: true, RouteLogout: true,
	RoutePasskeysBegin: true, RoutePasskeys: true, RoutePasskeyRemove: true}

// twoStepPassword is the field of the person's password on the forms that
// change their two-step sign-in.
const twoStepPassword = "twostep_password"

// beginTwoStep answers POST /console/account/totp: with the person's own
// password, a new secret, shown as text and as a QR code, and the form
// that confirms it with a code. A session alone cannot set up an
// authenticator.
func (c *Console) beginTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	if s.user.TwoStep {
		// A new secret replaces the old only after turning it off, which
		// takes the password and a code.
		return ec.Redirect(http.StatusSeeOther, RouteAccount)
	}
	if problem, status, err := c.ownPassword(ec, s.user, ec.FormValue(twoStepPassword)); err != nil {
		return err
	} else if problem != "" {
		return c.accountRefused(ec, status, twoStepPassword, problem, nil)
	}
	setup, err := c.Settings.BeginTwoStep(ec.Request().Context(), s.user.Email)
	if errors.Is(err, settings.ErrNoKeys) {
		return errNoKeys
	}
	if err != nil {
		return err
	}
	qr, err := web.QRSVG(setup.URL)
	if err != nil {
		return err
	}
	page, err := c.accountPage(ec)
	if err != nil {
		return err
	}
	page.Setup = &manage.ConsoleTwoStepSetup{Secret: setup.Secret, QR: qr}
	return render(ec, http.StatusOK, manage.ConsoleAccountPage(page))
}

// accountRefused shows the account page with a refusal under one field
// (and, while a secret is set up, that setup again).
func (c *Console) accountRefused(ec echo.Context, status int, field, problem string, setup *manage.ConsoleTwoStepSetup) error {
	page, err := c.accountPage(ec)
	if err != nil {
		return err
	}
	page.Setup = setup
	if setup != nil {
		setup.Error = problem
	} else {
		page.Errors = map[string]string{field: problem}
	}
	refused(&page.ConsolePage, map[string]string{field: problem})
	return render(ec, status, manage.ConsoleAccountPage(page))
}

// accountCode reserves one of the person's counted codes (the same count
// as the sign-in's code step, on every instance) before a code typed on the
// account page is checked, and checks it with check. It returns the
// refusal to show, with its status, or "" when the code was right; when
// the codes are spent they are locked as at sign-in.
func (c *Console) accountCode(ec echo.Context, u *merchant.ConsoleUser, check func() error) (string, int, error) {
	tries := c.codeTries(ec, u.Email)
	if ok, err := tries.reserve(); err != nil {
		return "", 0, err
	} else if !ok {
		until, err := c.pauseCodes(ec, u)
		return t(ec, "console.code.pausedHere", whenBare(localizerOf(ec), until)), http.StatusTooManyRequests, err
	}
	err := check()
	switch {
	case errors.Is(err, settings.ErrWrongCode), errors.Is(err, settings.ErrCodeUsed):
		c.log(ec).Warn("console: a wrong code on the account page", "email", maskEmail(u.Email))
		if spent, err := tries.spent(); err != nil {
			return "", 0, err
		} else if spent {
			until, err := c.pauseCodes(ec, u)
			return t(ec, "console.code.pausedHere", whenBare(localizerOf(ec), until)), http.StatusTooManyRequests, err
		}
		return "", http.StatusUnprocessableEntity, err
	case err != nil:
		// Not a code checked: the try is given back.
		return "", 0, errors.Join(err, tries.right())
	}
	return "", 0, tries.right()
}

// confirmTwoStep answers POST /console/account/totp/confirm: a right code
// turns two-step sign-in on, and the recovery codes are shown, once. The
// person's other sessions end.
func (c *Console) confirmTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	var codes []string
	problem, status, err := c.accountCode(ec, s.user, func() (err error) {
		codes, err = c.Settings.ConfirmTwoStep(ec.Request().Context(), s.user.Email, ec.FormValue("code"), c.Now())
		return err
	})
	switch {
	case errors.Is(err, settings.ErrNoPendingTwoStep):
		return ec.Redirect(http.StatusSeeOther, RouteAccount)
	case errors.Is(err, settings.ErrWrongCode), errors.Is(err, settings.ErrCodeUsed), problem != "":
		if problem == "" {
			problem = t(ec, "console.code.wrongSetup")
		}
		// The same secret stays: the person tries again with the next
		// code.
		setup := &manage.ConsoleTwoStepSetup{}
		if again, serr := settings.SetupFor(s.user.Email, ec.FormValue("secret")); serr == nil {
			setup.Secret = again.Secret
			setup.QR, _ = web.QRSVG(again.URL)
		}
		return c.accountRefused(ec, status, "code", problem, setup)
	case err != nil:
		return err
	}
	if err := c.endOthers(ec, s); err != nil {
		return err
	}
	c.log(ec).Info("console: two-step sign-in turned on", "email", maskEmail(s.user.Email))
	page, err := c.accountPage(ec)
	if err != nil {
		return err
	}
	page.TwoStep, page.RecoveryCodes, page.RecoveryLeft = true, codes, len(codes)
	page.Notice = t(ec, "console.twoStep.on")
	return render(ec, http.StatusOK, manage.ConsoleAccountPage(page))
}

// endTwoStep answers POST /console/account/totp/off: the person's password
// and a right code turn two-step sign-in off; their other sessions end.
func (c *Console) endTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	if problem, status, err := c.ownPassword(ec, s.user, ec.FormValue(twoStepPassword)); err != nil {
		return err
	} else if problem != "" {
		return c.accountRefused(ec, status, twoStepPassword, problem, nil)
	}
	problem, status, err := c.accountCode(ec, s.user, func() error {
		return c.Settings.EndTwoStep(ec.Request().Context(), s.user, ec.FormValue("code"), c.Now())
	})
	switch {
	case errors.Is(err, settings.ErrWrongCode), errors.Is(err, settings.ErrCodeUsed):
		return c.accountRefused(ec, status, "code", t(ec, "console.code.wrong"), nil)
	case err != nil:
		return err
	case problem != "":
		return c.accountRefused(ec, status, "code", problem, nil)
	}
	if err := c.endOthers(ec, s); err != nil {
		return err
	}
	c.log(ec).Info("console: two-step sign-in turned off", "email", maskEmail(s.user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=off")
}

// requireTwoStep answers POST /console/team/require-two-step: on or off
// for the whole team.
func (c *Console) requireTwoStep(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	on := ec.FormValue("require") == "on"
	err = c.Settings.RequireTwoStep(ec.Request().Context(), actor(ec), m.ID, on)
	if errors.Is(err, settings.ErrManagedByFile) {
		return errManagedByFile
	}
	if err != nil {
		return err
	}
	done := "required"
	if !on {
		done = "notRequired"
	}
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteTeam, m, options, url.Values{"done": {done}}))
}

// acceptPendingInvitation accepts the invitation a sign-in's first step
// carried (values["invite"]), now that its second step is done: the person
// then acts for the team they joined and starts on its overview. Without
// one, u, no team and next come back as they were.
func (c *Console) acceptPendingInvitation(ec echo.Context, u *merchant.ConsoleUser, values map[any]any, next string) (*merchant.ConsoleUser, string, string, error) {
	token, _ := values["invite"].(string)
	if token == "" {
		return u, "", next, nil
	}
	inv, err := c.joinTeam(ec, token, "", true)
	if err != nil {
		return nil, "", "", err
	}
	joined, ok := c.Merchants.ConsoleUser(u.Email)
	if !ok {
		return nil, "", "", errors.New("console: an accepted invitation's person is not in the settings")
	}
	return joined, inv.MerchantID, RouteOverview, nil
}
