package ledger

import (
	"context"
	"log/slog"
	"time"
)

// Pruned counts the rows one Prune removed.
type Pruned struct {
	Events     int64
	Deliveries int64
	Handoffs   int64
}

// Total is every row removed.
func (p Pruned) Total() int64 { return p.Events + p.Deliveries + p.Handoffs }

// Prune removes, in one short transaction, up to batch events made before
// eventsBefore with their deliveries, and up to batch hand-off codes past
// their time. Orders, attempts and their history are money records and
// stay. Callers repeat it until it removes nothing: a batch holds its
// locks for milliseconds, never long enough to keep a shopper waiting.
func (l *Ledger) Prune(ctx context.Context, eventsBefore time.Time, batch int) (Pruned, error) {
	var p Pruned
	ctx, span := l.span(ctx, "Prune")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return p, err
	}
	defer tx.Rollback()
	ids, err := l.textsIn(ctx, tx, `SELECT id FROM events WHERE created_at < $1 ORDER BY created_at LIMIT $2`+l.skipLocked(),
		eventsBefore.UnixMilli(), batch)
	if err != nil {
		return p, err
	}
	if len(ids) > 0 {
		in, args := inList(ids)
		res, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE event_id IN (`+in+`)`, args...)
		if err != nil {
			return p, err
		}
		p.Deliveries, _ = res.RowsAffected()
		if res, err = tx.ExecContext(ctx, `DELETE FROM events WHERE id IN (`+in+`)`, args...); err != nil {
			return p, err
		}
		p.Events, _ = res.RowsAffected()
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM handoffs WHERE code IN (SELECT code FROM handoffs WHERE expires_at < $1 LIMIT $2)`,
		l.now().UnixMilli(), batch)
	if err != nil {
		return p, err
	}
	p.Handoffs, _ = res.RowsAffected()
	// API requests older than a week.
	if _, err := tx.ExecContext(ctx, `DELETE FROM api_requests WHERE id IN (SELECT id FROM api_requests WHERE at < $1 LIMIT $2)`,
		l.now().Add(-7*24*time.Hour).UnixMilli(), batch); err != nil {
		return p, err
	}
	// Counted tries of keys quiet for a day and not locked: their strikes
	// are forgiven.
	if _, err := tx.ExecContext(ctx, `DELETE FROM console_tries WHERE updated_at < $1 AND locked_until < $2`,
		l.now().Add(-24*time.Hour).UnixMilli(), l.now().UnixMilli()); err != nil {
		return p, err
	}
	// WebAuthn ceremonies nobody finished.
	if _, err := tx.ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE expires_at < $1`, l.now().UnixMilli()); err != nil {
		return p, err
	}
	// Console sessions past their end: their device and address go too.
	if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE id IN (SELECT id FROM console_sessions WHERE ends_at < $1 LIMIT $2)`,
		l.now().UnixMilli(), batch); err != nil {
		return p, err
	}
	return p, tx.Commit()
}

// Retention says what KeepPruned removes and how.
type Retention struct {
	// Events is how long events and their deliveries are kept.
	Events time.Duration
	// Every is how often a pass runs; Batch the rows of one transaction;
	// Pause the rest between two batches, which leaves the database to
	// everyone else.
	Every time.Duration
	Batch int
	Pause time.Duration
	// Removed, when set, is told what each batch removed.
	Removed func(Pruned)
}

// DefaultEventRetention is EVENT_RETENTION's default.
const DefaultEventRetention = 90 * 24 * time.Hour

// KeepPruned runs Prune in batches until nothing is left to remove, at once
// and then every r.Every, until ctx ends. Instances that prune at once
// take different rows (PostgreSQL) or turns (SQLite).
func (l *Ledger) KeepPruned(ctx context.Context, r Retention, log *slog.Logger) {
	t := time.NewTicker(r.Every)
	defer t.Stop()
	for {
		l.pruneAll(ctx, r, log)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneAll runs Prune until a batch comes back short, resting r.Pause
// between two.
func (l *Ledger) pruneAll(ctx context.Context, r Retention, log *slog.Logger) {
	// The payers' addresses of links past their expiry go first: they
	// are kept no longer than the link can be sent.
	for {
		n, err := l.ForgetEndedEmails(ctx, r.Batch)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("retention: forgetting expired links' e-mail addresses failed, trying again later", "err", err)
			}
			break
		}
		if n < int64(r.Batch) {
			break
		}
	}
	for {
		p, err := l.Prune(ctx, l.now().Add(-r.Events), r.Batch)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("retention: removing old events failed, trying again later", "err", err)
			}
			return
		}
		if r.Removed != nil {
			r.Removed(p)
		}
		if p.Events < int64(r.Batch) && p.Handoffs < int64(r.Batch) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.Pause):
		}
	}
}
