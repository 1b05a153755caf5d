package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Tier is how much a status read of an attempt can tell, which decides
// who is read first when the deployment's read budget is short.
type Tier int

const (
	// Fresh attempts are read first, the newest first: a payment just
	// handed out, one whose outcome is unknown, one whose shopper is at the
	// bank or whose bank has just accepted it.
	Fresh Tier = 0
	// Settled attempts are the rest: never opened at the bank after their
	// first read (NOT_FOUND), or begun long ago with nothing moving since.
	// Their reads take what fresh ones leave of the budget, the nearest to
	// their bound first.
	Settled Tier = 1
)

// Next is when an attempt is read next: At when a read is wanted, By at
// the latest (its stage's bound), and its tier.
type Next struct {
	At, By time.Time
	Tier   Tier
}

// NotFollowed is the Next of an attempt that is read no more.
var NotFollowed = Next{At: Never, By: Never, Tier: Settled}

// Due is an attempt claimed for a read, with when the read was wanted and
// by when it had to come.
type Due struct {
	Attempt
	Next
}

// ClaimDue leases to owner, for lease, up to limit attempts of tier whose
// read is due: fresh ones the newest first, settled ones the nearest to
// their bound first. While the lease holds no other instance reads them,
// and when an instance dies its leases run out and another takes the
// attempts over.
func (l *Ledger) ClaimDue(ctx context.Context, owner string, lease time.Duration, tier Tier, limit int) ([]Due, error) {
	if tier == Fresh {
		// Few fresh attempts are due at once: found by when they are due.
		return l.claim(ctx, owner, lease, limit, `follow_tier = $3 AND next_check_at <= $4`, "created_at DESC", int(tier))
	}
	// Thousands of settled ones may be due: walked in the order of their
	// bound (attempts_bound_by_tier), which "+ 0" keeps the database from
	// trading for an index on when they are due and a sort of them all.
	return l.claim(ctx, owner, lease, limit, `follow_tier = $3 AND next_check_at + 0 <= $4`, "read_by", int(tier))
}

// ClaimNearBound leases to owner, for lease, up to limit attempts of any
// tier whose bound ends within the next within, the nearest first: reads
// that must come now to come in time.
func (l *Ledger) ClaimNearBound(ctx context.Context, owner string, lease, within time.Duration, limit int) ([]Due, error) {
	return l.claim(ctx, owner, lease, limit, `read_by >= $4 AND read_by <= $3`, "read_by", l.now().Add(within).UnixMilli())
}

// ClaimPastBound leases to owner, for lease, up to limit attempts of any
// tier whose bound has passed, the longest past first.
func (l *Ledger) ClaimPastBound(ctx context.Context, owner string, lease time.Duration, limit int) ([]Due, error) {
	return l.claim(ctx, owner, lease, limit, `read_by < $3`, "read_by", l.now().UnixMilli())
}

// BoundsWithin counts, for each of horizons (shortest first), the open
// attempts no instance holds whose bound ends from now to that horizon.
func (l *Ledger) BoundsWithin(ctx context.Context, horizons []time.Duration) ([]int, error) {
	if len(horizons) == 0 {
		return nil, nil
	}
	now := l.now().UnixMilli()
	var sums []string
	args := []any{now}
	for i, h := range horizons {
		sums = append(sums, fmt.Sprintf("COALESCE(SUM(CASE WHEN read_by <= $%d THEN 1 ELSE 0 END), 0)", i+2))
		args = append(args, now+h.Milliseconds())
	}
	counts := make([]int, len(horizons))
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	err := l.db.QueryRowContext(ctx, `SELECT `+strings.Join(sums, ", ")+` FROM attempts
		WHERE state IN ('open', 'unknown') AND read_by >= $1 AND read_by <= $`+fmt.Sprint(len(horizons)+1)+` AND lease_until < $1`,
		args...).Scan(dest...)
	return counts, err
}

// claim leases up to limit open attempts matching where (which may use $3,
// given as arg, and $4, now), in order.
func (l *Ledger) claim(ctx context.Context, owner string, lease time.Duration, limit int, where, order string, arg any) ([]Due, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := l.now().UnixMilli()
	// Prepared: an idle follower claims several times a second.
	rows, err := l.on(nil).QueryContext(ctx, `UPDATE attempts SET lease_owner = $1, lease_until = $2
		WHERE upstream_id IN (SELECT upstream_id FROM attempts
			WHERE state IN ('open', 'unknown') AND `+where+` AND lease_until < $4
			ORDER BY `+order+` LIMIT $5`+l.skipLocked()+`)
		AND lease_until < $4
		RETURNING `+attemptFields+`, next_check_at, read_by, follow_tier`, owner, now+lease.Milliseconds(), arg, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Due
	for rows.Next() {
		var at, by int64
		var d Due
		a, err := scanAttempt(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &at, &by, &d.Tier)...) }))
		if err != nil {
			return nil, err
		}
		d.Attempt, d.At, d.By = a, time.UnixMilli(at), time.UnixMilli(by)
		list = append(list, d)
	}
	// RETURNING keeps no order.
	if order == "read_by" {
		slices.SortFunc(list, func(a, b Due) int { return a.By.Compare(b.By) })
	} else {
		slices.SortFunc(list, func(a, b Due) int { return b.Created.Compare(a.Created) })
	}
	return list, rows.Err()
}

// Checked ends owner's lease on an attempt and sets its next read. It
// reports false when the lease was lost (it ran out and another instance
// took the attempt).
func (l *Ledger) Checked(ctx context.Context, upstreamID, owner string, next Next) (bool, error) {
	res, err := l.on(nil).ExecContext(ctx, `UPDATE attempts SET next_check_at = $1, read_by = $2, follow_tier = $3, lease_owner = '', lease_until = 0
		WHERE upstream_id = $4 AND lease_owner = $5`, next.At.UnixMilli(), next.By.UnixMilli(), int(next.Tier), upstreamID, owner)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release ends owner's lease on attempts it claimed but will not read now,
// keeping their schedule, so that any instance may claim them again.
func (l *Ledger) Release(ctx context.Context, owner string, list []Due) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	for i, d := range list {
		ids[i] = d.UpstreamID
	}
	in, args := inList(ids)
	_, err := l.db.ExecContext(ctx, `UPDATE attempts SET lease_owner = '', lease_until = 0
		WHERE upstream_id IN (`+in+`) AND lease_owner = $`+fmt.Sprint(len(ids)+1), append(args, owner)...)
	return err
}

// ReadElsewhere records a status read made outside the follower (the
// shopper's status page, the status API, the console's check): it counts
// as the attempt's read, so the follower's next one moves to next instead
// of coming on top. An attempt a follower holds is left to it.
func (l *Ledger) ReadElsewhere(ctx context.Context, upstreamID string, next Next) error {
	_, err := l.db.ExecContext(ctx, `UPDATE attempts SET next_check_at = $1, read_by = $2, follow_tier = $3
		WHERE upstream_id = $4 AND state IN ('open', 'unknown') AND lease_until < $5`,
		next.At.UnixMilli(), next.By.UnixMilli(), int(next.Tier), upstreamID, l.now().UnixMilli())
	return err
}

// NextRead tells when an attempt is read next; NotFollowed for an attempt
// no longer followed.
func (l *Ledger) NextRead(ctx context.Context, upstreamID string) (Next, error) {
	var at, by int64
	var tier int
	var state State
	err := l.db.QueryRowContext(ctx, `SELECT next_check_at, read_by, follow_tier, state FROM attempts WHERE upstream_id = $1`, upstreamID).
		Scan(&at, &by, &tier, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return NotFollowed, ErrNotFound
	}
	if err != nil || state != Open && state != Unknown {
		return NotFollowed, err
	}
	return Next{At: time.UnixMilli(at), By: time.UnixMilli(by), Tier: Tier(tier)}, nil
}

// TakeReads takes up to want status reads from the deployment's budget of
// rate reads a second, and returns the time the first may be made and how
// many it got: the k-th at first + k/rate. The ledger hands every instance
// its reads from one line of times spaced 1/rate apart (the next free one
// kept in follow_budget), so that together they never read faster than
// rate, over any second, however they interleave; a time is handed out only
// within horizon of now, and time left unused is not saved up for a burst.
// spent are reads made since the last call outside the follower: they take
// the next times first, even ahead of now, which the follower then waits
// out.
func (l *Ledger) TakeReads(ctx context.Context, want, spent int, rate float64, horizon time.Duration) (time.Time, int, error) {
	ctx, span := l.span(ctx, "TakeReads")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return time.Time{}, 0, err
	}
	defer tx.Rollback()
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT next_read FROM follow_budget WHERE id = 1`+l.forUpdate()).Scan(&next); err != nil {
		return time.Time{}, 0, err
	}
	interval := float64(time.Second.Microseconds()) / rate
	now := l.now().UnixMicro()
	first := float64(max(now, next)) + float64(spent)*interval
	got := 0
	if limit := float64(now + horizon.Microseconds()); first <= limit {
		got = min(want, int(math.Floor((limit-first)/interval))+1)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE follow_budget SET next_read = $1 WHERE id = 1`,
		int64(math.Ceil(first+float64(got)*interval))); err != nil {
		return time.Time{}, 0, err
	}
	return time.UnixMicro(int64(first)), got, tx.Commit()
}
