package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/theme"
	consoleviews "github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/manage"
)

// Routes of the Branding page: designers tune, preview and publish their
// merchant's look.
const (
	RouteBranding        = "/console/branding"
	RouteBrandingCheck   = "/console/branding/check"
	RouteBrandingPreview = "/console/branding/preview/:page"
	RouteBrandingPublish = "/console/branding/publish"
	RouteBrandingHistory = "/console/branding/history"
	RouteBrandingRevert  = "/console/branding/revert/:version"
	RouteBrandingLogo    = "/console/branding/logo"
	// RouteStudio is where the studio was: it leads here now.
	RouteStudio = "/studio"
)

// Previews draws the shopper's pages in a look (package shopper's).
type Previews interface {
	// Pages are the pages there are, in the order of a checkout.
	Pages() []string
	Preview(ec echo.Context, m *merchant.Merchant, custom *rules.Customization, page string, link func(page string) templ.SafeURL) error
}

// PreviewTTL is how long a preview link walks the sandbox checkout.
const PreviewTTL = 24 * time.Hour

// paramPreviewTheme carries a draft look in a preview link (package
// shopper's ParamPreviewTheme; honoured in sandbox mode only).
const paramPreviewTheme = "theme"

// previewPage is the page the editor previews first: the bank list.
const previewPage = "banks"

// lookOf reads a look from a form or a query: the fields of the provider's
// customization object (docs/provider.md), trimmed, each at most 300
// characters.
func lookOf(ec echo.Context) rules.Customization {
	get := func(name string) string {
		v := strings.TrimSpace(ec.FormValue(name))
		if r := []rune(v); len(r) > 300 {
			v = string(r[:300])
		}
		return v
	}
	return rules.Customization{
		Title: get("title"), LogoURL: get("logoUrl"), LogoHeight: get("logoHeight"),
		PrimaryColor: get("primaryColor"), BgColor: get("bgColor"),
		Spacing: get("spacing"), Radius: get("radius"), ModalShadow: get("modalShadow"),
	}
}

// brandingForm is the editor as typed, with the versions it was made from.
type brandingForm struct {
	look   rules.Customization
	draft  int64
	live   int64
	errors map[string]string
}

func formOf(ec echo.Context) brandingForm {
	f := brandingForm{look: lookOf(ec)}
	f.draft, _ = strconv.ParseInt(ec.FormValue("draft_version"), 10, 64)
	f.live, _ = strconv.ParseInt(ec.FormValue("live_version"), 10, 64)
	// "Use the suggested colour": field:#RRGGBB.
	if field, colour, ok := strings.Cut(ec.FormValue("use"), ":"); ok {
		switch field {
		case "primaryColor":
			f.look.PrimaryColor = colour
		case "bgColor":
			f.look.BgColor = colour
		}
	}
	return f
}

// errorsOf are the refusals of a look by field, said as the editor says
// them.
func errorsOf(ec echo.Context, errs []rules.FieldError) map[string]string {
	out := map[string]string{}
	for _, fe := range errs {
		name := strings.TrimPrefix(fe.Field, "customization.")
		if _, seen := out[name]; !seen {
			out[name] = lookReason(ec, fe)
		}
	}
	return out
}

// brandingState is what the editor shows beside the form: the saved draft
// and the live version.
type brandingState struct {
	m     *merchant.Merchant
	draft settings.Draft
	live  settings.Published
}

func (c *Console) brandingState(ec echo.Context, m *merchant.Merchant) (brandingState, error) {
	ctx := ec.Request().Context()
	st := brandingState{m: m}
	var err error
	if st.draft, err = c.Settings.Draft(ctx, m); err != nil {
		return st, err
	}
	st.live, err = c.Settings.Live(ctx, m.ID)
	return st, err
}

// showBranding answers GET /console/branding: the editor with the saved
// draft.
func (c *Console) showBranding(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	st, err := c.brandingState(ec, m)
	if err != nil {
		return err
	}
	page := c.brandingPage(ec, st, options, brandingForm{look: st.draft.Custom, draft: st.draft.Version, live: st.live.Version})
	switch ec.QueryParam("done") {
	case "saved":
		page.Notice = t(ec, "console.branding.saved")
	case "published":
		page.Notice = t(ec, "console.branding.published", st.live.Version)
	case "logo":
		page.Notice = t(ec, "console.branding.logoUploaded")
	}
	return render(ec, http.StatusOK, manage.ConsoleBrandingPage(page))
}

// brandingPage is the editor's model: the form as typed, its contrast
// checks and the previews.
func (c *Console) brandingPage(ec echo.Context, st brandingState, options []consoleviews.ConsoleOption, f brandingForm) manage.ConsoleBranding {
	m := st.m
	if f.errors == nil {
		f.errors = errorsOf(ec, c.Settings.CheckLook(f.look))
	}
	page := manage.ConsoleBranding{
		ConsolePage: c.frame(ec, t(ec, "console.branding"), "branding"),
		Merchants:   options, MerchantID: m.ID, ReadOnly: m.ReadOnly(),
		DraftVersion: strconv.FormatInt(f.draft, 10), LiveVersion: strconv.FormatInt(f.live, 10),
		Checks:    checksOf(ec, f.look),
		Page:      c.previewPage(ec.QueryParam("page")),
		Pages:     c.previewPages(ec),
		Accept:    settings.LogoKinds(),
		LogoSize:  t(ec, "console.branding.logoHint", settings.MaxLogoBytes>>10, settings.MaxLogoSide),
		LogoError: f.errors["logo"],
	}
	page.ConsolePage.Scripts = []string{c.Assets.BrandingJS}
	if st.draft.UpdatedBy != "" {
		page.DraftBy = t(ec, "console.branding.draftBy", st.draft.UpdatedBy, when(localizerOf(ec), st.draft.Updated))
	}
	if st.live.Version != 0 {
		page.LiveBy = t(ec, "console.branding.liveBy", st.live.Version, st.live.By, when(localizerOf(ec), st.live.At))
	}
	live := rules.Customization{}
	if m.Customization != nil {
		live = *m.Customization
	}
	if f.look != live {
		page.Unpublished = true
	}
	values := settings.LookValues(&f.look)
	for _, name := range settings.LookFields {
		field := manage.BrandField{Name: name, Label: t(ec, "console.branding.field."+name), Hint: t(ec, "console.branding.hint."+name),
			Value: values[name], Error: f.errors[name]}
		if allowed, ok := enumOf[name]; ok {
			field.Options = append(field.Options, consoleviews.ConsoleOption{Value: "", Label: t(ec, "console.branding.default"), Selected: values[name] == ""})
			for _, v := range allowed {
				field.Options = append(field.Options, consoleviews.ConsoleOption{Value: v, Label: t(ec, "console.branding.enum."+v), Selected: v == values[name]})
			}
		}
		page.Fields = append(page.Fields, field)
	}
	page.PreviewQuery = merchantQuery(m, options, nil)
	if c.Sandbox && len(f.errors) == 0 {
		if link, err := c.previewLink(m, st.draft.Custom); err == nil {
			page.PreviewLink = templ.SafeURL(link)
		} else {
			c.log(ec).Warn("branding preview link", "merchant", m.ID, "err", err)
		}
	}
	return page
}

var enumOf = map[string][]string{"spacing": rules.SpacingValues, "radius": rules.RadiusValues, "modalShadow": rules.ShadowValues}

// previewPage is the page asked to preview, the bank list when none is.
func (c *Console) previewPage(page string) string {
	if slices.Contains(c.Previews.Pages(), page) {
		return page
	}
	return previewPage
}

func (c *Console) previewPages(ec echo.Context) []consoleviews.ConsoleOption {
	var out []consoleviews.ConsoleOption
	for _, p := range c.Previews.Pages() {
		out = append(out, consoleviews.ConsoleOption{Value: p, Label: t(ec, "console.branding.page."+p)})
	}
	return out
}

// checksOf are a look's contrast checks as the editor says them.
func checksOf(ec echo.Context, look rules.Customization) []manage.BrandCheck {
	var out []manage.BrandCheck
	for _, ch := range theme.New(&look, "").Checks() {
		bc := manage.BrandCheck{ID: ch.ID, Label: t(ec, "console.branding.check."+ch.ID), Ratio: fmt.Sprintf("%.2f:1", ch.Ratio), Warn: !ch.Passing()}
		if ch.Suggestion != "" {
			bc.Field, bc.Suggestion = ch.Field, ch.Suggestion
			bc.Advice = t(ec, "console.branding.suggest", t(ec, "console.branding.field."+ch.Field), ch.Suggestion,
				fmt.Sprintf("%.2f:1", theme.Contrast(ch.Suggestion, otherOf(ch))))
		}
		out = append(out, bc)
	}
	return out
}

// otherOf is the colour a check's suggestion is measured against.
func otherOf(ch theme.Check) string {
	if ch.ID == "primary-on-card" {
		return theme.White
	}
	return theme.TextOn(ch.Suggestion)
}

// warned is true when a look fails a contrast check.
func warned(look rules.Customization) bool {
	for _, ch := range theme.New(&look, "").Checks() {
		if !ch.Passing() {
			return true
		}
	}
	return false
}

// checkBranding answers GET /console/branding/check for the editor's
// script: the look's custom properties, contrast checks and refusals, from
// the same code as the page. It saves nothing.
func (c *Console) checkBranding(ec echo.Context) error {
	look := lookOf(ec)
	vars := map[string]string{}
	for _, v := range theme.New(&look, "").Vars() {
		vars[v[0]] = v[1]
	}
	checks := map[string]any{}
	for _, ch := range checksOf(ec, look) {
		checks[ch.ID] = map[string]any{"ratio": ch.Ratio, "warn": ch.Warn, "advice": ch.Advice, "field": ch.Field, "suggestion": ch.Suggestion}
	}
	ec.Response().Header().Set("Cache-Control", "no-store")
	return ec.JSON(http.StatusOK, map[string]any{"vars": vars, "checks": checks, "errors": errorsOf(ec, c.Settings.CheckLook(look))})
}

// previewBranding answers GET /console/branding/preview/{page}: the
// shopper's page in a look: a published version (?version=), the look
// typed (?typed=1 and the fields), or the saved draft. POST answers the
// editor's Preview button without script: the page in the look typed,
// saving nothing.
func (c *Console) previewBranding(ec echo.Context) error {
	if !slices.Contains(c.Previews.Pages(), ec.Param("page")) {
		return errNotFound
	}
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	var look rules.Customization
	switch {
	case ec.Request().Method == http.MethodPost:
		look = formOf(ec).look
	case ec.QueryParam("version") != "":
		v, _ := strconv.ParseInt(ec.QueryParam("version"), 10, 64)
		p, err := c.Settings.PublishedVersion(ec.Request().Context(), m.ID, v)
		if errors.Is(err, ledger.ErrNotFound) {
			return errNotFound
		} else if err != nil {
			return err
		}
		look = p.Custom
	case ec.QueryParam("typed") != "":
		look = lookOf(ec)
	default:
		d, err := c.Settings.Draft(ec.Request().Context(), m)
		if err != nil {
			return err
		}
		look = d.Custom
	}
	// The page's links lead to the other pages in the same look.
	keep := url.Values{}
	for k, v := range ec.QueryParams() {
		if k != "page" {
			keep[k] = v
		}
	}
	if ec.Request().Method == http.MethodPost {
		keep.Set("typed", "1")
		for name, v := range settings.LookValues(&look) {
			if v != "" {
				keep.Set(name, v)
			}
		}
	}
	link := func(page string) templ.SafeURL {
		return templ.SafeURL(RouteBranding + "/preview/" + page + "?" + merchantQuery(m, options, keep))
	}
	return c.Previews.Preview(ec, m, &look, ec.Param("page"), link)
}

// saveBranding answers POST /console/branding: the draft saved from the
// version the form was made from. A bad value comes back beside its field
// with everything typed; a draft saved meanwhile is shown, never
// overwritten.
func (c *Console) saveBranding(ec echo.Context) error {
	m, options, err := c.brandingMerchant(ec)
	if err != nil {
		return err
	}
	f := formOf(ec)
	_, err = c.Settings.SaveDraft(ec.Request().Context(), actor(ec), m.ID, f.draft, f.look)
	if err != nil {
		return c.brandingRefused(ec, m, options, f, err)
	}
	return ec.Redirect(http.StatusSeeOther, c.brandingURL(m, options, "saved"))
}

// brandingMerchant is the merchant a branding change is for: one the
// console manages.
func (c *Console) brandingMerchant(ec echo.Context) (*merchant.Merchant, []consoleviews.ConsoleOption, error) {
	m, options, err := c.settingsMerchant(ec, ec.FormValue("merchant"))
	if err == nil && m.ReadOnly() {
		err = errManagedByFile
	}
	return m, options, err
}

func (c *Console) brandingURL(m *merchant.Merchant, options []consoleviews.ConsoleOption, done string) string {
	return pageFor(RouteBranding, m, options, url.Values{"done": {done}})
}

// brandingRefused shows the editor again with what was typed and why it
// was refused: the fields' reasons, a draft or a version saved meanwhile.
func (c *Console) brandingRefused(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, f brandingForm, err error) error {
	st, stErr := c.brandingState(ec, m)
	if stErr != nil {
		return stErr
	}
	var (
		ve     *rules.ValidationError
		dc     *settings.DraftConflictError
		pc     *settings.PublishConflictError
		le     *settings.LogoError
		status = http.StatusUnprocessableEntity
		notice string
		newer  *manage.BrandNewer
	)
	switch {
	case errors.As(err, &ve):
		f.errors = errorsOf(ec, ve.Fields)
	case errors.As(err, &le):
		f.errors = map[string]string{"logo": reasonOf(ec, le)}
	case errors.As(err, &dc):
		// The newer draft's number goes with the form: saved again, what
		// was typed goes over what is shown.
		status, f.draft = http.StatusConflict, dc.Newer.Version
		notice = t(ec, "console.branding.draftConflict", dc.Newer.UpdatedBy, when(localizerOf(ec), dc.Newer.Updated))
		newer = &manage.BrandNewer{Values: settings.LookValues(&dc.Newer.Custom)}
	case errors.As(err, &pc):
		status, f.live = http.StatusConflict, pc.Newer.Version
		notice = t(ec, "console.branding.publishConflict", pc.Newer.Version, pc.Newer.By, when(localizerOf(ec), pc.Newer.At))
		newer = &manage.BrandNewer{Values: settings.LookValues(&pc.Newer.Custom), Version: strconv.FormatInt(pc.Newer.Version, 10)}
	case errors.Is(err, settings.ErrNothingToPublish):
		status, notice = http.StatusConflict, t(ec, "console.branding.nothingToPublish")
	case errors.Is(err, settings.ErrManagedByFile):
		return errManagedByFile
	default:
		return err
	}
	page := c.brandingPage(ec, st, options, f)
	refused(&page.ConsolePage, f.errors)
	page.Notice, page.NoticeError, page.Newer = notice, notice != "", newer
	if newer != nil {
		for i := range page.Fields {
			page.Fields[i].Newer, page.Fields[i].Conflict = newer.Values[page.Fields[i].Name], true
		}
	}
	return render(ec, status, manage.ConsoleBrandingPage(page))
}

// publishBranding answers POST /console/branding/publish: the look typed is
// saved as the draft and made live on every instance. A look below the
// contrast the checks ask is published only when asked once more.
func (c *Console) publishBranding(ec echo.Context) error {
	m, options, err := c.brandingMerchant(ec)
	if err != nil {
		return err
	}
	f := formOf(ec)
	ctx := ec.Request().Context()
	if f.draft, err = c.Settings.SaveDraft(ctx, actor(ec), m.ID, f.draft, f.look); err != nil {
		return c.brandingRefused(ec, m, options, f, err)
	}
	if warned(f.look) && ec.FormValue("anyway") == "" {
		st, err := c.brandingState(ec, m)
		if err != nil {
			return err
		}
		page := c.brandingPage(ec, st, options, f)
		page.Confirm = true
		page.Notice, page.NoticeError = t(ec, "console.branding.confirm"), true
		return render(ec, http.StatusUnprocessableEntity, manage.ConsoleBrandingPage(page))
	}
	if _, err := c.Settings.Publish(ctx, actor(ec), m.ID, f.live, f.look); err != nil {
		return c.brandingRefused(ec, m, options, f, err)
	}
	return ec.Redirect(http.StatusSeeOther, c.brandingURL(m, options, "published"))
}

// showBrandingHistory answers GET /console/branding/history: every look
// published, newest first, with who, when, what changed and its bank list.
func (c *Console) showBrandingHistory(ec echo.Context) error {
	m, options, err := c.settingsMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	history, err := c.Settings.History(ec.Request().Context(), m.ID)
	if err != nil {
		return err
	}
	page := manage.ConsoleBrandingHistory{
		ConsolePage: c.frame(ec, t(ec, "console.branding.history"), "branding"),
		Merchants:   options, MerchantID: m.ID, ReadOnly: m.ReadOnly(),
	}
	for i, h := range history {
		row := manage.BrandVersion{
			Version: strconv.FormatInt(h.Version, 10), At: when(localizerOf(ec), h.At), By: h.By, Live: i == 0,
			Thumb:  templ.SafeURL(RouteBranding + "/preview/banks?" + merchantQuery(m, options, url.Values{"version": {strconv.FormatInt(h.Version, 10)}})),
			Revert: templ.SafeURL(fmt.Sprintf("%s/revert/%d", RouteBranding, h.Version)),
		}
		values := settings.LookValues(&h.Custom)
		var labels []string
		for _, name := range h.Changed {
			label := t(ec, "console.branding.field."+name)
			labels = append(labels, label)
			change := manage.BrandChange{Label: label, Value: lookValue(ec, name, values[name])}
			if (name == "primaryColor" || name == "bgColor") && values[name] != "" {
				change.Swatch = values[name]
			}
			row.Changes = append(row.Changes, change)
		}
		if h.RevertedFrom != 0 {
			row.Reverted = t(ec, "console.branding.revertedFrom", h.RevertedFrom, strings.Join(labels, ", "))
		}
		if i == 0 {
			page.LiveVersion = row.Version
		}
		page.Versions = append(page.Versions, row)
	}
	if ec.QueryParam("done") == "reverted" && len(history) > 0 {
		page.Notice = t(ec, "console.branding.reverted", history[0].RevertedFrom, history[0].Version) + " " + t(ec, "console.branding.draftFollows")
	}
	return render(ec, http.StatusOK, manage.ConsoleBrandingHistoryPage(page))
}

// revertBranding answers POST /console/branding/revert/{version}: the
// version is made live again, as a new version.
func (c *Console) revertBranding(ec echo.Context) error {
	m, options, err := c.brandingMerchant(ec)
	if err != nil {
		return err
	}
	version, _ := strconv.ParseInt(ec.Param("version"), 10, 64)
	live, _ := strconv.ParseInt(ec.FormValue("live_version"), 10, 64)
	_, err = c.Settings.Revert(ec.Request().Context(), actor(ec), m.ID, version, live)
	var pc *settings.PublishConflictError
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return errNotFound
	case errors.As(err, &pc):
		return &consoleError{status: http.StatusConflict, key: "console.error.brandingChanged", err: err,
			args: []any{pc.Newer.Version, pc.Newer.By, when(localizerOf(ec), pc.Newer.At)}}
	case errors.Is(err, settings.ErrNothingToPublish):
		return &consoleError{status: http.StatusConflict, key: "console.error.brandingLive", err: err}
	case err != nil:
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteBrandingHistory+"?"+merchantQuery(m, options, url.Values{"done": {"reverted"}}))
}

// MaxLogoForm is the largest request the logo upload takes (the app's
// other requests take 64 KB): the editor's multipart form with a file of
// up to twice settings.MaxLogoBytes. A file somewhat too big still comes
// in whole, with the form's CSRF token, so that this page can say how big
// it is and keep what was typed; a bigger one is refused with 413 unread.
const MaxLogoForm = 2 * settings.MaxLogoBytes

// uploadLogo answers POST /console/branding/logo (multipart): the image is
// checked by decoding it, kept in the ledger, and the draft (as typed)
// takes its address under /brand/.
func (c *Console) uploadLogo(ec echo.Context) error {
	m, options, err := c.brandingMerchant(ec)
	if err != nil {
		return err
	}
	f := formOf(ec)
	file, err := ec.FormFile("logo")
	if err != nil {
		return c.brandingRefused(ec, m, options, f, &settings.LogoError{Reason: t(ec, "console.branding.logoNone")})
	}
	src, err := file.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	// One byte past the limit tells a file too big without reading it all.
	data, err := io.ReadAll(io.LimitReader(src, settings.MaxLogoBytes+1))
	if err != nil {
		return err
	}
	if len(data) > settings.MaxLogoBytes {
		return c.brandingRefused(ec, m, options, f, &settings.LogoError{Key: "logoTooBig", Args: []any{(file.Size + 1023) / 1024, settings.MaxLogoBytes >> 10}})
	}
	logo, err := settings.ReadLogo(data)
	if err != nil {
		return c.brandingRefused(ec, m, options, f, err)
	}
	if !c.Sandbox && !strings.HasPrefix(c.BaseURL, "https://") {
		return c.brandingRefused(ec, m, options, f, &settings.LogoError{Reason: t(ec, "console.branding.logoNoHTTPS")})
	}
	ctx := ec.Request().Context()
	if err := c.Settings.PutLogo(ctx, actor(ec), m.ID, logo); err != nil {
		return err
	}
	f.look.LogoURL = c.BaseURL + BrandPath + logo.Name
	if _, err := c.Settings.SaveDraft(ctx, actor(ec), m.ID, f.draft, f.look); err != nil {
		return c.brandingRefused(ec, m, options, f, err)
	}
	return ec.Redirect(http.StatusSeeOther, c.brandingURL(m, options, "logo"))
}

// BrandPath is where uploaded logos are served, by name.
const BrandPath = "/brand/"

// previewLink is a signed checkout link of the merchant in the draft look,
// good for PreviewTTL: it walks the whole sandbox checkout (sandbox mode
// only; shopper pages ignore the look elsewhere).
func (c *Console) previewLink(m *merchant.Merchant, look rules.Customization) (string, error) {
	if len(m.ReturnOrigins) == 0 || m.NewestKID() == "" {
		return "", fmt.Errorf("merchant %s has no return origin or link key", m.ID)
	}
	returnURL := m.ReturnOrigins[0] + "/"
	if m.ID == merchant.DemoID {
		returnURL = c.BaseURL + merchant.DemoShopPath
	}
	raw, _ := json.Marshal(look)
	now := c.Now()
	l := order.Link{Order: order.Order{
		ID: fmt.Sprintf("PREVIEW-%d", now.UnixNano()), Amount: "49.90", Currency: rules.Currency,
		ReturnURL: returnURL, KID: m.NewestKID(),
	}, TTL: PreviewTTL, Extra: url.Values{paramPreviewTheme: {string(raw)}}}
	return l.URL(c.BaseURL, m, now)
}

// studioMoved answers the studio's old address: the Branding page.
func studioMoved(ec echo.Context) error {
	return ec.Redirect(http.StatusPermanentRedirect, RouteBranding)
}

// lookValue is a look's value as the editor names it: a size by its
// word, nothing as the provider's default.
func lookValue(ec echo.Context, name, value string) string {
	switch {
	case value == "":
		return t(ec, "console.branding.default")
	case name == "spacing" || name == "radius" || name == "modalShadow":
		return t(ec, "console.branding.enum."+value)
	}
	return value
}
