package merchant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/merchant"
)

// valid is a merchant every rule takes, to change one field of.
func valid() *merchant.Merchant {
	return &merchant.Merchant{ID: "shop1", Name: "Shop One", ReturnOrigins: []string{"https://shop.example"}}
}

func amount(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// TestWhoIsPaidAndTheShopsAccountKeepTheirRules holds Check to each new
// field's rule, a good value and bad ones: a bad one is refused on its
// field, with the catalog's sentence for the console.
func TestWhoIsPaidAndTheShopsAccountKeepTheirRules(t *testing.T) {
	tests := []struct {
		name   string
		change func(*merchant.Merchant)
		field  string // "" when taken
		key    string
	}{
		{"a legal name", func(m *merchant.Merchant) { m.LegalName = "Shop One GmbH & Co. KG" }, "", ""},
		{"a legal name of 140 characters", func(m *merchant.Merchant) { m.LegalName = strings.Repeat("é", 140) }, "", ""},
		{"a legal name of 141 characters", func(m *merchant.Merchant) { m.LegalName = strings.Repeat("é", 141) }, "legal_name", "tooLongHas"},
		{"a legal name turned around", func(m *merchant.Merchant) { m.LegalName = "Shop \u202eOne" }, "legal_name", "hidden"},
		{"a legal name with a zero-width space", func(m *merchant.Merchant) { m.LegalName = "Shop\u200bOne" }, "legal_name", "hidden"},
		{"a legal name on two lines", func(m *merchant.Merchant) { m.LegalName = "Shop\nOne" }, "legal_name", "control"},
		{"a contact e-mail", func(m *merchant.Merchant) { m.ContactEmail = "help@shop.example" }, "", ""},
		{"a contact e-mail with a name", func(m *merchant.Merchant) { m.ContactEmail = "Help <help@shop.example>" }, "contact_email", "email"},
		{"a contact e-mail without a domain", func(m *merchant.Merchant) { m.ContactEmail = "help" }, "contact_email", "email"},
		{"a contact e-mail with a soft hyphen", func(m *merchant.Merchant) { m.ContactEmail = "he\u00adlp@shop.example" }, "contact_email", "hidden"},
		{"a phone number", func(m *merchant.Merchant) { m.ContactPhone = "+32 (0)2 123-45-67 / 8" }, "", ""},
		{"a phone number with letters", func(m *merchant.Merchant) { m.ContactPhone = "+32 2 CALL-NOW" }, "contact_phone", "phone"},
		{"a phone number without digits", func(m *merchant.Merchant) { m.ContactPhone = "+ ( ) -" }, "contact_phone", "phone"},
		{"a phone number of 33 characters", func(m *merchant.Merchant) { m.ContactPhone = strings.Repeat("1", 33) }, "contact_phone", "phone"},
		{"a phone number with a tab", func(m *merchant.Merchant) { m.ContactPhone = "+32\t2" }, "contact_phone", "control"},
		{"a contact page", func(m *merchant.Merchant) { m.ContactURL = "https://shop.example/contact" }, "", ""},
		{"a contact page on this machine", func(m *merchant.Merchant) { m.ContactURL = "http://localhost:8080/contact" }, "", ""},
		{"a contact page over http", func(m *merchant.Merchant) { m.ContactURL = "http://shop.example/contact" }, "contact_url", "httpsURL"},
		{"a contact page with a user name", func(m *merchant.Merchant) { m.ContactURL = "https://bank.example@shop.example/" }, "contact_url", "httpsURL"},
		{"a contact page that is no URL", func(m *merchant.Merchant) { m.ContactURL = "shop.example/contact" }, "contact_url", "httpsURL"},
		{"terms", func(m *merchant.Merchant) { m.TermsURL = "https://shop.example/terms" }, "", ""},
		{"terms in script", func(m *merchant.Merchant) { m.TermsURL = "javascript:alert(1)" }, "terms_url", "httpsURL"},
		{"terms with a zero-width space", func(m *merchant.Merchant) { m.TermsURL = "https://shop\u200b.example/terms" }, "terms_url", "hidden"},
		{"a privacy notice", func(m *merchant.Merchant) { m.PrivacyURL = "https://shop.example/privacy" }, "", ""},
		{"a privacy notice over ftp", func(m *merchant.Merchant) { m.PrivacyURL = "ftp://shop.example/privacy" }, "privacy_url", "httpsURL"},
		{"a time zone", func(m *merchant.Merchant) { m.TimeZone = "Europe/Warsaw" }, "", ""},
		{"a time zone outside Europe", func(m *merchant.Merchant) { m.TimeZone = "America/New_York" }, "", ""},
		{"no time zone", func(m *merchant.Merchant) { m.TimeZone = "Europe/Gotham" }, "time_zone", "timeZone"},
		{"the machine's time zone", func(m *merchant.Merchant) { m.TimeZone = "Local" }, "time_zone", "timeZone"},
		{"a time zone as a path", func(m *merchant.Merchant) { m.TimeZone = "../../etc/passwd" }, "time_zone", "timeZone"},
		{"an account", func(m *merchant.Merchant) {
			m.AccountName, m.AccountIBAN, m.AccountBIC = "Shop One GmbH", "de89 3704 0044 0532 0130 00", "cobadeffxxx"
		}, "", ""},
		{"an account without a BIC", func(m *merchant.Merchant) { m.AccountName, m.AccountIBAN = "Shop One", "NL91ABNA0417164300" }, "", ""},
		{"an account holder of 71 characters", func(m *merchant.Merchant) {
			m.AccountName, m.AccountIBAN = strings.Repeat("a", 71), "NL91ABNA0417164300"
		}, "account_name", "tooLongHas"},
		{"an account holder with a right-to-left mark", func(m *merchant.Merchant) {
			m.AccountName, m.AccountIBAN = "Shop\u200fOne", "NL91ABNA0417164300"
		}, "account_name", "hidden"},
		{"an IBAN without its holder", func(m *merchant.Merchant) { m.AccountIBAN = "NL91ABNA0417164300" }, "account_name", "accountWhole"},
		{"a holder without an IBAN", func(m *merchant.Merchant) { m.AccountName = "Shop One" }, "account_iban", "accountWhole"},
		{"a BIC without an IBAN", func(m *merchant.Merchant) { m.AccountBIC = "DEUTDEFF" }, "account_iban", "accountWhole"},
		{"an IBAN mistyped", func(m *merchant.Merchant) { m.AccountName, m.AccountIBAN = "Shop One", "DE89 3704 0044 0532 0130 01" }, "account_iban", "ibanChecksum"},
		{"an IBAN too short", func(m *merchant.Merchant) { m.AccountName, m.AccountIBAN = "Shop One", "DE89 3704 0044 0532 0130" }, "account_iban", "ibanLength"},
		{"an IBAN outside SEPA", func(m *merchant.Merchant) { m.AccountName, m.AccountIBAN = "Shop One", "US12 3456 7890 1234" }, "account_iban", "ibanCountry"},
		{"an IBAN that is none", func(m *merchant.Merchant) { m.AccountName, m.AccountIBAN = "Shop One", "account 1234" }, "account_iban", "iban"},
		{"an IBAN with a zero-width space", func(m *merchant.Merchant) {
			m.AccountName, m.AccountIBAN = "Shop One", "NL91\u200bABNA0417164300"
		}, "account_iban", "hidden"},
		{"a BIC that is none", func(m *merchant.Merchant) {
			m.AccountName, m.AccountIBAN, m.AccountBIC = "Shop One", "NL91ABNA0417164300", "ABNA"
		}, "account_bic", "bic"},
		{"an approval amount", func(m *merchant.Merchant) { m.RefundApprovalOver = amount("500.50") }, "", ""},
		{"an approval amount at the provider's most", func(m *merchant.Merchant) { m.RefundApprovalOver = amount("15000") }, "", ""},
		{"an approval amount under 1", func(m *merchant.Merchant) { m.RefundApprovalOver = amount("0.99") }, "refund_approval_over", "amountRange"},
		{"an approval amount over 15000", func(m *merchant.Merchant) { m.RefundApprovalOver = amount("15000.01") }, "refund_approval_over", "amountRange"},
		{"an approval amount of cents' parts", func(m *merchant.Merchant) { m.RefundApprovalOver = amount("10.005") }, "refund_approval_over", "amountDecimals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.change(m)
			err := m.Check()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			fe, ok := err.(*merchant.FieldError)
			if !ok || fe.Field != tt.field || fe.Key != tt.key || !strings.HasPrefix(fe.Error(), tt.field+": ") {
				t.Fatalf("err = %#v; want a refusal of %s said by %q", err, tt.field, tt.key)
			}
		})
	}
}

func TestTheIBANAndBICAreKeptWithoutSpacesInUpperCase(t *testing.T) {
	m := valid()
	m.AccountName, m.AccountIBAN, m.AccountBIC = "Shop One", " de89 3704\u00a00044 0532 0130 00 ", "coba de ff"
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if m.AccountIBAN != "DE89370400440532013000" || m.AccountBIC != "COBADEFF" {
		t.Errorf("kept as %q and %q", m.AccountIBAN, m.AccountBIC)
	}
}

// TestRefusalsNameEveryFieldAtOnce: a form is told of every field it must
// change, Check of the first.
func TestRefusalsNameEveryFieldAtOnce(t *testing.T) {
	m := valid()
	m.LegalName, m.ContactEmail, m.TermsURL, m.AccountName = "A\u202e", "nobody", "http://shop.example", "Shop One"
	m.RefundApprovalOver = amount("0")
	var fields []string
	for _, fe := range m.Refusals() {
		fields = append(fields, fe.Field)
	}
	if got := strings.Join(fields, " "); got != "legal_name contact_email terms_url account_iban refund_approval_over" {
		t.Errorf("refused %s", got)
	}
	if fe, _ := m.Check().(*merchant.FieldError); fe == nil || fe.Field != "legal_name" {
		t.Errorf("Check refuses %v first; want legal_name", m.Check())
	}
}

func TestParseRefundApprovalOverReadsAnAmountOrNever(t *testing.T) {
	for in, want := range map[string]string{"": "never", "  ": "never", "500": "500", "500.5": "500.5", " 1.00 ": "1",
		"15000": "15000", "0.99": "amountRange", "15000.01": "amountRange", "10.005": "amountDecimals",
		"1,50": "amountForm", "1e3": "amountForm", "-5": "amountForm", "€5": "amountForm"} {
		d, fe := merchant.ParseRefundApprovalOver(in)
		got := "never"
		switch {
		case fe != nil && fe.Field != "refund_approval_over":
			got = "field " + fe.Field
		case fe != nil:
			got = fe.Key
		case d != nil:
			got = d.String()
		}
		if got != want {
			t.Errorf("ParseRefundApprovalOver(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLocationIsTheShopsZoneOrBrussels(t *testing.T) {
	m := valid()
	if got := m.Location().String(); got != "Europe/Brussels" {
		t.Errorf("a shop that names no zone is in %s", got)
	}
	m.TimeZone = "Atlantic/Canary"
	if got := m.Location().String(); got != "Atlantic/Canary" {
		t.Errorf("a shop in the Canaries is in %s", got)
	}
	winter := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	if _, offset := winter.In(m.Location()).Zone(); offset != 0 {
		t.Errorf("the Canaries are %d s off UTC in winter", offset)
	}
	for _, zone := range merchant.TimeZones {
		m := valid()
		m.TimeZone = zone
		if err := m.Check(); err != nil || m.Location().String() != zone {
			t.Errorf("the console offers %s, which Check refuses (%v) or Location does not give", zone, err)
		}
	}
}

func TestMaskIBANShowsTheCountryAndTheLastFourOnly(t *testing.T) {
	for in, want := range map[string]string{
		"DE89370400440532013000":      "DE89 **** **** **** 3000",
		"de89 3704 0044 0532 0130 00": "DE89 **** **** **** 3000",
		"NL91ABNA0417164300":          "NL91 **** **** 4300",
		"NO9386011117947":             "NO93 **** 7947",
		"FR7630006000011234567890189": "FR76 **** **** **** **** 0189",
		"":                            "",
		"DE89":                        "****",
	} {
		if got := merchant.MaskIBAN(in); got != want {
			t.Errorf("MaskIBAN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTheFileWritesWhoIsPaidAndTheAccount reads the new fields from a
// merchants file, and refuses a bad one naming the merchant and the field.
func TestTheFileWritesWhoIsPaidAndTheAccount(t *testing.T) {
	with := func(fields string) string {
		return `{"merchants":[` + strings.Replace(good, `"name"`, fields+`,"name"`, 1) + `]}`
	}
	d, err := merchant.Parse([]byte(with(`"legal_name":"Shop One GmbH","contact_email":"help@shop.example","contact_phone":"+49 30 1234567",
		"contact_url":"https://shop.example/contact","terms_url":"https://shop.example/terms","privacy_url":"https://shop.example/privacy",
		"time_zone":"Europe/Berlin","account_name":"Shop One GmbH","account_iban":"DE89 3704 0044 0532 0130 00","account_bic":"COBADEFFXXX",
		"refund_approval_over":"500.00"`)))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Get("shop1")
	if m.LegalName != "Shop One GmbH" || m.ContactEmail != "help@shop.example" || m.ContactPhone != "+49 30 1234567" ||
		m.ContactURL != "https://shop.example/contact" || m.TermsURL != "https://shop.example/terms" || m.PrivacyURL != "https://shop.example/privacy" ||
		m.Location().String() != "Europe/Berlin" || m.AccountName != "Shop One GmbH" || m.AccountIBAN != "DE89370400440532013000" ||
		m.AccountBIC != "COBADEFFXXX" || m.RefundApprovalOver == nil || m.RefundApprovalOver.String() != "500" {
		t.Errorf("read as %+v", m)
	}
	for approval, want := range map[string]string{`""`: "", `null`: "", `250`: "250", `"250.5"`: "250.5"} {
		d, err := merchant.Parse([]byte(with(`"refund_approval_over":` + approval)))
		if err != nil {
			t.Errorf("refund_approval_over %s: %v", approval, err)
			continue
		}
		m, _ := d.Get("shop1")
		if got := m.RefundApprovalOver; (got == nil) != (want == "") || got != nil && got.String() != want {
			t.Errorf("refund_approval_over %s read as %v", approval, got)
		}
	}
	for fields, want := range map[string]string{
		`"refund_approval_over":"lots"`:           "merchant shop1: refund_approval_over: an amount in euros",
		`"refund_approval_over":"0.50"`:           "merchant shop1: refund_approval_over: from 1 to 15000 euros",
		`"refund_approval_over":true`:             "merchant shop1: refund_approval_over:",
		`"account_iban":"DE89370400440532013000"`: "merchant shop1: account_name: required with account_iban",
		`"time_zone":"Mars/Olympus_Mons"`:         `merchant shop1: time_zone: "Mars/Olympus_Mons" is not an IANA time zone`,
		`"terms_url":"http://shop.example"`:       "merchant shop1: terms_url: an https URL",
		`"legal_nmae":"Shop One GmbH"`:            `unknown field "legal_nmae"`,
	} {
		if _, err := merchant.Parse([]byte(with(fields))); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to say %q", fields, err, want)
		}
	}
}
