package ledger

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/paybybank/checkout/pisclient"
)

// FirstCheck is how long after its creation an attempt is first read from
// the provider by default: long enough for a shopper sent to the bank to
// have opened its page, and for a bank that confirms at once to have
// done so; FirstReadBy is the latest that first read may come.
const (
	FirstCheck  = 3500 * time.Millisecond
	FirstReadBy = 30 * time.Second
)

// Never is a next check or try that never comes.
var Never = time.UnixMilli(math.MaxInt64)

// EventStatusChanged is the type of every event: an order's status changed.
const EventStatusChanged = "payment.status_changed"

// Delivery states of an event.
const (
	Pending   = "pending"
	Delivered = "delivered"
	Failed    = "failed"
)

// Event is one change of an order's status, as sent to the merchant.
type Event struct {
	ID         string
	MerchantID string
	OrderID    string
	Type       string
	// Body is the JSON the merchant receives, byte for byte (it is signed).
	Body     []byte
	Created  time.Time
	Delivery string
	Tries    int
	NextTry  time.Time
	// Deliveries are its tries, oldest first (filled by Events).
	Deliveries []Delivery
}

// Delivery is one try at sending an event.
type Delivery struct {
	Try int
	At  time.Time
	// Code is the merchant's HTTP status; 0 when no answer came.
	Code     int
	Duration time.Duration
	// Error says why no answer came, without secrets.
	Error string
}

// EventBody is the JSON of an event, as merchants' webhooks receive it and
// the API lists it (docs/integrate.md).
type EventBody struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      EventData `json:"data"`
}

// EventData is what changed.
type EventData struct {
	MerchantOrderID string `json:"merchant_order_id"`
	Status          string `json:"status"`
	Paid            bool   `json:"paid"`
	Final           bool   `json:"final"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Attempt         int    `json:"attempt"`
	// PaymentLink is the id of the payment link the order was made for;
	// absent for an order from a signed link or the API.
	PaymentLink string `json:"payment_link,omitempty"`
}

// addEvent writes the event of attempt a's new status inside tx; amount and
// currency are the order's. The caller makes the status the order's.
func (l *Ledger) addEvent(ctx context.Context, tx *sql.Tx, a Attempt, amount, currency, paymentLink string, now time.Time) error {
	st := pisclient.Status(a.Status)
	b := make([]byte, 12)
	rand.Read(b)
	body := EventBody{
		ID: "evt_" + hex.EncodeToString(b), Type: EventStatusChanged, CreatedAt: now.UTC().Truncate(time.Millisecond),
		Data: EventData{
			MerchantOrderID: a.OrderID, Status: a.Status, Final: st.Final(),
			Paid:   st.Paid() && a.Amount == amount && a.Currency == currency,
			Amount: amount, Currency: currency, Attempt: a.Seq, PaymentLink: paymentLink,
		},
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO events (id, merchant_id, order_id, type, body, created_at, next_try_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, body.ID, a.MerchantID, a.OrderID, body.Type, string(raw), now.UnixMilli())
	return err
}

// forUpdate makes a PostgreSQL read lock the rows it reads until the
// transaction ends, so that two transactions deciding on one row take turns;
// SQLite takes one writer at a time anyway.
func (l *Ledger) forUpdate() string {
	if l.dialect == postgres {
		return " FOR UPDATE"
	}
	return ""
}

// skipLocked makes PostgreSQL claims pass over rows another instance is
// claiming; SQLite takes one writer at a time anyway.
func (l *Ledger) skipLocked() string {
	if l.dialect == postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// ClaimEvents leases to owner, for lease, up to limit of a merchant's events
// due for delivery, oldest first.
func (l *Ledger) ClaimEvents(ctx context.Context, merchantID, owner string, lease time.Duration, limit int) ([]Event, error) {
	now := l.now().UnixMilli()
	rows, err := l.db.QueryContext(ctx, `UPDATE events SET lease_owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM events
			WHERE merchant_id = $3 AND delivery = 'pending' AND next_try_at <= $4 AND lease_until < $4
			ORDER BY next_try_at, created_at, id LIMIT $5`+l.skipLocked()+`)
		AND lease_until < $4
		RETURNING `+eventColumns, owner, now+lease.Milliseconds(), merchantID, now, limit)
	if err != nil {
		return nil, err
	}
	list, err := scanEvents(rows)
	if err != nil {
		return nil, err
	}
	// RETURNING keeps no order: send the oldest first.
	slices.SortFunc(list, func(a, b Event) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return list, nil
}

const eventColumns = `id, merchant_id, order_id, type, body, created_at, delivery, tries, next_try_at`

func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var list []Event
	for rows.Next() {
		var e Event
		var body string
		var created, next int64
		if err := rows.Scan(&e.ID, &e.MerchantID, &e.OrderID, &e.Type, &body, &created, &e.Delivery, &e.Tries, &next); err != nil {
			return nil, err
		}
		e.Body, e.Created, e.NextTry = []byte(body), time.UnixMilli(created), time.UnixMilli(next)
		list = append(list, e)
	}
	return list, rows.Err()
}

// RecordDelivery records one try at an event under owner's lease, and what
// follows: Delivered, Failed (given up), or Pending with the next try at next.
func (l *Ledger) RecordDelivery(ctx context.Context, e Event, owner string, d Delivery, outcome string, next time.Time) error {
	ctx, span := l.span(ctx, "RecordDelivery")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE events SET tries = tries + 1, delivery = $1, next_try_at = $2, lease_owner = '', lease_until = 0
		WHERE id = $3 AND lease_owner = $4`, outcome, next.UnixMilli(), e.ID, owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return errors.New("ledger: the event's lease was lost")
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO deliveries (event_id, try, at, code, duration_ms, error)
		VALUES ($1, (SELECT tries FROM events WHERE id = $1), $2, $3, $4, $5)`,
		e.ID, d.At.UnixMilli(), d.Code, d.Duration.Milliseconds(), d.Error); err != nil {
		return err
	}
	return tx.Commit()
}

// Cursor is where a listing goes on: the sort key of the last row given.
type Cursor struct {
	At time.Time
	ID string
}

// String encodes the cursor for a URL; "" for none.
func (c Cursor) String() string {
	if c.ID == "" {
		return ""
	}
	return fmt.Sprintf("%d.%s", c.At.UnixMilli(), hex.EncodeToString([]byte(c.ID)))
}

// ParseCursor reads a cursor written by String.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	at, id, ok := strings.Cut(s, ".")
	var ms int64
	raw, err := hex.DecodeString(id)
	if _, serr := fmt.Sscanf(at, "%d", &ms); !ok || err != nil || serr != nil || len(raw) == 0 {
		return Cursor{}, errors.New("not a cursor this API gave")
	}
	return Cursor{At: time.UnixMilli(ms), ID: string(raw)}, nil
}

// Events lists a merchant's events created at or after since, oldest first,
// after the cursor, with their deliveries.
func (l *Ledger) Events(ctx context.Context, merchantID string, since time.Time, after Cursor, limit int) ([]Event, error) {
	q := `SELECT ` + eventColumns + ` FROM events WHERE merchant_id = $1 AND created_at >= $2`
	args := []any{merchantID, since.UnixMilli()}
	if after.ID != "" {
		q += ` AND (created_at, id) > ($3, $4)`
		args = append(args, after.At.UnixMilli(), after.ID)
	}
	q += fmt.Sprintf(` ORDER BY created_at, id LIMIT %d`, limit)
	rows, err := l.db.QueryContext(ctx, q, args...)
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

// Event returns one of a merchant's events with its deliveries.
func (l *Ledger) Event(ctx context.Context, merchantID, id string) (Event, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE merchant_id = $1 AND id = $2`, merchantID, id)
	if err != nil {
		return Event{}, err
	}
	list, err := scanEvents(rows)
	if err != nil {
		return Event{}, err
	}
	if len(list) == 0 {
		return Event{}, ErrNotFound
	}
	list[0].Deliveries, err = l.deliveries(ctx, id)
	return list[0], err
}

func (l *Ledger) deliveries(ctx context.Context, eventID string) ([]Delivery, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT try, at, code, duration_ms, error FROM deliveries WHERE event_id = $1 ORDER BY try`, eventID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Delivery
	for rows.Next() {
		var d Delivery
		var at, ms int64
		if err := rows.Scan(&d.Try, &at, &d.Code, &ms, &d.Error); err != nil {
			return nil, err
		}
		d.At, d.Duration = time.UnixMilli(at), time.Duration(ms)*time.Millisecond
		list = append(list, d)
	}
	return list, rows.Err()
}

// Redeliver queues one of a merchant's events to be sent again now, whatever
// became of it before.
func (l *Ledger) Redeliver(ctx context.Context, merchantID, id string) error {
	res, err := l.db.ExecContext(ctx, `UPDATE events SET delivery = 'pending', next_try_at = $1, lease_owner = '', lease_until = 0
		WHERE merchant_id = $2 AND id = $3`, l.now().UnixMilli(), merchantID, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Orders lists a merchant's orders, newest change first, after the cursor;
// status and since filter when set.
func (l *Ledger) Orders(ctx context.Context, merchantID, status string, since time.Time, after Cursor, limit int) ([]Order, error) {
	q := `SELECT order_id, amount, currency, return_url, status, created_at, updated_at, payment_link, refunded_cents, received_on FROM orders
		WHERE merchant_id = $1 AND updated_at >= $2`
	args := []any{merchantID, since.UnixMilli()}
	if status != "" {
		args = append(args, status)
		q += fmt.Sprintf(` AND status = $%d`, len(args))
	}
	if after.ID != "" {
		args = append(args, after.At.UnixMilli(), after.ID)
		q += fmt.Sprintf(` AND (updated_at, order_id) < ($%d, $%d)`, len(args)-1, len(args))
	}
	q += fmt.Sprintf(` ORDER BY updated_at DESC, order_id DESC LIMIT %d`, limit)
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Order
	for rows.Next() {
		o := Order{MerchantID: merchantID}
		var created, updated int64
		if err := rows.Scan(&o.OrderID, &o.Amount, &o.Currency, &o.ReturnURL, &o.Status, &created, &updated, &o.PaymentLink, &o.RefundedCents, &o.ReceivedOn); err != nil {
			return nil, err
		}
		o.Created, o.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		list = append(list, o)
	}
	return list, rows.Err()
}

// Backlog is what waits, for metrics: how far past the latest its read may
// come the most overdue attempt is (0 while none is), and the age of the
// oldest event not yet delivered to the given merchants.
type Backlog struct {
	FollowLag         time.Duration
	OldestUndelivered time.Duration
}

// Backlog measures what waits now.
func (l *Ledger) Backlog(ctx context.Context, merchants []string) (Backlog, error) {
	now := l.now().UnixMilli()
	var b Backlog
	var overdue, oldestEvent sql.NullInt64
	if err := l.db.QueryRowContext(ctx, `SELECT MIN(read_by) FROM attempts
		WHERE state IN ('open', 'unknown') AND read_by < $1`, now).Scan(&overdue); err != nil {
		return b, err
	}
	if overdue.Valid {
		b.FollowLag = time.Duration(now-overdue.Int64) * time.Millisecond
	}
	if len(merchants) > 0 {
		in, args := inList(merchants)
		if err := l.db.QueryRowContext(ctx, `SELECT MIN(created_at) FROM events WHERE delivery = 'pending' AND merchant_id IN (`+in+`)`,
			args...).Scan(&oldestEvent); err != nil {
			return b, err
		}
		if oldestEvent.Valid {
			b.OldestUndelivered = time.Duration(now-oldestEvent.Int64) * time.Millisecond
		}
	}
	return b, nil
}

// texts runs a query of one text column and returns its values.
func (l *Ledger) texts(ctx context.Context, query string, args ...any) ([]string, error) {
	return l.textsIn(ctx, l.db, query, args...)
}

// textsIn is texts in a transaction, or anything else that queries.
func (l *Ledger) textsIn(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
