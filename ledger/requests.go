package ledger

import (
	"context"
	"log/slog"
	"time"
)

// APIRequest is one request of a merchant's server to the API, as its
// developers see it for debugging: the method, the route's pattern, the
// answer's status and when; never a body, a query or an id.
type APIRequest struct {
	MerchantID string
	At         time.Time
	Method     string
	Route      string
	Status     int
}

// RequestLog writes merchants' API requests to the ledger in the
// background, a batch at a time, so that no request waits for it. When the
// ledger falls behind, requests beyond its buffer are not recorded.
type RequestLog struct {
	l  *Ledger
	ch chan APIRequest
}

// NewRequestLog is a log holding up to size requests not yet written.
func NewRequestLog(l *Ledger, size int) *RequestLog {
	return &RequestLog{l: l, ch: make(chan APIRequest, size)}
}

// Add hands a request to the log without waiting.
func (r *RequestLog) Add(req APIRequest) {
	select {
	case r.ch <- req:
	default:
	}
}

// Run writes what was added, every half second, until ctx ends.
func (r *RequestLog) Run(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var batch []APIRequest
		for len(batch) < cap(r.ch) {
			select {
			case req := <-r.ch:
				batch = append(batch, req)
				continue
			default:
			}
			break
		}
		if len(batch) == 0 {
			continue
		}
		if err := r.l.recordRequests(ctx, batch); err != nil && ctx.Err() == nil {
			log.Warn("API requests not recorded for the Developers page", "requests", len(batch), "err", err)
		}
	}
}

func (l *Ledger) recordRequests(ctx context.Context, batch []APIRequest) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, req := range batch {
		if _, err := tx.ExecContext(ctx, `INSERT INTO api_requests (merchant_id, at, method, route, status) VALUES ($1, $2, $3, $4, $5)`,
			req.MerchantID, req.At.UnixMilli(), req.Method, req.Route, req.Status); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// RecentAPIRequests lists a merchant's latest API requests, newest first.
func (l *Ledger) RecentAPIRequests(ctx context.Context, merchantID string, limit int) ([]APIRequest, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT merchant_id, at, method, route, status FROM api_requests
		WHERE merchant_id = $1 ORDER BY id DESC LIMIT $2`, merchantID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []APIRequest
	for rows.Next() {
		var r APIRequest
		var at int64
		if err := rows.Scan(&r.MerchantID, &at, &r.Method, &r.Route, &r.Status); err != nil {
			return nil, err
		}
		r.At = time.UnixMilli(at)
		list = append(list, r)
	}
	return list, rows.Err()
}
