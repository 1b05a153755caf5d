package merchant

import "github.com/shopspring/decimal"

// Account is a bank account: the shop's own, which refunds are paid from.
type Account struct {
	Name, IBAN, BIC string
}

// ShopAccount is the shop's own account (account_name, account_iban,
// account_bic), the debtor of its refunds' transfers; false while it is
// not set.
func (m *Merchant) ShopAccount() (Account, bool) {
	if m.AccountIBAN == "" || m.AccountName == "" {
		return Account{}, false
	}
	return Account{Name: m.AccountName, IBAN: m.AccountIBAN, BIC: m.AccountBIC}, true
}

// ApprovalOver is the amount above which a refund needs a second owner's
// approval (refund_approval_over); false when no refund needs one.
func (m *Merchant) ApprovalOver() (decimal.Decimal, bool) {
	if m.RefundApprovalOver == nil {
		return decimal.Decimal{}, false
	}
	return *m.RefundApprovalOver, true
}
