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
	pages "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of the team (DESIGN.md section 11). Members are named by their
// e-mail, path-escaped.
const (
	RouteTeam       = "/console/team"
	RouteInvite     = "/console/team/invite"
	RouteMemberRole = "/console/team/:member/role"
	RouteMemberOut  = "/console/team/:member/remove"
	RouteAccept     = "/console/invite/:token"
)

var (
	errLastOwner = &consoleError{status: http.StatusConflict, key: "console.error.lastOwner", err: settings.ErrLastOwner}
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
	case "required":
		page.Notice = t(ec, "console.team.required")
	case "notRequired":
		page.Notice = t(ec, "console.team.notRequired")
	}
	return render(ec, http.StatusOK, manage.ConsoleTeamPage(page))
}

func (c *Console) teamPage(ec echo.Context, m *merchant.Merchant, options []pages.ConsoleOption, form manage.ConsoleInviteForm) (manage.ConsoleTeam, error) {
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
		page.Roles = append(page.Roles, pages.ConsoleOption{Value: string(r), Label: t(ec, "console.role."+string(r))})
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
			TwoStep: twoStepWord(ec, u.TwoStep), LastSignIn: last, You: email == me,
			RoleURL:   templ.SafeURL(RouteTeam + "/" + url.PathEscape(email) + "/role" + q),
			RemoveURL: templ.SafeURL(RouteTeam + "/" + url.PathEscape(email) + "/remove" + q),
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
		page.Notice, page.NoticeError = t(ec, "console.form.fix"), true
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
		body := t(ec, "console.invite.mailBody", m.Name, t(ec, "console.role."+string(inv.Role)), page.LinkExpires, page.Link)
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
		err = change(ec, m.ID, email)
		var fe *merchant.FieldError
		switch {
		case errors.As(err, &fe):
			return &consoleError{status: http.StatusUnprocessableEntity, key: "console.error.badRole", err: err, args: []any{roleNames(ec)}}
		case errors.Is(err, settings.ErrLastOwner):
			return errLastOwner
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

func twoStepWord(ec echo.Context, on bool) string {
	if on {
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
	_, m.Existing = c.Merchants.ConsoleUser(inv.Email)
	return m
}

// invitationGone says why an invitation's link no longer works: used,
// expired or unknown, each with its way forward.
func (c *Console) invitationGone(ec echo.Context, err error) error {
	key, status := "console.invite.unknown", http.StatusNotFound
	switch {
	case errors.Is(err, settings.ErrInvitationUsed):
		key, status = "console.invite.used", http.StatusGone
	case errors.Is(err, settings.ErrInvitationExpired):
		key, status = "console.invite.expired", http.StatusGone
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
	m.ConsolePage = pages.ConsolePage{Title: t(ec, "console.invite.title"), Assets: c.Assets, CSRF: sess.Values["csrf"].(string)}
	m.Action = templ.SafeURL(strings.Replace(RouteAccept, ":token", url.PathEscape(ec.Param("token")), 1))
	return render(ec, status, manage.ConsoleInvitationPage(m))
}

// acceptInvitation answers POST /console/invite/{token}: a new person sets
// a password; one who has an account gives theirs. Either way they join the
// team once, and are signed in.
func (c *Console) acceptInvitation(ec echo.Context) error {
	ctx := ec.Request().Context()
	token := ec.Param("token")
	inv, err := c.Settings.Invitation(ctx, token, c.Now())
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
	var phc string
	if m.Existing {
		// Their own password, counted as sign-in tries are.
		tries := c.passwordTries(ec, inv.Email)
		if over, err := tries.exhausted(MaxFailures); err != nil {
			return err
		} else if over {
			m.Error = t(ec, "console.login.tooMany")
			return c.invitationForm(ec, http.StatusTooManyRequests, m)
		}
		if u, ok := c.Merchants.ConsoleUser(inv.Email); !ok || !u.Matches(pw) {
			if err := tries.refused(); err != nil {
				return err
			}
			m.Errors = map[string]string{"password": t(ec, "console.invite.wrongPassword")}
			return c.invitationForm(ec, http.StatusUnauthorized, m)
		}
	} else {
		if err := password.CheckNew(pw); err != nil {
			m.Errors = map[string]string{"password": reasonOf(ec, err)}
			return c.invitationForm(ec, http.StatusUnprocessableEntity, m)
		}
		if pw != again {
			m.Errors = map[string]string{"password_again": t(ec, "console.invite.mismatch")}
			return c.invitationForm(ec, http.StatusUnprocessableEntity, m)
		}
		if phc, err = password.Hash(pw, password.Default); err != nil {
			return err
		}
	}
	if _, err := c.Settings.Accept(ctx, token, phc, c.Now()); err != nil {
		return c.invitationGone(ec, err)
	}
	u, ok := c.Merchants.ConsoleUser(inv.Email)
	if !ok {
		return errors.New("console: an accepted invitation's person is not in the settings")
	}
	// They act for the merchant that invited them.
	if err := c.startSession(ec, u, inv.MerchantID); err != nil {
		return err
	}
	c.log(ec).Info("console: invitation accepted", "merchant", inv.MerchantID, "email", maskEmail(inv.Email), "role", inv.Role)
	return ec.Redirect(http.StatusSeeOther, RouteOverview)
}
