package refunds_test

import (
	"strings"
	"testing"

	"github.com/paybybank/checkout/refunds"
)

// TestAPayersAccountIsCheckedAsABankWould: the payer's account is taken
// with spaces and small letters, and refused, field by field, where a
// bank would refuse the transfer: a mistyped or short IBAN, a country
// outside SEPA, a BIC missing where the country needs one, a name with no
// letter a transfer carries.
func TestAPayersAccountIsCheckedAsABankWould(t *testing.T) {
	for _, c := range []struct {
		account refunds.Account
		refused string // field:key, "" when taken
	}{
		{refunds.Account{Name: "Anna Schmidt", IBAN: "de89 3704 0044 0532 0130 00"}, ""},
		{refunds.Account{Name: "Ζωή Παπαδοπούλου", IBAN: "GR1601101250000000012300695"}, ""},
		{refunds.Account{Name: "Иван Петров", IBAN: "BG80BNBG96611020345678"}, ""},
		{refunds.Account{Name: "王小明", IBAN: "DE89370400440532013000"}, "name:nameLatin"},
		{refunds.Account{Name: "  ", IBAN: "DE89370400440532013000"}, "name:required"},
		{refunds.Account{Name: "Anna", IBAN: "DE89370400440532013001"}, "iban:ibanChecksum"},
		{refunds.Account{Name: "Anna", IBAN: "DE8937040044053201300"}, "iban:ibanLength"},
		{refunds.Account{Name: "Anna", IBAN: "US12345678901234567890"}, "iban:ibanCountry"},
		{refunds.Account{Name: "Anna", IBAN: "CH9300762011623852957"}, "bic:bicRequired"},
		{refunds.Account{Name: "Anna", IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A"}, ""},
	} {
		got, errs := refunds.CheckAccount(c.account, "")
		var refused []string
		for _, e := range errs {
			refused = append(refused, e.Field+":"+e.Key)
		}
		if strings.Join(refused, " ") != c.refused {
			t.Errorf("%+v: refused %q, want %q", c.account, refused, c.refused)
		}
		if c.refused == "" && strings.ContainsAny(got.IBAN, " abcdefghijklmnopqrstuvwxyz") {
			t.Errorf("%+v: kept as %q", c.account, got.IBAN)
		}
	}
}

// TestARefundsAmountIsEurosAndCents: a refund's amount is more than 0
// with at most two decimals written, whatever their value.
func TestARefundsAmountIsEurosAndCents(t *testing.T) {
	for raw, key := range map[string]string{"24.95": "", " 10 ": "", "0": "refundPositive", "1.500": "amountDecimals",
		"1.005": "amountDecimals", "1e3": "amountForm", "-5": "amountForm", "": "required"} {
		_, fe := refunds.CheckAmount(raw)
		got := ""
		if fe != nil {
			got = fe.Key
		}
		if got != key {
			t.Errorf("%q: refused with %q, want %q", raw, got, key)
		}
	}
}
