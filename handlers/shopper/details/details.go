// Package details is the details form of the shopper's pay step: the
// fields a bank asks for (its extraFields), read back with what the
// shopper typed, checked, and turned into the provider's payer.
package details

import (
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/views"
)

// Form field names of the details form. The psu fields are one login box
// and, when the bank takes both, a choice of personal or business login.
const (
	FieldCountry     = "country"
	FieldBank        = "bank"
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

// maxFieldLength bounds what a shopper can type into any box: the rule the
// provider request is checked by.
const maxFieldLength = rules.MaxTextLength

// Form is the details form: the fields the bank asks for and what the
// shopper typed.
type Form struct {
	fields []views.Field
	values map[string]string
	errors map[string]string
	// corporateOnly is set when the bank takes a business login only.
	corporateOnly bool
	// l speaks the shopper's language.
	l *i18n.Localizer
}

// missing names the message (an i18n key) for each empty required field.
var missing = map[string]string{
	formName:         "missing.name",
	formFullName:     "missing.fullName",
	formLoginType:    "missing.login",
	formPSU:          "missing.psu",
	formIBAN:         "missing.iban",
	formBIC:          "missing.bic",
	formAddress1:     "missing.address1",
	formPostCode:     "missing.postCode",
	formCity:         "missing.city",
	formPayerCountry: "missing.country",
}

// psuHint says what the login is, why the bank needs it, and that the
// password is never asked here.
func psuHint(l *i18n.Localizer, key string) string {
	return l.T(key) + " " + l.T("field.psu.why")
}

// New builds the form of a bank from its extraFields (docs/provider.md lists
// the values) with the values typed so far. Values the specification does not name are
// skipped: nobody can label them.
//
// When the merchant has IP verification on, the provider needs the shopper's
// full name (customer_full_name): the account holder's name serves when the
// bank asks for it, otherwise the form asks.
//
// values nil means the form is shown for the first time: its choices start
// at their defaults (a personal login, the bank's country). Values sent by
// the shopper get no defaults: a choice sent empty is asked again.
func New(l *i18n.Localizer, bank pisclient.Institution, countries []string, askFullName bool, values map[string]string) *Form {
	first := values == nil
	if first {
		values = map[string]string{}
	}
	f := &Form{l: l, values: values, errors: map[string]string{}}
	text := func(name, label, hint, autocomplete string) views.Field {
		return views.Field{Kind: views.KindText, Name: name, ID: name, Label: label, Hint: hint,
			Autocomplete: autocomplete, MaxLength: maxFieldLength, Required: true}
	}
	has := func(x string) bool { return slices.Contains(bank.ExtraFields, x) }
	if has(pisclient.FieldName) {
		f.fields = append(f.fields, text(formName, l.T("field.name"), l.T("field.name.hint"), "name"))
	} else if askFullName {
		f.fields = append(f.fields, text(formFullName, l.T("field.fullName"), l.T("field.fullName.hint"), "name"))
	}
	switch {
	case has(pisclient.FieldPSUID) && has(pisclient.FieldPSUCorporateID):
		if first {
			values[formLoginType] = loginPersonal
		}
		f.fields = append(f.fields,
			views.Field{Kind: views.KindRadio, Name: formLoginType, ID: formLoginType, Label: l.T("field.login"), Required: true,
				Options: []views.Option{{Value: loginPersonal, Label: l.T("field.login.personal")}, {Value: loginBusiness, Label: l.T("field.login.business")}}},
			text(formPSU, l.T("field.psu"), psuHint(l, "field.psu.hint"), "username"))
	case has(pisclient.FieldPSUID):
		f.fields = append(f.fields, text(formPSU, l.T("field.psu"), psuHint(l, "field.psu.hint"), "username"))
	case has(pisclient.FieldPSUCorporateID):
		f.corporateOnly = true
		f.fields = append(f.fields, text(formPSU, l.T("field.psuBusiness"), psuHint(l, "field.psuBusiness.hint"), "username"))
	}
	if has(pisclient.FieldIBAN) {
		// The example is of the bank's country, whatever the page's language.
		iban := text(formIBAN, l.T("field.iban"), l.T("field.iban.hint", rules.ExampleIBAN(bank.CountryCode)), "off")
		iban.MaxLength, iban.Uppercase = 42, true
		f.fields = append(f.fields, iban)
	}
	if has(pisclient.FieldBIC) {
		bic := text(formBIC, l.T("field.bic"), l.T("field.bic.hint"), "off")
		bic.MaxLength, bic.Uppercase = 11, true
		f.fields = append(f.fields, bic)
	}
	if has(pisclient.FieldAddressLines) {
		line2 := text(formAddress2, l.T("field.address2"), "", "address-line2")
		line2.Required = false
		f.fields = append(f.fields, text(formAddress1, l.T("field.address1"), "", "address-line1"), line2)
	}
	if has(pisclient.FieldPostCode) {
		pc := text(formPostCode, l.T("field.postCode"), "", "postal-code")
		pc.MaxLength = 20
		f.fields = append(f.fields, pc)
	}
	if has(pisclient.FieldCity) {
		f.fields = append(f.fields, text(formCity, l.T("field.city"), "", "address-level2"))
	}
	if has(pisclient.FieldCountry) {
		if first {
			values[formPayerCountry] = bank.CountryCode
		}
		field := views.Field{Kind: views.KindSelect, Name: formPayerCountry, ID: formPayerCountry, Label: l.T("field.country"),
			Autocomplete: "country", Required: true}
		for _, code := range countries {
			field.Options = append(field.Options, views.Option{Value: code, Label: l.Country(code)})
		}
		order := l.Collator()
		slices.SortFunc(field.Options, func(a, b views.Option) int { return order.CompareString(a.Label, b.Label) })
		f.fields = append(f.fields, field)
	}
	return f
}

// Read takes the form's values from a request, trimmed and bounded.
func Read(c echo.Context) map[string]string {
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

// Payer checks that every required field is filled in and builds the
// provider's payer object (docs/provider.md); nil when the bank needs no
// details.
func (f *Form) Payer() *pisclient.Payer {
	if len(f.fields) == 0 {
		return nil
	}
	for _, field := range f.fields {
		if field.Required && f.values[field.Name] == "" {
			f.errors[field.Name] = f.l.T(missing[field.Name])
		}
	}
	if lt := f.values[formLoginType]; f.has(formLoginType) && lt != loginPersonal && lt != loginBusiness {
		f.errors[formLoginType] = f.l.T(missing[formLoginType])
	}
	v := f.values
	p := &pisclient.Payer{
		Name: v[formName], BIC: strings.ToUpper(v[formBIC]), IBAN: rules.NormalizeIBAN(v[formIBAN]),
		City: v[formCity], PostCode: v[formPostCode],
	}
	if f.has(formPayerCountry) && v[formPayerCountry] != "" {
		p.CountryCode = v[formPayerCountry]
		// The provider gets the country's English name, whatever the
		// shopper's language.
		p.Country = english.Country(v[formPayerCountry])
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

// FullName is the shopper's full name for IP verification.
func (f *Form) FullName() string {
	if f.has(formName) {
		return f.values[formName]
	}
	return f.values[formFullName]
}

func (f *Form) has(name string) bool {
	return slices.ContainsFunc(f.fields, func(field views.Field) bool { return field.Name == name })
}

func (f *Form) label(name string) string {
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

// AddErrors puts the rule broken by each field beside it, in words for a
// shopper. It reports whether every error found a field.
func (f *Form) AddErrors(fields []rules.FieldError) bool {
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
			f.errors[name] = shopperMessage(f.l, name, f.label(name), fe.Reason)
		}
	}
	return all
}

// shopperMessage says what is wrong with a field and how to put it right.
func shopperMessage(l *i18n.Localizer, name, label, reason string) string {
	switch {
	case name == formIBAN && reason == rules.ReasonChecksum:
		return l.T("invalid.ibanChecksum")
	case name == formIBAN && reason == rules.ReasonLength:
		return l.T("invalid.ibanLength")
	case name == formIBAN:
		return l.T("invalid.iban")
	case name == formBIC:
		return l.T("invalid.bic")
	case reason == rules.ReasonTooLong:
		return l.T("invalid.tooLong", label, maxFieldLength)
	}
	return l.T("invalid.character", label)
}

// english names countries for the provider.
var english = i18n.New("en")

// HasErrors reports whether a field was refused.
func (f *Form) HasErrors() bool { return len(f.errors) > 0 }

// Fields are the fields to show, each with what was typed and why it was
// refused, if it was.
func (f *Form) Fields() []views.Field {
	var out []views.Field
	for _, field := range f.fields {
		field.Value = f.values[field.Name]
		field.Error = f.errors[field.Name]
		for i := range field.Options {
			field.Options[i].Selected = field.Options[i].Value == field.Value
		}
		out = append(out, field)
	}
	return out
}
