package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// prepared is query prepared once on the database, for statements every
// shopper's checkout runs: SQLite parses and plans a statement anew each
// time it is run unprepared, a seventh of the app's CPU under load.
func (l *Ledger) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := l.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := l.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := l.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// execer runs statements on the database or within a transaction (tx nil
// for the database), each prepared once.
type execer struct {
	l  *Ledger
	tx *sql.Tx
}

func (l *Ledger) on(tx *sql.Tx) execer { return execer{l: l, tx: tx} }

func (e execer) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if e.tx == nil {
		return e.l.prepared(ctx, query)
	}
	st, ok := e.l.stmts.Load(query)
	if !ok {
		// The transaction holds a connection, on SQLite the only one:
		// the statement is prepared beside it, for the next time, and
		// runs unprepared this once.
		if _, started := e.l.preparing.LoadOrStore(query, true); !started {
			go func() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				if _, err := e.l.prepared(ctx, query); err != nil {
					// An outage, say: the next use tries again.
					e.l.preparing.Delete(query)
				}
			}()
		}
		return nil, errNotPrepared
	}
	return e.tx.StmtContext(ctx, st.(*sql.Stmt)), nil
}

var errNotPrepared = errors.New("not prepared yet")

func (e execer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := e.stmt(ctx, query)
	switch {
	case errors.Is(err, errNotPrepared):
		return e.tx.ExecContext(ctx, query, args...)
	case err != nil:
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryRowContext is the row query gives; a statement not prepared runs
// unprepared.
func (e execer) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := e.stmt(ctx, query)
	if err != nil {
		if e.tx != nil {
			return e.tx.QueryRowContext(ctx, query, args...)
		}
		return e.l.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// QueryContext is the rows query gives; a statement not prepared runs
// unprepared.
func (e execer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := e.stmt(ctx, query)
	switch {
	case errors.Is(err, errNotPrepared) && e.tx != nil:
		return e.tx.QueryContext(ctx, query, args...)
	case err != nil:
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
