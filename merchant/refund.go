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
// country and check digits, then its last four characters, the rest
// starred and never as long as it is (DE89 **** **** **** 3000).
func MaskIBAN(iban string) string {
	iban = strings.ToUpper(strings.Join(strings.Fields(iban), ""))
	if len(iban) < 12 {
		return "****"
	}
	return iban[:4] + " **** **** **** " + iban[len(iban)-4:]
}
