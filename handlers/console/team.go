package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/settings"
	consoleviews "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of the team's consoleviews. Members are named by their e-mail,
// path-escaped.
const (
	RouteTeam         = "/console/team"
	RouteInvite       = "/console/team/invite"
	RouteMemberRole   = "/console/team/:member/role"
	RouteMemberOut    = "/console/team/:member/remove"
	RouteAccept       = "/console/invite/:token"
	RouteRevoke       = "/console/team/invitations/revoke"
	RouteResetTwoStep = "/console/team/:member/reset-two-step"
)

var (
	errNotOnTeam = &consoleError{status: http.StatusNotFound, key: "console.error.notOnTeam", err: settings.ErrNotOnTeam}
)

// showTeam answers GET /console/team: the members with their role, two-step
// state and last sign-in, the invitations not yet used, and the form that
// invites someone.
func (c *Console) showTeam(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	page, err := c.teamPage(ec, m, options, manage.ConsoleInviteForm{Role: string(merchant.Viewer)})
	if err != nil {
		return err
	}
	switch ec.QueryParam("done") {
	case "role":
		page.Notice = t(ec, "console.team.roleChanged", ec.QueryParam("who"))
	case "removed":
		page.Notice = t(ec, "console.team.removed", ec.QueryParam("who"))
	case "revoked":
		page.Notice = t(ec, "console.team.revoked", ec.QueryParam("who"))
	case "reset":
		page.Notice = t(ec, "console.team.twoStepReset", ec.QueryParam("who"))
	case "required":
		page.Notice = t(ec, "console.team.required")
	case "notRequired":
		page.Notice = t(ec, "console.team.notRequired")
	}
	return render(ec, http.StatusOK, manage.ConsoleTeamPage(page))
}

func (c *Console) teamPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, form manage.ConsoleInviteForm) (manage.ConsoleTeam, error) {
	ctx := ec.Request().Context()
	seen, err := c.Ledger.LastSignIns(ctx)
	if err != nil {
		return manage.ConsoleTeam{}, err
	}
	pending, err := c.Ledger.PendingInvitations(ctx, m.ID, c.Now())
	if err != nil {
		return manage.ConsoleTeam{}, err
	}
	page := manage.ConsoleTeam{
		ConsolePage: c.frame(ec, t(ec, "console.team"), "team"),
		Merchants:   options, MerchantID: m.ID, Name: m.Name, ReadOnly: m.ReadOnly(),
		Invite: form, RequireTwoStep: m.RequireTwoStep,
	}
	for _, r := range merchant.Roles {
		page.Roles = append(page.Roles, consoleviews.ConsoleOption{Value: string(r), Label: t(ec, "console.role."+string(r))})
	}
	me := strings.ToLower(sessionOf(ec).user.Email)
	for _, u := range c.Merchants.ConsoleUsers() {
		role, ok := u.RoleAt(m.ID)
		if !ok {
			continue
		}
		email := strings.ToLower(u.Email)
		last := t(ec, "console.team.never")
		if at := seen[email]; !at.IsZero() {
			last = when(localizerOf(ec), at)
		}
		q := ""
		if options != nil {
			q = "?merchant=" + url.QueryEscape(m.ID)
		}
		page.Members = append(page.Members, manage.ConsoleMember{
			Email: email, Role: string(role), RoleLabel: t(ec, "console.role."+string(role)),
			TwoStep: twoStepSaid(ec, u), LastSignIn: last, You: email == me,
			RoleURL:   templ.SafeURL(RouteTeam + "/" + url.PathEscape(email) + "/role" + q),
			RemoveURL: templ.SafeURL(RouteTeam + "/" + url.PathEscape(email) + "/remove" + q),
			// Only an operator recovers a person who lost their
			// authenticator, never a teammate.
			ResetURL: resetURL(sessionOf(ec).user.Operator && (u.TwoStep || u.Passkeys > 0) && !u.Operator, RouteTeam+"/"+url.PathEscape(email)+"/reset-two-step"+q),
		})
	}
	for _, inv := range pending {
		page.Pending = append(page.Pending, manage.ConsolePending{Email: inv.Email, Role: t(ec, "console.role."+inv.Role), Expires: when(localizerOf(ec), inv.Expires)})
	}
	return page, nil
}

// invite answers POST /console/team/invite: an invitation link valid 72
// hours, shown once to the inviter to pass on.
func (c *Console) invite(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	form := manage.ConsoleInviteForm{Email: ec.FormValue("email"), Role: ec.FormValue("role")}
	inv, err := c.Settings.Invite(ec.Request().Context(), actor(ec), m.ID, form.Email, form.Role, c.Now())
	var fe *merchant.FieldError
	switch {
	case errors.As(err, &fe):
		form.Errors = map[string]string{fe.Field: reasonOf(ec, fe)}
		page, perr := c.teamPage(ec, m, options, form)
		if perr != nil {
			return perr
		}
		refused(&page.ConsolePage, form.Errors)
		return render(ec, http.StatusUnprocessableEntity, manage.ConsoleTeamPage(page))
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: invitation made", "merchant", m.ID, "email", maskEmail(inv.Email), "role", inv.Role)
	page, err := c.teamPage(ec, m, options, manage.ConsoleInviteForm{Role: string(merchant.Viewer)})
	if err != nil {
		return err
	}
	page.Notice = t(ec, "console.team.invited", inv.Email, t(ec, "console.role."+string(inv.Role)))
	page.Link = c.BaseURL + strings.Replace(RouteAccept, ":token", inv.Token, 1)
	page.LinkExpires = when(localizerOf(ec), inv.Expires)
	if c.Mail != nil {
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ec.Request().Context()), 20*time.Second)
		defer cancel()
		body := t(ec, "console.invite.mailBody", m.Name, t(ec, "console.role."+string(inv.Role)), whenBare(localizerOf(ec), inv.Expires), page.Link)
		if err := c.Mail.Send(sendCtx, inv.Email, t(ec, "console.invite.mailSubject", m.Name), body); err != nil {
			// The link is still shown, to pass on by hand; the log never
			// holds it.
			c.log(ec).Warn("console: the invitation could not be e-mailed", "merchant", m.ID, "email", maskEmail(inv.Email), "err", err)
			page.Notice += " " + t(ec, "console.team.mailFailed")
		} else {
			page.Notice += " " + t(ec, "console.team.mailed")
		}
	}
	return render(ec, http.StatusOK, manage.ConsoleTeamPage(page))
}

// teamChange answers the member's role and remove forms.
func (c *Console) teamChange(change func(ec echo.Context, merchantID, email string) error, done string) echo.HandlerFunc {
	return func(ec echo.Context) error {
		m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
		if err != nil {
			return err
		}
		email, err := url.PathUnescape(ec.Param("member"))
		if err != nil {
			return errNotFound
		}
		if done == "removed" {
			if ok, err := c.confirmed(ec, t(ec, "console.team"), t(ec, "console.confirm.remove", strings.ToLower(email)),
				t(ec, "console.confirm.remove.text"), t(ec, "console.confirm.remove.yes"), pageFor(RouteTeam, m, options, nil)); !ok {
				return err
			}
		}
		err = change(ec, m.ID, email)
		var fe *merchant.FieldError
		switch {
		case errors.As(err, &fe):
			return &consoleError{status: http.StatusUnprocessableEntity, key: "console.error.badRole", err: err, args: []any{roleNames(ec)}}
		case errors.Is(err, settings.ErrLastOwner):
			// Said on the team page, beside the roles that make someone
			// else owner: the way forward, never a page of its own.
			page, perr := c.teamPage(ec, m, options, manage.ConsoleInviteForm{Role: string(merchant.Viewer)})
			if perr != nil {
				return perr
			}
			page.Notice, page.NoticeError = t(ec, "console.error.lastOwner.text"), true
			return render(ec, http.StatusConflict, manage.ConsoleTeamPage(page))
		case errors.Is(err, settings.ErrNotOnTeam):
			return errNotOnTeam
		case errors.Is(err, settings.ErrManagedByFile):
			return errManagedByFile
		case err != nil:
			return err
		}
		return ec.Redirect(http.StatusSeeOther, pageFor(RouteTeam, m, options, url.Values{"done": {done}, "who": {strings.ToLower(email)}}))
	}
}

func resetURL(may bool, to string) templ.SafeURL {
	if !may {
		return ""
	}
	return templ.SafeURL(to)
}

// resetTwoStep answers POST /console/team/{member}/reset-two-step, for
// operators: the person's two-step sign-in is off, their wrong codes
// forgotten, and they set it up again after signing in with their password.
func (c *Console) resetTwoStep(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	email, err := url.PathUnescape(ec.Param("member"))
	if err != nil {
		return errNotFound
	}
	u, ok := c.Merchants.ConsoleUser(email)
	if !ok || u.Operator {
		// Operators are recovered with the command line's operator add.
		return errNotOnTeam
	}
	if _, member := u.RoleAt(m.ID); !member {
		return errNotOnTeam
	}
	switch err := c.Settings.ResetTwoStep(ec.Request().Context(), actor(ec), email); {
	case errors.Is(err, settings.ErrNoTwoStep):
		return ec.Redirect(http.StatusSeeOther, pageFor(RouteTeam, m, options, nil))
	case err != nil:
		return err
	}
	if err := c.Ledger.ClearTries(ec.Request().Context(), codeKey(email)); err != nil {
		return err
	}
	// Whoever holds a session of theirs now loses it: the person signs in
	// again with their password, and sets up a new authenticator.
	if err := c.endSessionsOf(ec, email); err != nil {
		return err
	}
	c.log(ec).Info("console: two-step sign-in reset by an operator", "email", maskEmail(email), "merchant", m.ID)
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteTeam, m, options, url.Values{"done": {"reset"}, "who": {strings.ToLower(email)}}))
}

// twoStepSaid is how a member signs in past their password: off, the app,
// a passkey, or both.
func twoStepSaid(ec echo.Context, u *merchant.ConsoleUser) string {
	switch {
	case u.TwoStep && u.Passkeys > 0:
		return t(ec, "console.team.twoStepBoth")
	case u.Passkeys > 0:
		return t(ec, "console.team.twoStepPasskey")
	case u.TwoStep:
		return t(ec, "console.team.twoStepOn")
	}
	return t(ec, "console.team.twoStepOff")
}

func (c *Console) setRole(ec echo.Context, merchantID, email string) error {
	return c.Settings.SetRole(ec.Request().Context(), actor(ec), merchantID, email, ec.FormValue("role"))
}

func (c *Console) removeMember(ec echo.Context, merchantID, email string) error {
	return c.Settings.RemoveMember(ec.Request().Context(), actor(ec), merchantID, email)
}

// showInvitation answers GET /console/invite/{token}: the form that joins
// the team, or why the link no longer works.
func (c *Console) showInvitation(ec echo.Context) error {
	inv, err := c.Settings.Invitation(ec.Request().Context(), ec.Param("token"), c.Now())
	if err != nil {
		return c.invitationGone(ec, err)
	}
	return c.invitationForm(ec, http.StatusOK, c.invitationModel(ec, inv))
}

func (c *Console) invitationModel(ec echo.Context, inv ledger.Invitation) manage.ConsoleInvitation {
	m := manage.ConsoleInvitation{Email: inv.Email, Role: t(ec, "console.role."+inv.Role)}
	if shop, ok := c.Merchants.Get(inv.MerchantID); ok {
		m.Shop = shop.Name
	}
	// Anyone the settings hold is themselves, on a team or on none any
	// more: their own password, never one the link's holder chooses.
	_, m.Existing = c.Merchants.Person(inv.Email)
	return m
}

// invitationGone says why an invitation's link no longer works: used,
// withdrawn, expired, unknown, or no longer good for its team, each with
// its way forward.
func (c *Console) invitationGone(ec echo.Context, err error) error {
	key, status := "console.invite.unknown", http.StatusNotFound
	switch {
	case errors.Is(err, settings.ErrInvitationUsed):
		key, status = "console.invite.used", http.StatusGone
	case errors.Is(err, settings.ErrInvitationExpired):
		key, status = "console.invite.expired", http.StatusGone
	case errors.Is(err, settings.ErrInvitationWithdrawn), errors.Is(err, settings.ErrInviterGone):
		key, status = "console.invite.withdrawn", http.StatusGone
	case errors.Is(err, settings.ErrAlreadyOnTeam):
		key, status = "console.invite.onTeam", http.StatusConflict
	case !errors.Is(err, settings.ErrNoInvitation):
		return err
	}
	return &consoleError{status: status, key: key, err: err}
}

// invitationForm renders the form under a pre-session holding its CSRF
// token, as the sign-in form does.
func (c *Console) invitationForm(ec echo.Context, status int, m manage.ConsoleInvitation) error {
	sess, _ := c.store.New(ec.Request(), cookieName)
	sess.Values = map[any]any{"csrf": randomToken()}
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	m.ConsolePage = consoleviews.ConsolePage{Title: t(ec, "console.invite.title"), Assets: c.Assets, CSRF: sess.Values["csrf"].(string)}
	refused(&m.ConsolePage, m.Errors)
	m.Action = templ.SafeURL(strings.Replace(RouteAccept, ":token", url.PathEscape(ec.Param("token")), 1))
	return render(ec, status, manage.ConsoleInvitationPage(m))
}

// acceptInvitation answers POST /console/invite/{token}: a new person sets
// a password; one the settings hold gives their own, and then, when they
// sign in with two steps, their code, exactly as a sign-in asks. Only then
// do they join the team, once, and are signed in.
func (c *Console) acceptInvitation(ec echo.Context) error {
	token := ec.Param("token")
	inv, err := c.Settings.Invitation(ec.Request().Context(), token, c.Now())
	if err != nil {
		return c.invitationGone(ec, err)
	}
	m := c.invitationModel(ec, inv)
	pre, err := c.store.Get(ec.Request(), cookieName)
	want, _ := pre.Values["csrf"].(string)
	if err != nil || want == "" || subtle.ConstantTimeCompare([]byte(ec.FormValue("csrf")), []byte(want)) != 1 {
		m.Error = t(ec, "console.login.expired")
		return c.invitationForm(ec, http.StatusForbidden, m)
	}
	pw, again := ec.FormValue("password"), ec.FormValue("password_again")
	if m.Existing {
		u, _ := c.Merchants.Person(inv.Email)
		if problem, status, err := c.ownPassword(ec, u, pw); err != nil {
			return err
		} else if problem != "" {
			m.Errors = map[string]string{"password": problem}
			return c.invitationForm(ec, status, m)
		}
		if c.secondStep(u) {
			// The code (or the passkey) comes next, as at sign-in; the
			// invitation is accepted once it is right.
			return c.askForCode(ec, u, "", token)
		}
		err := c.joinAndSignIn(ec, token, "")
		if errors.Is(err, settings.ErrCodeNeeded) {
			// Turned on meanwhile, on another instance.
			if u, _ := c.Merchants.Person(inv.Email); c.secondStep(u) {
				return c.askForCode(ec, u, "", token)
			}
		}
		return err
	}
	if err := password.CheckNew(pw); err != nil {
		m.Errors = map[string]string{"password": reasonOf(ec, err)}
		return c.invitationForm(ec, http.StatusUnprocessableEntity, m)
	}
	if pw != again {
		m.Errors = map[string]string{"password_again": t(ec, "console.invite.mismatch")}
		return c.invitationForm(ec, http.StatusUnprocessableEntity, m)
	}
	phc, err := c.hashPassword(ec, pw)
	if err != nil {
		return err
	}
	return c.joinAndSignIn(ec, token, phc)
}

// joinAndSignIn accepts the invitation and signs its person in, acting for
// the merchant that invited them.
func (c *Console) joinAndSignIn(ec echo.Context, token, phc string) error {
	inv, err := c.joinTeam(ec, token, phc, false)
	if err != nil {
		return err
	}
	u, ok := c.Merchants.ConsoleUser(inv.Email)
	if !ok {
		return errors.New("console: an accepted invitation's person is not in the settings")
	}
	if err := c.startSession(ec, u, inv.MerchantID); err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteOverview)
}

// joinTeam accepts an invitation (phc: a new person's password hash, ""
// for a person the settings hold; codeChecked: their two-step code was
// right), or says why it no longer can.
func (c *Console) joinTeam(ec echo.Context, token, phc string, codeChecked bool) (ledger.Invitation, error) {
	inv, err := c.Settings.Accept(ec.Request().Context(), token, phc, codeChecked, c.Now())
	if errors.Is(err, settings.ErrCodeNeeded) {
		return inv, err
	}
	if errors.Is(err, settings.ErrPersonExists) {
		// Someone made the account meanwhile: their own password is asked.
		return inv, &consoleError{status: http.StatusConflict, key: "console.invite.used", err: err}
	}
	if err != nil {
		return inv, c.invitationGone(ec, err)
	}
	c.log(ec).Info("console: invitation accepted", "merchant", inv.MerchantID, "email", maskEmail(inv.Email), "role", inv.Role)
	return inv, nil
}

// revokeInvitation answers POST /console/team/invitations/revoke: the live
// invitation of the form's e-mail stops working, on every instance.
func (c *Console) revokeInvitation(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	email := strings.ToLower(strings.TrimSpace(ec.FormValue("email")))
	switch err := c.Settings.RevokeInvitation(ec.Request().Context(), actor(ec), m.ID, email); {
	case errors.Is(err, settings.ErrNoInvitation):
		return &consoleError{status: http.StatusNotFound, key: "console.error.noInvitation", err: err}
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: invitation revoked", "merchant", m.ID, "email", maskEmail(email))
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteTeam, m, options, url.Values{"done": {"revoked"}, "who": {email}}))
}
