package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The console's reads: listings with filters, one order's whole story, the
// overview's sums over the hourly rollups, and the health of a merchant's
// webhook. Every read names its merchant; an empty merchant
// means every merchant (the deployment's operators).

// OrderFilter narrows the console's list of orders; zero fields do not.
type OrderFilter struct {
	// Merchant is whose orders; "" for every merchant's.
	Merchant string
	Status   string
	// From and To bound the time of the last change: From ≤ updated < To.
	From, To time.Time
	BankID   string
	Country  string
	// Prefix finds orders whose id starts with it (an exact id included).
	Prefix string
	// Received, "yes" or "no", keeps the paid orders whose money a bank
	// statement showed on the merchant's account, or those it did not yet.
	Received string
}

// where is the filter as SQL conditions and their arguments.
func (f OrderFilter) where(l *Ledger) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if f.Merchant != "" {
		add("merchant_id = ?", f.Merchant)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		add("updated_at >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("updated_at < ?", f.To.UnixMilli())
	}
	if f.BankID != "" {
		add("bank_id = ?", f.BankID)
	}
	if f.Country != "" {
		add("country = ?", f.Country)
	}
	switch f.Received {
	case "yes":
		add("received_at > 0")
	case "no":
		add("paid_at > 0 AND received_at = 0")
	}
	if f.Prefix != "" {
		// Byte order: every id starting with the prefix lies between it
		// and it followed by the greatest character.
		c := l.byteOrder()
		add("order_id"+c+" >= ? AND order_id"+c+" < ?", f.Prefix, f.Prefix+"\U0010FFFF")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// OrderCursor is where the console's list goes on: the sort key of the last
// row shown.
type OrderCursor struct {
	At         time.Time
	MerchantID string
	OrderID    string
}

// String encodes the cursor for a URL; "" for none.
func (c OrderCursor) String() string {
	if c.OrderID == "" {
		return ""
	}
	return Cursor{At: c.At, ID: c.MerchantID + "\n" + c.OrderID}.String()
}

// ParseOrderCursor reads a cursor written by String.
func ParseOrderCursor(s string) (OrderCursor, error) {
	c, err := ParseCursor(s)
	if err != nil || s == "" {
		return OrderCursor{}, err
	}
	m, o, ok := strings.Cut(c.ID, "\n")
	if !ok || o == "" {
		return OrderCursor{}, errors.New("not a cursor this page gave")
	}
	return OrderCursor{At: c.At, MerchantID: m, OrderID: o}, nil
}

// ListOrders lists the orders f selects, newest change first, after the
// cursor, at most limit, with the bank of each one's current payment.
func (l *Ledger) ListOrders(ctx context.Context, f OrderFilter, after OrderCursor, limit int) ([]Order, error) {
	where, args := f.where(l)
	if after.OrderID != "" {
		if where == "" {
			where = " WHERE "
		} else {
			where += " AND "
		}
		n := len(args)
		where += fmt.Sprintf("(updated_at, merchant_id, order_id) < ($%d, $%d, $%d)", n+1, n+2, n+3)
		args = append(args, after.At.UnixMilli(), after.MerchantID, after.OrderID)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT merchant_id, order_id, amount, currency, return_url, status, created_at, updated_at, bank_id, country, paid_at,
			refunded_cents, received_on
		FROM orders`+where+fmt.Sprintf(` ORDER BY updated_at DESC, merchant_id DESC, order_id DESC LIMIT %d`, limit), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Order
	for rows.Next() {
		var o Order
		var created, updated, paid int64
		if err := rows.Scan(&o.MerchantID, &o.OrderID, &o.Amount, &o.Currency, &o.ReturnURL, &o.Status, &created, &updated, &o.BankID, &o.Country, &paid,
			&o.RefundedCents, &o.ReceivedOn); err != nil {
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

// inList is the placeholders of values for an IN (…) list, $1 on, and the
// values as arguments.
func inList(values []string) (string, []any) {
	marks := make([]string, len(values))
	args := make([]any, len(values))
	for i, v := range values {
		marks[i], args[i] = fmt.Sprintf("$%d", i+1), v
	}
	return strings.Join(marks, ", "), args
}

// MerchantsWithOrder lists the merchants that have an order with id, for
// an operator who names none.
func (l *Ledger) MerchantsWithOrder(ctx context.Context, orderID string) ([]string, error) {
	return l.texts(ctx, `SELECT merchant_id FROM orders WHERE order_id`+l.byteOrder()+` = $1 ORDER BY merchant_id`, orderID)
}

// Step is one state an attempt passed through.
type Step struct {
	At     time.Time
	State  State
	Status string
}

// History returns the steps of each of the attempts named, oldest first:
// its making (its created time), then every state and status it moved to.
func (l *Ledger) History(ctx context.Context, upstreamIDs []string) (map[string][]Step, error) {
	out := map[string][]Step{}
	if len(upstreamIDs) == 0 {
		return out, nil
	}
	in, args := inList(upstreamIDs)
	rows, err := l.db.QueryContext(ctx, `SELECT upstream_id, created_at AS at, 0 AS id, 'creating' AS state, '' AS status
		FROM attempts WHERE upstream_id IN (`+in+`)
		UNION ALL SELECT upstream_id, at, id, state, status FROM attempt_history WHERE upstream_id IN (`+in+`)
		ORDER BY upstream_id, at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var s Step
		var at, n int64
		if err := rows.Scan(&id, &at, &n, &s.State, &s.Status); err != nil {
			return nil, err
		}
		s.At = time.UnixMilli(at)
		out[id] = append(out[id], s)
	}
	return out, rows.Err()
}

// OrderEvents returns the events of one order, oldest first, with every
// try at delivering each.
func (l *Ledger) OrderEvents(ctx context.Context, merchantID, orderID string) ([]Event, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE merchant_id = $1 AND order_id = $2
		ORDER BY created_at, id`, merchantID, orderID)
	if err != nil {
		return nil, err
	}
	list, err := scanEvents(rows)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Deliveries, err = l.deliveries(ctx, list[i].ID); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// ErrEventBusy means an event is being sent right now by another worker.
var ErrEventBusy = errors.New("ledger: the event is being sent right now")

// ClaimEvent leases one of a merchant's events to owner at once, whatever
// became of it before, so that it can be sent again now (the console's
// Redeliver). ErrEventBusy when another worker is sending it.
func (l *Ledger) ClaimEvent(ctx context.Context, merchantID, id, owner string, lease time.Duration) (Event, error) {
	now := l.now().UnixMilli()
	rows, err := l.db.QueryContext(ctx, `UPDATE events SET delivery = 'pending', next_try_at = $1, lease_owner = $2, lease_until = $3
		WHERE merchant_id = $4 AND id = $5 AND lease_until < $1 RETURNING `+eventColumns,
		now, owner, now+lease.Milliseconds(), merchantID, id)
	if err != nil {
		return Event{}, err
	}
	list, err := scanEvents(rows)
	if err != nil {
		return Event{}, err
	}
	if len(list) == 1 {
		return list[0], nil
	}
	if _, err := l.Event(ctx, merchantID, id); err != nil {
		return Event{}, err
	}
	return Event{}, ErrEventBusy
}

// AttemptCounts count attempts that reached a shopper by how they ended.
type AttemptCounts struct {
	Started   int64
	Completed int64
	// Canceled were opened at the bank and cancelled there.
	Canceled int64
	// Abandoned ended without the shopper ever opening the bank's page.
	Abandoned int64
}

// Open are the attempts not yet final.
func (c AttemptCounts) Open() int64 { return c.Started - c.Completed - c.Canceled - c.Abandoned }

// Funnel counts orders opened in a window by how far they got.
type Funnel struct {
	// Opened: the link was used. Sent: a payment was handed out. Began:
	// the shopper opened the bank's page. Paid: paid in full.
	Opened, Sent, Began, Paid int64
}

// Bucket is the attempts made in one hour or day.
type Bucket struct {
	At time.Time
	AttemptCounts
}

// BankCounts are the attempts at one bank.
type BankCounts struct {
	Country string
	BankID  string
	AttemptCounts
}

// Overview is what the console's overview shows of a window.
type Overview struct {
	Funnel   Funnel
	Attempts AttemptCounts
	// Buckets are the attempts made per step, oldest first; steps
	// without any are left out.
	Buckets []Bucket
	// Banks are the banks with the most attempts, most first.
	Banks []BankCounts
	// PaidTimes counts payments by PaidBucket of their time from submit
	// to paid.
	PaidTimes map[int]int64
}

// Overview sums the rollups (and the changes not yet folded in) of merchant ("" for all) from since on, by
// buckets of step (an hour or a day), with the topBanks busiest banks.
func (l *Ledger) Overview(ctx context.Context, merchant string, since time.Time, step time.Duration, topBanks int) (Overview, error) {
	var ov Overview
	cond, args := "hour >= $1", []any{hourOf(since)}
	if merchant != "" {
		cond, args = cond+" AND merchant_id = $2", append(args, merchant)
	}
	if err := l.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(opened), 0), COALESCE(SUM(sent), 0), COALESCE(SUM(began), 0), COALESCE(SUM(paid), 0)
		FROM `+funnelCounts.source(cond), args...).Scan(&ov.Funnel.Opened, &ov.Funnel.Sent, &ov.Funnel.Began, &ov.Funnel.Paid); err != nil {
		return ov, err
	}
	ms := step.Milliseconds()
	rows, err := l.db.QueryContext(ctx, fmt.Sprintf(`SELECT hour / %d * %d AS bucket, SUM(started), SUM(completed), SUM(canceled), SUM(abandoned)
		FROM %s GROUP BY hour / %d * %d ORDER BY bucket`, ms, ms, bankCounts.source(cond), ms, ms), args...)
	if err != nil {
		return ov, err
	}
	for rows.Next() {
		var b Bucket
		var at int64
		if err := rows.Scan(&at, &b.Started, &b.Completed, &b.Canceled, &b.Abandoned); err != nil {
			rows.Close()
			return ov, err
		}
		b.At = time.UnixMilli(at)
		ov.Buckets = append(ov.Buckets, b)
		ov.Attempts.Started += b.Started
		ov.Attempts.Completed += b.Completed
		ov.Attempts.Canceled += b.Canceled
		ov.Attempts.Abandoned += b.Abandoned
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ov, err
	}
	rows, err = l.db.QueryContext(ctx, fmt.Sprintf(`SELECT country, bank_id, SUM(started) AS n, SUM(completed), SUM(canceled), SUM(abandoned)
		FROM %s GROUP BY country, bank_id ORDER BY n DESC, country, bank_id LIMIT %d`, bankCounts.source(cond), topBanks), args...)
	if err != nil {
		return ov, err
	}
	for rows.Next() {
		var b BankCounts
		if err := rows.Scan(&b.Country, &b.BankID, &b.Started, &b.Completed, &b.Canceled, &b.Abandoned); err != nil {
			rows.Close()
			return ov, err
		}
		ov.Banks = append(ov.Banks, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ov, err
	}
	rows, err = l.db.QueryContext(ctx, `SELECT bucket, SUM(n) FROM `+paidCounts.source(cond)+` GROUP BY bucket`, args...)
	if err != nil {
		return ov, err
	}
	defer rows.Close()
	ov.PaidTimes = map[int]int64{}
	for rows.Next() {
		var b int
		var n int64
		if err := rows.Scan(&b, &n); err != nil {
			return ov, err
		}
		ov.PaidTimes[b] = n
	}
	return ov, rows.Err()
}

// BankSeen is a bank payments were made at.
type BankSeen struct{ Country, BankID string }

// BanksSeen lists the banks merchant's ("" for all) payments were made at
// since the given time, from the rollups: the choices of the console's
// bank and country filters.
func (l *Ledger) BanksSeen(ctx context.Context, merchant string, since time.Time) ([]BankSeen, error) {
	cond, args := "hour >= $1", []any{hourOf(since)}
	if merchant != "" {
		cond, args = "merchant_id = $2 AND "+cond, append(args, merchant)
	}
	rows, err := l.db.QueryContext(ctx, `SELECT DISTINCT country, bank_id FROM `+bankCounts.source(cond)+` ORDER BY country, bank_id LIMIT 2000`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []BankSeen
	for rows.Next() {
		var b BankSeen
		if err := rows.Scan(&b.Country, &b.BankID); err != nil {
			return nil, err
		}
		list = append(list, b)
	}
	return list, rows.Err()
}

// WebhookHealth is how a merchant's webhook endpoint has been doing.
type WebhookHealth struct {
	// Tries and Delivered count tries since the time asked for, and those
	// the endpoint took (2xx).
	Tries, Delivered int64
	// Pending are events waiting for a (further) try; Failed were given up.
	Pending, Failed int64
	// OldestPending is when the oldest pending event was made; zero when
	// none waits.
	OldestPending time.Time
	// LastFailure is the newest try the endpoint did not take, if any.
	LastFailure *FailedTry
}

// FailedTry is a try at delivering an event that failed.
type FailedTry struct {
	EventID string
	OrderID string
	Delivery
}

// WebhookHealth measures merchant's deliveries since the given time.
func (l *Ledger) WebhookHealth(ctx context.Context, merchant string, since time.Time) (WebhookHealth, error) {
	var h WebhookHealth
	if err := l.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN d.code BETWEEN 200 AND 299 THEN 1 ELSE 0 END), 0)
		FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.merchant_id = $1 AND d.at >= $2`,
		merchant, since.UnixMilli()).Scan(&h.Tries, &h.Delivered); err != nil {
		return h, err
	}
	var oldest sql.NullInt64
	if err := l.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(created_at) FROM events WHERE merchant_id = $1 AND delivery = 'pending'`,
		merchant).Scan(&h.Pending, &oldest); err != nil {
		return h, err
	}
	if oldest.Valid {
		h.OldestPending = time.UnixMilli(oldest.Int64)
	}
	if err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE merchant_id = $1 AND delivery = 'failed'`,
		merchant).Scan(&h.Failed); err != nil {
		return h, err
	}
	var f FailedTry
	var at, ms int64
	err := l.db.QueryRowContext(ctx, `SELECT d.event_id, e.order_id, d.try, d.at, d.code, d.duration_ms, d.error
		FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE e.merchant_id = $1 AND (d.code < 200 OR d.code > 299) ORDER BY d.at DESC LIMIT 1`, merchant).
		Scan(&f.EventID, &f.OrderID, &f.Try, &at, &f.Code, &ms, &f.Error)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return h, err
	default:
		f.At, f.Duration = time.UnixMilli(at), time.Duration(ms)*time.Millisecond
		h.LastFailure = &f
	}
	return h, nil
}

// SignedOut records that a console session ended before its time, so that
// a copy of its cookie opens nothing on any instance until it would have
// expired anyway.
func (l *Ledger) SignedOut(ctx context.Context, sessionID string, until time.Time) error {
	now := l.now().UnixMilli()
	if _, err := l.db.ExecContext(ctx, `DELETE FROM console_signouts WHERE until < $1`, now); err != nil {
		return err
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO console_signouts (session_id, until) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING`,
		sessionID, until.UnixMilli())
	return err
}

// IsSignedOut reports whether a console session was ended.
func (l *Ledger) IsSignedOut(ctx context.Context, sessionID string) (bool, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM console_signouts WHERE session_id = $1`, sessionID).Scan(&n)
	return n > 0, err
}
