package sepa

import (
	"fmt"
	"strings"
)

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

// NormalizeIBAN removes the spaces people type into an IBAN and upper-cases
// it, the form every function here compares and writes.
func NormalizeIBAN(iban string) string {
	return compact(iban)
}

// compact removes white space and upper-cases, as IBANs and BICs are written.
func compact(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// CheckIBAN reports what is wrong with an IBAN for a SEPA transfer: a country
// outside SEPA, a length that country's IBANs do not have, characters an IBAN
// cannot hold, or a check digit that does not match (a typing error). It
// returns nil for a good IBAN, spaces and case aside.
func CheckIBAN(iban string) error {
	iban = NormalizeIBAN(iban)
	if len(iban) < 5 {
		return fmt.Errorf("IBAN %q is too short", iban)
	}
	for i := 0; i < len(iban); i++ {
		c := iban[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if !letter && !digit || i < 2 && !letter || (i == 2 || i == 3) && !digit {
			return fmt.Errorf("IBAN %q has %q at position %d", iban, c, i+1)
		}
	}
	country, ok := sepaCountries[iban[:2]]
	if !ok {
		return fmt.Errorf("IBAN %q is of %s, which is outside SEPA", iban, iban[:2])
	}
	if len(iban) != country.length {
		return fmt.Errorf("IBAN %q has %d characters, %s IBANs have %d", iban, len(iban), iban[:2], country.length)
	}
	// ISO 13616: move the first four characters to the end, read letters as
	// 10..35, and the number modulo 97 must be 1.
	rem := 0
	for _, c := range iban[4:] + iban[:4] {
		if c >= 'A' {
			rem = (rem*100 + int(c-'A'+10)) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	if rem != 1 {
		return fmt.Errorf("IBAN %q has wrong check digits: a character is mistyped", iban)
	}
	return nil
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

// IBANNeedsBIC reports whether a SEPA credit transfer to this IBAN needs the
// beneficiary bank's BIC: the rulebook lets a payer leave it out only inside
// the European Economic Area, so it is needed for Switzerland, the United
// Kingdom, Monaco, San Marino, Andorra, the Vatican and the other SEPA
// countries outside the EEA. An IBAN outside SEPA gives false: no SEPA
// transfer reaches it with or without a BIC (ask SEPACountry).
func IBANNeedsBIC(iban string) bool {
	iban = NormalizeIBAN(iban)
	if len(iban) < 2 {
		return false
	}
	return sepaCountries[iban[:2]].nonEEA
}

// CheckBIC reports whether bic has the shape of a BIC (ISO 9362): four
// letters or digits for the institution, two letters for the country, two
// for the location and optionally three for the branch.
func CheckBIC(bic string) error {
	if len(bic) != 8 && len(bic) != 11 {
		return fmt.Errorf("BIC %q must have 8 or 11 characters", bic)
	}
	for i := 0; i < len(bic); i++ {
		c := bic[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if !letter && !digit || (i == 4 || i == 5) && !letter {
			return fmt.Errorf("BIC %q has %q at position %d", bic, c, i+1)
		}
	}
	return nil
}
