package console

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	consoleviews "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of the Developers page: API tokens, link keys and the webhook.
const (
	RouteDevelopers  = "/console/developers"
	RouteTokens      = "/console/developers/tokens"
	RouteTokenRevoke = "/console/developers/tokens/:id/revoke"
	RouteLinkKeys    = "/console/developers/link-keys"
	RouteKeyRetire   = "/console/developers/link-keys/:kid/retire"
	RouteWebhookSet  = "/console/developers/webhook"
	RouteWebhookRoll = "/console/developers/webhook/roll-secret"
	RouteWebhookEnd  = "/console/developers/webhook/end-overlap"
)

// recentRequests is how many of a merchant's API requests the page lists.
const recentRequests = 20

// untilLayout is a datetime-local field's value, read as UTC.
const untilLayout = "2006-01-02T15:04"

// The API's addresses a developer needs, under BaseURL.
const (
	apiBase     = "/api/v1"
	apiContract = "/api/v1/openapi.json"
)

var errNoToken = &consoleError{status: http.StatusNotFound, key: "console.error.noToken", err: settings.ErrNoToken}

// showDevelopers answers GET /console/developers: the merchant's id, the
// API's addresses, a first call to copy, and the API tokens.
func (c *Console) showDevelopers(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	return c.developersAnswer(ec, m.ID, options, http.StatusOK, func(page *manage.ConsoleDevelopers) {
		switch ec.QueryParam("done") {
		case "revoked":
			page.Notice = t(ec, "console.developers.revoked", ec.QueryParam("name"))
		case "retired":
			page.Notice = t(ec, "console.developers.keyRetiredNotice", ec.QueryParam("name"))
		case "overlapEnded":
			page.Notice = t(ec, "console.developers.overlapEnded")
		}
	})
}

func (c *Console) developersPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption) (manage.ConsoleDevelopers, error) {
	base := strings.TrimRight(c.BaseURL, "/")
	page := manage.ConsoleDevelopers{
		ConsolePage: c.frame(ec, t(ec, "console.developers"), "developers"),
		Merchants:   options, MerchantID: m.ID, ReadOnly: m.ReadOnly(),
		APIBase: base + apiBase, Contract: base + apiContract,
		Curl: "curl -s " + base + apiBase + "/links \\\n  -H \"Authorization: Bearer $CHECKOUT_API_TOKEN\" \\\n  -d '{\"order\":\"A-1\",\"amount\":\"49.90\",\"return_url\":\"" +
			firstOrigin(m) + "/done\"}'",
	}
	if options != nil {
		page.Query = "?merchant=" + url.QueryEscape(m.ID)
	}
	page.Embed = `<iframe id="paybybank" src="` + base + `/checkout?…` + t(ec, "console.developers.signedLink") + `…" title="Pay by bank"
        style="width:100%;border:0;min-height:600px"></iframe>
<script src="` + base + `/static/embed.js" data-frame="paybybank" async></script>`
	page.Framing = t(ec, "console.developers.framingNone")
	if len(m.FrameAncestors) > 0 {
		page.Framing = t(ec, "console.developers.framing", strings.Join(m.FrameAncestors, ", "))
	}
	recent, err := c.Ledger.RecentAPIRequests(ec.Request().Context(), m.ID, recentRequests)
	if err != nil {
		return page, err
	}
	for _, r := range recent {
		page.Recent = append(page.Recent, manage.ConsoleAPIRequest{At: when(localizerOf(ec), r.At), Method: r.Method, Route: r.Route,
			Status: strconv.Itoa(r.Status), Failed: r.Status >= 400})
	}
	tokens, err := c.Ledger.MerchantTokens(ec.Request().Context(), m.ID)
	if err != nil {
		return page, err
	}
	now := c.Now()
	opened, err := c.Ledger.LinksOpenedByKey(ec.Request().Context(), m.ID, now.Add(-24*time.Hour))
	if err != nil {
		return page, err
	}
	page.RetireUntil = now.Add(settings.LinkKeyRetire).UTC().Format(untilLayout)
	page.Webhook = manage.ConsoleWebhookForm{URL: m.WebhookURL, Overlap: "24"}
	if m.WebhookURL != "" {
		page.Webhook.Secret = t(ec, "console.developers.secretSet")
	}
	if older := m.OlderWebhookSecrets(now); older != nil {
		page.Webhook.Overlapping = true
		page.Webhook.Secret = t(ec, "console.developers.secretOverlap", when(localizerOf(ec), m.PreviousUntil))
	}
	for _, kid := range slices.Sorted(maps.Keys(m.LinkKeys)) {
		key := manage.ConsoleLinkKey{KID: kid, Opened: opened[kid], State: t(ec, "console.developers.keyLive"),
			Retire: templ.SafeURL(RouteLinkKeys + "/" + url.PathEscape(kid) + "/retire" + page.Query)}
		if kid == m.NewestKID() {
			key.State = t(ec, "console.developers.keyNewest")
		}
		if until, ok := m.Retiring[kid]; ok {
			key.Retiring = true
			key.State = t(ec, "console.developers.keyRetiring", when(localizerOf(ec), until))
			if !now.Before(until) {
				key.State = t(ec, "console.developers.keyRetired", when(localizerOf(ec), until))
			}
		}
		page.LinkKeys = append(page.LinkKeys, key)
	}
	for _, tk := range tokens {
		row := manage.ConsoleToken{ID: tk.ID, Name: tk.Name, Prefix: tk.Prefix + "…", Created: when(localizerOf(ec), tk.Created),
			LastUsed: t(ec, "console.developers.neverUsed"), Expires: t(ec, "console.developers.noExpiry"), FromFile: tk.Managed == merchant.ManagedByFile,
			Revoke: templ.SafeURL(RouteTokens + "/" + url.PathEscape(tk.ID) + "/revoke" + page.Query)}
		if !tk.Used.IsZero() {
			row.LastUsed = t(ec, "console.developers.lastUsed", tk.Used.UTC().Format("2006-01-02 15:00"))
		}
		if !tk.Expires.IsZero() {
			at := when(localizerOf(ec), tk.Expires)
			row.Expires, row.Expired = t(ec, "console.developers.expires", at), !c.Now().Before(tk.Expires)
			if row.Expired {
				row.Expires = t(ec, "console.developers.expired", at)
			}
		}
		page.Tokens = append(page.Tokens, row)
	}
	return page, nil
}

// developersAnswer renders the Developers page of merchant id as it is
// now, with what fill adds (a notice, a secret shown once, a form with its
// reasons), at status.
func (c *Console) developersAnswer(ec echo.Context, id string, options []consoleviews.ConsoleOption, status int, fill func(*manage.ConsoleDevelopers)) error {
	m, ok := c.Merchants.Get(id)
	if !ok {
		return errNotFound
	}
	page, err := c.developersPage(ec, m, options)
	if err != nil {
		return err
	}
	fill(&page)
	return render(ec, status, manage.ConsoleDevelopersPage(page))
}

// refusedForm marks a Developers page answering a form that needs a change.
func refusedForm(page *manage.ConsoleDevelopers) {
	errs := maps.Clone(page.Form.Errors)
	if errs == nil {
		errs = map[string]string{}
	}
	maps.Copy(errs, page.Webhook.Errors)
	refused(&page.ConsolePage, errs)
}

func firstOrigin(m *merchant.Merchant) string {
	if len(m.ReturnOrigins) > 0 {
		return m.ReturnOrigins[0]
	}
	return "https://shop.example"
}

// makeToken answers POST /console/developers/tokens: a token named, with
// an optional expiry, shown once.
func (c *Console) makeToken(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	form := manage.ConsoleTokenForm{Name: ec.FormValue("name"), Expires: ec.FormValue("expires")}
	var made settings.MadeToken
	expires, err := settings.ParseExpiry("expires", form.Expires, c.Now())
	if err == nil {
		made, err = c.Settings.MakeToken(ec.Request().Context(), actor(ec), m.ID, form.Name, expires)
	}
	var fe *merchant.FieldError
	switch {
	case errors.As(err, &fe):
		form.Errors = map[string]string{fe.Field: reasonOf(ec, fe)}
		return c.developersAnswer(ec, m.ID, options, http.StatusUnprocessableEntity, func(page *manage.ConsoleDevelopers) {
			page.Form = form
			refusedForm(page)
		})
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: API token made", "merchant", m.ID, "token", made.ID)
	return c.developersAnswer(ec, m.ID, options, http.StatusOK, func(page *manage.ConsoleDevelopers) {
		page.Notice = t(ec, "console.developers.madeNotice", made.Name)
		page.NewToken = made.Token
	})
}

// revokeToken answers POST /console/developers/tokens/{id}/revoke.
func (c *Console) revokeToken(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	id, _ := url.PathUnescape(ec.Param("id"))
	tokens, err := c.Ledger.MerchantTokens(ec.Request().Context(), m.ID)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(tokens, func(tk ledger.TokenRow) bool { return tk.ID == id }); i >= 0 {
		if ok, err := c.confirmed(ec, t(ec, "console.developers"), t(ec, "console.confirm.revoke", "“"+tokens[i].Name+"”"),
			t(ec, "console.confirm.revoke.text"), t(ec, "console.confirm.revoke.yes"), pageFor(RouteDevelopers, m, options, nil)); !ok {
			return err
		}
	}
	name, err := c.Settings.RevokeToken(ec.Request().Context(), actor(ec), m.ID, id)
	switch {
	case errors.Is(err, settings.ErrNoToken):
		return errNoToken
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: API token revoked", "merchant", m.ID, "token", id)
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteDevelopers, m, options, url.Values{"done": {"revoked"}, "name": {name}}))
}

var (
	errNoLinkKey = &consoleError{status: http.StatusNotFound, key: "console.error.noLinkKey", err: settings.ErrNoLinkKey}
)

// makeLinkKey answers POST /console/developers/link-keys: a new key, which
// signs new links from now on, its secret shown once.
func (c *Console) makeLinkKey(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	made, err := c.Settings.MakeLinkKey(ec.Request().Context(), actor(ec), m.ID, c.Now())
	switch {
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: link key made", "merchant", m.ID, "kid", made.KID)
	return c.developersAnswer(ec, m.ID, options, http.StatusOK, func(page *manage.ConsoleDevelopers) {
		page.Notice = t(ec, "console.developers.keyMade", made.KID)
		page.NewKID, page.NewSecret = made.KID, made.Secret
	})
}

// retireLinkKey answers POST /console/developers/link-keys/{kid}/retire:
// links signed with the key work until until (24 hours on by default),
// then are refused.
func (c *Console) retireLinkKey(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	kid, _ := url.PathUnescape(ec.Param("kid"))
	until := c.Now().Add(settings.LinkKeyRetire)
	if v := strings.TrimSpace(ec.FormValue("until")); v != "" {
		parsed, err := time.Parse(untilLayout, v)
		if err != nil || !parsed.After(c.Now()) {
			return c.developersAnswer(ec, m.ID, options, http.StatusUnprocessableEntity, func(page *manage.ConsoleDevelopers) {
				page.Notice, page.NoticeError = t(ec, "console.developers.badUntil", v), true
			})
		}
		until = parsed
	}
	if ok, err := c.confirmed(ec, t(ec, "console.developers"), t(ec, "console.confirm.retire", kid),
		t(ec, "console.confirm.retire.text"), t(ec, "console.confirm.retire.yes"), pageFor(RouteDevelopers, m, options, nil)); !ok {
		return err
	}
	err = c.Settings.RetireLinkKey(ec.Request().Context(), actor(ec), m.ID, kid, until)
	switch {
	case errors.Is(err, settings.ErrNoLinkKey):
		return errNoLinkKey
	case errors.Is(err, settings.ErrLastLinkKey):
		// Said on the page, beside the button that makes a new key: the
		// way forward.
		return c.developersAnswer(ec, m.ID, options, http.StatusConflict, func(page *manage.ConsoleDevelopers) {
			page.Notice, page.NoticeError = t(ec, "console.error.lastLinkKey.text"), true
		})
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: link key retired", "merchant", m.ID, "kid", kid, "until", until)
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteDevelopers, m, options, url.Values{"done": {"retired"}, "name": {kid}}))
}

// setWebhook answers POST /console/developers/webhook: the endpoint is sent
// a signed ping first and saved only when it answers 2xx, or when the person
// says to save anyway (outside sandbox mode, never for an IP address that
// is not public). A merchant without a secret gets one, shown once.
func (c *Console) setWebhook(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	form := manage.ConsoleWebhookForm{URL: strings.TrimSpace(ec.FormValue("url")), Overlap: "24", SaveAnyway: ec.FormValue("save_anyway") == "on"}
	refuse := func(field, reason string) error {
		return c.developersAnswer(ec, m.ID, options, http.StatusUnprocessableEntity, func(page *manage.ConsoleDevelopers) {
			form.Secret, form.Overlapping = page.Webhook.Secret, page.Webhook.Overlapping
			form.Errors = map[string]string{field: reason}
			page.Webhook = form
			refusedForm(page)
		})
	}
	if m.ReadOnly() {
		return errManagedByFile
	}
	// A copy to check and ping: Check writes origins back as browsers
	// compare them, so the running merchant's lists are not shared.
	try := *m
	try.ReturnOrigins, try.FrameAncestors = slices.Clone(m.ReturnOrigins), slices.Clone(m.FrameAncestors)
	try.WebhookURL = form.URL
	if try.WebhookSecret == "" {
		try.WebhookSecret = randomToken()
	}
	var fe *merchant.FieldError
	if err := try.Check(); errors.As(err, &fe) {
		return refuse("url", reasonOf(ec, fe))
	}
	if u, err := url.Parse(form.URL); err == nil && c.isOwnAddress(u) {
		return refuse("url", t(ec, "console.developers.ownAddress"))
	}
	// An address no delivery may reach is refused before any ping, saved
	// anyway or not: saving anyway is for a name that does not resolve
	// yet.
	if err := c.Settings.CheckWebhookAddress(form.URL); errors.As(err, &fe) {
		return refuse("url", reasonOf(ec, fe))
	}
	if !form.SaveAnyway {
		d := c.Webhooks.Ping(ec.Request().Context(), &try)
		if d.Code < 200 || d.Code > 299 {
			answer := d.Error
			if d.Code != 0 {
				answer = "HTTP " + strconv.Itoa(d.Code)
			}
			form.PingFailed = true
			return refuse("url", t(ec, "console.developers.pingFailed", answer))
		}
	}
	made, err := c.Settings.SetWebhook(ec.Request().Context(), actor(ec), m.ID, form.URL)
	switch {
	case errors.As(err, &fe):
		return refuse("url", reasonOf(ec, fe))
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: webhook endpoint set", "merchant", m.ID)
	return c.developersAnswer(ec, m.ID, options, http.StatusOK, func(page *manage.ConsoleDevelopers) {
		page.Notice = t(ec, "console.developers.webhookSet")
		page.NewWebhookSecret = made
	})
}

// isOwnAddress reports a URL on the app's own host, which would send the
// app its own webhooks (the sandbox's demo shop aside).
func (c *Console) isOwnAddress(u *url.URL) bool {
	base, err := url.Parse(c.BaseURL)
	return err == nil && strings.EqualFold(u.Host, base.Host) && u.Path != merchant.DemoWebhookPath
}

// rollWebhookSecret answers POST /console/developers/webhook/roll-secret: a
// new secret, shown once; the old one signs beside it for overlap hours.
func (c *Console) rollWebhookSecret(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	hours, err := strconv.Atoi(strings.TrimSpace(ec.FormValue("overlap")))
	if err != nil {
		hours = -1
	}
	secret, err := c.Settings.RollWebhookSecret(ec.Request().Context(), actor(ec), m.ID, time.Duration(hours)*time.Hour, c.Now())
	var fe *merchant.FieldError
	switch {
	case errors.As(err, &fe):
		return c.developersAnswer(ec, m.ID, options, http.StatusUnprocessableEntity, func(page *manage.ConsoleDevelopers) {
			page.Webhook.Overlap = ec.FormValue("overlap")
			page.Webhook.Errors = map[string]string{"overlap": reasonOf(ec, fe)}
			refusedForm(page)
		})
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	c.log(ec).Info("console: webhook secret rolled", "merchant", m.ID, "overlap_hours", hours)
	return c.developersAnswer(ec, m.ID, options, http.StatusOK, func(page *manage.ConsoleDevelopers) {
		page.Notice = t(ec, "console.developers.rolled")
		page.NewWebhookSecret = secret
	})
}

// endOverlap answers POST /console/developers/webhook/end-overlap.
func (c *Console) endOverlap(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	if err := c.Settings.EndOverlap(ec.Request().Context(), actor(ec), m.ID); errors.Is(err, settings.ErrManagedByFile) {
		return errManagedByFile
	} else if err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteDevelopers, m, options, url.Values{"done": {"overlapEnded"}}))
}
