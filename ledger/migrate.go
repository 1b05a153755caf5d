package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are the schema's steps, applied in order, each once and inside
// a transaction. Append; never edit one that has shipped. The SQL is the
// same on SQLite and PostgreSQL: times are unix milliseconds, booleans are
// states, and the rules live in the schema (keys, checks, the partial unique
// index), so that a bug in Go cannot write a second payable attempt.
var migrations = []string{
	// 1: orders and their attempts at the provider (DESIGN.md section 7).
	`CREATE TABLE orders (
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		amount      TEXT NOT NULL,
		currency    TEXT NOT NULL,
		return_url  TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		updated_at  BIGINT NOT NULL,
		PRIMARY KEY (merchant_id, order_id)
	);
	CREATE TABLE attempts (
		upstream_id TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		seq         INTEGER NOT NULL CHECK (seq >= 1),
		amount      TEXT NOT NULL,
		currency    TEXT NOT NULL,
		bank_id     TEXT NOT NULL,
		country     TEXT NOT NULL,
		state       TEXT NOT NULL CHECK (state IN ('creating', 'open', 'unknown', 'orphaned', 'refused', 'final')),
		link        TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		created_at  BIGINT NOT NULL,
		updated_at  BIGINT NOT NULL,
		UNIQUE (merchant_id, order_id, seq),
		FOREIGN KEY (merchant_id, order_id) REFERENCES orders (merchant_id, order_id)
	);
	CREATE UNIQUE INDEX attempts_one_live ON attempts (merchant_id, order_id)
		WHERE state IN ('creating', 'open', 'unknown');
	CREATE INDEX orders_updated ON orders (merchant_id, updated_at);`,

	// 2: following attempts until final (leases), and the outbox of events
	// to merchants with each delivery (DESIGN.md section 7).
	`ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'NOT_FOUND';
	ALTER TABLE attempts ADD COLUMN next_check_at BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE attempts ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
	ALTER TABLE attempts ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
	CREATE INDEX attempts_due ON attempts (next_check_at) WHERE state IN ('open', 'unknown');
	CREATE INDEX orders_by_status ON orders (merchant_id, status, updated_at);
	CREATE TABLE events (
		id          TEXT PRIMARY KEY,
		merchant_id TEXT NOT NULL,
		order_id    TEXT NOT NULL,
		type        TEXT NOT NULL,
		body        TEXT NOT NULL,
		created_at  BIGINT NOT NULL,
		delivery    TEXT NOT NULL DEFAULT 'pending' CHECK (delivery IN ('pending', 'delivered', 'failed')),
		tries       INTEGER NOT NULL DEFAULT 0,
		next_try_at BIGINT NOT NULL,
		lease_owner TEXT NOT NULL DEFAULT '',
		lease_until BIGINT NOT NULL DEFAULT 0,
		FOREIGN KEY (merchant_id, order_id) REFERENCES orders (merchant_id, order_id)
	);
	CREATE INDEX events_due ON events (merchant_id, next_try_at) WHERE delivery = 'pending';
	CREATE INDEX events_by_merchant ON events (merchant_id, created_at, id);
	CREATE TABLE deliveries (
		event_id    TEXT NOT NULL REFERENCES events (id),
		try         INTEGER NOT NULL CHECK (try >= 1),
		at          BIGINT NOT NULL,
		code        INTEGER NOT NULL,
		duration_ms BIGINT NOT NULL,
		error       TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (event_id, try)
	);`,

	// 3: the banks shoppers paid with most, per country, for the bank page.
	`CREATE INDEX attempts_completed ON attempts (country, updated_at) WHERE status = 'COMPLETED';`,

	// 4: short codes for the address a desktop's QR code carries to the
	// shopper's phone; target is the checkout's address, whose token is
	// sealed (encrypted with the app's key), kept minutes.
	`CREATE TABLE handoffs (
		code       TEXT PRIMARY KEY,
		target     TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	);
	CREATE INDEX handoffs_expiry ON handoffs (expires_at);`,
}

// migrate brings the schema up to date. Several instances may start at once
// on one PostgreSQL: an advisory lock held by the transaction makes them
// take turns, and each finds the steps the first one applied.
func (l *Ledger) migrate(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if l.dialect == postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7305870012)`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&done); err != nil {
		return err
	}
	if done > len(migrations) {
		return fmt.Errorf("the database is at schema version %d, newer than this program's %d: run the newer program", done, len(migrations))
	}
	for v := done + 1; v <= len(migrations); v++ {
		if err := execScript(ctx, tx, migrations[v-1]); err != nil {
			return fmt.Errorf("schema version %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, v, l.now().UnixMilli()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SchemaVersion is the schema version the database is at.
func (l *Ledger) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := l.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// execScript runs the statements of a migration one by one: not every
// driver takes several in one call. Migrations hold no semicolon inside a
// string, which keeps the split honest.
func execScript(ctx context.Context, tx *sql.Tx, script string) error {
	for _, stmt := range strings.Split(script, ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
