package ledger

import (
	"context"
	"database/sql"
	"errors"
)

// The modes a ledger is made in: by a start on the built-in sandbox
// provider (its demo merchant, its test payments), or by a live start. A
// sandbox ledger is never taken into live mode unawares, nor a live one
// given the sandbox's demo merchant.
const (
	ModeSandbox = "sandbox"
	ModeLive    = "live"
)

// ClaimMode records mode as the ledger's when it has none yet, and returns
// the mode it holds. A ledger older than this record is judged by its
// settings: the demo merchant, managed in the console, was only ever made
// by a sandbox start.
func (l *Ledger) ClaimMode(ctx context.Context, mode string) (string, error) {
	held, err := l.mode(ctx)
	if err != nil || held != "" {
		return held, err
	}
	var demo int
	if err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM merchants WHERE id = 'demo' AND managed = 'console'`).Scan(&demo); err != nil {
		return "", err
	}
	if demo > 0 {
		mode = ModeSandbox
	}
	if _, err := l.db.ExecContext(ctx, `INSERT INTO deployment (id, mode, made_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`,
		mode, l.now().UnixMilli()); err != nil {
		return "", err
	}
	// Another instance may have claimed it first: its word holds.
	return l.mode(ctx)
}

func (l *Ledger) mode(ctx context.Context) (string, error) {
	var mode string
	err := l.db.QueryRowContext(ctx, `SELECT mode FROM deployment WHERE id = 1`).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return mode, err
}
