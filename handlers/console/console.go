// Package console serves the pages the people who run a shop sign in to:
// the overview of how checkouts end, every payment of their merchant, its
// webhook events and what can be done about them; and the pages that change
// things: the shop's settings, the team and its roles, a person's account
// and two-step sign-in, the Developers page, the Branding page, the audit log
// and, for operators, the merchants. Operators of the deployment see every
// merchant. It is an audience of its own: its routes, sign-in, error pages
// and content policy live here, over the same ledger as the shopper's steps
// and the API. docs/console.md describes it for its users.
package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/statements"
	"github.com/paybybank/checkout/views"
	consoleviews "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/webhook"
)

// Routes of sign-in and of the console's reading consoleviews. Order ids are
// path-escaped once after RoutePayments + "/".
const (
	RouteOverview  = "/console"
	RouteLogin     = "/console/login"
	RouteLogout    = "/console/logout"
	RoutePayments  = "/console/payments"
	RouteCSV       = "/console/payments.csv"
	RouteOrder     = "/console/payments/*"
	RouteRedeliver = "/console/events/:id/redeliver"
	RouteWebhooks  = "/console/webhooks"
	RouteTest      = "/console/webhooks/test"
	routeAnyOther  = "/console/*"
)

// BankLists gives the banks list, for the names and logos of banks.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
}

// Config is what the console is built from.
type Config struct {
	// BaseURL is the app's public URL: its cookie is Secure under https.
	BaseURL   string
	Ledger    *ledger.Ledger
	Merchants *merchant.Directory
	// Settings changes merchants' settings in the ledger; Merchants is
	// its running set.
	Settings *settings.Store
	// Orders checks a payment's status on demand, as the follower would.
	Orders *payment.Service
	// Webhooks sends test events and redeliveries; its Owner leases them.
	Webhooks *webhook.Dispatcher
	Banks    BankLists
	// Health is every merchant's bank health, read in the background; nil
	// shows none.
	Health *bankhealth.Keeper
	// SessionKeys are the app's SESSION_KEYS; the console derives its own
	// cookie keys from them.
	SessionKeys [][]byte
	Assets      views.Assets
	Log         *slog.Logger
	// Outage knows whether the payments ledger answers, shared with the
	// shopper's steps; the console's own when nil.
	Outage *web.Outage
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	// Mail sends invitations by e-mail too (SMTP_URL), and tells a person
	// when wrong codes paused their sign-in; none when nil, and the
	// inviter passes the link on.
	Mail Mail
	// Hashing bounds the passwords hashed at once; about twice the cores,
	// waiting a second for a slot, when nil.
	Hashing *password.Gate
	// Previews draws the shopper's pages in a designer's look (the
	// shopper's steps).
	Previews Previews
	// Sandbox is set when the provider is the built-in sandbox: the
	// Branding page then makes preview links that walk its checkout.
	Sandbox bool
	// Links makes, cancels and sends payment links.
	Links *links.Store
	// Refunds makes and moves refunds; its Mail (SMTP_URL) sends the
	// payers their pages.
	Refunds *refunds.Service
	// Statements imports the shop's bank statements.
	Statements *statements.Service
	// ReceivedWithin is how many bank days after it is paid an order's
	// money should be seen on the shop's account: the overview counts
	// those not seen after it (RECEIVED_WITHIN_BANK_DAYS; 3 when 0).
	ReceivedWithin int
}

// Mail sends an e-mail.
type Mail interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Console serves the console's consoleviews.
type Console struct {
	Config
	store *sessions.CookieStore
	// budgets limit each signed-in person's POSTs (PersonRate).
	budgets web.Budgets
	// decoy is checked against when no user has the e-mail given, so that
	// an unknown e-mail costs as long as a wrong password.
	decoy password.Hashed
	// rp is the console as WebAuthn names it, from BASE_URL; nil when
	// passkeys cannot be used here (an IP address, plain http), and
	// passkeysOffWhy says why.
	rp             *webauthn.WebAuthn
	passkeysOffWhy string
}

// New returns the console.
func New(cfg Config) (*Console, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	store, err := newStore(cfg.SessionKeys, strings.HasPrefix(cfg.BaseURL, "https://"))
	if err != nil {
		return nil, err
	}
	if cfg.Outage == nil && cfg.Ledger != nil {
		cfg.Outage = &web.Outage{Ledger: cfg.Ledger, Where: cfg.Ledger.Where, Log: cfg.Log}
	}
	if cfg.Hashing == nil {
		cfg.Hashing = password.NewGate(password.DefaultSlots(), time.Second)
	}
	c := &Console{Config: cfg, store: store}
	if c.rp, err = relyingParty(cfg.BaseURL); err != nil {
		// Everything else works; the console's pages say passkeys are
		// off, and why.
		cfg.Log.Warn("console: passkeys are off", "reason", err)
		c.passkeysOffWhy = err.Error()
	}
	// The costs of the users' own hashes, so that both paths take as long.
	params := password.Default
	if users := cfg.Merchants.ConsoleUsers(); len(users) > 0 {
		params = users[0].Hashed().Params
	}
	phc, err := password.Hash("decoy-password-never-used", params)
	if err != nil {
		return nil, err
	}
	h, err := password.Parse(phc)
	if err != nil {
		return nil, err
	}
	c.decoy = h.Decoy()
	return c, nil
}

// Routes registers the console's routes on e. The app-wide guards (request
// ids, limits, the Origin check on every POST) are e's already.
func (c *Console) Routes(e *echo.Echo) {
	e.GET(RouteLogin, c.showLogin, c.answerErrors)
	e.POST(RouteLogin, c.signIn, c.answerErrors)
	e.POST(RouteLogout, c.signOut, c.answerErrors)

	// Every page names what it is for, as the permission table in
	// merchant/roles.go does: a person whose role does not allow it gets 403.
	in := func(method, path string, action merchant.Action, h echo.HandlerFunc) {
		e.Add(method, path, h, c.answerErrors, c.signedIn, c.allow(action))
	}
	in(http.MethodGet, RouteOverview, merchant.Read, c.showOverview)
	in(http.MethodGet, RoutePayments, merchant.Read, c.showPayments)
	in(http.MethodGet, RouteCSV, merchant.Read, c.exportPayments)
	in(http.MethodGet, RouteOrder, merchant.Read, c.showOrder)
	// Each action under an order's address is allowed by its own.
	in(http.MethodPost, RouteOrder, merchant.Read, c.orderAction)
	in(http.MethodPost, RouteRedeliver, merchant.Operate, c.redeliver)
	in(http.MethodGet, RouteWebhooks, merchant.Read, c.showWebhooks)
	in(http.MethodPost, RouteTest, merchant.Operate, c.sendTest)
	in(http.MethodPost, RouteAct, merchant.Read, c.actFor)
	c.linkRoutes(in)
	c.refundRoutes(in)
	c.statementRoutes(in)
	// Operators only: everyone else is told so.
	operators := func(method, path string, h echo.HandlerFunc) {
		e.Add(method, path, h, c.answerErrors, c.signedIn, c.operatorsOnly)
	}
	operators(http.MethodGet, RouteMerchants, c.showMerchants)
	operators(http.MethodPost, RouteMerchants, c.createMerchant)
	operators(http.MethodPost, RouteMerchantDisable, c.setMerchantState(merchant.Disabled))
	operators(http.MethodPost, RouteMerchantEnable, c.setMerchantState(merchant.Active))
	// Everyone on the team reads the shop's settings; owners change them.
	in(http.MethodGet, RouteSettings, merchant.Read, c.showSettings)
	in(http.MethodPost, RouteSettings, merchant.Manage, c.saveSettings)
	in(http.MethodGet, RouteTeam, merchant.Manage, c.showTeam)
	in(http.MethodPost, RouteInvite, merchant.Manage, c.invite)
	in(http.MethodPost, RouteRevoke, merchant.Manage, c.revokeInvitation)
	e.POST(RouteResetTwoStep, c.resetTwoStep, c.answerErrors, c.signedIn, c.operatorsOnly)
	in(http.MethodPost, RouteMemberRole, merchant.Manage, c.teamChange(c.setRole, "role"))
	in(http.MethodPost, RouteMemberOut, merchant.Manage, c.teamChange(c.removeMember, "removed"))
	e.GET(RouteAccept, c.showInvitation, c.answerErrors)
	e.POST(RouteAccept, c.acceptInvitation, c.answerErrors)
	e.POST(RouteLoginPasskeyBegin, c.beginSignInWithPasskey, c.answerErrors)
	e.POST(RouteLoginPasskey, c.signInWithPasskey, c.answerErrors)
	in(http.MethodPost, RoutePasskeysBegin, merchant.Read, c.beginPasskey)
	in(http.MethodPost, RoutePasskeys, merchant.Read, c.addPasskey)
	in(http.MethodPost, RoutePasskeyRemove, merchant.Read, c.removePasskey)
	operators(http.MethodPost, RouteOperatorsPasskeys, c.requireOperatorsPasskeys)
	e.GET(RouteLoginCode, c.showCodeStep, c.answerErrors)
	e.POST(RouteLoginCode, c.checkCodeStep, c.answerErrors)
	in(http.MethodPost, RouteTOTP, merchant.Read, c.beginTwoStep)
	in(http.MethodPost, RouteTOTPConfirm, merchant.Read, c.confirmTwoStep)
	in(http.MethodPost, RouteTOTPOff, merchant.Read, c.endTwoStep)
	in(http.MethodPost, RouteRequireTwoStep, merchant.Manage, c.requireTwoStep)
	in(http.MethodGet, RouteAccount, merchant.Read, c.showAccount)
	in(http.MethodPost, RouteAccountPassword, merchant.Read, c.changePassword)
	in(http.MethodPost, RouteAccountSessions, merchant.Read, c.endOtherSessions)
	in(http.MethodPost, RouteAccountLanguage, merchant.Read, c.chooseLanguage)
	in(http.MethodGet, RouteDevelopers, merchant.Develop, c.showDevelopers)
	in(http.MethodPost, RouteTokens, merchant.Develop, c.makeToken)
	in(http.MethodPost, RouteTokenRevoke, merchant.Develop, c.revokeToken)
	in(http.MethodPost, RouteLinkKeys, merchant.Develop, c.makeLinkKey)
	in(http.MethodPost, RouteKeyRetire, merchant.Develop, c.retireLinkKey)
	in(http.MethodPost, RouteWebhookSet, merchant.Develop, c.setWebhook)
	in(http.MethodPost, RouteWebhookRoll, merchant.Develop, c.rollWebhookSecret)
	in(http.MethodPost, RouteWebhookEnd, merchant.Develop, c.endOverlap)
	in(http.MethodGet, RouteBranding, merchant.Brand, c.showBranding)
	in(http.MethodPost, RouteBranding, merchant.Brand, c.saveBranding)
	in(http.MethodGet, RouteBrandingCheck, merchant.Brand, c.checkBranding)
	in(http.MethodGet, RouteBrandingPreview, merchant.Brand, c.previewBranding)
	in(http.MethodPost, RouteBrandingPreview, merchant.Brand, c.previewBranding)
	in(http.MethodPost, RouteBrandingPublish, merchant.Brand, c.publishBranding)
	in(http.MethodGet, RouteBrandingHistory, merchant.Brand, c.showBrandingHistory)
	in(http.MethodPost, RouteBrandingRevert, merchant.Brand, c.revertBranding)
	in(http.MethodPost, RouteBrandingLogo, merchant.Brand, c.uploadLogo)
	// The studio was a page of its own; designers have the Branding page.
	e.GET(RouteStudio, studioMoved)
	e.HEAD(RouteStudio, studioMoved)
	in(http.MethodGet, RouteAudit, merchant.Audit, c.showAudit)
	in(http.MethodGet, RouteAuditCSV, merchant.Audit, c.exportAudit)
	// The console's own catch-all, under /console/ only: a page of the
	// console's that is not there, said in the console's frame (with the
	// person's name once signed in) and never a way to the sign-in
	// instead.
	e.RouteNotFound(routeAnyOther, c.notFound, c.answerErrors, c.maybeSignedIn)
}

// allow lets through a person whose role allows action; anyone else gets
// 403 with the roles that may.
func (c *Console) allow(action merchant.Action) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error {
			if s := sessionOf(ec); !s.may(action) {
				return errRole(ec, action, s.role)
			}
			return next(ec)
		}
	}
}

// errRole refuses what a role does not allow, naming the roles that do.
func errRole(ec echo.Context, action merchant.Action, role merchant.Role) error {
	var names []string
	for _, r := range merchant.RolesThatMay(action) {
		names = append(names, t(ec, "console.role."+string(r)))
	}
	return &consoleError{status: http.StatusForbidden, key: "console.error.role",
		err: fmt.Errorf("role %s may not %s", role, action), args: []any{strings.Join(names, ", "), t(ec, "console.role."+string(role))}}
}

// RouteAct is where a person who belongs to several merchants chooses the
// one they act for.
const RouteAct = "/console/act"

// actFor answers POST /console/act: from now on the session acts for the
// merchant chosen, if the person belongs to it.
func (c *Console) actFor(ec echo.Context) error {
	s := sessionOf(ec)
	id := ec.FormValue("merchant")
	if _, ok := s.user.RoleAt(id); !ok {
		return errNotFound
	}
	sess, err := c.store.Get(ec.Request(), cookieName)
	if err != nil {
		return err
	}
	sess.Values["act"] = id
	if err := sess.Save(ec.Request(), ec.Response()); err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteOverview)
}

// notFound answers a /console/ path no route matches.
func (c *Console) notFound(echo.Context) error { return errNotFound }

// maybeSignedIn makes the person's session known to the page when there is
// one, and lets the request through either way.
func (c *Console) maybeSignedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		if s, _, err := c.openSession(ec); err == nil && s != nil {
			ec.Set(ctxSession, s)
			speak(ec, s.user.Language)
		}
		return next(ec)
	}
}

// contentSecurityPolicy lets console pages load only the app's own files,
// send forms only to the app, and never be framed.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// render writes a console page. Nothing on it may be kept by a browser or a
// proxy: it is one merchant's business.
func render(ec echo.Context, status int, page templ.Component) error {
	ctx := i18n.With(context.WithoutCancel(ec.Request().Context()), localizerOf(ec))
	return web.Write(ec, status, page, ctx, func([]byte) string { return contentSecurityPolicy })
}

// t is the console's text for key.
func t(ec echo.Context, key string, args ...any) string { return localizerOf(ec).T(key, args...) }

// around is the sentence of key (which names one value) before and after
// its value, so that a page sets the value apart and keeps it on one
// line: a date, an address.
func around(ec echo.Context, key string) (before, after string) {
	before, after, _ = strings.Cut(t(ec, key, "\x00"), "\x00")
	return before, after
}

// localizerOf is the language a console request is answered in: the
// person's own choice, else their browser's, else English.
func localizerOf(ec echo.Context) *i18n.Localizer {
	if l, ok := ec.Get(ctxLocalizer).(*i18n.Localizer); ok {
		return l
	}
	return i18n.Staff("en")
}

const ctxLocalizer = "console.localizer"

// speak answers the request in the language chosen ("" for none), else
// the browser's, else English.
func speak(ec echo.Context, chosen string) {
	ec.Set(ctxLocalizer, i18n.Staff(i18n.StaffLanguage(chosen, ec.Request().Header.Get("Accept-Language"))))
}

// consoleError is an error a console user is shown: key names its heading
// in the console's catalog, key+".text" its message; err is for the log.
type consoleError struct {
	status int
	key    string
	err    error
	// args fill the message's placeholders.
	args []any
}

func (e *consoleError) Error() string {
	if e.err != nil {
		return e.key + ": " + e.err.Error()
	}
	return e.key
}

func (e *consoleError) Unwrap() error { return e.err }

var (
	errNotFound  = &consoleError{status: http.StatusNotFound, key: "console.error.notFound"}
	errForbidden = &consoleError{status: http.StatusForbidden, key: "console.error.forbidden"}
)

// answerErrors turns a console handler's error into the console's error
// page, logged at Error for our faults and at Warn for the caller's, never
// with internal text on the page.
func (c *Console) answerErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		// Until the person is known, their browser's language.
		speak(ec, "")
		err := next(ec)
		if err == nil || ec.Response().Committed {
			return err
		}
		ce := &consoleError{status: http.StatusInternalServerError, key: "console.error.internal", err: err}
		var he *echo.HTTPError
		switch {
		case errors.As(err, &ce):
		case errors.Is(err, settings.ErrDisabled):
			// Wherever a change was refused for it, the same words.
			ce = &consoleError{status: http.StatusConflict, key: "console.error.disabled", err: err}
		case errors.As(err, &he) && he.Code == http.StatusNotFound:
			ce = &consoleError{status: http.StatusNotFound, key: "console.error.notFound", err: err}
		case errors.As(err, &he) && he.Code < 500:
			ce = &consoleError{status: he.Code, key: "console.error.request", err: err}
		}
		if ce.status == http.StatusInternalServerError && c.Outage.Down(ec, err) {
			// Logged once for the whole outage.
			ce = &consoleError{status: http.StatusServiceUnavailable, key: "console.error.ledgerDown", err: err}
			ec.Response().Header().Set("Retry-After", strconv.Itoa(web.RetryAfterOutage))
		} else {
			level := slog.LevelWarn
			if ce.status >= 500 {
				level = slog.LevelError
			}
			c.log(ec).Log(ec.Request().Context(), level, "console request failed",
				"status", ce.status, "method", ec.Request().Method, "route", ec.Path(), "err", err)
		}
		page := consoleviews.ConsoleError{
			ConsolePage: c.frame(ec, t(ec, ce.key), ""),
			Heading:     t(ec, ce.key), Message: t(ec, ce.key+".text", ce.args...),
			Back: templ.SafeURL(RouteOverview), BackLabel: t(ec, "console.error.back"),
		}
		return render(ec, ce.status, consoleviews.ConsoleErrorPage(page))
	}
}

// log is the logger of a request, carrying its id.
func (c *Console) log(ec echo.Context) *slog.Logger { return web.Logger(ec, c.Log) }

// frame is the layout model of a page for the signed-in user, if any.
func (c *Console) frame(ec echo.Context, title, nav string) consoleviews.ConsolePage {
	l := localizerOf(ec)
	p := consoleviews.ConsolePage{Title: title, Assets: c.Assets, Nav: nav, Back: ec.Request().URL.RequestURI()}
	if choices := i18n.StaffChoices(); len(choices) > 1 {
		for _, ch := range choices {
			p.Languages = append(p.Languages, consoleviews.ConsoleOption{Value: ch.Code, Label: ch.Name, Selected: ch.Code == l.Lang()})
		}
	}
	if s := sessionOf(ec); s != nil {
		p.User, p.CSRF = s.user.Email, s.csrf
		p.Operator = s.user.Operator
		p.MayManage, p.MayAudit, p.MayDevelop = s.may(merchant.Manage), s.may(merchant.Audit), s.may(merchant.Develop)
		p.MayBrand = s.may(merchant.Brand)
		p.Whose = t(ec, "console.operator")
		if m := s.merchant; m != nil {
			p.Whose = t(ec, "console.whose", m.Name, t(ec, "console.role."+string(s.role)))
		}
		if !s.user.Operator && len(s.user.Memberships) > 1 {
			for _, ms := range s.user.Memberships {
				p.ActFor = append(p.ActFor, consoleviews.ConsoleOption{Value: ms.Merchant.ID,
					Label: ms.Merchant.Name + " (" + t(ec, "console.role."+string(ms.Role)) + ")", Selected: ms.Merchant == s.merchant})
			}
		}
	}
	return p
}

// pageFor is the address of route about m, with q: where the answer to a
// change leads, back to the merchant an operator acted for.
func pageFor(route string, m *merchant.Merchant, options []consoleviews.ConsoleOption, q url.Values) string {
	return route + "?" + merchantQuery(m, options, q)
}

// merchantQuery is the query of an address about m: the merchant for an
// operator (who chooses it on each page), and extra.
func merchantQuery(m *merchant.Merchant, options []consoleviews.ConsoleOption, extra url.Values) string {
	q := url.Values{}
	if options != nil {
		q.Set("merchant", m.ID)
	}
	for k, v := range extra {
		q[k] = v
	}
	return q.Encode()
}

// refused makes p the answer to a refused form: errs, each a field's
// reason by its name (the id of its input), are summed up at the top of
// the page, each linking to its field.
func refused(p *consoleviews.ConsolePage, errs map[string]string) {
	p.Problems = nil
	for _, field := range slices.Sorted(maps.Keys(errs)) {
		p.Problems = append(p.Problems, views.FieldError{ID: field, Message: errs[field]})
	}
}
