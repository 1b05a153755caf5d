package payment

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
)

// Follower reads every attempt that is not final from the provider, on a
// schedule that starts at seconds and grows to half an hour, until it is
// final (DESIGN.md section 7): shoppers who never come back from the bank
// still have their payment recorded, and their merchant told. Several
// instances follow together: each attempt is leased to one at a time, and
// a dead instance's leases run out for another to take.
type Follower struct {
	Service *Service
	// Merchant finds an attempt's merchant (for its provider key).
	Merchant func(id string) (*merchant.Merchant, bool)
	// Owner names this instance in leases.
	Owner string
	// Rate bounds this instance's status reads per second, so that a
	// backlog cannot hammer the provider.
	Rate rate.Limit
	// Lease is how long a claimed attempt is this instance's.
	Lease time.Duration
	// Idle is the pause when nothing is due.
	Idle time.Duration
	// Checked, when set, is told of each attempt read (for metrics).
	Checked func()
	Log     *slog.Logger
}

// Default pace of a Follower.
const (
	DefaultFollowRate  = rate.Limit(20)
	DefaultFollowLease = 30 * time.Second
	DefaultFollowIdle  = time.Second
	followBatch        = 20
	// followFor is how long an attempt is followed: the provider cancels
	// a payment left in progress after 5 days.
	followFor = 6 * 24 * time.Hour
)

// nextCheck is when an attempt created at created is read again after a
// read at now: every 5 s for its first 2 minutes, every 30 s to half an
// hour, every 5 minutes to 6 hours, then every half hour until it is 6
// days old, and then no more.
func nextCheck(created, now time.Time) time.Time {
	age := now.Sub(created)
	switch {
	case age < 2*time.Minute:
		return now.Add(5 * time.Second)
	case age < 30*time.Minute:
		return now.Add(30 * time.Second)
	case age < 6*time.Hour:
		return now.Add(5 * time.Minute)
	case age < followFor:
		return now.Add(30 * time.Minute)
	}
	return ledger.Never
}

// Run follows until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	limiter := rate.NewLimiter(cmp.Or(f.Rate, DefaultFollowRate), 1)
	for ctx.Err() == nil {
		n, err := f.round(ctx, limiter)
		if err != nil && ctx.Err() == nil {
			f.Log.Warn("follower: claiming attempts", "err", err)
		}
		if n == 0 {
			sleep(ctx, cmp.Or(f.Idle, DefaultFollowIdle))
		}
	}
}

// round claims a batch of due attempts and reads each once; it returns how
// many it claimed.
func (f *Follower) round(ctx context.Context, limiter *rate.Limiter) (int, error) {
	lease := cmp.Or(f.Lease, DefaultFollowLease)
	batch := min(followBatch, max(1, int(float64(cmp.Or(f.Rate, DefaultFollowRate))*lease.Seconds()/2)))
	claimed, err := f.Service.Ledger.ClaimAttempts(ctx, f.Owner, lease, batch)
	if err != nil {
		return 0, err
	}
	for _, a := range claimed {
		if err := limiter.Wait(ctx); err != nil {
			return len(claimed), nil
		}
		f.check(ctx, a)
	}
	return len(claimed), nil
}

// check reads one attempt and schedules its next read.
func (f *Follower) check(ctx context.Context, a ledger.Attempt) {
	next := ledger.Never
	if m, ok := f.Merchant(a.MerchantID); ok {
		provider := f.Service.ProviderFor(m)
		if a.State == ledger.Unknown {
			f.Service.settle(ctx, provider, a)
		} else {
			f.Service.refresh(ctx, provider, &a)
		}
		next = nextCheck(a.Created, f.Service.now())
	}
	if f.Checked != nil {
		f.Checked()
	}
	if ok, err := f.Service.Ledger.Checked(context.WithoutCancel(ctx), a.UpstreamID, f.Owner, next); err != nil || !ok {
		f.Log.Warn("follower: the lease on an attempt ran out before its check was recorded", "attempt", a.UpstreamID, "err", err)
	}
}
