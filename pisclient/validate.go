package pisclient

import (
	"maps"
	"net"
	"slices"
	"unicode/utf8"

	"github.com/paybybank/checkout/rules"
)

// The extraFields values the provider names: the payer fields a bank may ask
// for.
const (
	FieldName           = "name"
	FieldPSUID          = "psuId"
	FieldPSUCorporateID = "psuCorporateId"
	FieldBIC            = "bic"
	FieldIBAN           = "iban"
	FieldCountry        = "country"
	FieldCity           = "city"
	FieldPostCode       = "postCode"
	FieldAddressLines   = "addressLines"
)

// KnownExtraFields lists every extraFields value the specification allows.
var KnownExtraFields = []string{
	FieldName, FieldPSUID, FieldPSUCorporateID, FieldBIC, FieldIBAN,
	FieldCountry, FieldCity, FieldPostCode, FieldAddressLines,
}

// Validate checks a payment request against the provider's rules
// (docs/provider.md) and the bounds package rules adds where the provider
// sets none.
// It returns a *rules.ValidationError listing every broken rule, or nil.
func (r *PaymentRequest) Validate() error {
	var errs []rules.FieldError
	add := func(fe *rules.FieldError) {
		if fe != nil {
			errs = append(errs, *fe)
		}
	}
	add(rules.CheckOrderID(r.MerchantOrderID))
	_, fe := rules.ParseAmount(r.Amount)
	add(fe)
	switch r.Currency {
	case rules.Currency:
	case "":
		add(&rules.FieldError{Field: "payment_currency", Reason: rules.ReasonRequired, Message: "currency is required"})
	default:
		add(&rules.FieldError{Field: "payment_currency", Reason: rules.ReasonUnsupported, Message: "only EUR is supported"})
	}
	add(rules.CheckWebURL("return_url", r.ReturnURL))
	if r.CustomerEmail != "" {
		add(rules.CheckEmail("customer_email", r.CustomerEmail))
	}
	switch {
	case r.InstitutionID == "" && r.InstitutionCountryCode != "":
		add(&rules.FieldError{Field: "institution_id", Reason: rules.ReasonPaired, Message: "institution_id and institution_country_code go together"})
	case r.InstitutionID != "" && r.InstitutionCountryCode == "":
		add(&rules.FieldError{Field: "institution_country_code", Reason: rules.ReasonPaired, Message: "institution_id and institution_country_code go together"})
	case r.InstitutionCountryCode != "":
		add(rules.CheckCountryCode("institution_country_code", r.InstitutionCountryCode))
	}
	if r.Payer != nil {
		if r.InstitutionID == "" {
			add(&rules.FieldError{Field: "payer", Reason: rules.ReasonNotAllowed, Message: "payer needs institution_id"})
		}
		for _, fe := range r.Payer.check() {
			add(&fe)
		}
	}
	if r.ClientIP != "" && net.ParseIP(r.ClientIP) == nil {
		add(&rules.FieldError{Field: "client_ip", Reason: rules.ReasonInvalid, Message: "client_ip is not an IP address"})
	}
	if utf8.RuneCountInString(r.CustomerFullName) > rules.MaxTextLength {
		add(&rules.FieldError{Field: "customer_full_name", Reason: rules.ReasonTooLong, Message: "name is too long"})
	}
	if r.Customization != nil {
		for _, fe := range r.Customization.Check() {
			add(&fe)
		}
	}
	if len(errs) > 0 {
		return &rules.ValidationError{Fields: errs}
	}
	return nil
}

func (p *Payer) check() []rules.FieldError {
	var errs []rules.FieldError
	add := func(fe *rules.FieldError) {
		if fe != nil {
			errs = append(errs, *fe)
		}
	}
	if p.IBAN != "" {
		add(rules.CheckIBAN("payer.iban", p.IBAN))
	}
	if p.BIC != "" {
		add(rules.CheckBIC("payer.bic", p.BIC))
	}
	if p.CountryCode != "" {
		add(rules.CheckCountryCode("payer.countryCode", p.CountryCode))
	}
	texts := map[string]string{
		"payer.name": p.Name, "payer.country": p.Country, "payer.city": p.City,
		"payer.postCode": p.PostCode, "payer.streetName": p.StreetName,
		"payer.buildNumber": p.BuildNumber, "payer.psuId": p.PSUID,
		"payer.psuCorporateId": p.PSUCorporateID,
	}
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		add(rules.CheckText(name, texts[name]))
	}
	for _, line := range p.AddressLines {
		add(rules.CheckText("payer.addressLines", line))
	}
	return errs
}
