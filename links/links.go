// Package links makes, cancels and sends payment links: a stored request
// for money that a person makes in the console (or a program through the
// API) and shares by address, QR code or e-mail, so that a shop without a
// developer takes payments too. It checks what a person asks for, keeps the
// payer's e-mail address sealed, writes every change with its audit line
// (never the address) and writes the e-mail in the payer's language. The
// ledger keeps the money rules: one order per single-use link, a reusable
// link's bound, a cancel seen by every instance at once.
package links

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

// Route is the payer's address of a link, under the app's BASE_URL.
const Route = "/l/"

// Limits of a link.
const (
	// MaxDescription bounds the description shown to the payer.
	MaxDescription = 200
	// MaxReference bounds a reference, which becomes the order id (with
	// "-n" for a reusable link's orders).
	MaxReference = 64
	// MinExpiry and MaxExpiry bound a link's life; DefaultExpiry is its
	// life when none is asked for.
	MinExpiry     = time.Hour
	MaxExpiry     = 365 * 24 * time.Hour
	DefaultExpiry = 30 * 24 * time.Hour
	// MaxPayments bounds a reusable link's limit.
	MaxPayments = 100000
)

// idAlphabet spells ids: lower-case letters and digits without i, l, o and
// u, so that an id read out or typed from a QR code's caption is not
// mistaken; 32 symbols, 5 bits each.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idLength makes an id of 70 random bits: unguessable, and short enough to
// read out and to fit a small QR code with the app's address.
const idLength = 14

// NewID makes a link's id.
func NewID() string { return randomText(idLength, idAlphabet) }

// ValidID reports whether s can be a link's id: anything else is answered
// as unknown without asking the ledger.
func ValidID(s string) bool {
	if len(s) != idLength {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(idAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// newReference makes a reference for a link made without one.
func newReference() string {
	return "PL-" + strings.ToUpper(randomText(8, idAlphabet))
}

func randomText(n int, alphabet string) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Mail sends an e-mail with a plain-text body and an HTML alternative.
type Mail interface {
	SendAlternative(ctx context.Context, to, subject, text, html string) error
}

// Store makes and changes payment links.
type Store struct {
	Ledger *ledger.Ledger
	// Keys seal the payer's e-mail address; without them (a deployment
	// with no SETTINGS_KEYS) an address is used to send once and not kept.
	Keys *settings.Keys
	// BaseURL is the app's public URL: links are BaseURL + /l/{id}.
	BaseURL string
	// Mail sends links by e-mail (SMTP_URL); nil when e-mail is not set up.
	Mail Mail
	// Bounds keep the e-mails within their limits, on every instance;
	// nil sends without counting (tests of other things).
	Bounds *mailer.Bounds
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	// Opens counts the payers opening links; nil counts nothing.
	Opens *Opens
}

// Opened counts a payer's browser opening link of merchant for the first
// time (visitor a digest of its address and browser): counted in memory,
// added to the ledger in the background.
func (s *Store) Opened(merchantID, link, visitor string) {
	if s.Opens != nil {
		s.Opens.Add(merchantID, link, visitor, s.now())
	}
}

// OrderFor is the order a payer (their checkout's payer digest) pays
// through link id, made when they first submit (ledger.LinkOrder).
func (s *Store) OrderFor(ctx context.Context, id, payer string) (ledger.PaymentLink, ledger.Order, error) {
	return s.Ledger.LinkOrder(ctx, id, payer)
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// URL is the payer's address of link id.
func (s *Store) URL(id string) string { return strings.TrimRight(s.BaseURL, "/") + Route + id }

// CanMail reports whether links can be sent by e-mail here.
func (s *Store) CanMail() bool { return s.Mail != nil }

// Draft is a link as a person or a program asks for it, as typed.
type Draft struct {
	Amount      string
	Description string
	Reference   string
	Email       string
	Lang        string
	Kind        string
	MaxPayments string
	// Expiry is the link's life; 0 for DefaultExpiry. ExpiryField names
	// the field it was given in, for a refusal (expires_in_days,
	// expires_in_hours, expires_in).
	Expiry      time.Duration
	ExpiryField string
}

// Refusal lists every field of a draft that breaks a rule, each said in
// English (Reason) and by a key of the console's catalog.
type Refusal struct {
	Fields []*merchant.FieldError
}

func (r *Refusal) Error() string {
	parts := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		parts[i] = f.Error()
	}
	return "links: " + strings.Join(parts, "; ")
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

// Check reads a draft into the link it asks for, without its id, or
// refuses it naming every field that breaks a rule.
func Check(d Draft, now time.Time) (ledger.PaymentLink, error) {
	var errs []*merchant.FieldError
	refuse := func(fe *merchant.FieldError) { errs = append(errs, fe) }
	p := ledger.PaymentLink{Currency: rules.Currency, Description: strings.TrimSpace(d.Description), Reference: strings.TrimSpace(d.Reference),
		Kind: d.Kind, Lang: d.Lang}
	amount, fe := rules.ParseAmount(strings.TrimSpace(d.Amount))
	switch {
	case fe == nil:
		p.Amount = amount.StringFixed(2)
	case fe.Reason == rules.ReasonRequired:
		refuse(merchant.Refuse("amount", "required").Says("required"))
	case fe.Reason == rules.ReasonDecimals:
		refuse(merchant.Refuse("amount", "at most 2 decimals, like 49.90").Says("amountDecimals"))
	case fe.Reason == rules.ReasonTooSmall, fe.Reason == rules.ReasonTooLarge:
		refuse(merchant.Refuse("amount", "from 1 to 15000 euros").Says("amountRange", "1", "15000"))
	default:
		refuse(merchant.Refuse("amount", "an amount in euros with a point, like 49.90").Says("amountForm"))
	}
	switch n := utf8.RuneCountInString(p.Description); {
	case n == 0:
		refuse(merchant.Refuse("description", "required: the payer reads what they pay for").Says("required"))
	case n > MaxDescription:
		refuse(merchant.Refuse("description", "at most %d characters; this one has %d", MaxDescription, n).Says("tooLongHas", MaxDescription, n))
	case !utf8.ValidString(p.Description) || strings.ContainsFunc(p.Description, unicode.IsControl):
		refuse(merchant.Refuse("description", "holds a control character (like a line break)").Says("control"))
	case rules.HasHidden(p.Description):
		refuse(merchant.Refuse("description", "holds an invisible formatting character (like a right-to-left mark or a zero-width space)").Says("hidden"))
	}
	switch n := utf8.RuneCountInString(p.Reference); {
	case n == 0:
	case n > MaxReference:
		refuse(merchant.Refuse("reference", "at most %d characters; this one has %d", MaxReference, n).Says("tooLongHas", MaxReference, n))
	case !utf8.ValidString(p.Reference) || strings.ContainsFunc(p.Reference, func(r rune) bool { return unicode.IsControl(r) || r == '/' }):
		refuse(merchant.Refuse("reference", "holds a slash or a control character").Says("reference"))
	case rules.HasHidden(p.Reference):
		refuse(merchant.Refuse("reference", "holds an invisible formatting character (like a right-to-left mark or a zero-width space)").Says("hidden"))
	}
	if email := strings.TrimSpace(d.Email); email != "" {
		if rules.CheckEmail("email", email) != nil {
			refuse(merchant.Refuse("email", "%q is not a plain e-mail address", email).Says("email", email))
		}
	}
	// No language is the payer's browser's: their pages follow it, and an
	// e-mail, which cannot know it, is in English.
	if lang, ok := i18n.Base(d.Lang); d.Lang != "" && (!ok || lang != d.Lang) {
		refuse(merchant.Refuse("lang", "%q is not one of the payers' 26 languages", d.Lang).Says("language", d.Lang))
	}
	switch d.Kind {
	case "":
		p.Kind = ledger.LinkSingle
	case ledger.LinkSingle, ledger.LinkReusable:
	default:
		refuse(merchant.Refuse("kind", "single or reusable").Says("kind"))
	}
	if raw := strings.TrimSpace(d.MaxPayments); raw != "" && p.Kind == ledger.LinkReusable {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > MaxPayments {
			refuse(merchant.Refuse("max_payments", "a whole number from 1 to %d, or empty for no limit", MaxPayments).Says("maxPayments", MaxPayments))
		}
		p.MaxPayments = n
	}
	expiry := d.Expiry
	if expiry == 0 {
		expiry = DefaultExpiry
	}
	if expiry < MinExpiry || expiry > MaxExpiry {
		field := cmpOr(d.ExpiryField, "expires_in_days")
		refuse(merchant.Refuse(field, "from 1 hour to 365 days").Says("expiry"))
	}
	if len(errs) > 0 {
		return ledger.PaymentLink{}, &Refusal{Fields: errs}
	}
	p.Created, p.Stored = now, ledger.LinkOpen
	p.Expires = now.Add(expiry)
	return p, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Made is a link just made, and whether its e-mail went out.
type Made struct {
	Link ledger.PaymentLink
	// Emailed is set when the draft named a payer's address and the link
	// was sent to it; MailErr says why not when sending failed.
	Emailed bool
	MailErr error
}

// Make checks a draft and stores the link for merchant m, with its audit
// line, then sends it to the payer's address when the draft gives one and
// e-mail is set up. A reference already used gives a
// *ledger.ReferenceTakenError (wrapped in a Refusal-like error the caller
// tells apart with errors.As). An e-mail past one of the mail bounds gives
// a *mailer.LimitError before anything is made, with its audit line.
func (s *Store) Make(ctx context.Context, by settings.Actor, m *merchant.Merchant, d Draft) (Made, error) {
	p, err := Check(d, s.now())
	if err != nil {
		return Made{}, err
	}
	p.ID, p.MerchantID, p.CreatedBy = NewID(), m.ID, by.Name
	generated := p.Reference == ""
	email := strings.TrimSpace(d.Email)
	var held *mailer.Reservation
	if email != "" && s.Mail != nil {
		if held, err = s.reserve(ctx, by, m.ID, p, email); err != nil {
			return Made{}, err
		}
	}
	if email != "" && s.Keys != nil {
		p.EmailSealed = s.Keys.Seal(email, emailBinding(p.ID))
	}
	for try := 0; ; try++ {
		if generated {
			p.Reference = newReference()
		}
		err = s.Ledger.CreateLink(ctx, p, madeLine(by, p))
		if !generated || !errors.Is(err, ledger.ErrReferenceTaken) || try == 3 {
			break
		}
	}
	if err != nil {
		return Made{}, errors.Join(err, held.GiveBack(ctx))
	}
	made := Made{Link: p}
	if held != nil {
		made.MailErr = s.send(ctx, by, m, p, email, false, held)
		made.Emailed = made.MailErr == nil
	}
	return made, nil
}

// reserve counts an e-mail of link p to address to against the mail
// bounds; a refusal is written in the audit log (never the address).
func (s *Store) reserve(ctx context.Context, by settings.Actor, merchantID string, p ledger.PaymentLink, to string) (*mailer.Reservation, error) {
	if s.Bounds == nil {
		return nil, nil
	}
	held, err := s.Bounds.Reserve(ctx, merchantID, "link "+p.ID, to)
	var limit *mailer.LimitError
	if errors.As(err, &limit) {
		what := p.Reference
		if what == "" {
			what = p.Description
		}
		if aerr := s.Ledger.AppendAudit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: merchantID,
			Event: settings.EventMailRefused, Args: []ledger.AuditArg{ledger.Text(what), ledger.Reason(MailBoundReason(limit.Bound))}}); aerr != nil {
			return nil, errors.Join(err, aerr)
		}
	}
	return held, err
}

// MailBoundReason is the audit log's reason of a reached mail bound.
func MailBoundReason(bound string) string { return "mail-" + bound }

// madeLine is a new link's audit line: its reference, amount and expiry,
// never the payer's address.
func madeLine(by settings.Actor, p ledger.PaymentLink) ledger.AuditEntry {
	event := settings.EventPaymentLinkMade
	if p.Kind == ledger.LinkReusable {
		event = settings.EventReusableLinkMade
	}
	return ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: p.MerchantID, Event: event,
		Args: []ledger.AuditArg{ledger.Text(p.Reference), ledger.Text(p.Amount + " " + p.Currency), ledger.Moment(p.Expires)}}
}

// emailBinding binds a sealed address to its link: it cannot be moved to
// another.
func emailBinding(id string) string { return "payment link e-mail " + id }

// Email opens a link's kept address; "" when none is kept.
func (s *Store) Email(p ledger.PaymentLink) string { return EmailOf(s.Keys, p) }

// EmailOf opens a link's kept address with keys; "" when none is kept: a
// single-use link's payer is the person a refund's page is sent to.
func EmailOf(keys *settings.Keys, p ledger.PaymentLink) string {
	if p.EmailSealed == "" || keys == nil {
		return ""
	}
	email, err := keys.Open(p.EmailSealed, emailBinding(p.ID))
	if err != nil {
		return ""
	}
	return email
}

// Cancel cancels a merchant's open link, with its audit line.
func (s *Store) Cancel(ctx context.Context, by settings.Actor, merchantID, id string) (ledger.PaymentLink, error) {
	p, err := s.Ledger.Link(ctx, merchantID, id)
	if err != nil {
		return p, err
	}
	return s.Ledger.CancelLink(ctx, merchantID, id, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: merchantID,
		Event: settings.EventPaymentLinkCancelled, Args: []ledger.AuditArg{ledger.Text(p.Reference)}})
}

// ErrNoMail means e-mail is not set up (no SMTP_URL).
var ErrNoMail = errors.New("links: e-mail is not set up")

// ErrNoAddress means a link is sent again without an address, and none is
// kept.
var ErrNoAddress = errors.New("links: no payer's e-mail address")

// ErrOwnersChangeAddress means a link kept for one address is sent to
// another by someone who may not change it: only an owner may.
var ErrOwnersChangeAddress = errors.New("links: only an owner may send a link to another address than its own")

// Send sends an open link to the payer's address again: to, or when empty
// the address kept with the link. The address a link was made for is the
// only one it goes to unless the sender may change it (an owner,
// mayChange); a new address is kept for next time. Past a mail bound it
// gives a *mailer.LimitError, with its audit line.
func (s *Store) Send(ctx context.Context, by settings.Actor, m *merchant.Merchant, p ledger.PaymentLink, to string, mayChange bool) error {
	if s.Mail == nil {
		return ErrNoMail
	}
	if p.State(s.now()) != ledger.LinkOpen {
		return ledger.ErrLinkEnded
	}
	to = strings.TrimSpace(to)
	kept := s.Email(p)
	keep := to != "" && !strings.EqualFold(to, kept)
	switch {
	case to == "" && kept == "":
		return ErrNoAddress
	case to == "":
		to = kept
	case rules.CheckEmail("email", to) != nil:
		return &Refusal{Fields: []*merchant.FieldError{merchant.Refuse("email", "%q is not a plain e-mail address", to).Says("email", to)}}
	case keep && kept != "" && !mayChange:
		return ErrOwnersChangeAddress
	}
	held, err := s.reserve(ctx, by, m.ID, p, to)
	if err != nil {
		return err
	}
	return s.send(ctx, by, m, p, to, keep, held)
}

// send writes and sends the link's e-mail, counted in held (given back
// when it could not be sent).
func (s *Store) send(ctx context.Context, by settings.Actor, m *merchant.Merchant, p ledger.PaymentLink, to string, keep bool, held *mailer.Reservation) error {
	letter, err := Write(m.Name, p, s.URL(p.ID))
	if err != nil {
		return errors.Join(err, held.GiveBack(ctx))
	}
	if err := s.Mail.SendAlternative(ctx, to, letter.Subject, letter.Text, letter.HTML); err != nil {
		return errors.Join(fmt.Errorf("sending payment link %s: %w", p.ID, err), held.GiveBack(ctx))
	}
	sealed := ""
	if keep && s.Keys != nil {
		sealed = s.Keys.Seal(to, emailBinding(p.ID))
	}
	return s.Ledger.LinkEmailed(ctx, m.ID, p.ID, sealed, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
		Event: settings.EventPaymentLinkEmailed, Args: []ledger.AuditArg{ledger.Text(p.Reference), ledger.Language(letter.Lang)}})
}
