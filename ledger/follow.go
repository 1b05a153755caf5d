package ledger

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"time"
)

// Tier is how much a status read of an attempt can tell, which decides
// who is read first when the deployment's read budget is short.
type Tier int

const (
	// Fresh attempts are read first: never read yet, of unknown outcome,
	// or begun at the bank in the last half hour (a shopper at the bank,
	// a merchant waiting).
	Fresh Tier = 0
	// Settled attempts are the rest: never opened at the bank after their
	// first read (NOT_FOUND), or begun long ago. Their reads wait for
	// fresh ones and are spaced out when the budget is short.
	Settled Tier = 1
)

// Due is an attempt claimed for a read, with when the read was due.
type Due struct {
	Attempt
	At   time.Time
	Tier Tier
}

// ClaimDue leases to owner, for lease, up to limit attempts of tier whose
// read is due, the longest due first: while the lease holds no other
// instance reads them, and when an instance dies its leases run out and
// another takes the attempts over.
func (l *Ledger) ClaimDue(ctx context.Context, owner string, lease time.Duration, tier Tier, limit int) ([]Due, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := l.now().UnixMilli()
	rows, err := l.db.QueryContext(ctx, `UPDATE attempts SET lease_owner = $1, lease_until = $2
		WHERE upstream_id IN (SELECT upstream_id FROM attempts
			WHERE state IN ('open', 'unknown') AND follow_tier = $3 AND next_check_at <= $4 AND lease_until < $4
			ORDER BY next_check_at LIMIT $5`+l.skipLocked()+`)
		AND lease_until < $4
		RETURNING `+attemptColumns+`, next_check_at`, owner, now+lease.Milliseconds(), int(tier), now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Due
	for rows.Next() {
		var at int64
		a, err := scanAttempt(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &at)...) }))
		if err != nil {
			return nil, err
		}
		list = append(list, Due{Attempt: a, At: time.UnixMilli(at), Tier: tier})
	}
	// RETURNING keeps no order: read the longest due first.
	slices.SortFunc(list, func(a, b Due) int { return a.At.Compare(b.At) })
	return list, rows.Err()
}

// Checked ends owner's lease on an attempt and sets when, and in which
// tier, it is read next. It reports false when the lease was lost (it ran
// out and another instance took the attempt).
func (l *Ledger) Checked(ctx context.Context, upstreamID, owner string, next time.Time, tier Tier) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE attempts SET next_check_at = $1, follow_tier = $2, lease_owner = '', lease_until = 0
		WHERE upstream_id = $3 AND lease_owner = $4`, next.UnixMilli(), int(tier), upstreamID, owner)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReadElsewhere records a status read made outside the follower (the
// shopper's status page, the status API, the console's check): it counts
// as the attempt's read, so the follower's next one moves to next instead
// of coming on top. An attempt a follower holds is left to it.
func (l *Ledger) ReadElsewhere(ctx context.Context, upstreamID string, next time.Time, tier Tier) error {
	_, err := l.db.ExecContext(ctx, `UPDATE attempts SET next_check_at = $1, follow_tier = $2
		WHERE upstream_id = $3 AND state IN ('open', 'unknown') AND lease_until < $4`,
		next.UnixMilli(), int(tier), upstreamID, l.now().UnixMilli())
	return err
}

// NextRead tells when an attempt is read next and in which tier; Never
// for an attempt no longer followed.
func (l *Ledger) NextRead(ctx context.Context, upstreamID string) (time.Time, Tier, error) {
	var next int64
	var tier int
	var state State
	err := l.db.QueryRowContext(ctx, `SELECT next_check_at, follow_tier, state FROM attempts WHERE upstream_id = $1`, upstreamID).
		Scan(&next, &tier, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return Never, 0, ErrNotFound
	}
	if err != nil || state != Open && state != Unknown {
		return Never, Tier(tier), err
	}
	return time.UnixMilli(next), Tier(tier), nil
}

// TakeReads takes up to want status reads from the deployment's budget, a
// token bucket in the ledger filled at rate reads a second and holding at
// most burst, and returns how many it got. spent are reads made since the
// last call outside the follower: they are taken first, even into debt,
// which the bucket pays back before it gives the follower more. Every
// instance takes from the one bucket, so together they read at rate.
func (l *Ledger) TakeReads(ctx context.Context, want, spent int, rate, burst float64) (int, error) {
	ctx, span := l.span(ctx, "TakeReads")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var tokens float64
	var at int64
	if err := tx.QueryRowContext(ctx, `SELECT tokens, at FROM follow_budget WHERE id = 1`+l.forUpdate()).Scan(&tokens, &at); err != nil {
		return 0, err
	}
	now := l.now().UnixMilli()
	switch {
	case at == 0:
		tokens = burst // never used: full
	case now > at:
		tokens += float64(now-at) / 1000 * rate
	}
	tokens = min(tokens, burst) - float64(spent)
	got := 0
	if tokens >= 1 {
		got = min(want, int(math.Floor(tokens)))
	}
	tokens -= float64(got)
	if _, err := tx.ExecContext(ctx, `UPDATE follow_budget SET tokens = $1, at = $2 WHERE id = 1`, tokens, max(now, at)); err != nil {
		return 0, err
	}
	return got, tx.Commit()
}
