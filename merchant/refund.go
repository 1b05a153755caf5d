package merchant

import (
	"strings"

	"github.com/shopspring/decimal"
)

// Account is a bank account: the shop's own, which refunds are paid from.
type Account struct {
	Name, IBAN, BIC string
}

// ShopAccount is the shop's own account, the debtor of its refunds'
// transfers; false while it is not set.
func (m *Merchant) ShopAccount() (Account, bool) {
	return Account{}, false
}

// ApprovalOver is the amount above which a refund needs a second owner's
// approval (refund_approval_over); false when no refund needs one.
func (m *Merchant) ApprovalOver() (decimal.Decimal, bool) {
	return decimal.Decimal{}, false
}

// MaskIBAN shows an IBAN as a person may see it once it is given: its
// country and check digits, its last four characters, stars between, in
// groups of four (DE89 **** **** **** 3000).
func MaskIBAN(iban string) string {
	iban = strings.ToUpper(strings.Join(strings.Fields(iban), ""))
	if len(iban) < 8 {
		return strings.Repeat("*", len(iban))
	}
	masked := iban[:4] + strings.Repeat("*", len(iban)-8) + iban[len(iban)-4:]
	var groups []string
	for len(masked) > 4 {
		groups, masked = append(groups, masked[:4]), masked[4:]
	}
	return strings.Join(append(groups, masked), " ")
}
