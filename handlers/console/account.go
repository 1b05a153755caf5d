package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of a person's own account.
const (
	RouteAccount         = "/console/account"
	RouteAccountPassword = "/console/account/password"
	RouteAccountSessions = "/console/account/sessions"
	RouteAccountLanguage = "/console/account/language"
)

// chooseLanguage answers POST /console/account/language: the console
// speaks the language chosen to this person from now on, on every
// instance ("" follows their browser's again), and the page they chose it
// on comes back in it.
func (c *Console) chooseLanguage(ec echo.Context) error {
	lang := ec.FormValue("language")
	known := lang == ""
	for _, ch := range i18n.StaffChoices() {
		known = known || ch.Code == lang
	}
	if !known {
		return &consoleError{status: http.StatusBadRequest, key: "console.error.language", err: fmt.Errorf("language %q", lang)}
	}
	s := sessionOf(ec)
	if err := c.Settings.SetLanguage(ec.Request().Context(), actor(ec), s.user.Email, lang); err != nil {
		return err
	}
	back := ec.FormValue("back")
	if !strings.HasPrefix(back, "/console") || strings.HasPrefix(back, "//") {
		back = RouteAccount
	}
	return ec.Redirect(http.StatusSeeOther, back)
}

// showAccount answers GET /console/account: the person's password and
// their sessions.
func (c *Console) showAccount(ec echo.Context) error {
	page, err := c.accountPage(ec)
	if err != nil {
		return err
	}
	switch ec.QueryParam("done") {
	case "password":
		page.Notice = t(ec, "console.account.passwordChanged")
	case "others":
		page.Notice = t(ec, "console.account.othersEnded")
	case "off":
		page.Notice = t(ec, "console.twoStep.off")
	case "recovery":
		page.Notice = t(ec, "console.twoStep.recoveryUsed")
	case "passkey-added":
		page.Notice = t(ec, "console.passkeys.added")
	case "passkey-removed":
		page.Notice = t(ec, "console.passkeys.removed")
	}
	return render(ec, http.StatusOK, manage.ConsoleAccountPage(page))
}

func (c *Console) accountPage(ec echo.Context) (manage.ConsoleAccount, error) {
	s := sessionOf(ec)
	page := manage.ConsoleAccount{ConsolePage: c.frame(ec, t(ec, "console.account"), "account"), Email: s.user.Email,
		FromFile: s.user.Managed == merchant.ManagedByFile, TwoStep: s.user.TwoStep, MustSetUp: c.mustSetUpTwoStep(s.user)}
	if c.rp != nil {
		page.Scripts = []string{c.Assets.PasskeysJS}
	}
	if s.user.TwoStep {
		left, err := c.Ledger.RecoveryCodesLeft(ec.Request().Context(), s.user.Email)
		if err != nil {
			return page, err
		}
		page.RecoveryLeft = left
	}
	passkeys, err := c.passkeysOfAccount(ec, s.user.Email)
	if err != nil {
		return page, err
	}
	passkeys.CSRF, passkeys.MustAdd = s.csrf, c.mustAddPasskey(s.user)
	page.Passkeys = passkeys
	list, err := c.Ledger.Sessions(ec.Request().Context(), s.user.Email, c.Now())
	if err != nil {
		return page, err
	}
	for _, x := range list {
		page.Sessions = append(page.Sessions, manage.ConsoleSession{Device: deviceSaid(ec, x.Device), Address: x.Address,
			Seen: when(localizerOf(ec), x.Seen), Since: when(localizerOf(ec), x.Created), Current: x.ID == s.id})
	}
	return page, nil
}

// changePassword answers POST /console/account/password: the current
// password first, then the new one twice. Every other session of the
// person ends, on every instance; this one goes on under the new password.
func (c *Console) changePassword(ec echo.Context) error {
	s := sessionOf(ec)
	ctx := ec.Request().Context()
	refuse := func(status int, field, reason string) error {
		page, err := c.accountPage(ec)
		if err != nil {
			return err
		}
		page.Errors = map[string]string{field: reason}
		refused(&page.ConsolePage, page.Errors)
		return render(ec, status, manage.ConsoleAccountPage(page))
	}
	if problem, status, err := c.ownPassword(ec, s.user, ec.FormValue("current")); err != nil {
		return err
	} else if problem != "" {
		return refuse(status, "current", problem)
	}
	pw := ec.FormValue("password")
	if err := password.CheckNew(pw); err != nil {
		return refuse(http.StatusUnprocessableEntity, "password", reasonOf(ec, err))
	}
	if pw != ec.FormValue("password_again") {
		return refuse(http.StatusUnprocessableEntity, "password_again", t(ec, "console.invite.mismatch"))
	}
	phc, err := c.hashPassword(ec, pw)
	if err != nil {
		return err
	}
	if err := c.Settings.SetPassword(ctx, s.user.Email, phc); errors.Is(err, settings.ErrManagedByFile) {
		return errManagedByFile
	} else if err != nil {
		return err
	}
	u, ok := c.Merchants.ConsoleUser(s.user.Email)
	if !ok {
		return errors.New("console: a person whose password changed is not in the settings")
	}
	// This session ends with the old password; a new one goes on.
	if err := c.Ledger.SignedOut(ctx, s.id, s.start.Add(MaxSession)); err != nil {
		return err
	}
	act := ""
	if s.merchant != nil {
		act = s.merchant.ID
	}
	if err := c.startSession(ec, u, act); err != nil {
		return err
	}
	c.log(ec).Info("console: password changed", "email", maskEmail(u.Email))
	return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=password")
}

// endOtherSessions answers POST /console/account/sessions: every session of
// the person but this one ends, on every instance.
func (c *Console) endOtherSessions(ec echo.Context) error {
	s := sessionOf(ec)
	if err := c.endOthers(ec, s); err != nil {
		return err
	}
	c.log(ec).Info("console: other sessions ended", "email", maskEmail(s.user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteAccount+"?done=others")
}

// endOthers ends every session of s's person but s, on every instance: a
// stolen session does not outlive a change to how the person signs in.
func (c *Console) endOthers(ec echo.Context, s *session) error {
	return c.endSessions(ec, s.user.Email, s.id)
}

// endSessionsOf ends every session of a person, on every instance.
func (c *Console) endSessionsOf(ec echo.Context, email string) error {
	return c.endSessions(ec, email, "")
}

func (c *Console) endSessions(ec echo.Context, email, keep string) error {
	ctx := ec.Request().Context()
	list, err := c.Ledger.Sessions(ctx, email, c.Now())
	if err != nil {
		return err
	}
	for _, x := range list {
		if x.ID == keep {
			continue
		}
		if err := c.Ledger.SignedOut(ctx, x.ID, x.Ends); err != nil {
			return err
		}
	}
	return nil
}
