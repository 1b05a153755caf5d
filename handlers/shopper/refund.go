package shopper

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/views"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// RouteRefund is a refund's page for its payer: where they give the
// account their money goes back to.
const RouteRefund = "/r/:id"

// Field names of the refund's form.
const (
	refundName = "name"
	refundIBAN = "iban"
	refundBIC  = "bic"
)

// errRefundUnknown answers an id that is no refund's page: malformed,
// unknown or guessed alike.
var errRefundUnknown = &web.PageError{Status: http.StatusNotFound, Key: "refund.unknown"}

// showRefund answers GET /r/{id}: the shop, the amount, the order and the
// reason, and while the refund waits for it, the form for the payer's
// account; after, where the refund stands.
func (h *Steps) showRefund(c echo.Context) error {
	r, m, err := h.theRefund(c)
	if err != nil {
		return err
	}
	return h.renderRefund(c, http.StatusOK, r, m, nil, nil, "")
}

// takeRefundAccount answers POST /r/{id}: the account is checked as a bank
// would, and refused beside each field with everything typed kept; a
// refund whose account was given, or that was cancelled, says so and
// changes nothing.
func (h *Steps) takeRefundAccount(c echo.Context) error {
	r, m, err := h.theRefund(c)
	if err != nil {
		return err
	}
	typed := refunds.Account{Name: c.FormValue(refundName), IBAN: c.FormValue(refundIBAN), BIC: c.FormValue(refundBIC)}
	if r.State != ledger.RefundAwaitingAccount {
		return h.renderRefund(c, http.StatusConflict, r, m, nil, nil, alreadyNote(r))
	}
	got, err := h.Refunds.PayerGives(c.Request().Context(), r, typed)
	var refusal *refunds.Refusal
	switch {
	case errors.As(err, &refusal):
		return h.renderRefund(c, http.StatusUnprocessableEntity, r, m, &typed, refusal, "")
	case errors.Is(err, refunds.ErrMoved):
		// Given or cancelled meanwhile, in another window or by the shop.
		got, err := h.Orders.Ledger.RefundByPage(c.Request().Context(), r.PageID)
		if err != nil {
			return err
		}
		return h.renderRefund(c, http.StatusConflict, got, m, nil, nil, alreadyNote(got))
	case err != nil:
		return err
	}
	h.log(c).Info("refund: the payer gave their account", "merchant", m.ID, "refund", got.ID)
	return c.Redirect(http.StatusSeeOther, refundAddress(c, r))
}

// alreadyNote is what a refund's page says above all to a payer who sends
// an account it no longer takes: that one was given, unless the refund
// was cancelled, which its page says already.
func alreadyNote(r ledger.Refund) string {
	if r.State == ledger.RefundCancelled {
		return ""
	}
	return "refund.already"
}

// refundAddress is a refund's page, in the language the payer chose on
// it, if they did: the form and the page after it keep their choice,
// without a cookie.
func refundAddress(c echo.Context, r ledger.Refund) string {
	address := refunds.PageRoute + r.PageID
	if lang := c.QueryParam(paramLang); lang != "" {
		address += "?" + url.Values{paramLang: {lang}}.Encode()
	}
	return address
}

// theRefund is the refund a request's address names, and its merchant,
// whose look and language the page takes.
func (h *Steps) theRefund(c echo.Context) (ledger.Refund, *merchant.Merchant, error) {
	id := c.Param("id")
	if h.Refunds == nil || !refunds.ValidPageID(id) {
		return ledger.Refund{}, nil, errRefundUnknown
	}
	r, err := h.Orders.Ledger.RefundByPage(c.Request().Context(), id)
	if errors.Is(err, ledger.ErrRefundNotFound) {
		return r, nil, errRefundUnknown
	}
	if err != nil {
		return r, nil, err
	}
	m, ok := h.linkMerchant(c, r.MerchantID, r.Lang)
	if !ok {
		return r, nil, errMerchantGone(r.MerchantID)
	}
	return r, m, nil
}

// renderRefund draws a refund's page: the form (typed kept, refusal beside
// each field) while it waits for the account, else where it stands; note
// is a message (a catalog key) above it.
func (h *Steps) renderRefund(c echo.Context, status int, r ledger.Refund, m *merchant.Merchant, typed *refunds.Account, refusal *refunds.Refusal, note string) error {
	l := h.loc(c)
	page := checkoutviews.RefundPage{Shop: m.Name, Amount: l.Amount(r.Amount), OrderID: r.OrderID, Reason: r.Reason, State: r.State,
		Masked: r.AccountMasked, Action: templ.SafeURL(refundAddress(c, r))}
	if note != "" {
		page.Note = l.T(note)
	}
	switch r.State {
	case ledger.RefundAwaitingAccount:
		page.Heading, page.Message = l.T("refund.ask.heading"), l.T("refund.ask.text", m.Name)
		page.Form = true
		page.Fields, page.Errors = refundFields(l, typed, refusal)
	case ledger.RefundAwaitingApproval, ledger.RefundReady:
		page.Heading, page.Message = l.T("refund.given.heading"), l.T("refund.given.text", m.Name, page.Amount, r.AccountMasked)
	case ledger.RefundSent:
		page.Heading, page.Message = l.T("refund.sent.heading"), l.T("refund.sent.text", m.Name, page.Amount, r.AccountMasked, l.DateTime(r.Sent)+" UTC")
	case ledger.RefundBooked:
		page.Heading, page.Message = l.T("refund.booked.heading"), l.T("refund.booked.text", m.Name, page.Amount, r.AccountMasked)
	case ledger.RefundReturned:
		page.Heading, page.Message = l.T("refund.returned.heading"), l.T("refund.returned.text", r.AccountMasked, m.Name)
	default:
		page.Heading, page.Message = l.T("refund.cancelled.heading"), l.T("refund.cancelled.text", m.Name)
	}
	title := page.Heading
	if len(page.Errors) > 0 {
		title = l.T("title.error", title)
	}
	page.Page = h.page(c, title)
	page.Page.Switch = addressLanguageSwitch(c, refunds.PageRoute+r.PageID)
	return web.Render(c, status, checkoutviews.Refund(page))
}

// refundFields are the form's fields, with what was typed and each
// refusal in the payer's language. The BIC is asked only of a bank whose
// country needs it (outside the European Economic Area), or once typed.
func refundFields(l *i18n.Localizer, typed *refunds.Account, refusal *refunds.Refusal) ([]views.Field, []views.FieldError) {
	var a refunds.Account
	if typed != nil {
		a = *typed
	}
	fields := []views.Field{
		{Kind: "text", Name: refundName, ID: refundName, Label: l.T("refund.field.name"), Hint: l.T("refund.field.name.hint"),
			Value: a.Name, Autocomplete: "name", MaxLength: refunds.MaxName, Required: true},
		{Kind: "text", Name: refundIBAN, ID: refundIBAN, Label: l.T("field.iban"), Hint: l.T("refund.field.iban.hint", rules.ExampleIBAN(countryOf(l.Lang()))),
			Value: a.IBAN, Autocomplete: "off", MaxLength: 42, Required: true, Uppercase: true},
	}
	iban := rules.NormalizeIBAN(a.IBAN)
	if strings.TrimSpace(a.BIC) != "" || rules.IBANNeedsBIC(iban) {
		fields = append(fields, views.Field{Kind: "text", Name: refundBIC, ID: refundBIC, Label: l.T("field.bic"),
			Hint: l.T("refund.field.bic.hint", l.Country(iban[:min(2, len(iban))])), Value: a.BIC, Autocomplete: "off", MaxLength: 11, Uppercase: true,
			Required: rules.IBANNeedsBIC(iban)})
	}
	var errs []views.FieldError
	if refusal != nil {
		for i := range fields {
			if fe := refusal.Field(fields[i].Name); fe != nil {
				fields[i].Error = refundReason(l, fields[i].Label, fe)
				errs = append(errs, views.FieldError{ID: fields[i].ID, Message: fields[i].Error})
			}
		}
	}
	return fields, errs
}

// refundReason says a refused field of the refund's form in the payer's
// language.
func refundReason(l *i18n.Localizer, label string, fe *merchant.FieldError) string {
	switch fe.Key {
	case "required":
		return l.T("missing." + map[string]string{refundName: "name", refundIBAN: "iban", refundBIC: "bic"}[fe.Field])
	case "ibanChecksum":
		return l.T("invalid.ibanChecksum")
	case "ibanLength":
		return l.T("invalid.ibanLength")
	case "ibanCountry":
		return l.T("refund.ibanCountry", l.Country(fe.Args[0].(string)))
	case "bic":
		return l.T("invalid.bic")
	case "bicRequired":
		return l.T("refund.bicRequired", l.Country(fe.Args[0].(string)))
	case "tooLongHas":
		return l.T("invalid.tooLong", label, fe.Args[0])
	case "hidden":
		return l.T("invalid.character", label)
	case "nameLatin":
		return l.T("refund.nameLatin")
	}
	return l.T("invalid.iban")
}

// countryOf is the country an IBAN example is shown for: the page's
// language's (Germany's for English and the languages of several).
func countryOf(lang string) string {
	country := map[string]string{"bg": "BG", "cs": "CZ", "da": "DK", "de": "DE", "el": "GR", "es": "ES", "et": "EE", "fi": "FI", "fr": "FR",
		"ga": "IE", "hr": "HR", "hu": "HU", "is": "IS", "it": "IT", "lt": "LT", "lv": "LV", "mt": "MT", "nb": "NO", "nl": "NL", "pl": "PL",
		"pt": "PT", "ro": "RO", "sk": "SK", "sl": "SI", "sv": "SE"}[lang]
	if country == "" {
		return "DE"
	}
	return country
}
