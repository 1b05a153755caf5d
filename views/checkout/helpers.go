package checkout

import (
	"context"
	"strconv"

	"github.com/paybybank/checkout/i18n"
)

// toneClass is the background of a bank's initials.
func toneClass(tone int) string { return "tone-" + strconv.Itoa(tone%6) }

// Steps is how many steps lead to the bank: country, bank, details, and
// the approval at the bank.
const Steps = 4

// wayBackIsSecondary reports whether the way back to the shop is the
// page's second choice: after a cancellation the shopper's next step is to
// try again, and while the bank has not answered it is to approve there (a
// shopper who leaves then reaches the shop before the payment is final).
func wayBackIsSecondary(p StatusPage) bool {
	switch {
	case p.TryAgainURL != "":
		return true
	case p.Kind == StatusPending, p.Kind == StatusProcessing, p.Kind == StatusChecking:
		return true
	}
	return false
}

// wayBackLabel names the way back: to the shop, or for a checkout from a
// payment link (which has no shop's page to go back to) to the payer's
// receipt.
func wayBackLabel(ctx context.Context, shop string, linked bool) string {
	if linked {
		return i18n.T(ctx, "status.receipt")
	}
	return i18n.T(ctx, "status.back", shop)
}

// returningLabel says where a paid checkout takes the shopper in a moment.
func returningLabel(ctx context.Context, s Summary) string {
	if s.Linked {
		return i18n.T(ctx, "status.toReceipt")
	}
	return i18n.T(ctx, "status.returning", s.Merchant)
}
