package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"
)

// Bank statements: what a merchant's bank says left and reached its
// account, read by package statements. The ledger keeps that each entry
// counts once, and that what an entry does (a refund booked or returned,
// an order's money received) is done in the transaction that records it.

// Outcomes of a statement's entry.
const (
	EntryBooked    = "booked"
	EntryReturned  = "returned"
	EntryReceived  = "received"
	EntryMismatch  = "mismatch"
	EntryUnmatched = "unmatched"
)

// EventPaymentReceived is an order's money seen on the merchant's account.
const EventPaymentReceived = "payment.received"

// ReceivedEventData is what payment.received tells the merchant.
type ReceivedEventData struct {
	MerchantOrderID string `json:"merchant_order_id"`
	Amount          string `json:"amount"`
	// ReceivedAt is the booking date, as the statement gives it.
	ReceivedAt string `json:"received_at"`
}

// StatementEntry is one booked entry of a statement (or one transaction of
// a batch entry), as kept.
type StatementEntry struct {
	MerchantID  string
	Key         string
	StatementID string
	Account     string
	BookedOn    string
	AmountCents int64
	Credit      bool
	Reference   string
	Outcome     string
	// Target is the refund or order the entry matched (or named, for a
	// mismatch).
	Target string
	// Note says more: a return's reason code, a mismatch's amounts.
	Note string
	// Counterparty, CounterIBAN (masked) and Remittance are kept for the
	// entries a person must act on.
	Counterparty string
	CounterIBAN  string
	Remittance   string
}

// Amount is the entry's amount, with two decimals.
func (e StatementEntry) Amount() string { return amountOf(e.AmountCents) }

// EntryAction is what a matched entry does, decided by package statements
// from what it read; the ledger does it under its locks, or says why not.
type EntryAction struct {
	// Refund moves refund RefundID: to booked (Outcome EntryBooked) or to
	// returned (EntryReturned), from the states From.
	RefundID string
	From     []string
	// Order marks order OrderID received (EntryReceived).
	OrderID string
}

// RecordEntry keeps a statement's entry and does what it matched, in one
// transaction. An entry kept before (the same statement again, or an
// overlapping one) changes nothing: repeated is true. A refund no longer in
// a state the move starts from, or an order's money seen before, leaves
// the entry a mismatch with a note.
func (l *Ledger) RecordEntry(ctx context.Context, e StatementEntry, act EntryAction) (StatementEntry, bool, error) {
	now := l.now()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return e, false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO statement_entries (merchant_id, entry_key, statement_id, account, booked_on, amount_cents,
			credit, reference, outcome, target, note, counterparty, counter_iban, remittance)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (merchant_id, entry_key) DO NOTHING`,
		e.MerchantID, e.Key, e.StatementID, e.Account, e.BookedOn, e.AmountCents, boolInt(e.Credit), e.Reference, e.Outcome, e.Target,
		e.Note, e.Counterparty, e.CounterIBAN, e.Remittance)
	if err != nil {
		return e, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return e, err == nil, err
	}
	changed := false
	switch {
	case act.RefundID != "":
		ch := RefundChange{From: act.From, To: e.Outcome, Step: e.Outcome, Actor: "statement " + e.StatementID, EraseAfter: now.Add(30 * 24 * time.Hour)}
		if e.Outcome == EntryBooked {
			ch.BookedOn = e.BookedOn
		} else {
			ch.ReturnReason = e.Note
		}
		_, moved, err := l.moveRefund(ctx, tx, e.MerchantID, act.RefundID, ch, AuditEntry{})
		switch {
		case errors.Is(err, ErrRefundMoved):
			e.Outcome, e.Note = EntryMismatch, "refund-state"
		case err != nil:
			return e, false, err
		}
		changed = moved
	case act.OrderID != "":
		var amount string
		err := tx.QueryRowContext(ctx, `UPDATE orders SET received_at = $3, received_on = $4, updated_at = $3
			WHERE merchant_id = $1 AND order_id = $2 AND received_at = 0 RETURNING amount`,
			e.MerchantID, act.OrderID, now.UnixMilli(), e.BookedOn).Scan(&amount)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			e.Outcome, e.Note = EntryMismatch, "received-before"
		case err != nil:
			return e, false, err
		default:
			if err := l.addTypedEvent(ctx, tx, e.MerchantID, act.OrderID, EventPaymentReceived,
				ReceivedEventData{MerchantOrderID: act.OrderID, Amount: amount, ReceivedAt: e.BookedOn}, now); err != nil {
				return e, false, err
			}
			changed = true
		}
	}
	if e.Outcome == EntryMismatch {
		if _, err := tx.ExecContext(ctx, `UPDATE statement_entries SET outcome = $3, note = $4, counterparty = $5, counter_iban = $6, remittance = $7
			WHERE merchant_id = $1 AND entry_key = $2`, e.MerchantID, e.Key, e.Outcome, e.Note, e.Counterparty, e.CounterIBAN, e.Remittance); err != nil {
			return e, false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return e, false, err
	}
	if changed {
		l.eventRecorded(e.MerchantID)
	}
	return e, false, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Statement is an uploaded statement and what its entries did.
type Statement struct {
	ID, MerchantID, UploadedBy string
	Uploaded                   time.Time
	FileName, Message, Account string
	// From and To are the statement's period, as dates (YYYY-MM-DD).
	From, To                                                             string
	Entries, Booked, Returned, Received, Mismatched, Unmatched, Repeated int
	// Held counts the entries naming refunds left for an owner's upload
	// of the same statement (not kept: they are not among Entries).
	Held int
}

// RecordStatement keeps an uploaded statement's summary, with its audit
// line.
func (l *Ledger) RecordStatement(ctx context.Context, s Statement, audit AuditEntry) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO statements (id, merchant_id, uploaded_by, uploaded_at, file_name, message, account, period_from,
			period_to, entries, booked, returned, received, mismatched, unmatched, repeated, held)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		s.ID, s.MerchantID, s.UploadedBy, s.Uploaded.UnixMilli(), s.FileName, s.Message, s.Account, s.From, s.To, s.Entries, s.Booked,
		s.Returned, s.Received, s.Mismatched, s.Unmatched, s.Repeated, s.Held); err != nil {
		return err
	}
	if err := insertAudit(ctx, tx, l.now(), audit); err != nil {
		return err
	}
	return tx.Commit()
}

// Statements lists a merchant's uploaded statements, newest first.
func (l *Ledger) Statements(ctx context.Context, merchantID string, limit int) ([]Statement, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, uploaded_by, uploaded_at, file_name, message, account, period_from, period_to, entries,
			booked, returned, received, mismatched, unmatched, repeated, held
		FROM statements WHERE merchant_id = $1 ORDER BY uploaded_at DESC, id DESC LIMIT `+strconv.Itoa(limit), merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Statement
	for rows.Next() {
		s := Statement{MerchantID: merchantID}
		var at int64
		if err := rows.Scan(&s.ID, &s.UploadedBy, &at, &s.FileName, &s.Message, &s.Account, &s.From, &s.To, &s.Entries, &s.Booked,
			&s.Returned, &s.Received, &s.Mismatched, &s.Unmatched, &s.Repeated, &s.Held); err != nil {
			return nil, err
		}
		s.Uploaded = time.UnixMilli(at)
		list = append(list, s)
	}
	return list, rows.Err()
}

// OpenEntries lists a merchant's entries a person must act on: those that
// matched nothing and the mismatches, newest booking first.
func (l *Ledger) OpenEntries(ctx context.Context, merchantID string, limit int) ([]StatementEntry, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT entry_key, statement_id, account, booked_on, amount_cents, credit, reference, outcome, target,
			note, counterparty, counter_iban, remittance
		FROM statement_entries WHERE merchant_id = $1 AND outcome IN ('mismatch', 'unmatched')
		ORDER BY booked_on DESC, entry_key LIMIT `+strconv.Itoa(limit), merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []StatementEntry
	for rows.Next() {
		e := StatementEntry{MerchantID: merchantID}
		var credit int
		if err := rows.Scan(&e.Key, &e.StatementID, &e.Account, &e.BookedOn, &e.AmountCents, &credit, &e.Reference, &e.Outcome, &e.Target,
			&e.Note, &e.Counterparty, &e.CounterIBAN, &e.Remittance); err != nil {
			return nil, err
		}
		e.Credit = credit == 1
		list = append(list, e)
	}
	return list, rows.Err()
}

// AttemptOrder is the order of the merchant's attempt upstreamID (the id
// the provider knows a payment by); ErrNotFound when there is none.
func (l *Ledger) AttemptOrder(ctx context.Context, merchantID, upstreamID string) (Order, error) {
	var orderID string
	err := l.db.QueryRowContext(ctx, `SELECT order_id FROM attempts WHERE upstream_id = $1 AND merchant_id = $2`, upstreamID, merchantID).Scan(&orderID)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, ErrNotFound
	}
	if err != nil {
		return Order{}, err
	}
	return l.order(ctx, merchantID, orderID)
}

// Received is when an order's money was seen on the merchant's account:
// the booking date, "" while it was not.
func (l *Ledger) Received(ctx context.Context, merchantID, orderID string) (string, error) {
	var on string
	err := l.db.QueryRowContext(ctx, `SELECT received_on FROM orders WHERE merchant_id = $1 AND order_id = $2`, merchantID, orderID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return on, err
}

// Unreceived counts a merchant's orders paid between from and before whose
// money no statement has shown on its account yet, and refunds sent
// before before that no statement has shown leaving: what the console's
// overview asks a person to look at.
func (l *Ledger) Unreceived(ctx context.Context, merchantID string, from, before time.Time) (orders, refunds int, err error) {
	if err = l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE merchant_id = $1 AND paid_at >= $2 AND paid_at > 0 AND paid_at < $3
		AND received_at = 0`, merchantID, from.UnixMilli(), before.UnixMilli()).Scan(&orders); err != nil {
		return 0, 0, err
	}
	err = l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM refunds WHERE merchant_id = $1 AND state = 'sent' AND sent_at < $2`,
		merchantID, before.UnixMilli()).Scan(&refunds)
	return orders, refunds, err
}

// ForgetStatementParties drops who paid or was paid, their IBAN (masked)
// and the remittance text of statement entries booked before day
// (YYYY-MM-DD), at most batch of them, and reports how many: a person
// acted on them long ago.
func (l *Ledger) ForgetStatementParties(ctx context.Context, before string, batch int) (int64, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE statement_entries SET counterparty = '', counter_iban = '', remittance = ''
		WHERE (merchant_id, entry_key) IN (SELECT merchant_id, entry_key FROM statement_entries
			WHERE booked_on < $1 AND (counterparty <> '' OR counter_iban <> '' OR remittance <> '') LIMIT $2)`, before, batch)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// FirstBooked is the earliest booking date of a merchant's statement
// entries (YYYY-MM-DD): statements say nothing of what came before it.
// "" while no statement was uploaded.
func (l *Ledger) FirstBooked(ctx context.Context, merchantID string) (string, error) {
	var first sql.NullString
	err := l.db.QueryRowContext(ctx, `SELECT MIN(booked_on) FROM statement_entries WHERE merchant_id = $1`, merchantID).Scan(&first)
	return first.String, err
}
