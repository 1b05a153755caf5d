package web

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// RetryAfterOutage is the Retry-After, in seconds, of an answer given while
// the payments ledger does not answer.
const RetryAfterOutage = 5

// Pinger is the payments ledger as Outage asks it: whether it answers, and
// whether it was closed on purpose (which is no outage).
type Pinger interface {
	Ping(ctx context.Context) error
	Closed() bool
}

// Outage knows whether the payments ledger answers, for every audience of
// one app: a request that failed on our side is told as a moment's trouble
// (503) when the ledger does not answer a ping. The outage is logged once
// when it begins and once when it ends, with how long it lasted and how
// many requests it refused, never once per request.
type Outage struct {
	Ledger Pinger
	// Where names the ledger in the log, without credentials.
	Where string
	Log   *slog.Logger

	down    atomic.Bool
	refused atomic.Int64
}

// pingTimeout bounds the ping that tells an outage from another fault.
const pingTimeout = time.Second

// Down reports whether the request's failure (err) comes from the ledger
// not answering, and starts watching for its return the first time.
func (o *Outage) Down(c echo.Context, err error) bool {
	if o == nil || o.Ledger == nil || o.Ledger.Closed() {
		return false
	}
	if o.down.Load() {
		o.refused.Add(1)
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), pingTimeout)
	defer cancel()
	if o.Ledger.Ping(ctx) == nil || o.Ledger.Closed() {
		return false
	}
	o.refused.Add(1)
	if o.down.CompareAndSwap(false, true) {
		Logger(c, o.Log).Error("the payments ledger does not answer: people and programs are asked to try again in a moment (503) until it does",
			"ledger", o.Where, "err", err)
		go o.watch(time.Now())
	}
	return true
}

// Known reports whether an outage is under way, so that a page need not
// ask the ledger again only to wait for it.
func (o *Outage) Known() bool { return o != nil && o.down.Load() }

// watch pings the ledger every second until it answers again (or is
// closed), then says so once.
func (o *Outage) watch(since time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		if o.Ledger.Closed() {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		err := o.Ledger.Ping(ctx)
		cancel()
		if err != nil {
			continue
		}
		o.Log.Warn("the payments ledger answers again", "ledger", o.Where,
			"down_for", time.Since(since).Round(time.Second).String(), "requests_refused", o.refused.Swap(0))
		break
	}
	o.down.Store(false)
}
