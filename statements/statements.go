// Package statements reads a merchant's bank statements (camt.053 end of
// day, camt.054 notifications, as the bank gives them, a .zip of several
// included) and closes the loop the provider leaves open: its COMPLETED
// is the payer's bank's promise, a statement is the money on the account.
//
// A debit whose end-to-end id (or, for one paid by QR code, remittance)
// names a refund books that refund; a returned one marks it returned with
// the bank's reason, and its amount may be refunded again. A credit whose
// references or remittance hold an order's id, or the id the provider knew
// its payment by, for the order's paid amount, marks the order received;
// for another amount it is a mismatch, never a match. Nothing is guessed:
// what matches nothing is listed for a person to act on. Each entry counts
// once, however often a statement is uploaded.
package statements

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/settings"
)

// MaxFile is the largest statement file taken: 20 MB, as sepa reads.
const MaxFile = sepa.MaxFileSize

// OtherAccountError means a statement is of another account than the
// shop's own: it is imported only when the person says so.
type OtherAccountError struct {
	Statement, Shop string
}

func (e *OtherAccountError) Error() string {
	return "statements: the statement is of account " + merchant.MaskIBAN(e.Statement) + ", not the shop's own " + merchant.MaskIBAN(e.Shop)
}

// Service imports statements into the ledger.
type Service struct {
	Ledger *ledger.Ledger
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Upload is a statement file as a person uploads it.
type Upload struct {
	Name string
	File io.Reader
	Size int64
	// OtherAccount takes a statement of another account than the shop's
	// own, as the person said it is theirs too.
	OtherAccount bool
	// MovesRefunds is set when the person may say money left the shop's
	// account (an owner: merchant.PayRefunds). Only then, and only for a
	// statement of the shop's own account, do entries book or return
	// refunds; otherwise they are held (not kept, counted as Held), so
	// that the same file uploaded by an owner does it. A made-up
	// statement cannot make a refunded amount refundable again.
	MovesRefunds bool
}

// Import reads an uploaded file and does what its entries say, each entry
// once. A file that is not a camt statement (or is too large, truncated,
// a zip bomb, XML with a DOCTYPE…) gives a *sepa.FileError and changes
// nothing; a statement of another account than the shop's own gives an
// *OtherAccountError unless the upload says it is theirs too, and changes
// nothing.
func (s *Service) Import(ctx context.Context, by settings.Actor, m *merchant.Merchant, up Upload) ([]ledger.Statement, error) {
	read, err := sepa.ReadStatements(up.Name, up.File, up.Size)
	if err != nil {
		return nil, err
	}
	own, hasOwn := m.ShopAccount()
	if hasOwn && !up.OtherAccount {
		for _, st := range read {
			if st.Account != "" && st.Account != rules.NormalizeIBAN(own.IBAN) {
				return nil, &OtherAccountError{Statement: st.Account, Shop: own.IBAN}
			}
		}
	}
	var done []ledger.Statement
	for _, st := range read {
		ownAccount := hasOwn && st.Account != "" && st.Account == rules.NormalizeIBAN(own.IBAN)
		kept, err := s.importOne(ctx, by, m, up.Name, st, up.MovesRefunds && ownAccount)
		if err != nil {
			return done, err
		}
		done = append(done, kept)
	}
	return done, nil
}

// maxEntries bounds the entries of one upload, all statements together:
// a busy shop's month is a few thousand.
const maxEntries = 50_000

func (s *Service) importOne(ctx context.Context, by settings.Actor, m *merchant.Merchant, name string, st sepa.Statement, movesRefunds bool) (ledger.Statement, error) {
	kept := ledger.Statement{ID: "st_" + strings.ToLower(rand.Text()[:16]), MerchantID: m.ID, UploadedBy: by.Name, Uploaded: s.now(),
		FileName: name, Message: st.Message, Account: st.Account, From: day(st.From), To: day(st.To)}
	for _, e := range st.Entries {
		if e.Booked.IsZero() || e.Status != "" && e.Status != "BOOK" {
			// Pending or for information: not money on the account yet.
			continue
		}
		for i, part := range parts(e) {
			entry, act := s.match(ctx, m, st, e, part, i)
			if act.RefundID != "" && !movesRefunds {
				kept.Held++
				continue
			}
			if kept.Entries >= maxEntries {
				return kept, fmt.Errorf("statements: more than %d entries in one upload", maxEntries)
			}
			entry.StatementID = kept.ID
			got, repeated, err := s.Ledger.RecordEntry(ctx, entry, act)
			if err != nil {
				return kept, err
			}
			kept.Entries++
			if repeated {
				kept.Repeated++
				continue
			}
			switch got.Outcome {
			case ledger.EntryBooked:
				kept.Booked++
			case ledger.EntryReturned:
				kept.Returned++
			case ledger.EntryReceived:
				kept.Received++
			case ledger.EntryMismatch:
				kept.Mismatched++
			default:
				kept.Unmatched++
			}
		}
	}
	err := s.Ledger.RecordStatement(ctx, kept, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
		Event: settings.EventStatementImported, Args: []ledger.AuditArg{ledger.Text(name), ledger.Text(merchant.MaskIBAN(st.Account)),
			ledger.Count(int64(kept.Entries)), ledger.Count(int64(kept.Booked + kept.Returned + kept.Received)), ledger.Count(int64(kept.Unmatched + kept.Mismatched))}})
	return kept, err
}

// KeepParties is how long the other party, their masked IBAN and the
// remittance of a statement's entries are kept: past a year's closing.
const KeepParties = 400 * 24 * time.Hour

// Run forgets, every Every, the parties of entries booked over
// KeepParties ago, until ctx ends.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for {
			n, err := s.Ledger.ForgetStatementParties(ctx, day(s.now().Add(-KeepParties)), 500)
			if err != nil || n < 500 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// part is one transaction of an entry: the entry itself, or one of a batch
// entry's details with its own amount.
type part struct {
	detail sepa.Detail
	amount decimal.Decimal
}

// parts splits an entry into its transactions: a batch booked as one
// amount matches each of its transactions apart.
func parts(e sepa.Entry) []part {
	if len(e.Details) <= 1 {
		p := part{amount: e.Amount}
		if len(e.Details) == 1 {
			p.detail = e.Details[0]
		}
		return []part{p}
	}
	out := make([]part, 0, len(e.Details))
	for _, d := range e.Details {
		if d.Amount.IsZero() {
			// A batch whose transactions do not say their own amounts:
			// none of them can be matched to its amount.
			return []part{{amount: e.Amount}}
		}
		out = append(out, part{detail: d, amount: d.Amount})
	}
	return out
}

// refundID finds a refund's id in text: rf_ (or rf- as the SEPA
// character set writes it) and 16 letters and digits.
var refundID = regexp.MustCompile(`(?i)\brf[-_]([a-z2-7]{16})\b`)

// match decides what part i of entry e does, from what the ledger holds;
// the ledger does it (RecordEntry).
func (s *Service) match(ctx context.Context, m *merchant.Merchant, st sepa.Statement, e sepa.Entry, p part, i int) (ledger.StatementEntry, ledger.EntryAction) {
	entry := ledger.StatementEntry{MerchantID: m.ID, Key: entryKey(st, e, p, i), Account: st.Account, BookedOn: day(e.Booked),
		AmountCents: p.amount.Shift(2).Round(0).IntPart(), Credit: e.Credit, Reference: e.Ref, Outcome: ledger.EntryUnmatched}
	texts := append([]string{p.detail.EndToEndID, p.detail.InstructionID, p.detail.TransactionID, p.detail.AdditionalInfo, e.AdditionalInfo},
		p.detail.Remittance...)
	keepParty := func() {
		entry.Counterparty = p.detail.Counterparty
		if p.detail.CounterIBAN != "" {
			entry.CounterIBAN = merchant.MaskIBAN(p.detail.CounterIBAN)
		}
		entry.Remittance = strings.Join(nonEmpty(append(p.detail.Remittance, e.AdditionalInfo)), " / ")
	}
	if st.Currency != "" && st.Currency != rules.Currency || !p.amount.Equal(p.amount.Round(2)) {
		// Money in another currency, or in fractions of a cent, is no
		// payment or refund here, whatever it names.
		keepParty()
		return entry, ledger.EntryAction{}
	}
	// A return gives money back to the shop's account: a credit.
	returned := e.Credit && (e.Reversal || p.detail.ReturnReason != "")
	if id := findRefund(texts); id != "" && (!e.Credit || returned) {
		r, err := s.Ledger.Refund(ctx, m.ID, id)
		switch {
		case err != nil:
			entry.Outcome, entry.Target, entry.Note = ledger.EntryMismatch, id, "refund-unknown"
		case r.Cents() != entry.AmountCents:
			entry.Outcome, entry.Target, entry.Note = ledger.EntryMismatch, id, "amount "+r.Amount
		case returned:
			entry.Outcome, entry.Target, entry.Note = ledger.EntryReturned, id, p.detail.ReturnReason
			return entry, ledger.EntryAction{RefundID: id, From: []string{ledger.RefundSent, ledger.RefundBooked}}
		default:
			// Sent by a file, or paid by QR code and not yet marked sent.
			entry.Outcome, entry.Target = ledger.EntryBooked, id
			return entry, ledger.EntryAction{RefundID: id, From: []string{ledger.RefundReady, ledger.RefundSent}}
		}
		keepParty()
		return entry, ledger.EntryAction{}
	}
	if e.Credit && !returned {
		if o, ok := s.findOrder(ctx, m, texts); ok {
			entry.Target = o.OrderID
			switch {
			case o.Paid.IsZero() || cents(o.Amount) != entry.AmountCents:
				entry.Outcome, entry.Note = ledger.EntryMismatch, "amount "+o.Amount
			default:
				entry.Outcome = ledger.EntryReceived
				return entry, ledger.EntryAction{OrderID: o.OrderID}
			}
		}
	}
	keepParty()
	return entry, ledger.EntryAction{}
}

func cents(amount string) int64 {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return -1
	}
	return d.Shift(2).IntPart()
}

func nonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func findRefund(texts []string) string {
	for _, t := range texts {
		if m := refundID.FindStringSubmatch(t); m != nil {
			return "rf_" + strings.ToLower(m[1])
		}
	}
	return ""
}

// findOrder finds the order a credit names: a whole reference or
// remittance line, or one of its words, that is the id the provider knew
// a payment by or an order's own id.
func (s *Service) findOrder(ctx context.Context, m *merchant.Merchant, texts []string) (ledger.Order, bool) {
	seen := map[string]bool{}
	looked := 0
	for _, t := range texts {
		// An order id may hold a slash, so only spaces, commas and
		// semicolons part the words.
		candidates := append([]string{strings.TrimSpace(t)}, strings.FieldsFunc(t, func(r rune) bool {
			return unicode.IsSpace(r) || r == ',' || r == ';'
		})...)
		for _, c := range candidates {
			c = strings.Trim(c, ".,;()")
			if c == "" || seen[c] || rules.CheckOrderID(c) != nil {
				continue
			}
			seen[c] = true
			if looked++; looked > maxCandidates {
				return ledger.Order{}, false
			}
			if o, err := s.Ledger.AttemptOrder(ctx, m.ID, c); err == nil {
				return o, true
			}
			if o, _, err := s.Ledger.Order(ctx, m.ID, c); err == nil {
				return o, true
			}
		}
	}
	return ledger.Order{}, false
}

// maxCandidates bounds the words of one entry looked up as order ids: a
// remittance line holds a handful, a crafted one thousands.
const maxCandidates = 40

// entryKey is what makes an entry the same in two statements: its
// account, booking date, amount, direction and the bank's reference (and,
// for a batch's transaction, which one and its own reference).
func entryKey(st sepa.Statement, e sepa.Entry, p part, i int) string {
	ref := e.Ref
	if ref == "" {
		ref = p.detail.TransactionID + "|" + p.detail.EndToEndID
	}
	raw := fmt.Sprintf("%s|%s|%s|%t|%s|%d|%s|%s", st.Account, day(e.Booked), e.Amount.StringFixed(2), e.Credit, ref, i,
		p.detail.EndToEndID, p.amount.StringFixed(2))
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:16])
}
