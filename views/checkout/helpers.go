package checkout

import "strconv"

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
