// Package rules is the app's rule book: what a valid amount, order id,
// e-mail address, URL, country code, IBAN, BIC, colour, free text and theme
// are (the provider's rules, docs/provider.md, and the app's own where the
// provider says nothing), the errors that name a broken rule, and the
// customization type. The client, the orders, the merchants' settings, the
// forms and the Branding page all call it; it imports nothing of the app.
package rules

import (
	"fmt"
	"math/big"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// The provider's limits on amounts (docs/provider.md). They live here once:
// the client, the orders and the shopper's form all read them.
var (
	MinAmount = decimal.NewFromInt(1)
	MaxAmount = decimal.NewFromInt(15000)
)

const (
	// MaxOrderIDLength is the longest merchant_order_id the provider accepts, in characters.
	MaxOrderIDLength = 256
	// Currency is the only payment_currency the provider supports.
	Currency = "EUR"
)

// Reasons a field is refused. A form maps them to words in the shopper's
// language; Message carries an English sentence for logs and API callers.
const (
	ReasonRequired    = "required"
	ReasonInvalid     = "invalid"
	ReasonTooLong     = "too_long"
	ReasonTooSmall    = "too_small"
	ReasonTooLarge    = "too_large"
	ReasonDecimals    = "too_many_decimals"
	ReasonUnsupported = "unsupported"
	ReasonChecksum    = "checksum"
	ReasonLength      = "length"
	ReasonPaired      = "paired"
	ReasonNotAllowed  = "not_allowed"
)

// FieldError says which field of a request is wrong and why. Field is the JSON
// path in the provider's creation body ("payment_amount", "payer.iban").
type FieldError struct {
	Field   string
	Reason  string
	Message string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// ValidationError lists every field of a request that breaks the provider's rules.
// It is returned before any network call, so nothing was sent.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return "pisclient: invalid payment request: " + strings.Join(parts, "; ")
}

// Field returns the first error for the named field, if any.
func (e *ValidationError) Field(name string) (FieldError, bool) {
	for _, f := range e.Fields {
		if f.Field == name {
			return f, true
		}
	}
	return FieldError{}, false
}

var amountPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseAmount reads a payment_amount as the provider defines it: a plain
// decimal string from 1 to 15000 with at most two fractional digits.
// Exponents, signs, spaces and decimal commas are refused rather than guessed at.
func ParseAmount(s string) (decimal.Decimal, *FieldError) {
	const field = "payment_amount"
	if s == "" {
		return decimal.Decimal{}, &FieldError{field, ReasonRequired, "amount is required"}
	}
	if !amountPattern.MatchString(s) {
		return decimal.Decimal{}, &FieldError{field, ReasonInvalid, "amount must be digits with an optional point and decimals, like 49.90"}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, &FieldError{field, ReasonInvalid, "amount is not a number"}
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 2 {
		return decimal.Decimal{}, &FieldError{field, ReasonDecimals, "amount has more than 2 decimals"}
	}
	if d.LessThan(MinAmount) {
		return decimal.Decimal{}, &FieldError{field, ReasonTooSmall, "amount must be at least 1"}
	}
	if d.GreaterThan(MaxAmount) {
		return decimal.Decimal{}, &FieldError{field, ReasonTooLarge, "amount must be at most 15000"}
	}
	return d, nil
}

// Hidden reports a character a person cannot see or that changes how the
// text around it is shown: a control character, or a Unicode format
// character (right-to-left overrides and other bidirectional controls,
// zero-width spaces and joiners, the soft hyphen). Text a payer reads, or
// a reference two people compare, takes none: a payer could be shown
// spoofed text, and two references that look alike could differ.
func Hidden(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// HasHidden reports whether s holds a Hidden character.
func HasHidden(s string) bool { return strings.ContainsFunc(s, Hidden) }

// CheckOrderID applies the merchant_order_id rule: 1 to 256 characters of
// printable UTF-8 (it becomes a path segment of the provider's status URL).
func CheckOrderID(id string) *FieldError {
	const field = "merchant_order_id"
	switch {
	case id == "":
		return &FieldError{field, ReasonRequired, "order id is required"}
	case !utf8.ValidString(id) || HasHidden(id):
		return &FieldError{field, ReasonInvalid, "order id holds a control or invisible formatting character, or invalid UTF-8"}
	case utf8.RuneCountInString(id) > MaxOrderIDLength:
		return &FieldError{field, ReasonTooLong, fmt.Sprintf("order id is longer than %d characters", MaxOrderIDLength)}
	}
	return nil
}

// CheckEmail accepts exactly the addresses net/mail parses to themselves: no
// display names, no comments, no surrounding space.
func CheckEmail(field, s string) *FieldError {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return &FieldError{field, ReasonInvalid, "e-mail address is not valid"}
	}
	return nil
}

// WebURL parses s when it is an absolute http or https URL with a host: the
// one check of every URL the app is given (links, logos, base URLs).
func WebURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}

// CheckWebURL accepts an absolute http or https URL with a host.
func CheckWebURL(field, s string) *FieldError {
	if s == "" {
		return &FieldError{field, ReasonRequired, "URL is required"}
	}
	if _, ok := WebURL(s); !ok {
		return &FieldError{field, ReasonInvalid, "must be an absolute http(s) URL"}
	}
	return nil
}

var countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)

// CheckCountryCode accepts a two-letter upper-case country code (ISO 3166-1 alpha-2 form).
func CheckCountryCode(field, s string) *FieldError {
	if !countryPattern.MatchString(s) {
		return &FieldError{field, ReasonInvalid, "must be a two-letter country code like DE"}
	}
	return nil
}

// sepaCountries holds, for each IBAN country code in the SEPA schemes'
// geographical scope (EPC409-09, "EPC list of SEPA scheme countries"), the
// length of its IBANs (SWIFT's IBAN registry) and whether the country is
// outside the European Economic Area, where the rulebook asks for the BIC.
//
// Territories that use another country's IBANs are covered by that code:
// the French overseas departments, Saint-Pierre-et-Miquelon, Saint-Barthélemy
// and Saint-Martin by FR; Åland by FI; the Canaries, Ceuta and Melilla by ES;
// the Azores and Madeira by PT; Jersey, Guernsey and the Isle of Man by GB.
var sepaCountries = map[string]struct {
	length int
	nonEEA bool
}{
	// European Union
	"AT": {20, false}, "BE": {16, false}, "BG": {22, false}, "CY": {28, false},
	"CZ": {24, false}, "DE": {22, false}, "DK": {18, false}, "EE": {20, false},
	"ES": {24, false}, "FI": {18, false}, "FR": {27, false}, "GR": {27, false},
	"HR": {21, false}, "HU": {28, false}, "IE": {22, false}, "IT": {27, false},
	"LT": {20, false}, "LU": {20, false}, "LV": {21, false}, "MT": {31, false},
	"NL": {18, false}, "PL": {28, false}, "PT": {25, false}, "RO": {24, false},
	"SE": {24, false}, "SI": {19, false}, "SK": {24, false},
	// the rest of the European Economic Area
	"IS": {26, false}, "LI": {21, false}, "NO": {15, false},
	// SEPA outside the EEA
	"AD": {24, true}, "CH": {21, true}, "GB": {22, true}, "GI": {23, true},
	"MC": {27, true}, "SM": {27, true}, "VA": {22, true},
	// admitted 2024–2025: Albania, Montenegro, Moldova, North Macedonia, Serbia
	"AL": {28, true}, "ME": {22, true}, "MD": {24, true}, "MK": {19, true},
	"RS": {22, true},
}

// SEPACountry reports whether the IBAN's country takes part in the SEPA
// schemes, so that a SEPA credit transfer can reach it at all. It looks at
// the country code only; CheckIBAN checks the whole IBAN.
func SEPACountry(iban string) bool {
	iban = NormalizeIBAN(iban)
	if len(iban) < 2 {
		return false
	}
	_, ok := sepaCountries[iban[:2]]
	return ok
}

// IBANNeedsBIC reports whether a SEPA credit transfer to this IBAN needs
// the beneficiary bank's BIC: the rulebook lets a payer leave it out only
// inside the European Economic Area, so it is needed for Switzerland, the
// United Kingdom, Monaco, San Marino, Andorra, the Vatican and the other
// SEPA countries outside the EEA. An IBAN outside SEPA gives false: no
// SEPA transfer reaches it with or without a BIC (ask SEPACountry).
func IBANNeedsBIC(iban string) bool {
	iban = NormalizeIBAN(iban)
	if len(iban) < 2 {
		return false
	}
	return sepaCountries[iban[:2]].nonEEA
}

// IBANLength is how many characters the IBANs of a SEPA country have; 0
// for a country outside SEPA.
func IBANLength(country string) int { return sepaCountries[country].length }

var ibanPattern = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]+$`)

// NormalizeIBAN removes the spaces people type and upper-cases the rest.
func NormalizeIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// ExampleIBAN is an IBAN of country's form for the details form's hint (the
// published example of each country's format), so that a shopper of a
// Spanish bank sees a Spanish one whatever the page's language; Germany's
// for a country without one.
func ExampleIBAN(country string) string {
	if iban, ok := exampleIBANs[country]; ok {
		return iban
	}
	return exampleIBANs["DE"]
}

var exampleIBANs = map[string]string{
	"AT": "AT61 1904 3002 3457 3201", "BE": "BE68 5390 0754 7034", "BG": "BG80 BNBG 9661 1020 3456 78",
	"CY": "CY17 0020 0128 0000 0012 0052 7600", "CZ": "CZ65 0800 0000 1920 0014 5399", "DE": "DE89 3704 0044 0532 0130 00",
	"DK": "DK50 0040 0440 1162 43", "EE": "EE38 2200 2210 2014 5685", "ES": "ES91 2100 0418 4502 0005 1332",
	"FI": "FI21 1234 5600 0007 85", "FR": "FR76 3000 6000 0112 3456 7890 189", "GR": "GR16 0110 1250 0000 0001 2300 695",
	"HR": "HR12 1001 0051 8630 0016 0", "HU": "HU42 1177 3016 1111 1018 0000 0000", "IE": "IE29 AIBK 9311 5212 3456 78",
	"IS": "IS14 0159 2600 7654 5510 7303 39", "IT": "IT60 X054 2811 1010 0000 0123 456", "LT": "LT12 1000 0111 0100 1000",
	"LU": "LU28 0019 4006 4475 0000", "LV": "LV80 BANK 0000 4351 9500 1", "MT": "MT84 MALT 0110 0001 2345 MTLC AST0 01S",
	"NL": "NL91 ABNA 0417 1643 00", "NO": "NO93 8601 1117 947", "PL": "PL61 1090 1014 0000 0712 1981 2874",
	"PT": "PT50 0002 0123 1234 5678 9015 4", "RO": "RO49 AAAA 1B31 0075 9384 0000", "SE": "SE45 5000 0000 0583 9825 7466",
	"SI": "SI56 2633 0001 2039 086", "SK": "SK31 1200 0000 1987 4263 7541",
}

// CheckIBAN verifies an IBAN (already normalized): a SEPA country, that
// country's length and the ISO 7064 mod-97 checksum.
func CheckIBAN(field, iban string) *FieldError {
	if !ibanPattern.MatchString(iban) {
		return &FieldError{field, ReasonInvalid, "IBAN must start with a country code and two check digits"}
	}
	country, ok := sepaCountries[iban[:2]]
	want := country.length
	if !ok {
		return &FieldError{field, ReasonUnsupported, "IBAN country is not in SEPA"}
	}
	if len(iban) != want {
		return &FieldError{field, ReasonLength, fmt.Sprintf("an IBAN from %s has %d characters", iban[:2], want)}
	}
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] {
		if r >= 'A' && r <= 'Z' {
			fmt.Fprintf(&digits, "%d", r-'A'+10)
		} else {
			digits.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(digits.String(), 10)
	if new(big.Int).Mod(n, big.NewInt(97)).Int64() != 1 {
		return &FieldError{field, ReasonChecksum, "IBAN check digits do not match: please check for a typo"}
	}
	return nil
}

var bicPattern = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// CheckBIC verifies the ISO 9362 form: bank, country, location and an optional branch.
func CheckBIC(field, bic string) *FieldError {
	if !bicPattern.MatchString(bic) {
		return &FieldError{field, ReasonInvalid, "BIC must have 8 or 11 letters and digits, like DEUTDEFF"}
	}
	return nil
}

var colourPattern = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// CheckColour accepts the #RRGGBB form the provider's customization takes.
func CheckColour(field, s string) *FieldError {
	if !colourPattern.MatchString(s) {
		return &FieldError{field, ReasonInvalid, "colour must be #RRGGBB"}
	}
	return nil
}

// Allowed values of the customization enums, as the provider lists them.
var (
	SpacingValues = []string{"sm", "md", "lg"}
	RadiusValues  = []string{"none", "sm", "md", "lg"}
	ShadowValues  = []string{"none", "sm", "md", "lg"}
)

func checkEnum(field, s string, allowed []string) *FieldError {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return &FieldError{field, ReasonInvalid, "must be one of " + strings.Join(allowed, ", ")}
}

// MaxTextLength bounds free-text payer fields; the spec names no limit, so the
// bound is generous and only stops abuse.
const MaxTextLength = 140

// CheckText accepts free text: valid UTF-8 without control or invisible
// formatting characters (Hidden), at most MaxTextLength characters.
func CheckText(field, s string) *FieldError {
	switch {
	case !utf8.ValidString(s) || HasHidden(s):
		return &FieldError{field, ReasonInvalid, "holds a control or invisible formatting character"}
	case utf8.RuneCountInString(s) > MaxTextLength:
		return &FieldError{field, ReasonTooLong, fmt.Sprintf("is longer than %d characters", MaxTextLength)}
	}
	return nil
}

// Customization is the theme of the provider's checkout page
// (docs/provider.md), which our pages wear too.
type Customization struct {
	Title        string `json:"title,omitempty"`
	LogoURL      string `json:"logoUrl,omitempty"`
	LogoHeight   string `json:"logoHeight,omitempty"`
	PrimaryColor string `json:"primaryColor,omitempty"`
	BgColor      string `json:"bgColor,omitempty"`
	Spacing      string `json:"spacing,omitempty"`
	Radius       string `json:"radius,omitempty"`
	ModalShadow  string `json:"modalShadow,omitempty"`
}

// Customization bounds the provider leaves open.
const (
	MaxTitleLength = 80
	MinLogoHeight  = 16
	MaxLogoHeight  = 200
)

var logoHeightPattern = regexp.MustCompile(`^([0-9]{1,3})(px)?$`)

// Check validates a customization against the provider's rules and the
// bounds above. Empty fields mean "the provider's default" and pass.
func (c *Customization) Check() []FieldError {
	var errs []FieldError
	add := func(fe *FieldError) {
		if fe != nil {
			errs = append(errs, *fe)
		}
	}
	if utf8.RuneCountInString(c.Title) > MaxTitleLength {
		add(&FieldError{"customization.title", ReasonTooLong, fmt.Sprintf("title is longer than %d characters", MaxTitleLength)})
	} else {
		add(CheckText("customization.title", c.Title))
	}
	if c.LogoURL != "" {
		add(CheckWebURL("customization.logoUrl", c.LogoURL))
	}
	if c.LogoHeight != "" {
		m := logoHeightPattern.FindStringSubmatch(c.LogoHeight)
		n := 0
		if m != nil {
			fmt.Sscan(m[1], &n)
		}
		if m == nil || n < MinLogoHeight || n > MaxLogoHeight {
			add(&FieldError{"customization.logoHeight", ReasonInvalid, fmt.Sprintf("logo height must be %d to %d pixels, like 40px", MinLogoHeight, MaxLogoHeight)})
		}
	}
	if c.PrimaryColor != "" {
		add(CheckColour("customization.primaryColor", c.PrimaryColor))
	}
	if c.BgColor != "" {
		add(CheckColour("customization.bgColor", c.BgColor))
	}
	if c.Spacing != "" {
		add(checkEnum("customization.spacing", c.Spacing, SpacingValues))
	}
	if c.Radius != "" {
		add(checkEnum("customization.radius", c.Radius, RadiusValues))
	}
	if c.ModalShadow != "" {
		add(checkEnum("customization.modalShadow", c.ModalShadow, ShadowValues))
	}
	return errs
}
