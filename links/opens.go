package links

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paybybank/checkout/ledger"
)

// Opens counts the payers who open payment links, each browser once, and
// adds the counts to the ledger in the background: opening a link writes
// nothing on the payer's way, so that a mail scanner or a chat preview
// fetching an address many times costs a counter in memory, not a row.
type Opens struct {
	Ledger *ledger.Ledger
	// Every is how often the counts are added; DefaultOpensEvery when 0.
	Every time.Duration
	Log   *slog.Logger

	mu      sync.Mutex
	pending map[opensKey]int
	// seen are the browsers counted this hour, by link and visitor, so
	// that a browser keeping no cookie still counts once an hour.
	seen     map[string]struct{}
	seenHour int64
}

// maxSeen bounds the browsers remembered: past it the hour starts again.
const maxSeen = 100_000

// DefaultOpensEvery is how often an instance adds the opens it counted.
const DefaultOpensEvery = 2 * time.Second

type opensKey struct {
	link, merchant string
	hour           int64
}

// Add counts one payer opening link of merchant at, unless the same
// visitor (a digest of their address and browser) was counted for it this
// hour on this instance.
func (o *Opens) Add(merchantID, link, visitor string, at time.Time) {
	hour := ledger.HourOf(at)
	o.mu.Lock()
	defer o.mu.Unlock()
	if hour != o.seenHour || len(o.seen) >= maxSeen {
		o.seen, o.seenHour = map[string]struct{}{}, hour
	}
	if _, ok := o.seen[link+" "+visitor]; ok {
		return
	}
	o.seen[link+" "+visitor] = struct{}{}
	if o.pending == nil {
		o.pending = map[opensKey]int{}
	}
	o.pending[opensKey{link: link, merchant: merchantID, hour: hour}]++
}

// Run adds the counts every Every until ctx ends, then once more.
func (o *Opens) Run(ctx context.Context) {
	every := o.Every
	if every <= 0 {
		every = DefaultOpensEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			o.Flush(stop)
			cancel()
			return
		case <-t.C:
			o.Flush(ctx)
		}
	}
}

// Flush adds the counts taken so far; counts it could not add are kept
// for the next time.
func (o *Opens) Flush(ctx context.Context) {
	o.mu.Lock()
	taken := o.pending
	o.pending = nil
	o.mu.Unlock()
	if len(taken) == 0 {
		return
	}
	list := make([]ledger.LinkOpens, 0, len(taken))
	for k, n := range taken {
		list = append(list, ledger.LinkOpens{Link: k.link, Merchant: k.merchant, Hour: k.hour, Count: n})
	}
	if err := o.Ledger.AddLinkOpens(ctx, list); err != nil {
		o.log().WarnContext(ctx, "payment links: counting opens failed; kept for the next time", "err", err)
		o.mu.Lock()
		if o.pending == nil {
			o.pending = map[opensKey]int{}
		}
		for k, n := range taken {
			o.pending[k] += n
		}
		o.mu.Unlock()
	}
}

func (o *Opens) log() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.Default()
}
