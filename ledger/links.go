package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Payment links: a stored request for money that a person makes in the
// console (or a program through the API) and the payer opens at /l/{id}.
// The ledger keeps the money rules of a link where every instance sees them
// at once:
//
//   - a single-use link has one order, its reference; the one-live-attempt
//     rule of attempts keeps that order to one payment that could be paid;
//   - a reusable link gives each payer an order of their own, REFERENCE-1,
//     REFERENCE-2…, numbered by orders_made under the link's row lock;
//   - no attempt is made for a link that is cancelled, expired or full
//     (InsertAttempt with PaymentLink set), decided in the transaction that
//     inserts the attempt, under the link's row lock, so that a cancel, an
//     expiry or the last free place is seen by every instance at once.

// Link kinds.
const (
	LinkSingle   = "single"
	LinkReusable = "reusable"
)

// Link states. LinkExpired is never stored: an open link past its
// expires_at is expired.
const (
	LinkOpen      = "open"
	LinkPaid      = "paid"
	LinkCancelled = "cancelled"
	LinkExpired   = "expired"
)

// LinkStates are the states a link is listed by, in the order a link
// passes through them.
var LinkStates = []string{LinkOpen, LinkPaid, LinkCancelled, LinkExpired}

var (
	// ErrLinkNotFound means no such payment link (for that merchant).
	ErrLinkNotFound = errors.New("ledger: no such payment link")
	// ErrLinkEnded means the link is paid, cancelled or expired: it starts
	// nothing.
	ErrLinkEnded = errors.New("ledger: the payment link has ended")
	// ErrLinkFull means every payment a reusable link allows is made or
	// under way: none can start until one under way ends unpaid.
	ErrLinkFull = errors.New("ledger: every payment the link allows is made or under way")
	// ErrReferenceTaken means the merchant has a link or an order under the
	// reference already.
	ErrReferenceTaken = errors.New("ledger: the reference is taken")
)

// ReferenceTakenError names what holds a reference: another link (LinkID)
// or an order made otherwise (OrderID).
type ReferenceTakenError struct {
	LinkID  string
	OrderID string
}

func (e *ReferenceTakenError) Error() string { return ErrReferenceTaken.Error() }
func (e *ReferenceTakenError) Unwrap() error { return ErrReferenceTaken }

// PaymentLink is one payment link.
type PaymentLink struct {
	ID          string
	MerchantID  string
	Amount      string
	Currency    string
	Description string
	Reference   string
	// EmailSealed is the payer's e-mail address, sealed by the caller
	// (package links); empty when none was given, or once the link ended.
	EmailSealed string
	Lang        string
	Kind        string
	// MaxPayments bounds a reusable link's payments; 0 for no bound.
	MaxPayments int
	Expires     time.Time
	// Stored is the state as stored (open, paid, cancelled); State tells
	// the state at a time.
	Stored      string
	CreatedBy   string
	Created     time.Time
	CancelledBy string
	Cancelled   time.Time
	// OrdersMade counts the orders the link made (a reusable link's
	// payers; 1 for a single link once opened).
	OrdersMade int
	// Payments counts the link's orders paid in full, PaidCents their sum.
	Payments   int
	PaidCents  int64
	EmailsSent int
	Emailed    time.Time
}

// State is the link's state at now: cancelled and paid as stored, expired
// when still open past its expiry, else open.
func (p PaymentLink) State(now time.Time) string {
	if p.Stored == LinkOpen && !now.Before(p.Expires) {
		return LinkExpired
	}
	return p.Stored
}

// PaidAmount is the sum paid through the link, with two decimals.
func (p PaymentLink) PaidAmount() string {
	return decimal.New(p.PaidCents, -2).StringFixed(2)
}

// OrderID is the id of a link's order: its reference for a single-use
// link, REFERENCE-n for a reusable link's n-th.
func (p PaymentLink) OrderID(n int) string {
	if p.Kind == LinkSingle {
		return p.Reference
	}
	return p.Reference + "-" + strconv.Itoa(n)
}

const linkColumns = `id, merchant_id, amount, currency, description, reference, email_sealed, lang, kind, max_payments, expires_at,
	state, created_by, created_at, cancelled_by, cancelled_at, orders_made, payments, paid_cents, emails_sent, emailed_at`

func scanLink(row interface{ Scan(...any) error }) (PaymentLink, error) {
	var p PaymentLink
	var expires, created, cancelled, emailed int64
	err := row.Scan(&p.ID, &p.MerchantID, &p.Amount, &p.Currency, &p.Description, &p.Reference, &p.EmailSealed, &p.Lang, &p.Kind,
		&p.MaxPayments, &expires, &p.Stored, &p.CreatedBy, &created, &p.CancelledBy, &cancelled, &p.OrdersMade, &p.Payments,
		&p.PaidCents, &p.EmailsSent, &emailed)
	p.Expires, p.Created = time.UnixMilli(expires), time.UnixMilli(created)
	if cancelled > 0 {
		p.Cancelled = time.UnixMilli(cancelled)
	}
	if emailed > 0 {
		p.Emailed = time.UnixMilli(emailed)
	}
	return p, err
}

// insertAudit writes an audit line inside tx, at the time given: the
// payment links' changes are audited in their own transaction, beside the
// settings' (SettingsTx.Audit).
func insertAudit(ctx context.Context, tx *sql.Tx, at time.Time, e AuditEntry) error {
	args := ""
	if len(e.Args) > 0 {
		raw, err := json.Marshal(e.Args)
		if err != nil {
			return err
		}
		args = string(raw)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, actor, merchant_id, action, fields, request_id, event, args) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		at.UnixMilli(), e.Actor, e.MerchantID, e.Action, e.Fields, e.RequestID, e.Event, args)
	return err
}

// AppendAudit writes an audit line of its own: a refusal the log keeps,
// where nothing else was changed.
func (l *Ledger) AppendAudit(ctx context.Context, e AuditEntry) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertAudit(ctx, tx, l.now(), e); err != nil {
		return err
	}
	return tx.Commit()
}

// CreateLink stores a new link with its audit line. A reference the
// merchant used for another link, or (for a single-use link, whose order id
// it becomes) for an order, gives a *ReferenceTakenError naming it.
func (l *Ledger) CreateLink(ctx context.Context, p PaymentLink, audit AuditEntry) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if taken, err := referenceHolder(ctx, tx, p.MerchantID, p.Reference, p.Kind == LinkSingle); err != nil || taken != nil {
		if err == nil {
			err = taken
		}
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO payment_links (id, merchant_id, amount, currency, description, reference, email_sealed,
			lang, kind, max_payments, expires_at, state, created_by, created_at, search)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', $12, $13, $14)`,
		p.ID, p.MerchantID, p.Amount, p.Currency, p.Description, p.Reference, p.EmailSealed, p.Lang, p.Kind, p.MaxPayments,
		p.Expires.UnixMilli(), p.CreatedBy, p.Created.UnixMilli(), SearchText(p.Description, p.Reference))
	if l.uniqueViolation(err) {
		// Another person took the reference meanwhile (or, once in 2^70,
		// the id).
		taken, rerr := referenceHolder(ctx, tx, p.MerchantID, p.Reference, false)
		if rerr == nil && taken != nil {
			return taken
		}
		return &ReferenceTakenError{}
	}
	if err != nil {
		return err
	}
	if err := insertAudit(ctx, tx, p.Created, audit); err != nil {
		return err
	}
	return tx.Commit()
}

// referenceHolder names the link that has reference, or with orders set
// the order under that id, or nil when it is free.
func referenceHolder(ctx context.Context, tx *sql.Tx, merchantID, reference string, orders bool) (*ReferenceTakenError, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM payment_links WHERE merchant_id = $1 AND reference = $2`, merchantID, reference).Scan(&id)
	switch {
	case err == nil:
		return &ReferenceTakenError{LinkID: id}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	case !orders:
		return nil, nil
	}
	var link string
	err = tx.QueryRowContext(ctx, `SELECT payment_link FROM orders WHERE merchant_id = $1 AND order_id = $2`, merchantID, reference).Scan(&link)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case link != "":
		return &ReferenceTakenError{LinkID: link}, nil
	}
	return &ReferenceTakenError{OrderID: reference}, nil
}

// SearchText is what the console's search looks in: the description and
// the reference, in lower case.
func SearchText(description, reference string) string {
	return strings.ToLower(description + "\n" + reference)
}

// Link returns one of a merchant's links.
func (l *Ledger) Link(ctx context.Context, merchantID, id string) (PaymentLink, error) {
	p, err := scanLink(l.db.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE id = $1 AND merchant_id = $2`, id, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrLinkNotFound
	}
	return p, err
}

// LinkByID returns a link by its id alone, for its payer.
func (l *Ledger) LinkByID(ctx context.Context, id string) (PaymentLink, error) {
	st, err := l.prepared(ctx, linkByID)
	if err != nil {
		return PaymentLink{}, err
	}
	p, err := scanLink(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrLinkNotFound
	}
	return p, err
}

// maxNumbering bounds the numbers a reusable link skips over when an order
// of the merchant's already has the id REFERENCE-n.
const maxNumbering = 20

// LinkOrder is the order a payer of link id pays, made when they take the
// first step that needs one (their first submit), never at opening: a
// single-use link's one order, its reference; for a reusable link the
// order this payer (payer, a digest of their checkout's payer key) was
// given before, else the next REFERENCE-n, kept with their digest. The
// order is recorded as opened: the link's opening was counted, once per
// browser, by AddLinkOpens. A link that is paid, cancelled or expired
// gives ErrLinkEnded with the link; a reusable link whose every payment is
// made or under way ErrLinkFull; an unknown id ErrLinkNotFound.
//
// It begins with the update that numbers a new order, which only an open
// link that needs one takes (a reusable link, or a single one never paid
// for before); a single link whose order was made costs that update, which
// changes nothing, and one read. On PostgreSQL a bounded link found full
// after numbering leaves a gap in its numbers.
func (l *Ledger) LinkOrder(ctx context.Context, id, payer string) (PaymentLink, Order, error) {
	ctx, span := l.span(ctx, "LinkOrder")
	defer span.End()
	now := l.now()
	if payer != "" {
		p, o, err := l.PayerOrder(ctx, id, payer)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return p, o, err
		}
	}
	for range maxNumbering {
		p, o, fresh, err := l.newLinkOrder(ctx, id, payer, now)
		switch {
		case errors.Is(err, errNotNumbered):
			// Ended, unknown, or a single link whose order was made: the
			// link says which.
			p, err := l.LinkByID(ctx, id)
			switch {
			case err != nil:
				return p, Order{}, err
			case p.Kind == LinkSingle && p.OrdersMade > 0 && p.State(now) == LinkOpen:
				return p, p.linkOrder(p.Reference, "", p.Created), nil
			}
			return p, Order{}, ErrLinkEnded
		case err != nil:
			return p, Order{}, err
		case fresh || p.Kind == LinkSingle:
			return p, o, nil
		}
		// REFERENCE-n is an order of the merchant's made otherwise: the
		// next number.
	}
	return PaymentLink{}, Order{}, fmt.Errorf("payment link %s: %d order ids in a row were taken by other orders", id, maxNumbering)
}

// PayerOrder is the order of reusable link id given to payer (a digest of
// a checkout's payer key), read only: ErrNotFound when it has none, and
// ErrLinkNotFound for an unknown link.
func (l *Ledger) PayerOrder(ctx context.Context, id, payer string) (PaymentLink, Order, error) {
	p, err := l.LinkByID(ctx, id)
	if err != nil {
		return p, Order{}, err
	}
	var orderID string
	err = l.db.QueryRowContext(ctx, `SELECT order_id FROM orders WHERE payment_link = $1 AND payer = $2 AND merchant_id = $3`,
		id, payer, p.MerchantID).Scan(&orderID)
	if errors.Is(err, sql.ErrNoRows) {
		return p, Order{}, ErrNotFound
	}
	if err != nil {
		return p, Order{}, err
	}
	o, err := l.order(ctx, p.MerchantID, orderID)
	return p, o, err
}

// LinkFull reports, read only, whether a bounded reusable link has every
// place taken by a payment made or under way: its payers are told so
// before they choose a bank. The bound itself is kept where payments start
// (insertLinkAttempt).
func (l *Ledger) LinkFull(ctx context.Context, p PaymentLink) (bool, error) {
	return l.full(ctx, l.db, p)
}

// AddLinkOpens counts payers who opened links since the last call: opens
// holds, by link, how many, with the link's merchant and the hour they
// opened it in (unix milliseconds). Each link's count and its merchant's
// funnel are added in one transaction; the counting is done in the
// background, so that opening a link writes nothing.
func (l *Ledger) AddLinkOpens(ctx context.Context, opens []LinkOpens) error {
	if len(opens) == 0 {
		return nil
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, o := range opens {
		if _, err := tx.ExecContext(ctx, `UPDATE payment_links SET opened = opened + $2 WHERE id = $1`, o.Link, o.Count); err != nil {
			return err
		}
		if err := (countChange{merchantID: o.Merchant, funnelHour: o.Hour, opened: int64(o.Count)}).add(ctx, l.on(tx)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// LinkOpens is how many payers opened a link in an hour.
type LinkOpens struct {
	Link, Merchant string
	// Hour is the hour's start, in unix milliseconds.
	Hour  int64
	Count int
}

// HourOf is the start of the hour of t, in unix milliseconds, as the
// console's counts are kept.
func HourOf(t time.Time) int64 { return hourOf(t) }

// errNotNumbered means the link gave no number: it is not open, not
// there, or a single link whose order was made already.
var errNotNumbered = errors.New("ledger: the link numbers no new order")

// numberLink gives the next order of an open link that needs one its
// number.
const numberLink = `UPDATE payment_links
	SET orders_made = CASE WHEN kind = 'single' THEN 1 ELSE orders_made + 1 END
	WHERE id = $1 AND state = 'open' AND expires_at > $2 AND (kind = 'reusable' OR orders_made = 0)`

// Statements of a link's order, each prepared once: parsing them anew for
// every payer cost SQLite more than running them.
const (
	numberLinkSQLite = numberLink + ` RETURNING ` + linkColumns
	numberLinkPG     = numberLink + ` AND set_config('synchronous_commit', 'off', true) = 'off' RETURNING ` + linkColumns
	insertLinkOrder  = `INSERT INTO orders (merchant_id, order_id, amount, currency, return_url, created_at, updated_at, opened_at, payment_link, payer)
		VALUES ($1, $2, $3, $4, '', $5, $5, $5, $6, $7) ON CONFLICT (merchant_id, order_id) DO NOTHING`
	linkByID = `SELECT ` + linkColumns + ` FROM payment_links WHERE id = $1`
)

// newLinkOrder numbers link id's next order and records it for payer
// (errNotNumbered when the link numbers none). fresh is false when the id
// was taken: by this single link's own order (two first submits at once:
// that order is returned), or by an order made otherwise (a single link's
// reference then gives a *ReferenceTakenError; a reusable link takes the
// next number). A bounded reusable link whose places are all taken gives
// ErrLinkFull.
//
// Every payer of a reusable link passes the link's one row. On PostgreSQL
// the numbering is a statement of its own that holds the row only while it
// runs, not waiting for its commit to reach the disk (synchronous_commit
// off for it alone): safe, because the order that uses the number commits
// after it, so a number lost to a crash is a gap, never a number given
// twice; the order is one statement more. SQLite takes one writer at a
// time anyway: there it is one transaction.
func (l *Ledger) newLinkOrder(ctx context.Context, id, payer string, now time.Time) (PaymentLink, Order, bool, error) {
	ms := now.UnixMilli()
	var o Order
	if l.dialect == postgres {
		number, err := l.prepared(ctx, numberLinkPG)
		if err != nil {
			return PaymentLink{}, o, false, err
		}
		p, err := scanLink(number.QueryRowContext(ctx, id, ms))
		if errors.Is(err, sql.ErrNoRows) {
			return p, o, false, errNotNumbered
		}
		if err != nil {
			return p, o, false, err
		}
		if full, err := l.full(ctx, l.db, p); err != nil || full {
			// The number is a gap.
			return p, o, false, cmp.Or(err, ErrLinkFull)
		}
		o = p.linkOrder(p.OrderID(p.OrdersMade), payer, now)
		insert, err := l.prepared(ctx, insertLinkOrder)
		if err != nil {
			return p, o, false, err
		}
		res, err := insert.ExecContext(ctx, o.MerchantID, o.OrderID, o.Amount, o.Currency, ms, p.ID, o.Payer)
		if err != nil {
			return p, o, false, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return p, o, false, err
			}
			o, fresh, err := l.takenLinkOrder(ctx, l.db, p, o)
			return p, o, fresh, err
		}
		return p, o, true, nil
	}
	// Prepared before the transaction: SQLite's one connection is the
	// transaction's until it ends.
	number, err := l.prepared(ctx, numberLinkSQLite)
	if err != nil {
		return PaymentLink{}, o, false, err
	}
	insert, err := l.prepared(ctx, insertLinkOrder)
	if err != nil {
		return PaymentLink{}, o, false, err
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return PaymentLink{}, o, false, err
	}
	defer tx.Rollback()
	p, err := scanLink(tx.StmtContext(ctx, number).QueryRowContext(ctx, id, ms))
	if errors.Is(err, sql.ErrNoRows) {
		return p, o, false, errNotNumbered
	}
	if err != nil {
		return p, o, false, err
	}
	if full, err := l.full(ctx, tx, p); err != nil || full {
		// The rollback gives the number back.
		return p, o, false, cmp.Or(err, ErrLinkFull)
	}
	o = p.linkOrder(p.OrderID(p.OrdersMade), payer, now)
	res, err := tx.StmtContext(ctx, insert).ExecContext(ctx, o.MerchantID, o.OrderID, o.Amount, o.Currency, ms, p.ID, o.Payer)
	if err != nil {
		return p, o, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return p, o, false, err
		}
		o, fresh, err := l.takenLinkOrder(ctx, tx, p, o)
		if err == nil {
			// The number stays taken.
			err = tx.Commit()
		}
		return p, o, fresh, err
	}
	return p, o, true, tx.Commit()
}

// full reports whether a bounded reusable link has every place taken.
func (l *Ledger) full(ctx context.Context, q querier, p PaymentLink) (bool, error) {
	if p.Kind != LinkReusable || p.MaxPayments == 0 {
		return false, nil
	}
	taken, err := l.linkTaken(ctx, q, p, "")
	return taken >= p.MaxPayments, err
}

// takenLinkOrder tells whose the order under o's id is: this single link's
// own (o, not fresh), another order's for a single link (its reference is
// taken), or for a reusable link not fresh, to try the next number.
func (l *Ledger) takenLinkOrder(ctx context.Context, q querier, p PaymentLink, o Order) (Order, bool, error) {
	var link string
	if err := q.QueryRowContext(ctx, `SELECT payment_link FROM orders WHERE merchant_id = $1 AND order_id = $2`,
		o.MerchantID, o.OrderID).Scan(&link); err != nil {
		return o, false, err
	}
	if p.Kind == LinkSingle && link != p.ID {
		return o, false, &ReferenceTakenError{OrderID: o.OrderID}
	}
	return o, false, nil
}

// linkOrder is the link's order orderID as it is recorded: a reusable
// link's is its payer's, a single link's everyone's.
func (p PaymentLink) linkOrder(orderID, payer string, created time.Time) Order {
	if p.Kind == LinkSingle {
		payer = ""
	}
	return Order{MerchantID: p.MerchantID, OrderID: orderID, Amount: p.Amount, Currency: p.Currency, PaymentLink: p.ID,
		Payer: payer, Status: "NOT_FOUND", Created: created, Updated: created}
}

// linkTaken counts a reusable link's places taken: its orders paid in full,
// and those (but except) with an attempt that could still be paid or may
// have been made (creating, open, unknown). An attempt at the bank may end
// paid, so it holds its place until it ends; one that ends unpaid gives
// its place back.
func (l *Ledger) linkTaken(ctx context.Context, q querier, p PaymentLink, except string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders o WHERE o.payment_link = $1 AND o.merchant_id = $2 AND o.order_id <> $3
		AND (o.paid_at > 0 OR EXISTS (SELECT 1 FROM attempts a WHERE a.merchant_id = o.merchant_id AND a.order_id = o.order_id
			AND a.state IN ('creating', 'open', 'unknown')))`, p.ID, p.MerchantID, except).Scan(&n)
	return n, err
}

// insertLinkAttempt is InsertAttempt for an order of a payment link: under
// the link's row lock, the attempt is made only while the link is open and
// not expired, and for a reusable link with a bound only while fewer of its
// orders are paid or under way than it allows. Every instance's attempts
// for the link take turns on that lock, so payers arriving at once never
// pass the bound, and a cancel seen by one instance holds on all.
func (l *Ledger) insertLinkAttempt(ctx context.Context, a Attempt) error {
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	p, err := scanLink(tx.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE id = $1 AND merchant_id = $2`+l.forUpdate(),
		a.PaymentLink, a.MerchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return ErrLinkNotFound
	}
	if err != nil {
		return err
	}
	if p.State(now) != LinkOpen {
		return ErrLinkEnded
	}
	if p.Kind == LinkReusable && p.MaxPayments > 0 {
		taken, err := l.linkTaken(ctx, tx, p, a.OrderID)
		if err != nil {
			return err
		}
		if taken >= p.MaxPayments {
			return ErrLinkFull
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO attempts (`+attemptColumns+`, next_check_at, read_by, payer)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', '', $10, $10, $11, $12, $13)`,
		a.UpstreamID, a.MerchantID, a.OrderID, a.Seq, a.Amount, a.Currency, a.BankID, a.Country, Creating, now.UnixMilli(),
		now.Add(l.FirstCheck).UnixMilli(), now.Add(FirstReadBy).UnixMilli(), a.Payer)
	if l.uniqueViolation(err) {
		return ErrAttemptTaken
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// linkPaid counts an order of link paid in full (inside Move's
// transaction): a single-use link is paid, a reusable one at its bound
// too. The payer's e-mail stays (ForgetEndedEmails drops it
// KeepPaidEmails after the link's expiry): a refund's page may be sent
// to it.
func linkPaid(ctx context.Context, tx *sql.Tx, link, amount string) error {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE payment_links SET payments = payments + 1, paid_cents = paid_cents + $2,
			state = CASE WHEN state = 'open' AND (kind = 'single' OR max_payments > 0 AND payments + 1 >= max_payments) THEN 'paid' ELSE state END
		WHERE id = $1`, link, d.Shift(2).IntPart())
	return err
}

// KeepPaidEmails is how long past its expiry a paid link keeps its
// payer's e-mail: the time a shop has to refund a consumer who sends the
// goods back, with time for the goods to travel.
const KeepPaidEmails = 60 * 24 * time.Hour

// CancelLink cancels an open link, with its audit line: no payment starts
// from it any more on any instance, while a payment already at the bank is
// still followed and notified. A link that is not open (paid, cancelled,
// expired) gives ErrLinkEnded with it.
func (l *Ledger) CancelLink(ctx context.Context, merchantID, id string, audit AuditEntry) (PaymentLink, error) {
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return PaymentLink{}, err
	}
	defer tx.Rollback()
	p, err := scanLink(tx.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE id = $1 AND merchant_id = $2`+l.forUpdate(), id, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrLinkNotFound
	}
	if err != nil {
		return p, err
	}
	if p.State(now) != LinkOpen {
		return p, ErrLinkEnded
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payment_links SET state = 'cancelled', cancelled_by = $2, cancelled_at = $3, email_sealed = ''
		WHERE id = $1`, id, audit.Actor, now.UnixMilli()); err != nil {
		return p, err
	}
	if err := insertAudit(ctx, tx, now, audit); err != nil {
		return p, err
	}
	if err := tx.Commit(); err != nil {
		return p, err
	}
	p.Stored, p.CancelledBy, p.Cancelled, p.EmailSealed = LinkCancelled, audit.Actor, time.UnixMilli(now.UnixMilli()), ""
	return p, nil
}

// LinkEmailed records that the link was sent by e-mail, with its audit
// line; sealed, when set, is the address it was sent to, kept for sending
// again while the link is open.
func (l *Ledger) LinkEmailed(ctx context.Context, merchantID, id, sealed string, audit AuditEntry) error {
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE payment_links SET emails_sent = emails_sent + 1, emailed_at = $3,
			email_sealed = CASE WHEN $4 <> '' AND state = 'open' THEN $4 ELSE email_sealed END
		WHERE id = $1 AND merchant_id = $2`, id, merchantID, now.UnixMilli(), sealed)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = ErrLinkNotFound
		}
		return err
	}
	if err := insertAudit(ctx, tx, now, audit); err != nil {
		return err
	}
	return tx.Commit()
}

// ForgetEndedEmails drops the payers' e-mail addresses of links past their
// expiry, and of paid links KeepPaidEmails past it, at most batch of
// them; cancelled links drop theirs as they end. It returns how many it
// dropped.
func (l *Ledger) ForgetEndedEmails(ctx context.Context, batch int) (int64, error) {
	now := l.now()
	res, err := l.db.ExecContext(ctx, `UPDATE payment_links SET email_sealed = '' WHERE id IN (
		SELECT id FROM payment_links WHERE email_sealed <> '' AND (state <> 'paid' AND expires_at <= $1 OR expires_at <= $3) LIMIT $2)`,
		now.UnixMilli(), batch, now.Add(-KeepPaidEmails).UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// LinkFilter narrows the list of links; zero fields do not.
type LinkFilter struct {
	Merchant string
	// State is one of LinkStates.
	State string
	// Query is searched for in the description and the reference.
	Query string
}

// ListLinks lists a merchant's links newest first, after the cursor (the
// last one shown), at most limit.
func (l *Ledger) ListLinks(ctx context.Context, f LinkFilter, after Cursor, limit int) ([]PaymentLink, error) {
	now := l.now().UnixMilli()
	conds := []string{"merchant_id = $1"}
	args := []any{f.Merchant}
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	switch f.State {
	case LinkOpen:
		add("state = 'open' AND expires_at > ?", now)
	case LinkExpired:
		add("state = 'open' AND expires_at <= ?", now)
	case LinkPaid, LinkCancelled:
		add("state = ?", f.State)
	}
	if f.Query != "" {
		add(`search LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(strings.ToLower(f.Query))+"%")
	}
	if after.ID != "" {
		add("(created_at, id) < (?, ?)", after.At.UnixMilli(), after.ID)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+linkColumns+` FROM payment_links WHERE `+strings.Join(conds, " AND ")+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []PaymentLink
	for rows.Next() {
		p, err := scanLink(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, p)
	}
	return list, rows.Err()
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// LinkOrders lists a link's orders, newest first, at most limit.
func (l *Ledger) LinkOrders(ctx context.Context, merchantID, id string, limit int) ([]Order, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT order_id, amount, currency, status, created_at, updated_at, bank_id, country, paid_at
		FROM orders WHERE payment_link = $1 AND merchant_id = $2 ORDER BY created_at DESC, order_id DESC LIMIT `+strconv.Itoa(limit), id, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Order
	for rows.Next() {
		o := Order{MerchantID: merchantID, PaymentLink: id}
		var created, updated, paid int64
		if err := rows.Scan(&o.OrderID, &o.Amount, &o.Currency, &o.Status, &created, &updated, &o.BankID, &o.Country, &paid); err != nil {
			return nil, err
		}
		o.Created, o.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		if paid > 0 {
			o.Paid = time.UnixMilli(paid)
		}
		list = append(list, o)
	}
	return list, rows.Err()
}

// LinkFunnel is how far a link's payers went: orders opened, a bank chosen
// (the payment handed out), the bank's page opened, and paid.
type LinkFunnel struct {
	Opened, BankChosen, AtBank, Paid int
}

// Funnel counts a link's payers at each step: opened counts browsers
// (AddLinkOpens), the others the orders that reached the step.
func (l *Ledger) Funnel(ctx context.Context, merchantID, id string) (LinkFunnel, error) {
	var f LinkFunnel
	err := l.db.QueryRowContext(ctx, `SELECT
			COALESCE((SELECT opened FROM payment_links WHERE id = $1 AND merchant_id = $2), 0),
			COALESCE(SUM(CASE WHEN sent_at > 0 THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN began_at > 0 THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN paid_at > 0 THEN 1 ELSE 0 END), 0)
		FROM orders WHERE payment_link = $1 AND merchant_id = $2`, id, merchantID).Scan(&f.Opened, &f.BankChosen, &f.AtBank, &f.Paid)
	// A browser that came back to pay after the link's first payers, or
	// a count not yet added, never shows fewer opened than chose a bank.
	f.Opened = max(f.Opened, f.BankChosen)
	return f, err
}
