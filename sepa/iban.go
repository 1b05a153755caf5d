package sepa

import "strings"

// compact removes white space and upper-cases, as IBANs, BICs and country
// codes are written. The IBAN's and BIC's rules themselves are package
// rules', which every form of the app checks them by.
func compact(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}
