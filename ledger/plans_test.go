package ledger_test

import (
	"database/sql"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// A checkout's statements on PostgreSQL find an order by its key however
// the table has grown since they were first run. A connection keeps its
// prepared statements; planned once for a nearly empty table, a statement
// could keep the plan it was given then, which read every one of the
// merchant's orders through another index to find one (in a load run, 8,000
// rows read for each lookup, checkouts a third as fast as the same writes
// made bare). The planner must see the table as it is.
func TestCheckoutsFindOrdersByTheirKeyAfterTheTableGrows(t *testing.T) {
	t.Parallel()
	databaseURL := ledgertest.PostgresURL(t)
	l := ledgertest.Open(t, databaseURL)
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int
	if err := db.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 150000 {
		t.Skipf("PostgreSQL %d counts a connection's reads late and from a file: the count needs PostgreSQL 15 or later", version/10000)
	}
	// An ANALYZE of the grown table would replace every plan kept: the
	// test is of a database where none runs in time (as autovacuum's
	// may not, or is off).
	if _, err := db.ExecContext(ctx, `ALTER TABLE orders SET (autovacuum_enabled = off)`); err != nil {
		t.Fatal(err)
	}

	checkout := func(id string) {
		t.Helper()
		o := order(id, "49.90")
		if _, err := l.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		if _, err := l.RecordOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		a := attempt(id, 1)
		if err := l.InsertAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.RecordOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The first checkouts of a new shop: every statement runs often
	// enough on a table of a few rows for PostgreSQL to settle its plan.
	for i := range 20 {
		checkout(fmt.Sprintf("early-%d", i))
	}
	// The shop's orders of the months after.
	if _, err := db.ExecContext(ctx, `INSERT INTO orders (merchant_id, order_id, amount, currency, return_url, created_at, updated_at, opened_at)
		SELECT 'shop1', 'later-' || g, '49.90', 'EUR', 'https://shop.example/done', g, g, g FROM generate_series(1, 20000) AS g`); err != nil {
		t.Fatal(err)
	}

	// PostgreSQL counts a connection's reads once it has been idle a
	// moment, within pgstatIdle: the count before is taken once it has
	// stood still that long.
	before := settledReads(t, db)
	const checkouts = 30
	for i := range checkouts {
		checkout(fmt.Sprintf("now-%d", i))
	}
	// A connection counts what is left as it ends: close the ledger and
	// wait for its connections to be gone.
	l.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var open int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ledger's %d connections are still open a minute after it closed", open)
		}
	}
	after := ordersRead(t, db)
	if got := after["orders_pkey"] - before["orders_pkey"]; got < checkouts {
		t.Fatalf("%d checkouts found orders by their key %d times, want at least once each: reads %v", checkouts, got, delta(before, after))
	}
	for name, n := range after {
		if name != "orders_pkey" && n != before[name] {
			t.Errorf("%d checkouts read orders %d times through %s (a scan of the merchant's orders, or all of them), want only by the key: reads %v", checkouts, n-before[name], name, delta(before, after))
		}
	}
}

// ordersRead is how many times each index of orders has been read, and the
// table from end to end ("sequential").
func ordersRead(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	read := map[string]int64{}
	rows, err := db.QueryContext(ctx, `SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE relname = 'orders'
		UNION ALL SELECT 'sequential', seq_scan FROM pg_stat_user_tables WHERE relname = 'orders'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		read[name] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return read
}

// pgstatIdle bounds how long PostgreSQL 15 waits to count the reads of a
// connection gone idle (PGSTAT_IDLE_INTERVAL, 10 s), with a margin.
const pgstatIdle = 11 * time.Second

// settledReads is ordersRead once it has not changed for pgstatIdle: every
// idle connection's reads are in.
func settledReads(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	read := ordersRead(t, db)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		time.Sleep(pgstatIdle)
		again := ordersRead(t, db)
		if maps.Equal(read, again) {
			return read
		}
		if time.Now().After(deadline) {
			t.Fatalf("the count of reads of orders still moves two minutes after the last checkout: %v, then %v", read, again)
		}
		read = again
	}
}

func delta(before, after map[string]int64) map[string]int64 {
	d := maps.Clone(after)
	for name, n := range before {
		d[name] -= n
	}
	return d
}
