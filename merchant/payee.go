package merchant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	// The zones a shop may choose are the same on every machine, a
	// container without /usr/share/zoneinfo included: Go's copy of the
	// IANA database stands in where the system has none.
	_ "time/tzdata"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/rules"
)

// Bounds of who is paid and of the shop's own account.
const (
	// MaxLegalNameLength bounds the legal name, in characters: SEPA's
	// remittance room, which a receipt's payee line fits in.
	MaxLegalNameLength = 140
	// MaxPhoneLength bounds the contact phone number, in characters.
	MaxPhoneLength = 32
	// MaxAccountNameLength is SEPA's limit on an account holder's name,
	// in characters: a transfer file carries no longer one.
	MaxAccountNameLength = 70
)

// DefaultTimeZone is a shop's time zone until it names one.
const DefaultTimeZone = "Europe/Brussels"

// TimeZones are the IANA zones of the European Economic Area (the outermost
// regions and Åland included), Switzerland and the United Kingdom, by name:
// those the console offers. A shop may name any other zone in the merchants
// file.
var TimeZones = []string{
	"Africa/Ceuta", "America/Cayenne", "America/Guadeloupe", "America/Marigot", "America/Martinique",
	"Asia/Famagusta", "Asia/Nicosia", "Atlantic/Azores", "Atlantic/Canary", "Atlantic/Madeira",
	"Atlantic/Reykjavik", "Europe/Amsterdam", "Europe/Athens", "Europe/Berlin", "Europe/Bratislava",
	"Europe/Brussels", "Europe/Bucharest", "Europe/Budapest", "Europe/Busingen", "Europe/Copenhagen",
	"Europe/Dublin", "Europe/Helsinki", "Europe/Lisbon", "Europe/Ljubljana", "Europe/London",
	"Europe/Luxembourg", "Europe/Madrid", "Europe/Malta", "Europe/Mariehamn", "Europe/Oslo",
	"Europe/Paris", "Europe/Prague", "Europe/Riga", "Europe/Rome", "Europe/Sofia",
	"Europe/Stockholm", "Europe/Tallinn", "Europe/Vaduz", "Europe/Vienna", "Europe/Vilnius",
	"Europe/Warsaw", "Europe/Zagreb", "Europe/Zurich", "Indian/Mayotte", "Indian/Reunion",
}

// Location is the shop's time zone: TimeZone, or DefaultTimeZone when it
// names none (or names one Check took that this machine's database no
// longer holds).
func (m *Merchant) Location() *time.Location {
	if loc, ok := zone(m.TimeZone); ok {
		return loc
	}
	if loc, ok := zone(DefaultTimeZone); ok {
		return loc
	}
	return time.UTC
}

// zones are the zones loaded, by name: each is read from the database once.
var zones sync.Map

// zone is the IANA zone name, DefaultTimeZone's for an empty name.
func zone(name string) (*time.Location, bool) {
	if name == "" {
		name = DefaultTimeZone
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), true
	}
	loc, err := loadZone(name)
	if err != nil {
		return nil, false
	}
	zones.Store(name, loc)
	return loc, true
}

// loadZone loads an IANA zone by its name: never the machine's own zone
// ("Local") nor UTC for an empty name, as time.LoadLocation would.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("%q is not an IANA time zone", name)
	}
	return time.LoadLocation(name)
}

// MaskIBAN shows an IBAN to the people who may not see it whole: its
// country and check digits, stars in groups of four, and its last four
// characters, as in DE89 **** **** **** 3000. The groups of stars say
// roughly how long the IBAN is, never a digit of it; text too short to be
// an IBAN is starred whole.
func MaskIBAN(iban string) string {
	r := []rune(rules.NormalizeIBAN(iban))
	switch {
	case len(r) == 0:
		return ""
	case len(r) < 9:
		return strings.Repeat("*", len(r))
	}
	groups := max((len(r)-8)/4, 1)
	return string(r[:4]) + strings.Repeat(" ****", groups) + " " + string(r[len(r)-4:])
}

// ParseRefundApprovalOver reads refund_approval_over as a person or the
// merchants file writes it: empty for never, else an amount in euros by the
// provider's rules for an amount (rules.ParseAmount: a plain decimal string
// from 1 to 15000, at most two decimals).
func ParseRefundApprovalOver(s string) (*decimal.Decimal, *FieldError) {
	const field = "refund_approval_over"
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	d, fe := rules.ParseAmount(s)
	switch {
	case fe == nil:
		return &d, nil
	case fe.Reason == rules.ReasonDecimals:
		return nil, refuse(field, "", "at most 2 decimals, like 500.00").Says("amountDecimals")
	case fe.Reason == rules.ReasonTooSmall, fe.Reason == rules.ReasonTooLarge:
		return nil, approvalRange()
	}
	return nil, refuse(field, "", "an amount in euros with a point, like 500.00, or empty for never").Says("amountForm")
}

func approvalRange() *FieldError {
	return refuse("refund_approval_over", "", "from %s to %s euros, or empty for never", rules.MinAmount, rules.MaxAmount).
		Says("amountRange", rules.MinAmount.String(), rules.MaxAmount.String())
}

// UnmarshalJSON reads a merchant of the merchants file as its fields say,
// refund_approval_over by ParseRefundApprovalOver (a string, or a number
// as written; "" or null for never), so that an amount the rules refuse is
// said naming its merchant and field as every other value is, rather than
// by the decimal type's own reading. Unknown fields are refused.
func (m *Merchant) UnmarshalJSON(data []byte) error {
	type fields Merchant // without this method
	var in struct {
		*fields
		RefundApprovalOver json.RawMessage `json:"refund_approval_over"`
	}
	in.fields = (*fields)(m)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return err
	}
	text := string(in.RefundApprovalOver)
	switch {
	case text == "null":
		text = ""
	case strings.HasPrefix(text, `"`):
		if err := json.Unmarshal(in.RefundApprovalOver, &text); err != nil {
			return err
		}
	}
	over, fe := ParseRefundApprovalOver(text)
	if fe != nil {
		return fmt.Errorf("merchant %s: %w", m.ID, fe)
	}
	m.RefundApprovalOver = over
	return nil
}

// textRefusal refuses a text field holding a character a person cannot
// see or that changes how the text around it reads: payers read these, and
// one that looks like another must not be another.
func textRefusal(field, s string) *FieldError {
	switch {
	case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
		return refuse(field, "", "holds a control character (like a line break)").Says("control")
	case rules.HasHidden(s):
		return refuse(field, "", "holds an invisible formatting character (like a right-to-left mark or a zero-width space)").Says("hidden")
	}
	return nil
}

// checkPayee refuses who is paid as payers would be shown it wrong.
func (m *Merchant) checkPayee(add func(*FieldError)) {
	for _, f := range []struct{ name, value string }{
		{"legal_name", m.LegalName}, {"contact_email", m.ContactEmail}, {"contact_phone", m.ContactPhone},
		{"contact_url", m.ContactURL}, {"terms_url", m.TermsURL}, {"privacy_url", m.PrivacyURL}, {"time_zone", m.TimeZone},
	} {
		add(textRefusal(f.name, f.value))
	}
	if n := utf8.RuneCountInString(m.LegalName); n > MaxLegalNameLength {
		add(refuse("legal_name", "", "at most %d characters; this one has %d", MaxLegalNameLength, n).Says("tooLongHas", MaxLegalNameLength, n))
	}
	if m.ContactEmail != "" && rules.CheckEmail("contact_email", m.ContactEmail) != nil {
		add(refuse("contact_email", "", "%q is not a plain e-mail address like help@shop.example", m.ContactEmail).Says("email", m.ContactEmail))
	}
	if m.ContactPhone != "" && !phoneNumber(m.ContactPhone) {
		add(refuse("contact_phone", "", "digits, spaces and + - ( ) / only, at most %d characters, like +32 2 123 45 67", MaxPhoneLength).Says("phone", MaxPhoneLength))
	}
	for _, f := range []struct{ name, value string }{{"contact_url", m.ContactURL}, {"terms_url", m.TermsURL}, {"privacy_url", m.PrivacyURL}} {
		if f.value != "" && !payerURL(f.value) {
			add(refuse(f.name, "", "an https URL, like https://shop.example/terms (http only for localhost, 127.0.0.1 or [::1])").Says("httpsURL"))
		}
	}
	if m.TimeZone != "" {
		if _, err := loadZone(m.TimeZone); err != nil {
			add(refuse("time_zone", "", "%q is not an IANA time zone like %s", m.TimeZone, DefaultTimeZone).Says("timeZone", m.TimeZone))
		}
	}
}

// phoneNumber reports a phone number as people write one: digits, spaces
// and + - ( ) /, at least one digit, at most MaxPhoneLength characters.
func phoneNumber(s string) bool {
	return len(s) <= MaxPhoneLength && strings.ContainsAny(s, "0123456789") &&
		!strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789 +-()/", r) })
}

// payerURL reports an address a payer may be sent to: https, or plain http
// on this machine only (development), with no user name or password in it
// to make one site read as another. rules.WebURL alone takes http anywhere.
func payerURL(s string) bool {
	u, ok := rules.WebURL(s)
	return ok && u.User == nil && (u.Scheme == "https" || loopbackName(u.Hostname()))
}

// checkAccount refuses an account the shop's bank could not pay refunds
// from, and writes the IBAN and the BIC back without spaces, in upper case.
func (m *Merchant) checkAccount(add func(*FieldError)) {
	add(textRefusal("account_name", m.AccountName))
	add(textRefusal("account_iban", m.AccountIBAN))
	add(textRefusal("account_bic", m.AccountBIC))
	// As people type them: in groups, in lower case.
	m.AccountIBAN = rules.NormalizeIBAN(m.AccountIBAN)
	m.AccountBIC = strings.ToUpper(strings.Join(strings.Fields(m.AccountBIC), ""))
	name := strings.TrimSpace(m.AccountName)
	if n := utf8.RuneCountInString(m.AccountName); n > MaxAccountNameLength {
		add(refuse("account_name", "", "at most %d characters; this one has %d", MaxAccountNameLength, n).Says("tooLongHas", MaxAccountNameLength, n))
	}
	switch {
	case name == "" && m.AccountIBAN != "":
		add(refuse("account_name", "", "required with account_iban: the name the account is held in").Says("accountWhole"))
	case m.AccountIBAN == "" && (name != "" || m.AccountBIC != ""):
		add(refuse("account_iban", "", "required with account_name and account_bic: the account refunds are paid from").Says("accountWhole"))
	}
	if m.AccountIBAN != "" {
		if fe := rules.CheckIBAN("account_iban", m.AccountIBAN); fe != nil {
			add(ibanRefusal(m.AccountIBAN, fe))
		}
	}
	if m.AccountBIC != "" && rules.CheckBIC("account_bic", m.AccountBIC) != nil {
		add(refuse("account_bic", "", "8 or 11 letters and digits, like DEUTDEFF").Says("bic"))
	}
}

// ibanRefusal says why rules.CheckIBAN refused iban.
func ibanRefusal(iban string, fe *rules.FieldError) *FieldError {
	const field = "account_iban"
	switch fe.Reason {
	case rules.ReasonUnsupported:
		return refuse(field, "", "%s is not a SEPA country", iban[:2]).Says("ibanCountry", iban[:2])
	case rules.ReasonLength:
		return refuse(field, "", "%s; this one has %d", fe.Message, len(iban)).Says("ibanLength", iban[:2], rules.IBANLength(iban[:2]), len(iban))
	case rules.ReasonChecksum:
		return refuse(field, "", "the check digits do not match: look for a typo").Says("ibanChecksum")
	}
	return refuse(field, "", "an IBAN starts with its country's code and two check digits, like DE89 3704 0044 0532 0130 00").Says("iban")
}

// checkApproval refuses an amount above which refunds need a second owner
// that no refund could reach or that is no amount of euros.
func (m *Merchant) checkApproval(add func(*FieldError)) {
	over := m.RefundApprovalOver
	switch {
	case over == nil:
	case over.LessThan(rules.MinAmount) || over.GreaterThan(rules.MaxAmount):
		add(approvalRange())
	case !over.Equal(over.Round(2)):
		add(refuse("refund_approval_over", "", "at most 2 decimals, like 500.00").Says("amountDecimals"))
	}
}
