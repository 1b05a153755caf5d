package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ErrNoHandoff means no checkout is kept under a code: it never was, or
// its time is past.
var ErrNoHandoff = errors.New("ledger: no such handoff")

// PutHandoff keeps target, a checkout's address, under code until
// expires: the short address a desktop's QR code carries to the shopper's
// phone, short so that the code has few, large modules. Codes past their
// time are removed in the background (Prune).
func (l *Ledger) PutHandoff(ctx context.Context, code, target string, expires time.Time) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO handoffs (code, target, expires_at) VALUES ($1, $2, $3)`,
		code, target, expires.UnixMilli())
	return err
}

// Handoff returns the address kept under code, or ErrNoHandoff.
func (l *Ledger) Handoff(ctx context.Context, code string) (string, error) {
	var target string
	err := l.db.QueryRowContext(ctx, `SELECT target FROM handoffs WHERE code = $1 AND expires_at >= $2`,
		code, l.now().UnixMilli()).Scan(&target)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNoHandoff
	}
	return target, err
}
