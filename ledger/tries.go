package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Counted tries: a sign-in's password, a two-step code, an invitation's or
// an account's password. Each try is reserved here before it is checked, in
// one statement that no other instance can interleave with, so that however
// many arrive at once no more than the limit are ever checked in a window.
// A try that turned out right is given back; a wrong one stays counted.

// Tries is a key's state: the tries taken in the window that started at
// Start, and the lock (with how many locks came before it) that refuses
// every try until LockedUntil.
type Tries struct {
	Start       time.Time
	Used        int
	Strikes     int
	LockedUntil time.Time
}

// ReserveTry takes one try under key at now, unless limit tries were taken
// in the window (of length window) or the key is locked. When refused, it
// returns the key's state, to say when to try again.
func (l *Ledger) ReserveTry(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (bool, Tries, error) {
	ctx, span := l.span(ctx, "ReserveTry")
	defer span.End()
	at := now.UnixMilli()
	if _, err := l.db.ExecContext(ctx, `INSERT INTO console_tries (key, window_start, used, strikes, locked_until, updated_at)
		VALUES ($1, $2, 0, 0, 0, $2) ON CONFLICT (key) DO NOTHING`, key, at); err != nil {
		return false, Tries{}, err
	}
	// A window over starts again with this try; within it, a try is taken
	// only while fewer than limit were.
	var start int64
	err := l.db.QueryRowContext(ctx, `UPDATE console_tries SET
			used = CASE WHEN window_start <= $2 - $3 THEN 1 ELSE used + 1 END,
			window_start = CASE WHEN window_start <= $2 - $3 THEN $2 ELSE window_start END,
			updated_at = $2
		WHERE key = $1 AND locked_until <= $2 AND (window_start <= $2 - $3 OR used < $4)
		RETURNING window_start`,
		key, at, window.Milliseconds(), limit).Scan(&start)
	switch {
	case err == nil:
		// The window the try was taken in: only a try of that window is
		// given back.
		return true, Tries{Start: time.UnixMilli(start)}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return false, Tries{}, err
	}
	t, err := l.TriesOf(ctx, key)
	return false, t, err
}

// GiveBackTry returns a try reserved under key in the window that started
// at start, when it turned out right: only wrong tries count, and a try of
// an earlier window never lowers the count of a later one.
func (l *Ledger) GiveBackTry(ctx context.Context, key string, start time.Time) error {
	_, err := l.db.ExecContext(ctx, `UPDATE console_tries SET used = used - 1 WHERE key = $1 AND used > 0 AND window_start = $2`,
		key, start.UnixMilli())
	return err
}

// ClearTries forgets a key's tries and locks: after a whole sign-in.
func (l *Ledger) ClearTries(ctx context.Context, key string) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM console_tries WHERE key = $1`, key)
	return err
}

// LockTries locks key until now plus lockFor(strikes), strikes being the
// locks before this one, unless it is locked already. It reports whether
// this call started the lock (so that the person is told once) and until
// when the key is locked.
func (l *Ledger) LockTries(ctx context.Context, key string, now time.Time, lockFor func(strikes int) time.Duration) (bool, time.Time, error) {
	t, err := l.TriesOf(ctx, key)
	if err != nil {
		return false, time.Time{}, err
	}
	if t.LockedUntil.After(now) {
		return false, t.LockedUntil, nil
	}
	until := now.Add(lockFor(t.Strikes))
	res, err := l.db.ExecContext(ctx, `UPDATE console_tries SET strikes = strikes + 1, locked_until = $3, used = 0, window_start = $4, updated_at = $4
		WHERE key = $1 AND strikes = $2 AND locked_until <= $4`, key, t.Strikes, until.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, time.Time{}, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, until, err
	}
	// Another request locked it meanwhile.
	t, err = l.TriesOf(ctx, key)
	return false, t.LockedUntil, err
}

// TriesOf is a key's state; zero when it has none.
func (l *Ledger) TriesOf(ctx context.Context, key string) (Tries, error) {
	var start, locked int64
	var t Tries
	err := l.db.QueryRowContext(ctx, `SELECT window_start, used, strikes, locked_until FROM console_tries WHERE key = $1`, key).
		Scan(&start, &t.Used, &t.Strikes, &locked)
	if errors.Is(err, sql.ErrNoRows) {
		return Tries{}, nil
	}
	t.Start, t.LockedUntil = time.UnixMilli(start), unixOrZero(locked)
	return t, err
}
