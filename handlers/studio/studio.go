// Package studio serves designers (DESIGN.md section 4): the theme studio
// tunes a merchant's customization with contrast checks and a live preview
// of the shopper's pages, open in sandbox mode and behind STUDIO_TOKEN
// elsewhere.
package studio

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/logos"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/theme"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/views/checkout"
)

// Studio routes.
const (
	RouteStudio      = "/studio"
	RouteStudioCheck = "/studio/check"
)

// sessionStudioDraft keeps the designer's draft across reloads.
// Config is what the studio is built from.
type Config struct {
	// BaseURL is the app's public URL: preview links lead there.
	BaseURL   string
	Merchants *merchant.Directory
	// Sandbox opens the studio to anyone and makes preview links.
	Sandbox bool
	// StudioToken opens /studio outside sandbox mode (as the Basic auth
	// password); with none the studio is off there.
	StudioToken string
	Assets      views.Assets
	Log         *slog.Logger
	Now         func() time.Time
	// Frame gives the shopper's page frame and session conveniences,
	// which the preview shares.
	Frame Frame
}

// Frame is what the studio needs of the shopper's pages.
type Frame interface {
	Page(c echo.Context, title string) views.Page
	Remember(c echo.Context, key, value string)
	SessionValue(c echo.Context, key string) string
}

// Studio serves the theme studio.
type Studio struct{ Config }

// New returns the studio.
func New(cfg Config) *Studio { return &Studio{Config: cfg} }

const sessionStudioDraft = "studio_draft"

// studioFields are the customization's fields in the order the form shows
// them, by their PIS-API.md 2.4 names.
var studioFields = []struct{ name, label, hint string }{
	{"title", "Title", "Shown in the header and on the provider's page."},
	{"logoUrl", "Logo URL", "An absolute URL; https outside the sandbox."},
	{"logoHeight", "Logo height", fmt.Sprintf("Pixels, %d to %d, like 40px.", rules.MinLogoHeight, rules.MaxLogoHeight)},
	{"primaryColor", "Primary colour", "Buttons, links, focus ring, selection. Like #0B5FFF."},
	{"bgColor", "Background colour", "The page behind the card. Like #F4F5F7."},
	{"spacing", "Spacing", ""},
	{"radius", "Corners", ""},
	{"modalShadow", "Card shadow", ""},
}

// guardStudio lets a designer in: open in sandbox mode, behind STUDIO_TOKEN
// (as the Basic auth password) otherwise, and absent when neither.
func (h *Studio) guardStudio(c echo.Context) error {
	if h.Sandbox {
		return nil
	}
	if h.StudioToken == "" {
		return web.ErrNotFound
	}
	_, password, ok := c.Request().BasicAuth()
	given, want := sha256.Sum256([]byte(password)), sha256.Sum256([]byte(h.StudioToken))
	if !ok || subtle.ConstantTimeCompare(given[:], want[:]) != 1 {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Basic realm="studio", charset="UTF-8"`)
		return &web.PageError{Status: http.StatusUnauthorized, Heading: "The studio needs its password",
			Message: "Sign in with the studio token your operator set (STUDIO_TOKEN); any user name will do."}
	}
	return nil
}

// draft is a studio form: the merchant it starts from and the customization.
type draft struct {
	Merchant string              `json:"merchant"`
	Custom   rules.Customization `json:"custom"`
}

func readDraft(c echo.Context) draft {
	get := func(name string) string {
		v := strings.TrimSpace(c.FormValue(name))
		if r := []rune(v); len(r) > 300 {
			v = string(r[:300])
		}
		return v
	}
	return draft{Merchant: get("merchant"), Custom: rules.Customization{
		Title: get("title"), LogoURL: get("logoUrl"), LogoHeight: get("logoHeight"),
		PrimaryColor: get("primaryColor"), BgColor: get("bgColor"),
		Spacing: get("spacing"), Radius: get("radius"), ModalShadow: get("modalShadow"),
	}}
}

// fromMerchant starts a draft from a merchant's configured theme.
func (h *Studio) fromMerchant(id string) draft {
	m, ok := h.Merchants.Get(id)
	if !ok {
		m = h.Merchants.All()[0]
	}
	d := draft{Merchant: m.ID}
	if m.Customization != nil {
		d.Custom = *m.Customization
	}
	return d
}

// check validates a draft as start-up would for a merchant's configuration.
func (h *Studio) check(d draft) []rules.FieldError {
	errs := d.Custom.Check()
	if !h.Sandbox && d.Custom.LogoURL != "" && !strings.HasPrefix(d.Custom.LogoURL, "https://") {
		errs = append(errs, rules.FieldError{Field: "customization.logoUrl", Reason: rules.ReasonInvalid, Message: "must be an https URL outside sandbox mode"})
	}
	return errs
}

// ShowStudio shows the studio with the saved draft, or with a merchant's
// theme when asked.
func (h *Studio) ShowStudio(c echo.Context) error {
	if err := h.guardStudio(c); err != nil {
		return err
	}
	d, ok := h.savedDraft(c)
	if id := c.QueryParam("merchant"); id != "" || !ok {
		d = h.fromMerchant(id)
	}
	return h.renderStudio(c, http.StatusOK, d)
}

// UpdateStudio takes a submitted draft (no script) and shows it.
func (h *Studio) UpdateStudio(c echo.Context) error {
	if err := h.guardStudio(c); err != nil {
		return err
	}
	d := readDraft(c)
	if c.FormValue("action") == "load" {
		d = h.fromMerchant(d.Merchant)
	}
	h.saveDraft(c, d)
	status := http.StatusOK
	if len(h.check(d)) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return h.renderStudio(c, status, d)
}

// StudioCheck answers the live preview of static/studio.js: the draft's
// custom properties, contrast, errors and JSON, from the same code as the
// page. It saves the draft, so a reload keeps it.
func (h *Studio) StudioCheck(c echo.Context) error {
	if err := h.guardStudio(c); err != nil {
		return err
	}
	d := readDraft(c)
	h.saveDraft(c, d)
	s := h.studio(d)
	vars := map[string]string{}
	for _, v := range theme.New(&d.Custom, "").Vars() {
		vars[v[0]] = v[1]
	}
	errs := map[string]string{}
	for _, fe := range h.check(d) {
		errs[strings.TrimPrefix(fe.Field, "customization.")] = fe.Message
	}
	ratios := map[string]map[string]any{}
	for _, r := range s.Ratios {
		ratios[r.ID] = map[string]any{"text": r.Text, "warn": r.Warn}
	}
	return c.JSON(http.StatusOK, map[string]any{
		"vars": vars, "ratios": ratios, "errors": errs, "json": s.JSON, "previewLink": string(s.PreviewLink),
	})
}

// savedDraft is the designer's draft from the session cookie.
func (h *Studio) savedDraft(c echo.Context) (draft, bool) {
	var d draft
	raw := h.Frame.SessionValue(c, sessionStudioDraft)
	if raw == "" || json.Unmarshal([]byte(raw), &d) != nil {
		return draft{}, false
	}
	return d, true
}

// saveDraft keeps the draft in the session cookie, so a reload shows it.
func (h *Studio) saveDraft(c echo.Context, d draft) {
	raw, _ := json.Marshal(d)
	h.Frame.Remember(c, sessionStudioDraft, string(raw))
}

func (h *Studio) renderStudio(c echo.Context, status int, d draft) error {
	s := h.studio(d)
	errs := h.check(d)
	byField := map[string]string{}
	for _, fe := range errs {
		name := strings.TrimPrefix(fe.Field, "customization.")
		if _, seen := byField[name]; !seen {
			byField[name] = fe.Message
			s.Errors = append(s.Errors, views.FieldError{ID: name, Message: labelOf(name) + ": " + fe.Message})
		}
	}
	values := map[string]string{
		"title": d.Custom.Title, "logoUrl": d.Custom.LogoURL, "logoHeight": d.Custom.LogoHeight,
		"primaryColor": d.Custom.PrimaryColor, "bgColor": d.Custom.BgColor,
		"spacing": d.Custom.Spacing, "radius": d.Custom.Radius, "modalShadow": d.Custom.ModalShadow,
	}
	enums := map[string][]string{"spacing": rules.SpacingValues, "radius": rules.RadiusValues, "modalShadow": rules.ShadowValues}
	for _, f := range studioFields {
		field := views.Field{Kind: views.KindText, Name: f.name, ID: f.name, Label: f.label, Hint: f.hint,
			Value: values[f.name], Error: byField[f.name], Autocomplete: "off", MaxLength: 300}
		if allowed, ok := enums[f.name]; ok {
			field.Kind = views.KindSelect
			field.EmptyOption = "Default"
			for _, v := range allowed {
				field.Options = append(field.Options, views.Option{Value: v, Label: v, Selected: v == values[f.name]})
			}
		}
		s.Fields = append(s.Fields, field)
	}
	for _, m := range h.Merchants.All() {
		s.Merchants = append(s.Merchants, views.Option{Value: m.ID, Label: m.Name + " (" + m.ID + ")", Selected: m.ID == d.Merchant})
	}
	s.Page = h.Frame.Page(c, "Theme studio")
	s.Page.Scripts = []string{h.Assets.StudioJS}
	s.Page.Wide = true
	s.Page.Theme.CSS += theme.New(&d.Custom, "").CSS(".studio-preview")
	if len(errs) > 0 {
		s.Page.Title = "Error: " + s.Page.Title
	}
	return web.Render(c, status, checkout.Studio(s))
}

func labelOf(name string) string {
	for _, f := range studioFields {
		if f.name == name {
			return f.label
		}
	}
	return name
}

// studio builds what the page and the live check share: the contrast
// checks, the JSON, the preview link and the sample content.
func (h *Studio) studio(d draft) checkout.StudioPage {
	th := theme.New(&d.Custom, "")
	ratio := func(id, label, fg, bg string) checkout.Ratio {
		r := theme.Contrast(fg, bg)
		return checkout.Ratio{ID: id, Label: label, Text: fmt.Sprintf("%.2f:1", r), Warn: r < theme.MinContrast}
	}
	// sample is a bank row of the preview, with its initials as a bank
	// without a logo shows them.
	sample := func(id, name string, lastUsed bool) checkout.BankRow {
		return checkout.BankRow{ID: id, Name: name, URL: "#", LastUsed: lastUsed, Initials: views.Initials(name), Tone: logos.Tone(name)}
	}
	s := checkout.StudioPage{
		Action: templ.SafeURL(RouteStudio),
		Ratios: []checkout.Ratio{
			ratio("text-on-bg", "Text on the background", th.Ink, th.Bg),
			ratio("text-on-primary", "Text on the primary colour", th.OnPrimary, th.Primary),
			ratio("primary-on-card", "Primary colour on the white card (below 4.5:1, links and outlines turn near-black)", th.Primary, theme.White),
		},
		Summary:    checkout.Summary{Merchant: "Your shop", Amount: "€49.90", OrderID: "A-1001"},
		StatusHead: "Paid",
		StatusText: "Your payment is complete.",
		Banks:      []checkout.BankRow{sample("a", "Crédit Agricole", true), sample("b", "Deutsche Bank", false), sample("c", "ING", false)},
		Form: []views.Field{
			{Kind: views.KindText, Name: "preview-name", ID: "preview-name", Label: "Account holder's name", Value: "Erika Mustermann"},
			{Kind: views.KindText, Name: "preview-iban", ID: "preview-iban", Label: "IBAN", Value: "DE89 3704 0044 0532 0130 01",
				Error: "This IBAN is not right: its check digits do not match."},
		},
	}
	if m, ok := h.Merchants.Get(d.Merchant); ok {
		s.Summary.Merchant = m.Name
	}
	compact := compactCustomization(d.Custom)
	pretty, _ := json.MarshalIndent(map[string]any{"customization": compact}, "", "  ")
	s.JSON = string(pretty)
	if h.Sandbox && len(h.check(d)) == 0 {
		if link, err := h.previewLink(d, compact); err == nil {
			s.PreviewLink = templ.SafeURL(link)
		} else {
			h.Log.Warn("studio preview link", "err", err)
		}
	}
	return s
}

// compactCustomization drops empty fields, which mean "the provider's default".
func compactCustomization(c rules.Customization) map[string]string {
	out := map[string]string{}
	raw, _ := json.Marshal(c)
	json.Unmarshal(raw, &out)
	return out
}

// previewLink is a signed checkout link of the draft's merchant in the
// draft's look, for the sandbox.
func (h *Studio) previewLink(d draft, custom map[string]string) (string, error) {
	m, ok := h.Merchants.Get(d.Merchant)
	if !ok {
		return "", fmt.Errorf("no merchant %q", d.Merchant)
	}
	returnURL := m.ReturnOrigins[0] + "/"
	if m.ID == merchant.DemoID {
		returnURL = h.BaseURL + merchant.DemoShopPath
	}
	raw, _ := json.Marshal(custom)
	now := h.Now()
	l := order.Link{Order: order.Order{
		ID: fmt.Sprintf("PREVIEW-%d", now.UnixNano()), Amount: "49.90", Currency: rules.Currency,
		ReturnURL: returnURL, KID: m.NewestKID(),
	}, TTL: time.Hour, Extra: url.Values{shopper.ParamPreviewTheme: {string(raw)}}}
	return l.URL(h.BaseURL, m, now)
}
