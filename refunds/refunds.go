// Package refunds gives money back from the merchant's own account. The
// provider moves money from the payer's account straight to the
// merchant's and has no refund call, so a refund is a SEPA credit
// transfer back: made here (in the console or by the merchant's program),
// the payer's account asked once (on the refund's page, /r/{id}, or typed
// by a person, or sent by the program), paid by the merchant's bank from a
// transfer file (pain.001) or an EPC QR code, and seen leaving the account
// in a bank statement.
//
// It holds the rules: what a refund may be (its amount, its reason, the
// payer's account checked as a bank would), its states and who may move
// it where, the second person's approval, the account sealed and masked,
// the transfer file and the QR payload, the e-mail of the payer's page.
// The ledger keeps them on every instance at once: never more back than
// was paid, a refund in one file at most (ledger/refunds.go).
package refunds

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/settings"
)

// PageRoute is the payer's refund page, under the app's BASE_URL.
const PageRoute = "/r/"

// Limits of a refund.
const (
	// MaxReason bounds the reason: the payer reads it, and it goes into
	// the transfer's remittance information with the order id.
	MaxReason = 140
	// MaxName bounds the payer's name: a SEPA name has 70 characters.
	MaxName = 70
	// KeepAccount is how long a payer's account is kept after its refund
	// ended (booked, returned or cancelled): long enough to answer a
	// question about it, no longer.
	KeepAccount = 30 * 24 * time.Hour
)

// Who gave a payer's account.
const (
	ByPayer   = "payer"
	ByConsole = "console"
	ByAPI     = "api"
)

// Account is a payer's account as typed: their name, IBAN and, where the
// country needs one, BIC.
type Account struct {
	Name string `json:"name"`
	IBAN string `json:"iban"`
	BIC  string `json:"bic,omitempty"`
}

// Ask is a refund as a person or a program asks for it, as typed.
type Ask struct {
	Amount string
	Reason string
	// Account is the payer's account when it is given with the refund.
	Account *Account
	// AccountBy says who gave it (ByConsole, ByAPI).
	AccountBy string
	// IdempotencyKey makes a program's retry give the same refund.
	IdempotencyKey string
}

// Refusal lists every field of an ask that breaks a rule, each said in
// English (Reason) and by a key of the console's and the payer's catalogs.
type Refusal struct {
	Fields []*merchant.FieldError
}

func (r *Refusal) Error() string {
	parts := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		parts[i] = f.Error()
	}
	return "refunds: " + strings.Join(parts, "; ")
}

// Field returns the refusal of the named field, if any.
func (r *Refusal) Field(name string) *merchant.FieldError {
	for _, f := range r.Fields {
		if f.Field == name {
			return f
		}
	}
	return nil
}

var (
	// ErrNotPaid means the order is not paid in full: nothing to give back.
	ErrNotPaid = ledger.ErrOrderNotPaid
	// ErrNotFound means no such refund, or no such order.
	ErrNotFound = ledger.ErrRefundNotFound
	// ErrMoved means the refund is not in a state the change starts from
	// (cancelled, sent, its account given already…): nothing changed.
	ErrMoved = ledger.ErrRefundMoved
	// ErrOwnApproval means the person who made a refund tried to approve
	// it: a second person's approval is another person's.
	ErrOwnApproval = errors.New("refunds: a refund is approved by another owner than the one who made it")
	// ErrNoShopAccount means the shop's own account is not set: there is
	// nothing to pay from.
	ErrNoShopAccount = errors.New("refunds: the shop's own account is not set")
	// ErrNoAccount means a refund's payer account is not known (yet).
	ErrNoAccount = errors.New("refunds: the payer's account is not known")
)

// ExceedsError is a refund of more than remains of what was paid.
type ExceedsError = ledger.RefundExceedsError

// Mail sends an e-mail with a plain-text body and an HTML alternative.
type Mail interface {
	SendAlternative(ctx context.Context, to, subject, text, html string) error
}

// Service makes and moves refunds.
type Service struct {
	Ledger *ledger.Ledger
	// Keys seal the payers' accounts; without them no account can be kept.
	Keys *settings.Keys
	// BaseURL is the app's public URL: the payer's page is
	// BaseURL + /r/{page}.
	BaseURL string
	// Mail sends the payer's page (SMTP_URL); nil when e-mail is not set up.
	Mail Mail
	// Bounds keep e-mails within their limits on every instance.
	Bounds *mailer.Bounds
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// PageURL is the payer's page of refund r.
func (s *Service) PageURL(r ledger.Refund) string {
	return strings.TrimRight(s.BaseURL, "/") + PageRoute + r.PageID
}

// newID makes a refund's id: rf_ and 80 random bits.
func newID() string { return "rf_" + strings.ToLower(rand.Text()[:16]) }

// NewPageID makes a payer's page id: 80 random bits, unguessable and not
// enumerable, short enough for a QR code.
func NewPageID() string { return strings.ToLower(rand.Text()[:16]) }

// ValidPageID reports whether s can be a page's id: anything else is
// answered as unknown without asking the ledger.
func ValidPageID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// ValidID reports whether s can be a refund's id.
func ValidID(s string) bool {
	rest, ok := strings.CutPrefix(s, "rf_")
	return ok && ValidPageID(rest)
}

// CheckAmount reads a refund's amount: more than 0, at most 2 decimals.
func CheckAmount(raw string) (decimal.Decimal, *merchant.FieldError) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return decimal.Decimal{}, merchant.Refuse("amount", "required").Says("required")
	}
	d, err := decimal.NewFromString(raw)
	switch {
	case err != nil || strings.ContainsAny(raw, "eE+") || strings.HasPrefix(raw, "-"):
		return d, merchant.Refuse("amount", "an amount in euros with a point, like 24.95").Says("amountForm")
	case !d.IsPositive():
		return d, merchant.Refuse("amount", "more than 0").Says("refundPositive")
	case !d.Equal(d.Round(2)) || decimals(raw) > 2:
		return d, merchant.Refuse("amount", "at most 2 decimals, like 24.95").Says("amountDecimals")
	}
	return d, nil
}

// decimals is how many digits raw writes after its point.
func decimals(raw string) int {
	if _, frac, ok := strings.Cut(raw, "."); ok {
		return len(frac)
	}
	return 0
}

// CheckReason reads a refund's reason: the payer reads it, so no control
// or invisible formatting character, at most MaxReason characters.
func CheckReason(raw string) (string, *merchant.FieldError) {
	reason := strings.TrimSpace(raw)
	switch n := utf8.RuneCountInString(reason); {
	case !utf8.ValidString(reason) || rules.HasHidden(reason):
		return reason, merchant.Refuse("reason", "holds a control or invisible formatting character").Says("hidden")
	case n > MaxReason:
		return reason, merchant.Refuse("reason", "at most %d characters; this one has %d", MaxReason, n).Says("tooLongHas", MaxReason, n)
	}
	return reason, nil
}

// CheckAccount reads a payer's account as a bank would take it: a name, an
// IBAN of a SEPA country with that country's length and its check digits
// right (spaces and case as typed), and a BIC where the IBAN's country
// needs one. It names every field it refuses, prefixed by prefix ("" or
// "account_").
func CheckAccount(a Account, prefix string) (Account, []*merchant.FieldError) {
	var errs []*merchant.FieldError
	out := Account{Name: strings.TrimSpace(a.Name), IBAN: rules.NormalizeIBAN(a.IBAN), BIC: strings.ToUpper(strings.Join(strings.Fields(a.BIC), ""))}
	switch n := utf8.RuneCountInString(out.Name); {
	case n == 0:
		errs = append(errs, merchant.Refuse(prefix+"name", "required: the name the account is in").Says("required"))
	case !utf8.ValidString(out.Name) || rules.HasHidden(out.Name):
		errs = append(errs, merchant.Refuse(prefix+"name", "holds a control or invisible formatting character").Says("hidden"))
	case n > MaxName:
		errs = append(errs, merchant.Refuse(prefix+"name", "at most %d characters; this one has %d", MaxName, n).Says("tooLongHas", MaxName, n))
	case !strings.ContainsFunc(sepa.Transliterate(out.Name), isLatinLetter):
		// A transfer carries Latin letters only: a name in a script with
		// no transliteration would reach the bank as dots.
		errs = append(errs, merchant.Refuse(prefix+"name", "holds no letter a bank transfer can carry: type it in Latin letters").Says("nameLatin"))
	}
	if out.IBAN == "" {
		errs = append(errs, merchant.Refuse(prefix+"iban", "required").Says("required"))
	} else if fe := rules.CheckIBAN(prefix+"iban", out.IBAN); fe != nil {
		errs = append(errs, ibanRefusal(prefix+"iban", out.IBAN, fe))
	}
	switch {
	case out.BIC != "":
		if rules.CheckBIC(prefix+"bic", out.BIC) != nil {
			errs = append(errs, merchant.Refuse(prefix+"bic", "a BIC has 8 or 11 letters and digits, like DEUTDEFF").Says("bic"))
		}
	case out.IBAN != "" && rules.IBANNeedsBIC(out.IBAN):
		errs = append(errs, merchant.Refuse(prefix+"bic", "required for a bank in %s", out.IBAN[:2]).Says("bicRequired", out.IBAN[:2]))
	}
	return out, errs
}

// ibanRefusal says what is wrong with an IBAN as a person can mend it.
func ibanRefusal(field, iban string, fe *rules.FieldError) *merchant.FieldError {
	switch fe.Reason {
	case rules.ReasonChecksum:
		return merchant.Refuse(field, "the check digits do not match: a character is mistyped").Says("ibanChecksum")
	case rules.ReasonLength:
		want := rules.IBANLength(iban[:2])
		return merchant.Refuse(field, "an IBAN from %s has %d characters; this one has %d", iban[:2], want, len(iban)).Says("ibanLength", iban[:2], want, len(iban))
	case rules.ReasonUnsupported:
		return merchant.Refuse(field, "%s is not in SEPA: refunds go to accounts in SEPA countries only", iban[:2]).Says("ibanCountry", iban[:2])
	}
	return merchant.Refuse(field, "an IBAN starts with a country code and two check digits, like DE89 3704 0044 0532 0130 00").Says("ibanForm")
}

// binding binds a sealed account to its refund: it cannot be moved to
// another.
func binding(id string) string { return "refund account " + id }

// seal seals an account for refund id.
func (s *Service) seal(id string, a Account) (string, error) {
	if s.Keys == nil {
		return "", errors.New("refunds: SETTINGS_KEYS is not set: a payer's account cannot be kept sealed")
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return s.Keys.Seal(string(raw), binding(id)), nil
}

// AccountOf opens a refund's payer account; false when none is kept (not
// given yet, or erased).
func (s *Service) AccountOf(r ledger.Refund) (Account, bool) {
	if r.AccountSealed == "" || s.Keys == nil {
		return Account{}, false
	}
	raw, err := s.Keys.Open(r.AccountSealed, binding(r.ID))
	if err != nil {
		return Account{}, false
	}
	var a Account
	if json.Unmarshal([]byte(raw), &a) != nil {
		return Account{}, false
	}
	return a, true
}

// Make makes a refund of a merchant's paid order. The amount and reason
// are checked, and the account when given; an order not paid gives
// ErrNotPaid, an order unknown ledger.ErrNotFound, more than remains an
// *ExceedsError. The same idempotency key gives the refund it made
// before (made false), or ledger.ErrIdempotencyReused when it was for
// another order or sum. A refund above the merchant's approval amount
// waits for another owner; one without an account waits for the payer's.
func (s *Service) Make(ctx context.Context, by settings.Actor, m *merchant.Merchant, orderID string, ask Ask) (r ledger.Refund, made bool, err error) {
	var errs []*merchant.FieldError
	amount, fe := CheckAmount(ask.Amount)
	if fe != nil {
		errs = append(errs, fe)
	}
	reason, fe := CheckReason(ask.Reason)
	if fe != nil {
		errs = append(errs, fe)
	}
	var account Account
	if ask.Account != nil {
		var aerrs []*merchant.FieldError
		prefix := "account_"
		if ask.AccountBy == ByAPI {
			prefix = "account."
		}
		account, aerrs = CheckAccount(*ask.Account, prefix)
		errs = append(errs, aerrs...)
	}
	if len(errs) > 0 {
		return r, false, &Refusal{Fields: errs}
	}
	r = ledger.Refund{ID: newID(), MerchantID: m.ID, OrderID: orderID, Amount: amount.StringFixed(2), Currency: rules.Currency,
		Reason: reason, PageID: NewPageID(), CreatedBy: by.Name, IdempotencyKey: ask.IdempotencyKey}
	if over, ok := m.ApprovalOver(); ok {
		// The ledger compares it with the order's refunds so far, under
		// the order's lock.
		above := over.Shift(2).Round(0).IntPart()
		r.ApproveAbove = &above
	}
	if ask.Account != nil {
		if r.AccountSealed, err = s.seal(r.ID, account); err != nil {
			return r, false, err
		}
		r.AccountMasked, r.AccountBy = merchant.MaskIBAN(account.IBAN), ask.AccountBy
	}
	r.State = next(r)
	if p, err := s.Ledger.OrderLink(ctx, m.ID, orderID); err == nil && p.ID != "" {
		r.Lang = p.Lang
	}
	if r.Lang == "" {
		// A signed link's payer: the language they checked out in.
		r.Lang, _ = s.Ledger.OrderLang(ctx, m.ID, orderID)
	}
	return s.Ledger.CreateRefund(ctx, r, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
		Event: settings.EventRefundMade, Args: []ledger.AuditArg{ledger.Text(r.ID), ledger.Text(orderID), ledger.Text(r.Amount + " " + r.Currency)}})
}

// next is the state a refund waits in, or ready once its account is
// known and, where asked, its approval given.
func next(r ledger.Refund) string {
	switch {
	case r.AccountSealed == "" && r.AccountMasked == "":
		return ledger.RefundAwaitingAccount
	case r.NeedsApproval && r.ApprovedBy == "":
		return ledger.RefundAwaitingApproval
	}
	return ledger.RefundReady
}

// GiveAccount takes the payer's account of a refund that waits for it,
// typed in the console or sent by the merchant's program (by: ByConsole
// or ByAPI), checked as a bank would. A refund whose account was given or
// that was cancelled gives ErrMoved and changes nothing.
func (s *Service) GiveAccount(ctx context.Context, actor settings.Actor, m *merchant.Merchant, id string, a Account, by string) (ledger.Refund, error) {
	prefix := "account_"
	if by == ByAPI {
		prefix = "account."
	}
	account, errs := CheckAccount(a, prefix)
	if len(errs) > 0 {
		return ledger.Refund{}, &Refusal{Fields: errs}
	}
	return s.takeAccount(ctx, m.ID, id, account, by, actor)
}

// PayerGives takes the payer's account typed on their refund's page.
func (s *Service) PayerGives(ctx context.Context, r ledger.Refund, a Account) (ledger.Refund, error) {
	account, errs := CheckAccount(a, "")
	if len(errs) > 0 {
		return r, &Refusal{Fields: errs}
	}
	return s.takeAccount(ctx, r.MerchantID, r.ID, account, ByPayer, settings.Actor{Name: ByPayer})
}

func (s *Service) takeAccount(ctx context.Context, merchantID, id string, a Account, by string, actor settings.Actor) (ledger.Refund, error) {
	sealed, err := s.seal(id, a)
	if err != nil {
		return ledger.Refund{}, err
	}
	return s.Ledger.MoveRefund(ctx, merchantID, id, ledger.RefundChange{From: []string{ledger.RefundAwaitingAccount},
		Next: next, Step: ledger.StepAccount, Actor: actor.Name, AccountSealed: sealed, AccountMasked: merchant.MaskIBAN(a.IBAN), AccountBy: by},
		ledger.AuditEntry{Actor: actor.Name, RequestID: actor.RequestID, MerchantID: merchantID, Event: settings.EventRefundAccount,
			Args: []ledger.AuditArg{ledger.Text(id), ledger.Text(merchant.MaskIBAN(a.IBAN)), ledger.Reason("refund-by-" + by)}})
}

// Approve is a second owner's approval of a refund above the merchant's
// approval amount; the person who made it cannot give it (ErrOwnApproval).
// A refund asking none, or approved already, gives ErrMoved.
func (s *Service) Approve(ctx context.Context, by settings.Actor, m *merchant.Merchant, id string) (ledger.Refund, error) {
	return s.Ledger.MoveRefund(ctx, m.ID, id, ledger.RefundChange{From: []string{ledger.RefundAwaitingAccount, ledger.RefundAwaitingApproval},
		Next: next, Step: ledger.StepApproved, Actor: by.Name, Approved: true,
		Check: func(r ledger.Refund) error {
			switch {
			case !r.NeedsApproval || r.ApprovedBy != "":
				return ErrMoved
			case strings.EqualFold(r.CreatedBy, by.Name):
				return ErrOwnApproval
			}
			return nil
		}}, s.audit(by, m.ID, settings.EventRefundApproved, id))
}

// Cancel cancels a refund before it is sent: its amount may be refunded
// again. A sent refund gives ErrMoved: the money is on its way.
func (s *Service) Cancel(ctx context.Context, by settings.Actor, m *merchant.Merchant, id string) (ledger.Refund, error) {
	return s.Ledger.MoveRefund(ctx, m.ID, id, ledger.RefundChange{From: []string{ledger.RefundAwaitingAccount, ledger.RefundAwaitingApproval,
		ledger.RefundReady}, To: ledger.RefundCancelled, Step: ledger.StepCancelled, Actor: by.Name, EraseAfter: s.now().Add(KeepAccount)},
		s.audit(by, m.ID, settings.EventRefundCancelled, id))
}

// MarkSent records a ready refund paid by hand or by its QR code.
func (s *Service) MarkSent(ctx context.Context, by settings.Actor, m *merchant.Merchant, id string) (ledger.Refund, error) {
	return s.Ledger.MoveRefund(ctx, m.ID, id, ledger.RefundChange{From: []string{ledger.RefundReady}, To: ledger.RefundSent,
		Step: ledger.StepSent, Actor: by.Name}, s.audit(by, m.ID, settings.EventRefundSent, id))
}

// MarkBooked records a sent refund seen leaving the merchant's account by
// a person, where no statement says so.
func (s *Service) MarkBooked(ctx context.Context, by settings.Actor, m *merchant.Merchant, id string) (ledger.Refund, error) {
	return s.Ledger.MoveRefund(ctx, m.ID, id, ledger.RefundChange{From: []string{ledger.RefundSent}, To: ledger.RefundBooked,
		Step: ledger.StepBooked, Actor: by.Name, BookedOn: s.now().UTC().Format(time.DateOnly), EraseAfter: s.now().Add(KeepAccount)},
		s.audit(by, m.ID, settings.EventRefundBooked, id))
}

func (s *Service) audit(by settings.Actor, merchantID, event, id string) ledger.AuditEntry {
	return ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: merchantID, Event: event, Args: []ledger.AuditArg{ledger.Text(id)}}
}

// Remittance is a refund's transfer's unstructured remittance: the
// order it gives back and why, as the payer's bank shows it.
func Remittance(r ledger.Refund) string {
	text := "Refund " + r.OrderID
	if r.Reason != "" {
		text += ": " + r.Reason
	}
	return text
}

// QRPayload is the EPC QR code of a ready refund, for the merchant's
// banking app to scan: the payer's account, the amount, the remittance.
// The refund's id leads the remittance, so that a statement names it
// even without an end-to-end id.
func (s *Service) QRPayload(r ledger.Refund) (string, error) {
	a, ok := s.AccountOf(r)
	if !ok {
		return "", ErrNoAccount
	}
	amount, err := decimal.NewFromString(r.Amount)
	if err != nil {
		return "", err
	}
	return sepa.EPCPayload(sepa.Account{Name: a.Name, IBAN: a.IBAN, BIC: a.BIC}, amount, sepa.Reference(r.ID)+" "+Remittance(r))
}

// Transfer makes a transfer file of a merchant's chosen ready refunds, from
// the shop's own account, and sends them (ready → sent) in the same
// transaction: a refund that is not ready, or another merchant's, is
// refused (ErrMoved, ErrNotFound), and none is ever in two files. The file
// is kept: downloaded again, it is the same bytes.
func (s *Service) Transfer(ctx context.Context, by settings.Actor, m *merchant.Merchant, ids []string) (ledger.Transfer, error) {
	debtor, ok := m.ShopAccount()
	if !ok {
		return ledger.Transfer{}, ErrNoShopAccount
	}
	ids = unique(ids)
	if len(ids) == 0 {
		return ledger.Transfer{}, ErrNotFound
	}
	list, err := s.Ledger.ListRefunds(ctx, ledger.RefundFilter{Merchant: m.ID, IDs: ids}, ledger.Cursor{}, len(ids))
	if err != nil {
		return ledger.Transfer{}, err
	}
	if len(list) != len(ids) {
		return ledger.Transfer{}, ErrNotFound
	}
	now := s.now()
	t := ledger.Transfer{ID: "tr_" + strings.ToLower(rand.Text()[:16]), MerchantID: m.ID, CreatedBy: by.Name, Refunds: len(list)}
	file := sepa.File{MessageID: t.ID, Created: now.UTC().Truncate(time.Second), Execution: now.UTC(), Initiator: m.Name,
		Debtor: sepa.Account{Name: debtor.Name, IBAN: debtor.IBAN, BIC: debtor.BIC}}
	// Oldest first, as a person reads a list of payments to make.
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		if r.State != ledger.RefundReady {
			return ledger.Transfer{}, fmt.Errorf("refund %s is %s: %w", r.ID, r.State, ErrMoved)
		}
		a, ok := s.AccountOf(r)
		if !ok {
			return ledger.Transfer{}, fmt.Errorf("refund %s: %w", r.ID, ErrNoAccount)
		}
		amount, err := decimal.NewFromString(r.Amount)
		if err != nil {
			return ledger.Transfer{}, err
		}
		t.TotalCents += r.Cents()
		file.Transfers = append(file.Transfers, sepa.Transfer{EndToEndID: r.ID, Amount: amount,
			Creditor: sepa.Account{Name: a.Name, IBAN: a.IBAN, BIC: a.BIC}, Remittance: Remittance(r)})
	}
	if t.File, err = sepa.CreditTransfer(file); err != nil {
		return ledger.Transfer{}, err
	}
	err = s.Ledger.CreateTransfer(ctx, t, ids, by.Name, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
		Event: settings.EventTransferMade, Args: []ledger.AuditArg{ledger.Text(t.ID), ledger.Count(int64(t.Refunds)), ledger.Text(t.Total() + " " + rules.Currency)}})
	return t, err
}

func unique(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// ErrNoEmail means the order has no payer's address to send the refund's
// page to.
var ErrNoEmail = errors.New("refunds: the order has no payer's e-mail address")

// Erase erases the payers' accounts of refunds that ended KeepAccount ago,
// in batches, until none is left or ctx ends.
func (s *Service) Erase(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.Ledger.EraseRefundAccounts(ctx, 500)
		total += n
		if err != nil || n < 500 {
			return total, err
		}
	}
}

// isLatinLetter reports whether r is a letter of the basic Latin alphabet.
func isLatinLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
