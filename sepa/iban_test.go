package sepa_test

import (
	"strings"
	"testing"

	"github.com/paybybank/checkout/sepa"
)

func TestIBANs(t *testing.T) {
	for _, c := range []struct {
		iban    string
		problem string // "" for a good IBAN
		sepa    bool
		needBIC bool
	}{
		{"DE89370400440532013000", "", true, false},
		{"de89 3704 0044 0532 0130 00", "", true, false},
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
		{"DE89370400440532013001", "check digits", true, false},
		{"DE8937040044053201300", "has 21 characters", true, false},
		{"BR1800360305000010009795493C1", "outside SEPA", false, false},
		{"US12345678901234", "outside SEPA", false, false},
		{"DE89-3704", "has '-'", true, false},
		{"D", "too short", false, false},
		{"", "too short", false, false},
	} {
		t.Run(c.iban, func(t *testing.T) {
			err := sepa.CheckIBAN(c.iban)
			switch {
			case c.problem == "" && err != nil:
				t.Errorf("CheckIBAN: %v", err)
			case c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)):
				t.Errorf("CheckIBAN: %v, want an error saying %q", err, c.problem)
			}
			if got := sepa.SEPACountry(c.iban); got != c.sepa {
				t.Errorf("SEPACountry = %v, want %v", got, c.sepa)
			}
			if got := sepa.IBANNeedsBIC(c.iban); got != c.needBIC {
				t.Errorf("IBANNeedsBIC = %v, want %v", got, c.needBIC)
			}
		})
	}
}

func TestCheckBIC(t *testing.T) {
	for _, c := range []struct {
		bic  string
		good bool
	}{
		{"COBADEFF", true}, {"COBADEFFXXX", true}, {"UBSWCHZH80A", true},
		{"COBADEF", false}, {"COBA1EFF", false}, {"cobadeff", false}, {"COBADEFFXX", false},
	} {
		if err := sepa.CheckBIC(c.bic); (err == nil) != c.good {
			t.Errorf("CheckBIC(%q) = %v, want good: %v", c.bic, err, c.good)
		}
	}
}
