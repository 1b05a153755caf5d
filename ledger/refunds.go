package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Refunds: money back from the merchant's own account, whose rules package
// refunds keeps. The ledger keeps what must hold on every instance at once:
// an order's refunds that are not cancelled or returned never add up to
// more than was paid (decided under the order's row lock), a refund moves
// only from the states it may leave, each move is in its timeline, its
// audit line and its event in one transaction, and a refund is in one
// transfer file at most.

// Refund states.
const (
	RefundAwaitingAccount  = "awaiting_account"
	RefundAwaitingApproval = "awaiting_approval"
	RefundReady            = "ready"
	RefundSent             = "sent"
	RefundBooked           = "booked"
	RefundReturned         = "returned"
	RefundCancelled        = "cancelled"
)

// RefundStates are the states a refund is listed by, in the order a refund
// passes through them.
var RefundStates = []string{RefundAwaitingAccount, RefundAwaitingApproval, RefundReady, RefundSent, RefundBooked, RefundReturned, RefundCancelled}

// Event types of refunds.
const (
	EventRefundCreated      = "refund.created"
	EventRefundStateChanged = "refund.state_changed"
)

var (
	// ErrRefundNotFound means no such refund (for that merchant).
	ErrRefundNotFound = errors.New("ledger: no such refund")
	// ErrOrderNotPaid means the order is not paid in full: there is
	// nothing to give back.
	ErrOrderNotPaid = errors.New("ledger: the order is not paid")
	// ErrRefundMoved means the refund is no longer in a state the change
	// may start from: somebody moved it meanwhile, or it ended.
	ErrRefundMoved = errors.New("ledger: the refund is not in a state this change starts from")
	// ErrIdempotencyReused means an Idempotency-Key already made a
	// refund of another order or sum.
	ErrIdempotencyReused = errors.New("ledger: the idempotency key made another refund")
)

// RefundExceedsError is a refund of more than remains of what was paid.
type RefundExceedsError struct {
	// Remaining is what may still be refunded, with two decimals.
	Remaining string
}

func (e *RefundExceedsError) Error() string {
	return "ledger: the refund is more than remains to refund (" + e.Remaining + ")"
}

// Refund is one refund.
type Refund struct {
	ID         string
	MerchantID string
	OrderID    string
	// Amount has two decimals.
	Amount   string
	Currency string
	Reason   string
	State    string
	// NeedsApproval is set when the merchant's rule asked a second
	// person's approval at the refund's making; ApprovedBy gave it.
	NeedsApproval bool
	// ApproveAbove, when set, is the merchant's refund_approval_over in
	// cents at the making (not kept): a refund that, with the order's
	// refunds before it, goes past it needs approval, so that splitting a
	// refund does not dodge the second person.
	ApproveAbove *int64
	ApprovedBy   string
	Approved     time.Time
	// AccountSealed is the payer's account, sealed by package refunds;
	// AccountMasked its IBAN masked. Both are empty before it is given and
	// once erased.
	AccountSealed string
	AccountMasked string
	// AccountBy says who gave the account: payer, console or api.
	AccountBy    string
	AccountGiven time.Time
	// PageID is the payer's page's id: /r/{PageID}.
	PageID string
	// Lang is the payer's language when known (a payment link's).
	Lang      string
	CreatedBy string
	Created   time.Time
	Updated   time.Time
	Sent      time.Time
	Booked    time.Time
	// BookedOn is the booking date a statement gave, YYYY-MM-DD.
	BookedOn     string
	Returned     time.Time
	ReturnReason string
	Cancelled    time.Time
	// TransferID is the transfer file the refund is in; empty for one paid
	// by hand or by QR code.
	TransferID     string
	IdempotencyKey string
	// EraseAfter is when its account is erased: 30 days after it ended.
	EraseAfter time.Time
}

// Cents is the refund's amount in cents.
func (r Refund) Cents() int64 { return cents(r.Amount) }

// Ended reports whether the refund can no longer change by a person's
// hand: booked, returned or cancelled.
func (r Refund) Ended() bool {
	return r.State == RefundBooked || r.State == RefundReturned || r.State == RefundCancelled
}

func cents(amount string) int64 {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return 0
	}
	return d.Shift(2).IntPart()
}

func amountOf(cents int64) string { return decimal.New(cents, -2).StringFixed(2) }

const refundColumns = `id, merchant_id, order_id, amount_cents, currency, reason, state, needs_approval, approved_by, approved_at,
	account_sealed, account_masked, account_by, account_at, page_id, lang, created_by, created_at, updated_at, sent_at, booked_at,
	booked_on, returned_at, return_reason, cancelled_at, transfer_id, idempotency_key, erase_after`

func scanRefund(row interface{ Scan(...any) error }) (Refund, error) {
	var r Refund
	var amount, approved, account, created, updated, sent, booked, returned, cancelled, erase int64
	var needs int
	err := row.Scan(&r.ID, &r.MerchantID, &r.OrderID, &amount, &r.Currency, &r.Reason, &r.State, &needs, &r.ApprovedBy, &approved,
		&r.AccountSealed, &r.AccountMasked, &r.AccountBy, &account, &r.PageID, &r.Lang, &r.CreatedBy, &created, &updated, &sent, &booked,
		&r.BookedOn, &returned, &r.ReturnReason, &cancelled, &r.TransferID, &r.IdempotencyKey, &erase)
	r.Amount, r.NeedsApproval = amountOf(amount), needs == 1
	r.Approved, r.AccountGiven, r.Sent, r.Booked = unixOrZero(approved), unixOrZero(account), unixOrZero(sent), unixOrZero(booked)
	r.Returned, r.Cancelled, r.EraseAfter = unixOrZero(returned), unixOrZero(cancelled), unixOrZero(erase)
	r.Created, r.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	return r, err
}

// RefundStep is one step of a refund's timeline.
type RefundStep struct {
	At    time.Time
	State string
	// Step names what happened: made, account, approved, file, sent,
	// booked, returned, cancelled.
	Step  string
	Actor string
}

// Timeline steps.
const (
	StepMade      = "made"
	StepAccount   = "account"
	StepApproved  = "approved"
	StepFile      = "file"
	StepSent      = "sent"
	StepBooked    = "booked"
	StepReturned  = "returned"
	StepCancelled = "cancelled"
)

// RefundEventData is what a refund's events tell the merchant.
type RefundEventData struct {
	RefundID        string `json:"refund_id"`
	MerchantOrderID string `json:"merchant_order_id"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	State           string `json:"state"`
}

// addTypedEvent writes an event of type typ whose data is data inside tx,
// as payment events are written: signed and delivered alike.
func (l *Ledger) addTypedEvent(ctx context.Context, tx *sql.Tx, merchantID, orderID, typ string, data any, now time.Time) error {
	body := struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
		Data      any       `json:"data"`
	}{ID: newEventID(), Type: typ, CreatedAt: now.UTC().Truncate(time.Millisecond), Data: data}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO events (id, merchant_id, order_id, type, body, created_at, next_try_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, body.ID, merchantID, orderID, typ, string(raw), now.UnixMilli())
	return err
}

func refundEvent(r Refund) RefundEventData {
	return RefundEventData{RefundID: r.ID, MerchantOrderID: r.OrderID, Amount: r.Amount, Currency: r.Currency, State: r.State}
}

// CreateRefund makes refund r of a paid order, with its audit line, its
// first step and its refund.created event. Under the order's row lock the
// order must be paid in full, and its refunds that are not cancelled or
// returned, r included, may not pass what was paid: else a
// *RefundExceedsError saying what remains. An idempotency key used before
// by the merchant returns that refund and made false, or
// ErrIdempotencyReused when it was for another order or sum.
func (l *Ledger) CreateRefund(ctx context.Context, r Refund, audit AuditEntry) (Refund, bool, error) {
	for try := 0; ; try++ {
		got, made, err := l.createRefund(ctx, r, audit)
		if !l.uniqueViolation(err) || r.IdempotencyKey == "" || try == 1 {
			return got, made, err
		}
		// The same key raced in from another request: its refund answers.
	}
}

func (l *Ledger) createRefund(ctx context.Context, r Refund, audit AuditEntry) (Refund, bool, error) {
	ctx, span := l.span(ctx, "CreateRefund")
	defer span.End()
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return r, false, err
	}
	defer tx.Rollback()
	var amount string
	var paid, refunded int64
	err = tx.QueryRowContext(ctx, `SELECT amount, paid_at, refunded_cents FROM orders WHERE merchant_id = $1 AND order_id = $2`+l.forUpdate(),
		r.MerchantID, r.OrderID).Scan(&amount, &paid, &refunded)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, ErrNotFound
	case err != nil:
		return r, false, err
	case paid == 0:
		return r, false, ErrOrderNotPaid
	}
	// The key is looked up under the order's lock: a retry that came
	// with the first call waits for it, and finds its refund.
	if r.IdempotencyKey != "" {
		kept, err := scanRefund(tx.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE merchant_id = $1 AND idempotency_key = $2`,
			r.MerchantID, r.IdempotencyKey))
		switch {
		case err == nil && (kept.OrderID != r.OrderID || kept.Amount != r.Amount):
			return kept, false, ErrIdempotencyReused
		case err == nil:
			return kept, false, nil
		case !errors.Is(err, sql.ErrNoRows):
			return r, false, err
		}
	}
	if r.ApproveAbove != nil && refunded+r.Cents() > *r.ApproveAbove && !r.NeedsApproval {
		r.NeedsApproval = true
		if r.State == RefundReady {
			r.State = RefundAwaitingApproval
		}
	}
	remaining := cents(amount) - refunded
	if r.Cents() > remaining {
		return r, false, &RefundExceedsError{Remaining: amountOf(max(remaining, 0))}
	}
	r.Created, r.Updated = time.UnixMilli(now.UnixMilli()), time.UnixMilli(now.UnixMilli())
	if r.AccountSealed != "" {
		r.AccountGiven = r.Created
	}
	needs := 0
	if r.NeedsApproval {
		needs = 1
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO refunds (id, merchant_id, order_id, amount_cents, currency, reason, state, needs_approval,
			account_sealed, account_masked, account_by, account_at, page_id, lang, created_by, created_at, updated_at, idempotency_key, search)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17, $18)`,
		r.ID, r.MerchantID, r.OrderID, r.Cents(), r.Currency, r.Reason, r.State, needs, r.AccountSealed, r.AccountMasked, r.AccountBy,
		msOrZero(r.AccountGiven), r.PageID, r.Lang, r.CreatedBy, now.UnixMilli(), r.IdempotencyKey,
		refundSearch(r)); err != nil {
		return r, false, err
	}
	// A refund changes the order: programs reconciling by updated_since
	// see it again, with what was refunded.
	if _, err := tx.ExecContext(ctx, `UPDATE orders SET refunded_cents = refunded_cents + $3, updated_at = $4 WHERE merchant_id = $1 AND order_id = $2`,
		r.MerchantID, r.OrderID, r.Cents(), now.UnixMilli()); err != nil {
		return r, false, err
	}
	steps := []string{StepMade}
	if r.AccountSealed != "" {
		steps = append(steps, StepAccount)
	}
	for _, step := range steps {
		if err := addRefundStep(ctx, tx, r.ID, now, r.State, step, r.CreatedBy); err != nil {
			return r, false, err
		}
	}
	if err := insertAudit(ctx, tx, now, audit); err != nil {
		return r, false, err
	}
	if err := l.addTypedEvent(ctx, tx, r.MerchantID, r.OrderID, EventRefundCreated, refundEvent(r), now); err != nil {
		return r, false, err
	}
	if err := tx.Commit(); err != nil {
		return r, false, err
	}
	l.eventRecorded(r.MerchantID)
	return r, true, nil
}

// newEventID makes an event's id: evt_ and 96 random bits.
func newEventID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "evt_" + hex.EncodeToString(b)
}

// refundSearch is what the console's search looks in: the refund's id,
// its order and its reason, in lower case.
func refundSearch(r Refund) string {
	return strings.ToLower(r.ID + "\n" + r.OrderID + "\n" + r.Reason)
}

func addRefundStep(ctx context.Context, tx *sql.Tx, id string, at time.Time, state, step, actor string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO refund_history (refund_id, at, state, step, actor) VALUES ($1, $2, $3, $4, $5)`,
		id, at.UnixMilli(), state, step, actor)
	return err
}

// RefundChange is a move of a refund: from the states it may start from,
// to a state (or the same one), with what it writes.
type RefundChange struct {
	From []string
	// To is the new state; empty keeps the state.
	To string
	// Next, when set, decides the new state from the refund as it is
	// under its lock (an account given or an approval: ready only when
	// both are settled); it overrides To.
	Next func(Refund) string
	Step string
	// Actor is who made the move, as the timeline says it.
	Actor string
	// Account fields, when AccountSealed is set.
	AccountSealed, AccountMasked, AccountBy string
	// Approved records an approval by Actor.
	Approved bool
	// BookedOn and ReturnReason come from a statement.
	BookedOn, ReturnReason string
	// TransferID names the file the refund is sent in.
	TransferID string
	// EraseAfter is when an ending refund's account is erased.
	EraseAfter time.Time
	// Check, when set, refuses the move after the refund is read under
	// its lock (an approval by the refund's own maker, say).
	Check func(Refund) error
}

// MoveRefund applies a change to a merchant's refund, with its audit line
// (when audit has an event or action), its timeline step and, when the
// state changes, its refund.state_changed event. A refund not in one of
// the change's From states gives ErrRefundMoved with the refund as it is.
// A refund that becomes cancelled or returned gives its amount back to
// what may be refunded of its order.
func (l *Ledger) MoveRefund(ctx context.Context, merchantID, id string, ch RefundChange, audit AuditEntry) (Refund, error) {
	ctx, span := l.span(ctx, "MoveRefund")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Refund{}, err
	}
	defer tx.Rollback()
	r, changed, err := l.moveRefund(ctx, tx, merchantID, id, ch, audit)
	if err != nil {
		return r, err
	}
	if err := tx.Commit(); err != nil {
		return r, err
	}
	if changed {
		l.eventRecorded(merchantID)
	}
	return r, nil
}

func (l *Ledger) moveRefund(ctx context.Context, tx *sql.Tx, merchantID, id string, ch RefundChange, audit AuditEntry) (Refund, bool, error) {
	now := l.now()
	r, err := scanRefund(tx.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1 AND merchant_id = $2`+l.forUpdate(),
		id, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, ErrRefundNotFound
	}
	if err != nil {
		return r, false, err
	}
	allowed := false
	for _, from := range ch.From {
		allowed = allowed || r.State == from
	}
	if !allowed {
		return r, false, ErrRefundMoved
	}
	if ch.Check != nil {
		if err := ch.Check(r); err != nil {
			return r, false, err
		}
	}
	before := r.State
	ms := now.UnixMilli()
	if ch.AccountSealed != "" {
		r.AccountSealed, r.AccountMasked, r.AccountBy, r.AccountGiven = ch.AccountSealed, ch.AccountMasked, ch.AccountBy, time.UnixMilli(ms)
	}
	if ch.Approved {
		r.ApprovedBy, r.Approved = ch.Actor, time.UnixMilli(ms)
	}
	switch {
	case ch.Next != nil:
		r.State = ch.Next(r)
	case ch.To != "":
		r.State = ch.To
	}
	switch r.State {
	case before:
	case RefundSent:
		r.Sent, r.TransferID = time.UnixMilli(ms), ch.TransferID
	case RefundBooked:
		r.Booked, r.BookedOn = time.UnixMilli(ms), ch.BookedOn
	case RefundReturned:
		r.Returned, r.ReturnReason = time.UnixMilli(ms), ch.ReturnReason
	case RefundCancelled:
		r.Cancelled = time.UnixMilli(ms)
	}
	if !ch.EraseAfter.IsZero() {
		r.EraseAfter = ch.EraseAfter
	}
	r.Updated = time.UnixMilli(ms)
	eraseAfter := int64(0)
	if !r.EraseAfter.IsZero() {
		eraseAfter = r.EraseAfter.UnixMilli()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE refunds SET state = $2, approved_by = $3, approved_at = $4, account_sealed = $5,
			account_masked = $6, account_by = $7, account_at = $8, updated_at = $9, sent_at = $10, booked_at = $11, booked_on = $12,
			returned_at = $13, return_reason = $14, cancelled_at = $15, transfer_id = $16, erase_after = $17
		WHERE id = $1`, r.ID, r.State, r.ApprovedBy, msOrZero(r.Approved), r.AccountSealed, r.AccountMasked, r.AccountBy,
		msOrZero(r.AccountGiven), ms, msOrZero(r.Sent), msOrZero(r.Booked), r.BookedOn, msOrZero(r.Returned), r.ReturnReason,
		msOrZero(r.Cancelled), r.TransferID, eraseAfter); err != nil {
		return r, false, err
	}
	if gaveBack(before, r.State) {
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET refunded_cents = refunded_cents - $3, updated_at = $4 WHERE merchant_id = $1 AND order_id = $2`,
			r.MerchantID, r.OrderID, r.Cents(), ms); err != nil {
			return r, false, err
		}
	}
	if ch.Step != "" {
		if err := addRefundStep(ctx, tx, r.ID, now, r.State, ch.Step, ch.Actor); err != nil {
			return r, false, err
		}
	}
	if audit.Event != "" || audit.Action != "" {
		if err := insertAudit(ctx, tx, now, audit); err != nil {
			return r, false, err
		}
	}
	changed := r.State != before
	if changed {
		if err := l.addTypedEvent(ctx, tx, r.MerchantID, r.OrderID, EventRefundStateChanged, refundEvent(r), now); err != nil {
			return r, false, err
		}
	}
	return r, changed, nil
}

// gaveBack reports a move that ends a refund without money leaving for
// good: its amount may be refunded again.
func gaveBack(from, to string) bool {
	counted := func(s string) bool { return s != RefundCancelled && s != RefundReturned }
	return counted(from) && !counted(to)
}

// Refund returns one of a merchant's refunds.
func (l *Ledger) Refund(ctx context.Context, merchantID, id string) (Refund, error) {
	r, err := scanRefund(l.db.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1 AND merchant_id = $2`, id, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrRefundNotFound
	}
	return r, err
}

// RefundByID returns a refund by its id alone, for a statement's line
// naming it; the caller holds it to the statement's merchant.
func (l *Ledger) RefundByID(ctx context.Context, id string) (Refund, error) {
	r, err := scanRefund(l.db.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrRefundNotFound
	}
	return r, err
}

// RefundByPage returns the refund of a payer's page /r/{pageID}.
func (l *Ledger) RefundByPage(ctx context.Context, pageID string) (Refund, error) {
	r, err := scanRefund(l.db.QueryRowContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE page_id = $1`, pageID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrRefundNotFound
	}
	return r, err
}

// RefundHistory is a refund's timeline, oldest first.
func (l *Ledger) RefundHistory(ctx context.Context, id string) ([]RefundStep, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT at, state, step, actor FROM refund_history WHERE refund_id = $1 ORDER BY at, step`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []RefundStep
	for rows.Next() {
		var s RefundStep
		var at int64
		if err := rows.Scan(&at, &s.State, &s.Step, &s.Actor); err != nil {
			return nil, err
		}
		s.At = time.UnixMilli(at)
		list = append(list, s)
	}
	return list, rows.Err()
}

// RefundFilter narrows a merchant's refunds; zero fields do not.
type RefundFilter struct {
	Merchant string
	State    string
	Order    string
	// Query is searched for in the id, the order and the reason.
	Query string
	// IDs, when set, are the refunds asked for (a transfer's choice).
	IDs []string
}

// ListRefunds lists a merchant's refunds newest first, after the cursor,
// at most limit.
func (l *Ledger) ListRefunds(ctx context.Context, f RefundFilter, after Cursor, limit int) ([]Refund, error) {
	conds := []string{"merchant_id = $1"}
	args := []any{f.Merchant}
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if f.State != "" {
		add("state = ?", f.State)
	}
	if f.Order != "" {
		add("order_id = ?", f.Order)
	}
	if f.Query != "" {
		add(`search LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(strings.ToLower(f.Query))+"%")
	}
	if len(f.IDs) > 0 {
		marks := make([]string, len(f.IDs))
		for i, id := range f.IDs {
			args = append(args, id)
			marks[i] = fmt.Sprintf("$%d", len(args))
		}
		conds = append(conds, "id IN ("+strings.Join(marks, ", ")+")")
	}
	if after.ID != "" {
		add("(created_at, id) < (?, ?)", after.At.UnixMilli(), after.ID)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+refundColumns+` FROM refunds WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY created_at DESC, id DESC LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// Refunded is what was refunded of an order: the sum of its refunds that
// are not cancelled or returned, with two decimals.
func (l *Ledger) Refunded(ctx context.Context, merchantID, orderID string) (string, error) {
	var c int64
	err := l.db.QueryRowContext(ctx, `SELECT refunded_cents FROM orders WHERE merchant_id = $1 AND order_id = $2`, merchantID, orderID).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return amountOf(c), err
}

// Transfer is a transfer file made of ready refunds, kept to be
// downloaded again byte for byte.
type Transfer struct {
	ID         string
	MerchantID string
	CreatedBy  string
	Created    time.Time
	Refunds    int
	TotalCents int64
	// File is the pain.001 document.
	File []byte
}

// Total is the file's sum, with two decimals.
func (t Transfer) Total() string { return amountOf(t.TotalCents) }

// CreateTransfer keeps transfer file t of refunds ids and moves each from
// ready to sent, in one transaction with their steps, events and the
// audit line: a refund that is no longer ready (sent by hand meanwhile, or
// in another file) gives ErrRefundMoved and nothing is kept, so that no
// refund is ever in two files.
func (l *Ledger) CreateTransfer(ctx context.Context, t Transfer, ids []string, actor string, audit AuditEntry) error {
	ctx, span := l.span(ctx, "CreateTransfer")
	defer span.End()
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO transfers (id, merchant_id, created_by, created_at, refunds, total_cents, file)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, t.ID, t.MerchantID, t.CreatedBy, now.UnixMilli(), t.Refunds, t.TotalCents, string(t.File)); err != nil {
		return err
	}
	for _, id := range ids {
		if _, _, err := l.moveRefund(ctx, tx, t.MerchantID, id, RefundChange{From: []string{RefundReady}, To: RefundSent, Step: StepFile,
			Actor: actor, TransferID: t.ID}, AuditEntry{}); err != nil {
			return err
		}
	}
	if err := insertAudit(ctx, tx, now, audit); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	l.eventRecorded(t.MerchantID)
	return nil
}

// TransferFile returns one of a merchant's transfer files.
func (l *Ledger) TransferFile(ctx context.Context, merchantID, id string) (Transfer, error) {
	t := Transfer{ID: id, MerchantID: merchantID}
	var created int64
	var file string
	err := l.db.QueryRowContext(ctx, `SELECT created_by, created_at, refunds, total_cents, file FROM transfers WHERE id = $1 AND merchant_id = $2`,
		id, merchantID).Scan(&t.CreatedBy, &created, &t.Refunds, &t.TotalCents, &file)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrRefundNotFound
	}
	t.Created, t.File = time.UnixMilli(created), []byte(file)
	return t, err
}

// Transfers lists a merchant's transfer files, newest first, without
// their bytes.
func (l *Ledger) Transfers(ctx context.Context, merchantID string, limit int) ([]Transfer, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, created_by, created_at, refunds, total_cents FROM transfers WHERE merchant_id = $1
		ORDER BY created_at DESC, id DESC LIMIT `+strconv.Itoa(limit), merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Transfer
	for rows.Next() {
		t := Transfer{MerchantID: merchantID}
		var created int64
		if err := rows.Scan(&t.ID, &t.CreatedBy, &created, &t.Refunds, &t.TotalCents); err != nil {
			return nil, err
		}
		t.Created = time.UnixMilli(created)
		list = append(list, t)
	}
	return list, rows.Err()
}

// EraseRefundAccounts erases the payers' accounts of refunds past their
// erase_after, at most batch of them, and reports how many.
func (l *Ledger) EraseRefundAccounts(ctx context.Context, batch int) (int64, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE refunds SET account_sealed = '', account_masked = '', erase_after = 0 WHERE id IN (
		SELECT id FROM refunds WHERE erase_after > 0 AND erase_after <= $1 LIMIT $2)`, l.now().UnixMilli(), batch)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// OrderEmail is the sealed e-mail address kept with a merchant's order
// (a signed link's email), "" when none.
func (l *Ledger) OrderEmail(ctx context.Context, merchantID, orderID string) (string, error) {
	var sealed string
	err := l.db.QueryRowContext(ctx, `SELECT email_sealed FROM orders WHERE merchant_id = $1 AND order_id = $2`, merchantID, orderID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return sealed, err
}

// KeepOrderEmail keeps the sealed e-mail address of a merchant's order,
// with the language the payer checked out in, unless an address is kept
// already: what a refund's page is e-mailed to, and in.
func (l *Ledger) KeepOrderEmail(ctx context.Context, merchantID, orderID, sealed, lang string) error {
	_, err := l.db.ExecContext(ctx, `UPDATE orders SET email_sealed = $3, payer_lang = $4
		WHERE merchant_id = $1 AND order_id = $2 AND email_sealed = ''`, merchantID, orderID, sealed, lang)
	return err
}

// OrderLang is the language an order's payer checked out in, kept with
// its e-mail address; "" when none is kept.
func (l *Ledger) OrderLang(ctx context.Context, merchantID, orderID string) (string, error) {
	var lang string
	err := l.db.QueryRowContext(ctx, `SELECT payer_lang FROM orders WHERE merchant_id = $1 AND order_id = $2`, merchantID, orderID).Scan(&lang)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return lang, err
}

// ForgetOrderEmails drops the e-mail addresses of orders made before
// before, at most batch of them, and reports how many.
func (l *Ledger) ForgetOrderEmails(ctx context.Context, before time.Time, batch int) (int64, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE orders SET email_sealed = '', payer_lang = '' WHERE (merchant_id, order_id) IN (
		SELECT merchant_id, order_id FROM orders WHERE email_sealed <> '' AND created_at < $1 LIMIT $2)`, before.UnixMilli(), batch)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// OrderLink is the payment link a merchant's order was made for; a zero
// link for an order made otherwise.
func (l *Ledger) OrderLink(ctx context.Context, merchantID, orderID string) (PaymentLink, error) {
	o, err := l.order(ctx, merchantID, orderID)
	if err != nil || o.PaymentLink == "" {
		return PaymentLink{}, err
	}
	return l.Link(ctx, merchantID, o.PaymentLink)
}
