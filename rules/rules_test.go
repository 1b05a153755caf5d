package rules

import (
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in     string
		reason string // "" means accepted
	}{
		{"1", ""},
		{"1.5", ""},
		{"49.90", ""},
		{"15000", ""},
		{"15000.00", ""},
		{"0.99", ReasonTooSmall},
		{"0", ReasonTooSmall},
		{"15000.01", ReasonTooLarge},
		{"1.234", ReasonDecimals},
		{"1e3", ReasonInvalid},
		{"-5", ReasonInvalid},
		{"+5", ReasonInvalid},
		{" 10", ReasonInvalid},
		{"10 ", ReasonInvalid},
		{"10,00", ReasonInvalid},
		{"1.", ReasonInvalid},
		{".5", ReasonInvalid},
		{"NaN", ReasonInvalid},
		{"", ReasonRequired},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, fe := ParseAmount(tt.in)
			if tt.reason == "" {
				if fe != nil {
					t.Fatalf("ParseAmount(%q) refused: %v", tt.in, fe)
				}
				if d.LessThan(MinAmount) || d.GreaterThan(MaxAmount) {
					t.Fatalf("ParseAmount(%q) = %s, outside the limits", tt.in, d)
				}
				return
			}
			if fe == nil {
				t.Fatalf("ParseAmount(%q) accepted %s, want %s", tt.in, d, tt.reason)
			}
			if fe.Reason != tt.reason || fe.Field != "payment_amount" {
				t.Fatalf("ParseAmount(%q) = %s/%s, want payment_amount/%s", tt.in, fe.Field, fe.Reason, tt.reason)
			}
		})
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1", "1.5", "15000.00", "0.99", "15000.01", "1.234", "1e3", "-5", " 10", "10,00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, fe := ParseAmount(s)
		if fe != nil {
			return
		}
		if d.LessThan(MinAmount) || d.GreaterThan(MaxAmount) {
			t.Fatalf("accepted %q = %s outside 1..15000", s, d)
		}
		if d.Exponent() < -2 && !d.Equal(d.Round(2)) {
			t.Fatalf("accepted %q with more than 2 decimals", s)
		}
		for _, r := range s {
			if (r < '0' || r > '9') && r != '.' {
				t.Fatalf("accepted %q holding %q", s, r)
			}
		}
	})
}

func TestCheckIBAN(t *testing.T) {
	tests := []struct {
		in, reason string
	}{
		{"DE89370400440532013000", ""},
		{"NL91ABNA0417164300", ""},
		{"FR1420041010050500013M02606", ""},
		{"MT84MALT011000012345MTLCAST001S", ""},
		{"DE89370400440532013001", ReasonChecksum},
		{"DE8937040044053201300", ReasonLength},
		{"US12345678901234567890", ReasonUnsupported},
		{"de89370400440532013000", ReasonInvalid},
		{"DE89 3704", ReasonInvalid},
	}
	for _, tt := range tests {
		fe := CheckIBAN("iban", tt.in)
		switch {
		case tt.reason == "" && fe != nil:
			t.Errorf("CheckIBAN(%q) = %v, want valid", tt.in, fe)
		case tt.reason != "" && (fe == nil || fe.Reason != tt.reason):
			t.Errorf("CheckIBAN(%q) = %v, want %s", tt.in, fe, tt.reason)
		}
	}
	if got := NormalizeIBAN(" de89 3704 0044 0532 0130 00 "); got != "DE89370400440532013000" {
		t.Errorf("NormalizeIBAN = %q", got)
	}
}

func TestCheckBIC(t *testing.T) {
	for in, ok := range map[string]bool{
		"DEUTDEFF": true, "COBADEFFXXX": true, "NDEAFIHH": true, "GENODEM1GLS": true,
		"DEUTDEF": false, "DEUTDEFFX": false, "deutdeff": false, "1EUTDEFF": false, "DEUT DEFF": false,
	} {
		if got := CheckBIC("bic", in) == nil; got != ok {
			t.Errorf("CheckBIC(%q) valid = %v, want %v", in, got, ok)
		}
	}
}

// FuzzIBANAndBIC: no input panics, and whatever passes has the shape the
// provider expects.
func FuzzIBANAndBIC(f *testing.F) {
	for _, s := range []string{"DE89 3704 0044 0532 0130 00", "FR7630006000011234567890189", "DEUTDEFF", "DEUTDEFF500", "", "ZZ00", "de89370400440532013000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckIBAN("iban", s) == nil {
			n := NormalizeIBAN(s)
			if len(n) < 15 || len(n) > 34 || n[0] < 'A' || n[0] > 'Z' {
				t.Fatalf("CheckIBAN accepted %q (%q)", s, n)
			}
		}
		if CheckBIC("bic", s) == nil && len(s) != 8 && len(s) != 11 {
			t.Fatalf("CheckBIC accepted %q", s)
		}
	})
}

// Every example the form shows is an IBAN the form would take, of its
// country.
func TestExampleIBANsAreValid(t *testing.T) {
	for _, country := range []string{"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE",
		"IS", "IT", "LT", "LU", "LV", "MT", "NL", "NO", "PL", "PT", "RO", "SE", "SI", "SK"} {
		iban := ExampleIBAN(country)
		if !strings.HasPrefix(iban, country) {
			t.Errorf("%s: example %s is of another country", country, iban)
		}
		if err := CheckIBAN("iban", NormalizeIBAN(iban)); err != nil {
			t.Errorf("%s: example %s is refused: %v", country, iban, err)
		}
	}
	if ExampleIBAN("XX") != ExampleIBAN("DE") {
		t.Error("a country without an example gets none")
	}
}

// TestSEPAIBANsAndWhenTheBICIsAsked: every SEPA country's IBAN, the ones
// admitted lately included, with the BIC asked only outside the EEA.
func TestSEPAIBANsAndWhenTheBICIsAsked(t *testing.T) {
	for _, c := range []struct {
		iban    string
		reason  string // "" for a good IBAN
		sepa    bool
		needBIC bool
	}{
		{"DE89370400440532013000", "", true, false},
		{"FR1420041010050500013M02606", "", true, false},
		{"NO9386011117947", "", true, false},
		{"MT84MALT011000012345MTLCAST001S", "", true, false},
		{"CH9300762011623852957", "", true, true},
		{"GB29NWBK60161331926819", "", true, true},
		{"MC5811222000010123456789030", "", true, true},
		{"SM86U0322509800000000270100", "", true, true},
		{"AD1200012030200359100100", "", true, true},
		{"VA59001123000012345678", "", true, true},
		{"GI75NWBK000000007099453", "", true, true},
		{"AL47212110090000000235698741", "", true, true},
		{"ME25505000012345678951", "", true, true},
		{"RS35260005601001611379", "", true, true},
		{"DE89370400440532013001", ReasonChecksum, true, false},
		{"DE8937040044053201300", ReasonLength, true, false},
		{"BR1800360305000010009795493C1", ReasonUnsupported, false, false},
		{"US12345678901234", ReasonUnsupported, false, false},
	} {
		fe := CheckIBAN("iban", c.iban)
		switch {
		case c.reason == "" && fe != nil:
			t.Errorf("%s: %v", c.iban, fe)
		case c.reason != "" && (fe == nil || fe.Reason != c.reason):
			t.Errorf("%s: %v, want %s", c.iban, fe, c.reason)
		}
		if SEPACountry(c.iban) != c.sepa || IBANNeedsBIC(c.iban) != c.needBIC {
			t.Errorf("%s: SEPA %v, BIC asked %v; want %v, %v", c.iban, SEPACountry(c.iban), IBANNeedsBIC(c.iban), c.sepa, c.needBIC)
		}
	}
}
