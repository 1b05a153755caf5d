package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/views"
)

// Form field names of the details form. The psu fields are one login box
// and, when the bank takes both, a choice of personal or business login.
const (
	formCountry      = "country"
	formBank         = "bank"
	formName         = "name"
	formFullName     = "full_name"
	formLoginType    = "login_type"
	formPSU          = "psu_id"
	formBIC          = "bic"
	formIBAN         = "iban"
	formPayerCountry = "payer_country"
	formCity         = "city"
	formPostCode     = "post_code"
	formAddress1     = "address_line1"
	formAddress2     = "address_line2"
)

const (
	loginPersonal = "personal"
	loginBusiness = "business"
)

// maxFieldLength bounds what a shopper can type into any box.
const maxFieldLength = 140

// form is the details form: the fields the bank asks for and what the
// shopper typed.
type form struct {
	fields []views.Field
	values map[string]string
	errors map[string]string
	// corporateOnly is set when the bank takes a business login only.
	corporateOnly bool
}

// missing says what to do about each empty required field.
var missing = map[string]string{
	formName:         "Enter the account holder's name.",
	formFullName:     "Enter your full name.",
	formLoginType:    "Choose personal or business login.",
	formPSU:          "Enter your online banking user ID.",
	formIBAN:         "Enter your IBAN.",
	formBIC:          "Enter your bank's BIC.",
	formAddress1:     "Enter your street and house number.",
	formPostCode:     "Enter your postcode.",
	formCity:         "Enter your town or city.",
	formPayerCountry: "Choose the country you live in.",
}

// newForm builds the form of a bank from its extraFields (PIS-API.md 2.1)
// with the values typed so far. Values the specification does not name are
// skipped: nobody can label them.
//
// When the merchant has IP verification on, the provider needs the shopper's
// full name (customer_full_name): the account holder's name serves when the
// bank asks for it, otherwise the form asks.
func newForm(bank pisclient.Institution, countries []string, askFullName bool, values map[string]string) *form {
	f := &form{values: values, errors: map[string]string{}}
	text := func(name, label, hint, autocomplete string) views.Field {
		return views.Field{Kind: views.KindText, Name: name, ID: name, Label: label, Hint: hint,
			Autocomplete: autocomplete, MaxLength: maxFieldLength, Required: true}
	}
	has := func(x string) bool { return slices.Contains(bank.ExtraFields, x) }
	if has(pisclient.FieldName) {
		f.fields = append(f.fields, text(formName, "Account holder's name", "As your bank knows it.", "name"))
	} else if askFullName {
		f.fields = append(f.fields, text(formFullName, "Your full name", "Your bank checks it against the payment.", "name"))
	}
	switch {
	case has(pisclient.FieldPSUID) && has(pisclient.FieldPSUCorporateID):
		if values[formLoginType] == "" {
			values[formLoginType] = loginPersonal
		}
		f.fields = append(f.fields,
			views.Field{Kind: views.KindRadio, Name: formLoginType, ID: formLoginType, Label: "How do you log in to online banking?", Required: true,
				Options: []views.Option{{Value: loginPersonal, Label: "Personal login"}, {Value: loginBusiness, Label: "Business login"}}},
			text(formPSU, "Online banking user ID", "The ID you use to log in to your bank.", "username"))
	case has(pisclient.FieldPSUID):
		f.fields = append(f.fields, text(formPSU, "Online banking user ID", "The ID you use to log in to your bank.", "username"))
	case has(pisclient.FieldPSUCorporateID):
		f.corporateOnly = true
		f.fields = append(f.fields, text(formPSU, "Business online banking ID", "The ID your business uses to log in to your bank.", "username"))
	}
	if has(pisclient.FieldIBAN) {
		iban := text(formIBAN, "IBAN", "The account you pay from, like DE89 3704 0044 0532 0130 00.", "off")
		iban.MaxLength, iban.Uppercase = 42, true
		f.fields = append(f.fields, iban)
	}
	if has(pisclient.FieldBIC) {
		bic := text(formBIC, "BIC of your bank", "8 or 11 letters and digits, like DEUTDEFF.", "off")
		bic.MaxLength, bic.Uppercase = 11, true
		f.fields = append(f.fields, bic)
	}
	if has(pisclient.FieldAddressLines) {
		line2 := text(formAddress2, "Address line 2 (optional)", "", "address-line2")
		line2.Required = false
		f.fields = append(f.fields, text(formAddress1, "Street and house number", "", "address-line1"), line2)
	}
	if has(pisclient.FieldPostCode) {
		pc := text(formPostCode, "Postcode", "", "postal-code")
		pc.MaxLength = 20
		f.fields = append(f.fields, pc)
	}
	if has(pisclient.FieldCity) {
		f.fields = append(f.fields, text(formCity, "Town or city", "", "address-level2"))
	}
	if has(pisclient.FieldCountry) {
		if values[formPayerCountry] == "" {
			values[formPayerCountry] = bank.CountryCode
		}
		field := views.Field{Kind: views.KindSelect, Name: formPayerCountry, ID: formPayerCountry, Label: "Country you live in",
			Autocomplete: "country", Required: true}
		for _, code := range countries {
			field.Options = append(field.Options, views.Option{Value: code, Label: countryName(code)})
		}
		slices.SortFunc(field.Options, func(a, b views.Option) int { return strings.Compare(a.Label, b.Label) })
		f.fields = append(f.fields, field)
	}
	return f
}

// readForm takes the form's values from a request, trimmed and bounded.
func readForm(c echo.Context) map[string]string {
	values := map[string]string{}
	for _, name := range []string{formName, formFullName, formLoginType, formPSU, formBIC, formIBAN, formPayerCountry, formCity, formPostCode, formAddress1, formAddress2} {
		v := strings.TrimSpace(c.FormValue(name))
		if len([]rune(v)) > 2*maxFieldLength {
			v = string([]rune(v)[:2*maxFieldLength])
		}
		values[name] = v
	}
	return values
}

// payer checks that every required field is filled in and builds the payer
// of PIS-API.md 2.3; nil when the bank needs no details.
func (f *form) payer() *pisclient.Payer {
	if len(f.fields) == 0 {
		return nil
	}
	for _, field := range f.fields {
		if field.Required && f.values[field.Name] == "" {
			f.errors[field.Name] = missing[field.Name]
		}
	}
	v := f.values
	p := &pisclient.Payer{
		Name: v[formName], BIC: strings.ToUpper(v[formBIC]), IBAN: pisclient.NormalizeIBAN(v[formIBAN]),
		City: v[formCity], PostCode: v[formPostCode],
	}
	if f.has(formPayerCountry) && v[formPayerCountry] != "" {
		p.CountryCode = v[formPayerCountry]
		p.Country = countryName(v[formPayerCountry])
	}
	for _, line := range []string{v[formAddress1], v[formAddress2]} {
		if line != "" {
			p.AddressLines = append(p.AddressLines, line)
		}
	}
	if f.has(formPSU) {
		if f.corporateOnly || (f.has(formLoginType) && v[formLoginType] == loginBusiness) {
			p.PSUCorporateID = v[formPSU]
		} else {
			p.PSUID = v[formPSU]
		}
	}
	return p
}

// fullName is the shopper's full name for IP verification.
func (f *form) fullName() string {
	if f.has(formName) {
		return f.values[formName]
	}
	return f.values[formFullName]
}

func (f *form) has(name string) bool {
	return slices.ContainsFunc(f.fields, func(field views.Field) bool { return field.Name == name })
}

func (f *form) label(name string) string {
	for _, field := range f.fields {
		if field.Name == name {
			return field.Label
		}
	}
	return ""
}

// payerFields maps the provider's JSON paths to the form's fields.
var payerFields = map[string]string{
	"customer_full_name": formFullName,
	"payer.name":         formName, "payer.iban": formIBAN, "payer.bic": formBIC,
	"payer.country": formPayerCountry, "payer.countryCode": formPayerCountry,
	"payer.city": formCity, "payer.postCode": formPostCode, "payer.addressLines": formAddress1,
	"payer.psuId": formPSU, "payer.psuCorporateId": formPSU,
}

// addErrors puts the rule broken by each field beside it, in words for a
// shopper. It reports whether every error found a field.
func (f *form) addErrors(fields []pisclient.FieldError) bool {
	all := true
	for _, fe := range fields {
		name, ok := payerFields[fe.Field]
		if name == formFullName && !f.has(formFullName) {
			name = formName
		}
		if !ok || !f.has(name) {
			all = false
			continue
		}
		if _, seen := f.errors[name]; !seen {
			f.errors[name] = shopperMessage(name, f.label(name), fe.Reason)
		}
	}
	return all
}

// shopperMessage says what is wrong with a field and how to put it right.
func shopperMessage(name, label, reason string) string {
	switch {
	case name == formIBAN && reason == pisclient.ReasonChecksum:
		return "This IBAN is not right: its check digits do not match. Check it for typing mistakes."
	case name == formIBAN && reason == pisclient.ReasonLength:
		return "This IBAN has the wrong number of characters for its country. Check it for a missing or extra character."
	case name == formIBAN:
		return "Enter an IBAN: two letters, two digits, then your account number, like DE89 3704 0044 0532 0130 00."
	case name == formBIC:
		return "Enter a BIC of 8 or 11 letters and digits, like DEUTDEFF."
	case reason == pisclient.ReasonTooLong:
		return fmt.Sprintf("%s is too long: use at most %d characters.", label, maxFieldLength)
	}
	return fmt.Sprintf("%s holds a character we cannot send to your bank.", label)
}

// showPay shows the details form, or the one-click summary (DESIGN.md 2.4).
func (h *Handler) showPay(c echo.Context) error {
	co, bank, list, err := h.payStep(c, c.QueryParam(formCountry), c.QueryParam(formBank))
	if err != nil {
		return err
	}
	f := newForm(bank, list.Countries(), co.merchant.IPVerification, map[string]string{})
	return h.renderPay(c, http.StatusOK, co, bank, f, "")
}

// payStep opens the order and finds the chosen bank.
func (h *Handler) payStep(c echo.Context, country, id string) (checkout, pisclient.Institution, *banks.List, error) {
	co, err := h.open(c)
	if err != nil {
		return co, pisclient.Institution{}, nil, err
	}
	list, err := h.bankList(c, c.Request().URL.String())
	if err != nil {
		return co, pisclient.Institution{}, nil, err
	}
	country = strings.ToUpper(country)
	bank, ok := list.Find(country, id)
	if !ok {
		return co, bank, nil, &pageError{status: http.StatusNotFound, heading: "This bank is not available",
			message:  "It may be offline for a moment. Choose your bank again from the list.",
			retryURL: banksURL(co.token, country, ""), err: fmt.Errorf("no bank %q in %q", id, country)}
	}
	return co, bank, list, nil
}

func (h *Handler) renderPay(c echo.Context, status int, co checkout, bank pisclient.Institution, f *form, problem string) error {
	page := views.PayPage{
		Page:     h.page(c, "Pay with "+bank.Name),
		Summary:  co.summary(),
		BankName: bank.Name,
		BankLogo: bank.LogoURL,
		Action:   payAction(co.token),
		Hidden: []views.Hidden{
			{Name: formCountry, Value: bank.CountryCode},
			{Name: formBank, Value: bank.ID},
		},
		Problem:       problem,
		ChangeBankURL: banksURL(co.token, bank.CountryCode, ""),
	}
	if len(f.errors) > 0 {
		page.Title = "Error: " + page.Title
	}
	for _, field := range f.fields {
		field.Value = f.values[field.Name]
		field.Error = f.errors[field.Name]
		for i := range field.Options {
			field.Options[i].Selected = field.Options[i].Value == field.Value
		}
		if field.Error != "" {
			page.Errors = append(page.Errors, views.FieldError{ID: field.ID, Message: field.Error})
		}
		page.Fields = append(page.Fields, field)
	}
	return render(c, status, views.Pay(page))
}

// createTimeout bounds the create call. It runs on even if the shopper's
// browser gives up, so that a payment made upstream is not lost to us.
const createTimeout = 30 * time.Second

// createPayment validates the details, creates the payment once per order and
// sends the shopper to it (DESIGN.md section 2.5).
func (h *Handler) createPayment(c echo.Context) error {
	co, bank, list, err := h.payStep(c, c.FormValue(formCountry), c.FormValue(formBank))
	if err != nil {
		return err
	}
	f := newForm(bank, list.Countries(), co.merchant.IPVerification, readForm(c))
	req := pisclient.PaymentRequest{
		MerchantOrderID:        co.merchant.UpstreamOrderID(co.order.ID),
		Amount:                 co.order.Amount,
		Currency:               co.order.Currency,
		ReturnURL:              h.BaseURL + returnPath(co.token, 0),
		CustomerEmail:          co.order.Email,
		InstitutionID:          bank.ID,
		InstitutionCountryCode: bank.CountryCode,
		Payer:                  f.payer(),
		Customization:          co.customization(),
	}
	if co.merchant.IPVerification {
		req.ClientIP = c.RealIP()
		req.CustomerFullName = f.fullName()
	}
	var ve *pisclient.ValidationError
	if err := req.Validate(); errors.As(err, &ve) {
		if !f.addErrors(ve.Fields) {
			return fmt.Errorf("order %q breaks the provider's rules: %w", co.order.ID, err)
		}
	}
	if len(f.errors) > 0 {
		return h.renderPay(c, http.StatusUnprocessableEntity, co, bank, f, "")
	}

	link, err := h.paymentLink(c.Request().Context(), co.merchant, req)
	switch {
	case err == nil:
		h.rememberBank(c, bank.CountryCode, bank.ID)
		return c.Redirect(http.StatusSeeOther, link)
	case errors.Is(err, pisclient.ErrDuplicateOrder):
		// Created before, by another instance or before a restart: the
		// payment exists, so the shopper sees where it stands.
		h.Log.Warn("order already created upstream", "merchant", co.merchant.ID, "err", err)
		return c.Redirect(http.StatusSeeOther, returnPath(co.token, 0))
	case errors.As(err, &ve), errors.Is(err, pisclient.ErrUnauthorized):
		return fmt.Errorf("creating a payment: %w", err)
	case errors.Is(err, pisclient.ErrOutcomeUnknown):
		h.Log.Warn("create payment: no answer", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusServiceUnavailable, co, bank, f,
			"The payment service did not answer in time, so we cannot tell yet whether your payment was prepared. Nothing is taken from your account until you approve it at your bank. Please press “Continue to your bank” again.")
	case errors.Is(err, pisclient.ErrRateLimited), errors.Is(err, pisclient.ErrUnavailable):
		h.Log.Warn("create payment: provider busy", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusServiceUnavailable, co, bank, f,
			"The payment service is busy right now. Nothing was charged. Please press “Continue to your bank” again in a moment.")
	default:
		h.Log.Error("create payment failed", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusBadGateway, co, bank, f,
			"The payment service could not prepare this payment. Nothing was charged. Please try again, or choose another bank.")
	}
}

// paymentLink creates the payment of an order, or returns the link created
// for it before. Concurrent submits of one order share one create call.
func (h *Handler) paymentLink(ctx context.Context, m *merchant.Merchant, req pisclient.PaymentRequest) (string, error) {
	key := req.MerchantOrderID
	if link, ok := h.links.Get(key); ok {
		return link.(string), nil
	}
	v, err, _ := h.creating.Do(key, func() (any, error) {
		if link, ok := h.links.Get(key); ok {
			return link, nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		defer cancel()
		p, err := h.PaymentsFor(m).CreatePayment(ctx, req)
		if err != nil {
			return nil, err
		}
		h.links.SetDefault(key, p.Link)
		return p.Link, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}
