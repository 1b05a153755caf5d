// Package ledger keeps the payments ledger: each merchant's orders, every
// attempt to pay them at the provider, and the events that tell merchants of
// each change, with their deliveries. It is what makes "one payment per
// order, at the right amount" hold across instances and restarts: the schema
// allows one attempt that could still be paid per order, and changes are
// conditional updates that only one caller can win.
//
// Beside the payments it keeps what every instance must share: merchants'
// settings with their version and the audit log, the console's people,
// teams, invitations and two-step secrets, the Branding page's drafts and
// logos, the phone handoff's codes, counted sign-in tries, the console's
// hourly counts and bank health's figures, the merchants' API requests, and
// the leases and read budget of the follower and the webhook dispatcher.
//
// Two back ends share the SQL: an embedded SQLite file (one instance) and
// PostgreSQL (any number of instances). Nothing personal is stored.
package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"modernc.org/sqlite"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// DefaultPath is the SQLite file used when DATABASE_URL is empty.
const DefaultPath = "data/checkout.db"

// State is where an attempt stands in the app's own bookkeeping; the
// provider's status is kept beside it.
type State string

const (
	// Creating: one instance won the insert and is asking the provider.
	Creating State = "creating"
	// Open: the payment exists at the provider and may still change; its
	// link, when known, is the one every submit of the order is sent to.
	Open State = "open"
	// Unknown: the create call's answer was lost or unreadable, so the
	// payment may exist, but its link reached nobody.
	Unknown State = "unknown"
	// Orphaned: an unknown attempt shown not to have begun. Nobody holds its
	// link, so nobody can pay it; it is never followed or reported.
	Orphaned State = "orphaned"
	// Refused: the provider said no; nothing was made.
	Refused State = "refused"
	// Final: the provider's status can no longer change (COMPLETED or
	// CANCELED, in Status).
	Final State = "final"
)

// Live reports whether an attempt blocks a new one: it could still be paid,
// or it may exist and nobody knows yet.
func (s State) Live() bool { return s == Creating || s == Open || s == Unknown }

// Order is one merchant's order: what it costs is fixed by the first link
// seen for it.
type Order struct {
	MerchantID string
	OrderID    string
	// Amount is canonical: two decimals, as the provider is sent it.
	Amount    string
	Currency  string
	ReturnURL string
	// Status is the provider's status of the order's payment as last
	// recorded; NOT_FOUND before one began.
	Status  string
	Created time.Time
	Updated time.Time
	// BankID and Country are the bank of the order's current payment;
	// empty before one was sent (filled by the console's listing).
	BankID  string
	Country string
	// Paid is when the order was paid in full; zero while it is not (filled
	// by the console's listing).
	Paid time.Time
	// KID is the link key the order was first opened with (OpenOrder).
	KID string
	// PaymentLink is the id of the payment link the order was made for;
	// empty for an order from a signed link or the API. An order keeps
	// it: a signed link for the same order id is another order's.
	PaymentLink string
	// Payer is the digest of the payer key a reusable payment link's
	// order was made for; empty for every other order, which any checkout
	// of it may begin to pay.
	Payer string
	// RefundedCents is the sum of the order's refunds that are not
	// cancelled or returned.
	RefundedCents int64
	// ReceivedOn is the booking date of the statement entry that showed
	// the order's money on the merchant's account; "" before.
	ReceivedOn string
}

// Refunded is what was refunded of the order, with two decimals.
func (o Order) Refunded() string { return amountOf(o.RefundedCents) }

// Attempt is one payment at the provider for an order.
type Attempt struct {
	// UpstreamID is the merchant_order_id the provider knows it by.
	UpstreamID string
	MerchantID string
	OrderID    string
	// Seq counts the order's attempts from 1.
	Seq      int
	Amount   string
	Currency string
	BankID   string
	Country  string
	State    State
	// Link is the provider's payment link, once known.
	Link string
	// PaymentLink, when set on an attempt to insert, is the payment link
	// its order was made for: InsertAttempt then makes the attempt only
	// while the link may take it (InsertLinkAttempt). It is not stored
	// with the attempt; the order holds it.
	PaymentLink string
	// Status is the provider's status as last read, verbatim; empty until read.
	Status  string
	Created time.Time
	// Updated is when the attempt's state or status last changed.
	Updated time.Time
	// Began is when the shopper was first known to be at the bank (a
	// status past NOT_FOUND, or their return through the return URL);
	// zero before.
	Began time.Time
	// Payer is the digest of the payer key of the checkout that made the
	// attempt (order.PayerDigest): its bank page is that checkout's alone.
	// Empty for attempts made before payers were told apart.
	Payer string
}

var (
	// ErrOrderChanged means the order id is already recorded with another
	// amount or currency.
	ErrOrderChanged = errors.New("ledger: the order is recorded with another amount or currency")
	// ErrNotFound means no such order.
	ErrNotFound = errors.New("ledger: no such order")
	// ErrAttemptTaken means another attempt won the insert: the order already
	// has a live attempt, or that sequence number is used.
	ErrAttemptTaken = errors.New("ledger: another attempt is live")
)

type dialect int

const (
	sqliteDialect dialect = iota
	postgres
)

// Ledger is the payments ledger over one database.
type Ledger struct {
	db      *sql.DB
	dialect dialect
	now     func() time.Time
	// Where says which database, without credentials, for logs.
	Where string
	// FirstCheck is how long after its creation an attempt is first read
	// by the follower; the package's FirstCheck unless a test sets it.
	FirstCheck time.Duration
	// closed is set by Close: a ledger closed on purpose is not an outage.
	closed atomic.Bool
	// trigram is set while migrating when PostgreSQL's pg_trgm could be
	// had: payment links' search gets its index.
	trigram bool
	// stmts are statements prepared once (prepared), by their SQL.
	stmts sync.Map
	// preparing holds the statements being prepared in the background.
	preparing sync.Map
	// events holds, by merchant, a channel closed (and forgotten) when
	// this instance records an event of that merchant.
	eventsMu sync.Mutex
	events   map[string]chan struct{}
}

// NewEvents is closed when this instance next records an event of
// merchant merchantID, so that its webhook sender need not wait for its
// next poll; another merchant's events leave it be, and events recorded
// by other instances are found by polling.
func (l *Ledger) NewEvents(merchantID string) <-chan struct{} {
	l.eventsMu.Lock()
	defer l.eventsMu.Unlock()
	ch, ok := l.events[merchantID]
	if !ok {
		if l.events == nil {
			l.events = map[string]chan struct{}{}
		}
		ch = make(chan struct{})
		l.events[merchantID] = ch
	}
	return ch
}

// eventRecorded wakes whoever waits on NewEvents of merchantID.
func (l *Ledger) eventRecorded(merchantID string) {
	l.eventsMu.Lock()
	defer l.eventsMu.Unlock()
	if ch, ok := l.events[merchantID]; ok {
		close(ch)
		delete(l.events, merchantID)
	}
}

// Connect opens the ledger named by a DATABASE_URL value and brings its
// schema up to date: empty means the SQLite file DefaultPath, "sqlite:PATH"
// another file, and postgres:// or postgresql:// a PostgreSQL database.
func Connect(ctx context.Context, databaseURL string) (*Ledger, error) {
	l := &Ledger{now: time.Now, FirstCheck: FirstCheck}
	var err error
	switch {
	case databaseURL == "" || strings.HasPrefix(databaseURL, "sqlite:"):
		path := strings.TrimPrefix(databaseURL, "sqlite:")
		if path == "" {
			path = DefaultPath
		}
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("sqlite:%s: a file path without ? or #", path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		l.Where = "sqlite:" + path
		l.db, err = sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		// One connection: SQLite takes one writer at a time anyway, and
		// no request holds a transaction across a provider call.
		l.db.SetMaxOpenConns(1)
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		u, perr := url.Parse(databaseURL)
		if perr != nil || u.Host == "" && u.Query().Get("host") == "" {
			return nil, errors.New("not a URL like postgres://user@host:5432/dbname")
		}
		// Where is said in logs and errors: no password, in the address
		// or among its parameters.
		shown := *u
		shown.User = nil
		said := shown.Query()
		said.Del("password")
		said.Del("sslpassword")
		shown.RawQuery = said.Encode()
		l.Where, l.dialect = shown.Redacted(), postgres
		// Every statement is planned for the tables as they are when it
		// runs. A connection keeps its prepared statements, and PostgreSQL
		// may keep a plan made once for all: made while orders held a few
		// rows, it read every one of a merchant's orders through another
		// index to find one by its key, long after the table had grown,
		// and whole checkouts ran at a third of the rate of the same writes
		// made bare. Planning each time costs the server less than that.
		// A URL that sets plan_cache_mode, as a parameter or in options,
		// keeps its own; the driver passes the parameter on at connecting.
		if q := u.Query(); !q.Has("plan_cache_mode") && !strings.Contains(q.Get("options"), "plan_cache_mode") {
			q.Set("plan_cache_mode", "force_custom_plan")
			u.RawQuery = q.Encode()
		}
		if l.db, err = sql.Open("pgx", u.String()); err != nil {
			return nil, err
		}
		// Every connection is kept between requests: a PostgreSQL
		// connection is a server process, and opening one costs more than
		// most of the statements it then runs. With fewer idle than open,
		// a busy instance closed and opened connections many times a second.
		l.db.SetMaxOpenConns(10)
		l.db.SetMaxIdleConns(10)
		l.db.SetConnMaxIdleTime(5 * time.Minute)
	default:
		return nil, errors.New("neither empty, sqlite:PATH nor postgres://…")
	}
	if err := l.migrate(ctx); err != nil {
		l.db.Close()
		return nil, fmt.Errorf("%s: %w", l.Where, err)
	}
	return l, nil
}

// Close closes the database.
func (l *Ledger) Close() error {
	l.closed.Store(true)
	l.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return l.db.Close()
}

// Closed reports whether Close was called: a ledger closed on purpose is
// not an outage.
func (l *Ledger) Closed() bool { return l.closed.Load() }

// Ping tells whether the database answers.
func (l *Ledger) Ping(ctx context.Context) error { return l.db.PingContext(ctx) }

// RecordOrder records an order the first time it is seen and returns the
// recorded one. An order id already recorded with another amount or currency
// gives ErrOrderChanged, with the recorded order: a link may be made again,
// but never for another sum.
func (l *Ledger) RecordOrder(ctx context.Context, o Order) (Order, error) {
	// At a submit the order is nearly always recorded already, when its
	// link was opened: one read answers.
	if got, err := l.recordedOn(ctx, l.on(nil), o); !errors.Is(err, ErrNotFound) {
		return got, err
	}
	now := l.now().UnixMilli()
	_, err := l.on(nil).ExecContext(ctx, `INSERT INTO orders (merchant_id, order_id, amount, currency, return_url, created_at, updated_at, payment_link)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (merchant_id, order_id) DO NOTHING`,
		o.MerchantID, o.OrderID, o.Amount, o.Currency, o.ReturnURL, now, o.PaymentLink)
	if err != nil {
		return Order{}, err
	}
	return l.recorded(ctx, o)
}

// OpenOrder is RecordOrder for a shopper who has just used the order's
// link: the first use counts the order as opened in the console's funnel.
func (l *Ledger) OpenOrder(ctx context.Context, o Order) (Order, error) {
	now := l.now().UnixMilli()
	ctx, span := l.span(ctx, "OpenOrder")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return Order{}, err
	}
	defer tx.Rollback()
	// A row comes back only when this call inserted the order or opened it.
	var opened int64
	err = l.on(tx).QueryRowContext(ctx, `INSERT INTO orders (merchant_id, order_id, amount, currency, return_url, created_at, updated_at, opened_at, kid, payment_link)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $7, $8) ON CONFLICT (merchant_id, order_id)
		DO UPDATE SET opened_at = excluded.opened_at, kid = excluded.kid WHERE orders.opened_at = 0 AND orders.payment_link = excluded.payment_link
		RETURNING opened_at`,
		o.MerchantID, o.OrderID, o.Amount, o.Currency, o.ReturnURL, now, o.KID, o.PaymentLink).Scan(&opened)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return Order{}, err
	case opened == now:
		if err := (countChange{merchantID: o.MerchantID, funnelHour: hourOf(time.UnixMilli(now)), opened: 1}).add(ctx, l.on(tx)); err != nil {
			return Order{}, err
		}
	}
	// Read in the transaction: the connection is not given up between.
	got, rerr := l.recordedOn(ctx, l.on(tx), o)
	if rerr != nil && !errors.Is(rerr, ErrOrderChanged) {
		return Order{}, rerr
	}
	if err := tx.Commit(); err != nil {
		return Order{}, err
	}
	return got, rerr
}

// recorded returns the order recorded under o's id, or ErrOrderChanged with
// it when its amount, currency or payment link differ from o's.
func (l *Ledger) recorded(ctx context.Context, o Order) (Order, error) {
	return l.recordedOn(ctx, l.on(nil), o)
}

// recordedOn is recorded, read on e; ErrNotFound when there is none.
func (l *Ledger) recordedOn(ctx context.Context, e execer, o Order) (Order, error) {
	got, err := orderOn(ctx, e, o.MerchantID, o.OrderID)
	if err != nil {
		return Order{}, err
	}
	if got.Amount != o.Amount || got.Currency != o.Currency || got.PaymentLink != o.PaymentLink {
		return got, ErrOrderChanged
	}
	return got, nil
}

func (l *Ledger) order(ctx context.Context, merchantID, orderID string) (Order, error) {
	return orderOn(ctx, l.on(nil), merchantID, orderID)
}

func orderOn(ctx context.Context, e execer, merchantID, orderID string) (Order, error) {
	o := Order{MerchantID: merchantID, OrderID: orderID}
	var created, updated, paid int64
	err := e.QueryRowContext(ctx, `SELECT amount, currency, return_url, status, created_at, updated_at, paid_at, bank_id, country, payment_link,
			refunded_cents, received_on FROM orders
		WHERE merchant_id = $1 AND order_id = $2`, merchantID, orderID).Scan(&o.Amount, &o.Currency, &o.ReturnURL, &o.Status, &created, &updated,
		&paid, &o.BankID, &o.Country, &o.PaymentLink, &o.RefundedCents, &o.ReceivedOn)
	if errors.Is(err, sql.ErrNoRows) {
		return o, ErrNotFound
	}
	o.Created, o.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	if paid > 0 {
		o.Paid = time.UnixMilli(paid)
	}
	return o, err
}

// Order returns an order and its attempts, oldest first.
func (l *Ledger) Order(ctx context.Context, merchantID, orderID string) (Order, []Attempt, error) {
	o, err := l.order(ctx, merchantID, orderID)
	if err != nil {
		return o, nil, err
	}
	rows, err := l.db.QueryContext(ctx, `SELECT `+attemptFields+` FROM attempts
		WHERE merchant_id = $1 AND order_id = $2 ORDER BY seq`, merchantID, orderID)
	if err != nil {
		return o, nil, err
	}
	defer rows.Close()
	var list []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return o, nil, err
		}
		list = append(list, a)
	}
	return o, list, rows.Err()
}

// attemptColumns are the columns an attempt is inserted with;
// attemptFields those it is read from (scanAttempt).
const (
	attemptColumns = `upstream_id, merchant_id, order_id, seq, amount, currency, bank_id, country, state, link, status, created_at, updated_at`
	attemptFields  = attemptColumns + `, began_at, payer`
)

func scanAttempt(row interface{ Scan(...any) error }) (Attempt, error) {
	var a Attempt
	var created, updated, began int64
	err := row.Scan(&a.UpstreamID, &a.MerchantID, &a.OrderID, &a.Seq, &a.Amount, &a.Currency, &a.BankID, &a.Country,
		&a.State, &a.Link, &a.Status, &created, &updated, &began, &a.Payer)
	a.Created, a.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	if began != 0 {
		a.Began = time.UnixMilli(began)
	}
	return a, err
}

// InsertAttempt records a new attempt in state Creating, to be read first
// FirstCheck on, and within FirstReadBy at the latest. Of callers racing
// on one order, on any instance, exactly one wins; the others get
// ErrAttemptTaken and should wait for the winner's link.
func (l *Ledger) InsertAttempt(ctx context.Context, a Attempt) error {
	if a.PaymentLink != "" {
		return l.insertLinkAttempt(ctx, a)
	}
	now := l.now()
	_, err := l.on(nil).ExecContext(ctx, `INSERT INTO attempts (`+attemptColumns+`, next_check_at, read_by, payer)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', '', $10, $10, $11, $12, $13)`,
		a.UpstreamID, a.MerchantID, a.OrderID, a.Seq, a.Amount, a.Currency, a.BankID, a.Country, Creating, now.UnixMilli(),
		now.Add(l.FirstCheck).UnixMilli(), now.Add(FirstReadBy).UnixMilli(), a.Payer)
	if l.uniqueViolation(err) {
		return ErrAttemptTaken
	}
	return err
}

// Change is what Move writes to an attempt; empty fields are kept.
type Change struct {
	State  State
	Link   string
	Status string
}

// Move applies a change to an attempt if it is still in state from, and
// reports whether it did: of two instances deciding about one attempt, only
// the first moves it. When the provider's status changes (and the attempt
// is one a shopper was sent to) the order's status follows and an event is
// written in the same transaction: no change is lost or told twice.
func (l *Ledger) Move(ctx context.Context, upstreamID string, from State, ch Change) (bool, error) {
	ctx, span := l.span(ctx, "Move")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	// Locked: a shopper's return (ReturnedFromBank) may mark the attempt
	// begun meanwhile, and the count must see it.
	a, err := scanAttempt(l.on(tx).QueryRowContext(ctx, `SELECT `+attemptFields+` FROM attempts WHERE upstream_id = $1`+l.forUpdate(), upstreamID))
	if errors.Is(err, sql.ErrNoRows) || err == nil && a.State != from {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now := l.now()
	after := a
	after.State, after.Status = cmp.Or(ch.State, a.State), cmp.Or(ch.Status, a.Status)
	// The status read is part of the condition: of two instances that read
	// the same change, one records it.
	res, err := l.on(tx).ExecContext(ctx, `UPDATE attempts SET
			state = CASE WHEN $1 = '' THEN state ELSE $1 END,
			link = CASE WHEN $2 = '' THEN link ELSE $2 END,
			status = CASE WHEN $3 = '' THEN status ELSE $3 END,
			updated_at = $4,
			began_at = CASE WHEN began_at = 0 AND $8 THEN $4 ELSE began_at END
		WHERE upstream_id = $5 AND state = $6 AND status = $7`,
		string(ch.State), ch.Link, ch.Status, now.UnixMilli(), upstreamID, string(from), a.Status, counted(after.State) && opensBank(after.Status))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	var o orderRow
	if err := l.on(tx).QueryRowContext(ctx, `SELECT status, amount, currency, opened_at, sent_at, began_at, paid_at, payment_link FROM orders
		WHERE merchant_id = $1 AND order_id = $2`, a.MerchantID, a.OrderID).
		Scan(&o.status, &o.amount, &o.currency, &o.opened, &o.sent, &o.began, &o.paid, &o.paymentLink); err != nil {
		return false, err
	}
	if after.State != a.State || after.Status != a.Status {
		if _, err := l.on(tx).ExecContext(ctx, `INSERT INTO attempt_history (upstream_id, at, state, status) VALUES ($1, $2, $3, $4)`,
			upstreamID, now.UnixMilli(), string(after.State), after.Status); err != nil {
			return false, err
		}
	}
	counts, stages := tally(a, after, msOrZero(a.Began), o, now)
	if o.paymentLink != "" && o.paid == 0 && stages.paid > 0 {
		// The order is paid in full: its payment link counts it, in this
		// transaction.
		if err := linkPaid(ctx, tx, o.paymentLink, o.amount); err != nil {
			return false, err
		}
	}
	status := o.status
	told := false
	if ch.Status != "" && ch.Status != o.status && after.State != Orphaned && after.State != Refused {
		// The order's status changed: one event, in this transaction.
		if err := l.addEvent(ctx, tx, after, o.amount, o.currency, o.paymentLink, now); err != nil {
			return false, err
		}
		status, told = ch.Status, true
	}
	if _, err := l.on(tx).ExecContext(ctx, `UPDATE orders SET status = $1, updated_at = $2,
			opened_at = $3, sent_at = $4, began_at = $5, paid_at = $6,
			bank_id = CASE WHEN $7 THEN $8 ELSE bank_id END, country = CASE WHEN $7 THEN $9 ELSE country END
		WHERE merchant_id = $10 AND order_id = $11`,
		status, now.UnixMilli(), stages.opened, stages.sent, stages.began, stages.paid,
		!counted(a.State) && counted(after.State), a.BankID, a.Country, a.MerchantID, a.OrderID); err != nil {
		return false, err
	}
	if counts != (countChange{}) {
		if err := counts.add(ctx, l.on(tx)); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	if told {
		l.eventRecorded(a.MerchantID)
	}
	return true, nil
}

// scanFunc is a Scan method of its own, to read more columns than a
// scanner of a row knows.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

func (l *Ledger) uniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		// SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY.
		return sqErr.Code() == 2067 || sqErr.Code() == 1555
	}
	return false
}

// Tables lists every table of the database and every value in it as text,
// for tests that prove nothing personal is stored.
func (l *Ledger) Tables(ctx context.Context) (map[string][]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if l.dialect == postgres {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`
	}
	var tables []string
	rows, err := l.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, name)
	}
	rows.Close()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := l.db.QueryContext(ctx, `SELECT * FROM `+table)
		if err != nil {
			return nil, err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				out[table] = append(out[table], fmt.Sprint(v))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
