package console

import (
	"cmp"
	"encoding/csv"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/views"
	consoleviews "github.com/paybybank/checkout/views/console"
	auditviews "github.com/paybybank/checkout/views/console/audit"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of the settings pages: operators' merchants, a shop's settings
// and the audit log.
const (
	RouteMerchants       = "/console/merchants"
	RouteMerchantDisable = "/console/merchants/:id/disable"
	RouteMerchantEnable  = "/console/merchants/:id/enable"
	RouteSettings        = "/console/settings"
	RouteAudit           = "/console/audit"
	RouteAuditCSV        = "/console/audit.csv"
)

// auditPage is how many lines of the audit log a page shows.
const auditPage = 50

var (
	errOperatorsOnly = &consoleError{status: http.StatusForbidden, key: "console.error.operatorsOnly"}
	errManagedByFile = &consoleError{status: http.StatusConflict, key: "console.error.managedByFile", err: settings.ErrManagedByFile}
	errNoKeys        = &consoleError{status: http.StatusConflict, key: "console.error.noKeys", err: settings.ErrNoKeys}
)

// actor is who changes the settings: the signed-in person, from this
// request.
func actor(ec echo.Context) settings.Actor {
	return settings.Actor{Name: strings.ToLower(sessionOf(ec).user.Email), RequestID: ec.Response().Header().Get(echo.HeaderXRequestID)}
}

// operatorsOnly lets through operators only, on the pages that are theirs.
func (c *Console) operatorsOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		if !sessionOf(ec).user.Operator {
			return errOperatorsOnly
		}
		return next(ec)
	}
}

// managedLabel says how a merchant is managed, as the console shows it.
func managedLabel(ec echo.Context, m *merchant.Merchant) string {
	if m.ReadOnly() {
		return t(ec, "console.managed.file")
	}
	return t(ec, "console.managed.console")
}

// showMerchants answers GET /console/merchants (operators): every merchant
// with its state and how it is managed, and the form to make one.
func (c *Console) showMerchants(ec echo.Context) error {
	page := c.merchantsPage(ec, manage.ConsoleNewMerchant{})
	switch ec.QueryParam("done") {
	case "disabled":
		page.Notice = t(ec, "console.merchants.disabled", ec.QueryParam("id"))
	case "enabled":
		page.Notice = t(ec, "console.merchants.enabled", ec.QueryParam("id"))
	case "operatorsPasskeys":
		page.Notice = t(ec, "console.operatorsPasskeys.required")
	case "operatorsAnyway":
		page.Notice = t(ec, "console.operatorsPasskeys.notRequired")
	}
	return render(ec, http.StatusOK, manage.ConsoleMerchantsPage(page))
}

func (c *Console) merchantsPage(ec echo.Context, form manage.ConsoleNewMerchant) manage.ConsoleMerchants {
	page := manage.ConsoleMerchants{ConsolePage: c.frame(ec, t(ec, "console.merchants"), "merchants"), New: form,
		OperatorsPasskeys: c.Merchants.OperatorsPasskeys(), PasskeysOff: c.passkeysOff(ec), PasskeysMismatch: c.passkeysMismatchSaid(ec),
		ProofByPasskey: c.hasPasskeys(sessionOf(ec).user)}
	if page.ProofByPasskey {
		page.Scripts = []string{c.Assets.PasskeysJS}
	}
	for _, m := range c.Merchants.All() {
		row := manage.ConsoleMerchantRow{
			ID: m.ID, Name: m.Name, Managed: managedLabel(ec, m), ReadOnly: m.ReadOnly(), Disabled: m.Disabled(),
			State:    t(ec, "console.state."+m.State),
			Settings: templ.SafeURL(RouteSettings + "?merchant=" + url.QueryEscape(m.ID)),
			Toggle:   templ.SafeURL(RouteMerchants + "/" + url.PathEscape(m.ID) + "/disable"),
		}
		if m.Disabled() {
			row.Toggle = templ.SafeURL(RouteMerchants + "/" + url.PathEscape(m.ID) + "/enable")
		}
		switch m.UnopenedKind {
		case merchant.UnopenedFile:
			row.Unopened = t(ec, "console.merchants.brokenFile")
		case merchant.UnopenedKey, merchant.UnopenedDamaged:
			row.Unopened = t(ec, "console.merchants.brokenKey")
		}
		page.Rows = append(page.Rows, row)
	}
	return page
}

// createMerchant answers POST /console/merchants (operators): a new
// merchant managed in the console, with its first link key and API token
// shown once on the answer, never again.
func (c *Console) createMerchant(ec echo.Context) error {
	form := manage.ConsoleNewMerchant{ID: ec.FormValue("id"), Name: ec.FormValue("name"), ReturnOrigins: ec.FormValue("return_origins")}
	created, err := c.Settings.CreateMerchant(ec.Request().Context(), actor(ec), form.ID, form.Name, lines(form.ReturnOrigins))
	var fe *merchant.FieldError
	switch {
	case errors.As(err, &fe):
		form.Errors = map[string]string{fe.Field: reasonOf(ec, fe)}
		page := c.merchantsPage(ec, form)
		refused(&page.ConsolePage, form.Errors)
		return render(ec, http.StatusUnprocessableEntity, manage.ConsoleMerchantsPage(page))
	case errors.Is(err, settings.ErrNoKeys):
		return errNoKeys
	case err != nil:
		return err
	}
	c.log(ec).Info("console: merchant added", "merchant", created.Merchant.ID)
	page := c.merchantsPage(ec, manage.ConsoleNewMerchant{})
	page.Notice = t(ec, "console.merchants.created", created.Merchant.Name)
	page.Created = &manage.ConsoleCreated{ID: created.Merchant.ID, Token: created.Token, KID: created.KID, LinkSecret: created.LinkSecret}
	return render(ec, http.StatusOK, manage.ConsoleMerchantsPage(page))
}

// setMerchantState answers POST /console/merchants/{id}/disable and
// /enable (operators).
func (c *Console) setMerchantState(state string) echo.HandlerFunc {
	return func(ec echo.Context) error {
		id, _ := url.PathUnescape(ec.Param("id"))
		if m, known := c.Merchants.Get(id); known && state == merchant.Disabled && !m.ReadOnly() {
			if ok, err := c.confirmed(ec, t(ec, "console.merchants"), t(ec, "console.confirm.disable", m.Name),
				t(ec, "console.confirm.disable.text"), t(ec, "console.confirm.disable.yes"), RouteMerchants); !ok {
				return err
			}
		}
		err := c.Settings.SetState(ec.Request().Context(), actor(ec), id, state)
		switch {
		case errors.Is(err, settings.ErrNoMerchant):
			return errNotFound
		case errors.Is(err, settings.ErrManagedByFile):
			return errManagedByFile
		case err != nil:
			return err
		}
		c.log(ec).Info("console: merchant "+state, "merchant", id)
		return ec.Redirect(http.StatusSeeOther, RouteMerchants+"?done="+state+"&id="+url.QueryEscape(id))
	}
}

// settingsMerchant is the merchant whose settings, team or developers'
// page a request is about: the one the person acts for, or the one an
// operator asks for with ?merchant= (the first when none is).
func (c *Console) settingsMerchant(ec echo.Context, asked string) (*merchant.Merchant, []consoleviews.ConsoleOption, error) {
	if own := sessionOf(ec).merchant; own != nil {
		return own, nil, nil
	}
	all := c.Merchants.All()
	if asked == "" && len(all) > 0 {
		asked = all[0].ID
	}
	_, options, err := c.scope(ec, asked, "")
	if err != nil {
		return nil, nil, err
	}
	m, ok := c.Merchants.Get(asked)
	if !ok {
		return nil, nil, errNotFound
	}
	return m, options, nil
}

// showSettings answers GET /console/settings: the shop's settings, as a
// form for its owners (and operators) when the console manages the
// merchant, read-only for the rest of the team and for a merchant the
// merchants file manages.
func (c *Console) showSettings(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	page := c.settingsPage(ec, m, options, shopFormOf(m))
	if ec.QueryParam("saved") == "1" {
		page.Notice = t(ec, "console.settings.saved")
	}
	return render(ec, http.StatusOK, manage.ConsoleSettingsPage(page))
}

func (c *Console) settingsPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, form manage.ConsoleShopForm) manage.ConsoleSettings {
	form.MerchantID = m.ID
	mayChange := sessionOf(ec).may(merchant.Manage)
	if !mayChange && form.AccountIBAN != "" {
		// The IBAN is whole for the people who may change it only.
		form.AccountIBAN, form.IBANHint = merchant.MaskIBAN(form.AccountIBAN), t(ec, "console.settings.ibanMasked")
	}
	return manage.ConsoleSettings{
		ConsolePage: c.frame(ec, t(ec, "console.settings"), "settings"),
		Merchants:   options, MerchantID: m.ID, Name: m.Name,
		State: t(ec, "console.state."+m.State), Disabled: m.Disabled(),
		Managed: managedLabel(ec, m), ReadOnly: m.ReadOnly(), MayChange: mayChange, Form: form,
		Updated: when(localizerOf(ec), m.Updated), UpdatedBy: m.UpdatedBy,
		TimeZones: timeZoneOptions(form.TimeZone),
	}
}

// timeZoneOptions are the zones the console offers, chosen the one named
// (the default for none; a zone of the merchants file's that the console
// does not offer comes first, so that a save keeps it).
func timeZoneOptions(chosen string) []consoleviews.ConsoleOption {
	if chosen == "" {
		chosen = merchant.DefaultTimeZone
	}
	zones := merchant.TimeZones
	if !slices.Contains(zones, chosen) {
		zones = append([]string{chosen}, zones...)
	}
	options := make([]consoleviews.ConsoleOption, len(zones))
	for i, z := range zones {
		options[i] = consoleviews.ConsoleOption{Value: z, Label: z, Selected: z == chosen}
	}
	return options
}

// shopFormOf is the settings form filled with m's values.
func shopFormOf(m *merchant.Merchant) manage.ConsoleShopForm {
	var pins []string
	for _, country := range slices.Sorted(maps.Keys(m.PopularBanks)) {
		pins = append(pins, country+": "+strings.Join(m.PopularBanks[country], ", "))
	}
	form := manage.ConsoleShopForm{
		Version: strconv.FormatInt(m.Version, 10), Name: m.Name,
		ReturnOrigins:  strings.Join(m.ReturnOrigins, "\n"),
		FrameAncestors: strings.Join(m.FrameAncestors, "\n"),
		PopularBanks:   strings.Join(pins, "\n"),
		IPVerification: m.IPVerification,
		LegalName:      m.LegalName, ContactEmail: m.ContactEmail, ContactPhone: m.ContactPhone,
		ContactURL: m.ContactURL, TermsURL: m.TermsURL, PrivacyURL: m.PrivacyURL, TimeZone: m.TimeZone,
		AccountName: m.AccountName, AccountIBAN: inGroups(m.AccountIBAN), AccountBIC: m.AccountBIC,
	}
	if form.TimeZone == "" {
		form.TimeZone = merchant.DefaultTimeZone
	}
	if m.RefundApprovalOver != nil {
		form.RefundApprovalOver = m.RefundApprovalOver.StringFixed(2)
	}
	return form
}

// inGroups writes an IBAN as people read it, in groups of four.
func inGroups(iban string) string {
	var b strings.Builder
	for i, r := range iban {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// saveSettings answers POST /console/settings: the shop's settings saved
// from the version the form was made from. Every value refused comes back
// with everything typed and its reason beside its field; a save made
// meanwhile by someone else is shown beside what was typed, never
// overwritten.
func (c *Console) saveSettings(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	form := manage.ConsoleShopForm{
		Version: ec.FormValue("version"), Name: ec.FormValue("name"),
		ReturnOrigins: ec.FormValue("return_origins"), FrameAncestors: ec.FormValue("frame_ancestors"),
		PopularBanks: ec.FormValue("popular_banks"), IPVerification: ec.FormValue("ip_verification") == "on",
		LegalName: ec.FormValue("legal_name"), ContactEmail: ec.FormValue("contact_email"), ContactPhone: ec.FormValue("contact_phone"),
		ContactURL: ec.FormValue("contact_url"), TermsURL: ec.FormValue("terms_url"), PrivacyURL: ec.FormValue("privacy_url"),
		TimeZone: ec.FormValue("time_zone"), AccountName: ec.FormValue("account_name"), AccountIBAN: ec.FormValue("account_iban"),
		AccountBIC: ec.FormValue("account_bic"), RefundApprovalOver: ec.FormValue("refund_approval_over"),
	}
	if m.ReadOnly() {
		return errManagedByFile
	}
	version, err := strconv.ParseInt(form.Version, 10, 64)
	if err != nil || version < 1 {
		// A form without the version it was made from cannot say it is
		// the newest: it is shown the merchant's values as they are now,
		// never written over them.
		version = -1
	}
	refusals := map[string]string{}
	pins, pinErr := parsePins(form.PopularBanks)
	if pinErr != nil {
		refusals["popular_banks"] = reasonOf(ec, pinErr)
	}
	over, overErr := merchant.ParseRefundApprovalOver(form.RefundApprovalOver)
	if overErr != nil {
		refusals["refund_approval_over"] = reasonOf(ec, overErr)
	}
	edit := func(next *merchant.Merchant) {
		next.Name = strings.TrimSpace(form.Name)
		next.ReturnOrigins = lines(form.ReturnOrigins)
		next.FrameAncestors = lines(form.FrameAncestors)
		next.PopularBanks = pins
		next.IPVerification = form.IPVerification
		next.LegalName, next.ContactEmail = strings.TrimSpace(form.LegalName), strings.TrimSpace(form.ContactEmail)
		next.ContactPhone, next.ContactURL = strings.TrimSpace(form.ContactPhone), strings.TrimSpace(form.ContactURL)
		next.TermsURL, next.PrivacyURL = strings.TrimSpace(form.TermsURL), strings.TrimSpace(form.PrivacyURL)
		if zone := strings.TrimSpace(form.TimeZone); zone != next.Location().String() {
			// The default zone chosen stays "the default", not a change.
			next.TimeZone = zone
		}
		next.AccountName, next.AccountIBAN = strings.TrimSpace(form.AccountName), form.AccountIBAN
		next.AccountBIC, next.RefundApprovalOver = form.AccountBIC, over
	}
	// Every refusal at once, each beside its field: the rules checked on a
	// copy here, and again when the change is written.
	try := *m
	edit(&try)
	for _, fe := range try.Refusals() {
		if _, said := refusals[fe.Field]; !said {
			refusals[fe.Field] = reasonOf(ec, fe)
		}
	}
	if len(refusals) > 0 {
		form.Errors = refusals
		return c.settingsRefused(ec, m, options, form, http.StatusUnprocessableEntity)
	}
	err = c.Settings.Update(ec.Request().Context(), actor(ec), m.ID, version, edit)
	var fe *merchant.FieldError
	if ce, ok := settings.IsConflict(err); ok {
		// The newer version's number goes with the form: sent again, it
		// saves what was typed over what is shown.
		form.Version = strconv.FormatInt(ce.Newer.Version, 10)
		form.Newer = newerValues(ec, shopFormOf(ce.Newer))
		form.NewerBy = t(ec, "console.settings.conflict", ce.By, when(localizerOf(ec), ce.At))
		return c.settingsRefused(ec, m, options, form, http.StatusConflict)
	}
	switch {
	case errors.As(err, &fe):
		form.Errors = map[string]string{fe.Field: reasonOf(ec, fe)}
		return c.settingsRefused(ec, m, options, form, http.StatusUnprocessableEntity)
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	case err != nil:
		return err
	}
	return ec.Redirect(http.StatusSeeOther, pageFor(RouteSettings, m, options, url.Values{"saved": {"1"}}))
}

// settingsFields are the settings form's fields in the page's order (its
// summary of refusals and the values saved meanwhile follow it), with
// their labels' keys.
var settingsFields = []struct{ name, label string }{
	{"name", "console.settings.name"}, {"return_origins", "console.settings.returnOrigins"},
	{"frame_ancestors", "console.settings.frameAncestors"}, {"popular_banks", "console.settings.popularBanks"},
	{"legal_name", "console.settings.legalName"}, {"contact_email", "console.settings.contactEmail"},
	{"contact_phone", "console.settings.contactPhone"}, {"contact_url", "console.settings.contactURL"},
	{"terms_url", "console.settings.termsURL"}, {"privacy_url", "console.settings.privacyURL"},
	{"time_zone", "console.settings.timeZone"}, {"account_name", "console.settings.accountName"},
	{"account_iban", "console.settings.accountIBAN"}, {"account_bic", "console.settings.accountBIC"},
	{"refund_approval_over", "console.settings.approvalOver"},
}

func (c *Console) settingsRefused(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, form manage.ConsoleShopForm, status int) error {
	page := c.settingsPage(ec, m, options, form)
	refused(&page.ConsolePage, form.Errors)
	slices.SortStableFunc(page.Problems, func(a, b views.FieldError) int {
		return cmp.Compare(fieldOrder(a.ID), fieldOrder(b.ID))
	})
	if form.Newer != nil {
		page.Notice, page.NoticeError = form.NewerBy, true
	}
	return render(ec, status, manage.ConsoleSettingsPage(page))
}

// fieldOrder is where a field stands on the settings form; one it does
// not show comes last.
func fieldOrder(field string) int {
	for i, f := range settingsFields {
		if f.name == field {
			return i
		}
	}
	return len(settingsFields)
}

// newerValues are a form's values as the settings page labels them, in
// its order.
func newerValues(ec echo.Context, f manage.ConsoleShopForm) []manage.ConsoleValue {
	values := []string{f.Name, f.ReturnOrigins, f.FrameAncestors, f.PopularBanks, f.LegalName, f.ContactEmail, f.ContactPhone,
		f.ContactURL, f.TermsURL, f.PrivacyURL, f.TimeZone, f.AccountName, f.AccountIBAN, f.AccountBIC, f.RefundApprovalOver}
	out := make([]manage.ConsoleValue, len(values))
	for i, v := range values {
		out[i] = manage.ConsoleValue{Field: settingsFields[i].name, Label: t(ec, settingsFields[i].label), Value: v}
	}
	return out
}

// fieldReason is a refused setting's reason as the form shows it beside
// the field: where exactly, when the field holds several values.
func fieldReason(fe *merchant.FieldError) string {
	if fe.Path != fe.Field {
		return fe.Path + ": " + fe.Reason
	}
	return fe.Reason
}

// lines are the non-empty lines of a textarea.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// parsePins reads pinned banks, a country per line: "DE: ing, dkb", or
// says which line does not read.
func parsePins(s string) (map[string][]string, *merchant.FieldError) {
	var pins map[string][]string
	for i, l := range lines(s) {
		country, ids, ok := strings.Cut(l, ":")
		if !ok {
			return nil, merchant.Refuse("popular_banks", "line %d: write a country code, a colon and the banks' ids, like DE: ing, dkb", i+1).Says("pinLine", i+1)
		}
		country = strings.ToUpper(strings.TrimSpace(country))
		if pins == nil {
			pins = map[string][]string{}
		}
		if _, dup := pins[country]; dup {
			return nil, merchant.Refuse("popular_banks", "line %d: %s is on two lines", i+1, country).Says("pinTwice", i+1, country)
		}
		var list []string
		for _, id := range strings.Split(ids, ",") {
			list = append(list, strings.TrimSpace(id))
		}
		pins[country] = list
	}
	return pins, nil
}

// auditScope is whose audit log a person reads: an operator every
// merchant's (or one, with ?merchant=), anyone else their merchant's.
func (c *Console) auditScope(ec echo.Context) (string, []consoleviews.ConsoleOption, error) {
	return c.scope(ec, ec.QueryParam("merchant"), t(ec, "console.allMerchants"))
}

// showAudit answers GET /console/audit: every change of the settings,
// newest first, a page at a time.
func (c *Console) showAudit(ec echo.Context) error {
	merchantID, options, err := c.auditScope(ec)
	if err != nil {
		return err
	}
	before, _ := strconv.ParseInt(ec.QueryParam("before"), 10, 64)
	list, err := c.Ledger.Audit(ec.Request().Context(), ledger.AuditQuery{MerchantID: merchantID, Before: before, Limit: auditPage + 1})
	if err != nil {
		return err
	}
	page := auditviews.Log{ConsolePage: c.frame(ec, t(ec, "console.audit"), "audit"), Merchants: options, MerchantID: merchantID}
	q := url.Values{}
	if options != nil && merchantID != "" {
		q.Set("merchant", merchantID)
	}
	page.CSV = templ.SafeURL(RouteAuditCSV + "?" + q.Encode())
	if len(list) > auditPage {
		list = list[:auditPage]
		q.Set("before", strconv.FormatInt(list[len(list)-1].ID, 10))
		page.Older = templ.SafeURL(RouteAudit + "?" + q.Encode())
	}
	if before > 0 {
		q.Del("before")
		page.Newest = templ.SafeURL(RouteAudit + "?" + q.Encode())
	}
	l := localizerOf(ec)
	for _, e := range list {
		page.Rows = append(page.Rows, auditviews.Row{
			At: when(l, e.At), Actor: e.Actor, Merchant: e.MerchantID, Parts: auditParts(l, e), Said: e.Event != "",
			Fields: e.Fields, RequestID: e.RequestID,
		})
	}
	return render(ec, http.StatusOK, auditviews.Page(page))
}

// exportAudit answers GET /console/audit.csv: the whole log the person may
// read, newest first, as RFC 4180 CSV.
func (c *Console) exportAudit(ec echo.Context) error {
	merchantID, _, err := c.auditScope(ec)
	if err != nil {
		return err
	}
	h := ec.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="audit-`+c.Now().UTC().Format("2006-01-02")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	ec.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(ec.Response())
	w.UseCRLF = true
	// The action is English, as the page says it; event and args are the
	// line as it is kept, for programs.
	w.Write([]string{"id", "at", "actor", "merchant_id", "action", "fields", "request_id", "event", "args"})
	en := i18n.Staff("en")
	var before int64
	for {
		list, err := c.Ledger.Audit(ec.Request().Context(), ledger.AuditQuery{MerchantID: merchantID, Before: before, Limit: csvBatch})
		if err != nil {
			c.log(ec).Error("console: audit CSV export stopped", "err", err)
			break
		}
		for _, e := range list {
			row := []string{strconv.FormatInt(e.ID, 10), whenBare(en, e.At), e.Actor, e.MerchantID, sayAudit(en, e), e.Fields, e.RequestID, e.Event, argsOf(e)}
			for i := range row {
				row[i] = safeCell(row[i])
			}
			w.Write(row)
		}
		if len(list) < csvBatch {
			break
		}
		before = list[len(list)-1].ID
	}
	w.Flush()
	return w.Error()
}
