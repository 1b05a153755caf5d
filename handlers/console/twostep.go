package console

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	pages "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of two-step sign-in (DESIGN.md section 11).
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
// password was right, and sends them to the code step.
func (c *Console) askForCode(ec echo.Context, u *merchant.ConsoleUser, next string) error {
	sess, _ := c.store.New(ec.Request(), cookieName)
	sess.Values = map[any]any{"csrf": randomToken(), "pending": strings.ToLower(u.Email), "pw": fingerprint(u),
		"at": c.Now().Unix(), "next": next}
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteLoginCode)
}

// pendingCode is the person whose password this browser gave, while the
// code step is open: CodeWindow, the same password.
func (c *Console) pendingCode(ec echo.Context) (*merchant.ConsoleUser, map[any]any, bool) {
	sess, err := c.store.Get(ec.Request(), cookieName)
	if err != nil {
		return nil, nil, false
	}
	email, _ := sess.Values["pending"].(string)
	pw, _ := sess.Values["pw"].(string)
	at, _ := sess.Values["at"].(int64)
	u, ok := c.Merchants.ConsoleUser(email)
	if email == "" || !ok || !u.TwoStep || pw != fingerprint(u) || c.Now().Sub(time.Unix(at, 0)) > CodeWindow {
		return nil, nil, false
	}
	return u, sess.Values, true
}

// showCodeStep answers GET /console/login/code.
func (c *Console) showCodeStep(ec echo.Context) error {
	if _, values, ok := c.pendingCode(ec); ok {
		return render(ec, http.StatusOK, manage.ConsoleCodePage(c.codeModel(ec, values, "")))
	}
	return ec.Redirect(http.StatusSeeOther, RouteLogin+"?ended=1")
}

func (c *Console) codeModel(ec echo.Context, values map[any]any, problem string) manage.ConsoleCode {
	csrf, _ := values["csrf"].(string)
	return manage.ConsoleCode{ConsolePage: pages.ConsolePage{Title: t(ec, "console.code.title"), Assets: c.Assets, CSRF: csrf}, Error: problem}
}

// checkCodeStep answers POST /console/login/code: a code of the person's
// authenticator, good once, or one of their recovery codes, good once. Past
// MaxWrongCodes a minute every code is refused unchecked.
func (c *Console) checkCodeStep(ec echo.Context) error {
	u, values, ok := c.pendingCode(ec)
	if !ok {
		return ec.Redirect(http.StatusSeeOther, RouteLogin+"?ended=1")
	}
	want, _ := values["csrf"].(string)
	if subtle.ConstantTimeCompare([]byte(ec.FormValue("csrf")), []byte(want)) != 1 {
		return &consoleError{status: http.StatusForbidden, key: "console.error.forbidden", err: errCSRF}
	}
	ctx := ec.Request().Context()
	tries := c.codeTries(ec, u.Email)
	if over, err := tries.exhausted(MaxWrongCodes); err != nil {
		return err
	} else if over {
		c.log(ec).Warn("console code refused: too many tries", "email", maskEmail(u.Email))
		return render(ec, http.StatusTooManyRequests, manage.ConsoleCodePage(c.codeModel(ec, values, t(ec, "console.login.tooMany"))))
	}
	recovery, err := c.Settings.CheckCode(ctx, u, ec.FormValue("code"), c.Now())
	switch {
	case errors.Is(err, settings.ErrWrongCode), errors.Is(err, settings.ErrCodeUsed):
		if err := tries.refused(); err != nil {
			return err
		}
		c.log(ec).Warn("console code refused", "email", maskEmail(u.Email), "reason", err.Error())
		problem := t(ec, "console.code.wrong")
		if errors.Is(err, settings.ErrCodeUsed) {
			problem = t(ec, "console.code.used")
		}
		return render(ec, http.StatusUnauthorized, manage.ConsoleCodePage(c.codeModel(ec, values, problem)))
	case err != nil:
		return err
	}
	next, _ := values["next"].(string)
	if err := c.startSession(ec, u, ""); err != nil {
		return err
	}
	c.log(ec).Info("console sign-in with two steps", "email", maskEmail(u.Email), "recovery_code", recovery)
	if recovery {
		return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=recovery")
	}
	return ec.Redirect(http.StatusSeeOther, nextPage(next))
}

// mustSetUpTwoStep reports whether the person's team requires two-step
// sign-in and they have none.
func mustSetUpTwoStep(u *merchant.ConsoleUser) bool {
	if u.TwoStep {
		return false
	}
	return slices.ContainsFunc(u.Memberships, func(m merchant.Membership) bool { return m.Merchant.RequireTwoStep })
}

// whileSettingUp are the pages a person whose team requires two-step
// sign-in may use before they set it up.
var whileSettingUp = map[string]bool{RouteAccount: true, RouteTOTP: true, RouteTOTPConfirm: true, RouteLogout: true}

// beginTwoStep answers POST /console/account/totp: a new secret, shown as
// text and as a QR code, and the form that confirms it with a code.
func (c *Console) beginTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	if s.user.TwoStep {
		// A new secret replaces the old only after turning it off, which
		// takes a code: a session alone cannot swap the authenticator.
		return ec.Redirect(http.StatusSeeOther, RouteAccount)
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

// confirmTwoStep answers POST /console/account/totp/confirm: a right code
// turns two-step sign-in on, and the recovery codes are shown, once.
func (c *Console) confirmTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	codes, err := c.Settings.ConfirmTwoStep(ec.Request().Context(), s.user.Email, ec.FormValue("code"), c.Now())
	switch {
	case errors.Is(err, settings.ErrNoPendingTwoStep):
		return ec.Redirect(http.StatusSeeOther, RouteAccount)
	case errors.Is(err, settings.ErrWrongCode):
		// The same secret stays: the person tries again with the next
		// code.
		page, perr := c.accountPage(ec)
		if perr != nil {
			return perr
		}
		page.Setup = &manage.ConsoleTwoStepSetup{Error: t(ec, "console.code.wrongSetup")}
		if again, serr := settings.SetupFor(s.user.Email, ec.FormValue("secret")); serr == nil {
			page.Setup.Secret = again.Secret
			page.Setup.QR, _ = web.QRSVG(again.URL)
		}
		return render(ec, http.StatusUnprocessableEntity, manage.ConsoleAccountPage(page))
	case err != nil:
		return err
	}
	c.log(ec).Info("console: two-step sign-in turned on", "email", maskEmail(s.user.Email))
	// The person's hash did not change: their session goes on.
	page, err := c.accountPage(ec)
	if err != nil {
		return err
	}
	page.TwoStep, page.RecoveryCodes = true, codes
	page.Notice = t(ec, "console.twoStep.on")
	return render(ec, http.StatusOK, manage.ConsoleAccountPage(page))
}

// endTwoStep answers POST /console/account/totp/off: a right code turns
// two-step sign-in off.
func (c *Console) endTwoStep(ec echo.Context) error {
	s := sessionOf(ec)
	err := c.Settings.EndTwoStep(ec.Request().Context(), s.user, ec.FormValue("code"), c.Now())
	if errors.Is(err, settings.ErrWrongCode) || errors.Is(err, settings.ErrCodeUsed) {
		page, perr := c.accountPage(ec)
		if perr != nil {
			return perr
		}
		page.Errors = map[string]string{"code": t(ec, "console.code.wrong")}
		return render(ec, http.StatusUnprocessableEntity, manage.ConsoleAccountPage(page))
	}
	if err != nil {
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
