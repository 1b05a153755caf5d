package payment

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
)

// Budget is the deployment's status reads at the provider: FOLLOW_RATE a
// second for every instance together (docs/operate.md), kept as a token
// bucket in the ledger. The follower takes its reads from it; reads the
// app makes anyway (a shopper's status page, the status API, the console's
// check) are charged to it too, so that the provider never sees more than
// the rate in all.
type Budget struct {
	Ledger *ledger.Ledger
	// Rate is the reads per second of the whole deployment.
	Rate rate.Limit
	// spent counts reads made outside the follower since the bucket was
	// last charged.
	spent atomic.Int64
	// stretch (float64 bits) is how many times their usual interval
	// settled attempts wait between reads: more than 1 while the budget
	// is short, so that they are read less often instead of late.
	stretch atomic.Uint64
}

// DefaultFollowRate is FOLLOW_RATE's default.
const DefaultFollowRate = rate.Limit(20)

func (b *Budget) rate() float64 { return float64(cmp.Or(b.Rate, DefaultFollowRate)) }

// burst is the most reads the bucket holds: half a second's, so that the
// deployment keeps to its rate within a few percent over any ten seconds.
func (b *Budget) burst() float64 { return max(1, b.rate()/2) }

// Spent charges one read made outside the follower. A nil Budget counts
// nothing.
func (b *Budget) Spent() {
	if b != nil {
		b.spent.Add(1)
	}
}

// Unpaid are the reads made outside the follower not yet charged to the
// ledger's bucket: the follower charges them when it next takes reads.
func (b *Budget) Unpaid() int64 { return b.spent.Load() }

// Stretch is how many times their usual interval settled attempts wait
// between reads now; 1 while the budget suffices.
func (b *Budget) Stretch() float64 {
	if b == nil {
		return 1
	}
	if s := math.Float64frombits(b.stretch.Load()); s > 1 {
		return s
	}
	return 1
}

func (b *Budget) setStretch(s float64) { b.stretch.Store(math.Float64bits(s)) }

// take takes up to want reads, charging the reads spent elsewhere first.
func (b *Budget) take(ctx context.Context, want int) (int, error) {
	spent := int(b.spent.Swap(0))
	got, err := b.Ledger.TakeReads(ctx, want, spent, b.rate(), b.burst())
	if err != nil {
		b.spent.Add(int64(spent))
	}
	return got, err
}

// Follower reads every attempt that is not final from the provider until
// it is final, since the provider calls nobody back (docs/provider.md):
// shoppers who never come back from the bank still have their payment
// recorded, and their merchant told. Several
// instances follow together: each attempt is leased to one at a time, a
// dead instance's leases run out for another to take, and all take their
// reads from one Budget. Which attempt is read when is schedule's rule.
type Follower struct {
	Service *Service
	// Merchant finds an attempt's merchant (for its provider key).
	Merchant func(id string) (*merchant.Merchant, bool)
	// Owner names this instance in leases.
	Owner string
	// Budget is the deployment's reads. When nil, the follower makes one
	// of Rate reads a second if Rate is set, or else takes the Service's.
	Budget *Budget
	// Rate is the reads per second of a Follower without a Budget.
	Rate rate.Limit
	// Lease is how long a claimed attempt is this instance's.
	Lease time.Duration
	// Idle is the pause when nothing is due.
	Idle time.Duration
	// Checked, when set, is told of each attempt read and how late past
	// its schedule the read came (for metrics).
	Checked func(late time.Duration)
	Log     *slog.Logger
}

// Default pace of a Follower.
const (
	DefaultFollowLease = 30 * time.Second
	DefaultFollowIdle  = time.Second
	// followFor is how long an attempt is followed: the provider cancels
	// a payment left in progress after 5 days.
	followFor = 6 * 24 * time.Hour
	// maxStretch bounds how far settled attempts' intervals stretch.
	maxStretch = 100
	// stretchAbove is the lateness of settled reads past which their
	// intervals stretch; below stretchBelow, with nothing more due, they
	// shrink back.
	stretchAbove = 10 * time.Second
	stretchBelow = 2 * time.Second
)

// schedule is when attempt a, just read at now (its Status as read), is
// read next, and in which tier:
//
//   - an attempt begun at the bank (any status but NOT_FOUND), or whose
//     status is not known yet, is fresh: read every 5 s for its first 2
//     minutes and every 30 s to half an hour; after that it is settled and
//     read every 5 minutes to 6 hours, then every half hour;
//   - an attempt still NOT_FOUND after its first read (the shopper never
//     opened the bank's page) is settled, and read after as long as it has
//     lived: at 10 s, 20 s, 40 s… and at most every half hour;
//   - settled intervals are multiplied by stretch while the budget is
//     short; fresh attempts are always read first;
//   - an attempt is followed for 6 days, and then no more.
func schedule(a ledger.Attempt, now time.Time, stretch float64) (time.Time, ledger.Tier) {
	age := now.Sub(a.Created)
	if age >= followFor {
		return ledger.Never, ledger.Settled
	}
	var interval time.Duration
	tier := ledger.Settled
	switch {
	case pisclient.Status(a.Status) == pisclient.StatusNotFound && a.State == ledger.Open:
		interval = min(max(age, 10*time.Second), 30*time.Minute)
	case age < 2*time.Minute:
		interval, tier = 5*time.Second, ledger.Fresh
	case age < 30*time.Minute:
		interval, tier = 30*time.Second, ledger.Fresh
	case age < 6*time.Hour:
		interval = 5 * time.Minute
	default:
		interval = 30 * time.Minute
	}
	if tier == ledger.Settled {
		interval = time.Duration(float64(interval) * max(1, stretch))
	}
	return now.Add(interval), tier
}

// Run follows until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	switch {
	case f.Budget != nil:
	case f.Rate > 0 || f.Service.Budget == nil:
		f.Budget = &Budget{Ledger: f.Service.Ledger, Rate: f.Rate}
	default:
		f.Budget = f.Service.Budget
	}
	// The budget hands out reads by the half second; the limiter spreads
	// this instance's over it.
	pace := rate.NewLimiter(rate.Limit(f.Budget.rate()), 1)
	for ctx.Err() == nil {
		n, err := f.round(ctx, pace)
		if err != nil && ctx.Err() == nil {
			f.Log.Warn("follower: claiming attempts", "err", err)
		}
		if n == 0 {
			// Charge the reads made elsewhere while nothing was due.
			if _, err := f.Budget.take(ctx, 0); err != nil && ctx.Err() == nil {
				f.Log.Warn("follower: charging the read budget", "err", err)
			}
			sleep(ctx, cmp.Or(f.Idle, DefaultFollowIdle))
		}
	}
}

// round claims what the budget lets it read now, fresh attempts first,
// reads each once and returns how many it claimed.
func (f *Follower) round(ctx context.Context, pace *rate.Limiter) (int, error) {
	want := min(50, int(f.Budget.burst()))
	claimed, settledAsked, err := f.claim(ctx, want)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	for got := 0; got < len(claimed); {
		n, err := f.Budget.take(ctx, len(claimed)-got)
		if err != nil {
			// The leases run out and the attempts are claimed again.
			return len(claimed), err
		}
		if got += n; got < len(claimed) {
			wait := time.Duration(float64(len(claimed)-got) / f.Budget.rate() * float64(time.Second))
			if sleep(ctx, wait) != nil {
				return len(claimed), nil
			}
		}
	}
	var settled int
	var late time.Duration
	for _, d := range claimed {
		if err := pace.Wait(ctx); err != nil {
			return len(claimed), nil
		}
		if d.Tier == ledger.Settled {
			settled++
			late = max(late, f.Service.now().Sub(d.At))
		}
		f.check(ctx, d)
	}
	f.adjust(settled, settledAsked, late)
	return len(claimed), nil
}

// claim leases up to want due attempts: fresh ones first, but a fifth of
// the round is kept for settled ones, which would otherwise never be read
// while fresh ones fill the budget. It also returns how many settled ones
// it asked for.
func (f *Follower) claim(ctx context.Context, want int) ([]ledger.Due, int, error) {
	lease := cmp.Or(f.Lease, DefaultFollowLease)
	l := f.Service.Ledger
	reserve := max(1, want/5)
	fresh, err := l.ClaimDue(ctx, f.Owner, lease, ledger.Fresh, want-reserve)
	if err != nil {
		return nil, 0, err
	}
	asked := want - len(fresh)
	settled, err := l.ClaimDue(ctx, f.Owner, lease, ledger.Settled, asked)
	if err != nil {
		return fresh, asked, err
	}
	claimed := append(fresh, settled...)
	if more := want - len(claimed); more > 0 && len(fresh) == want-reserve {
		extra, err := l.ClaimDue(ctx, f.Owner, lease, ledger.Fresh, more)
		if err != nil {
			return claimed, asked, err
		}
		claimed = append(claimed, extra...)
	}
	return claimed, asked, nil
}

// adjust stretches settled attempts' intervals while their reads come late,
// and lets them shrink back when the budget has room again.
func (f *Follower) adjust(settled, asked int, late time.Duration) {
	s := f.Budget.Stretch()
	switch {
	case late > stretchAbove:
		s = min(s*1.25, maxStretch)
	case settled < asked && late < stretchBelow:
		s = max(1, s*0.9)
	default:
		return
	}
	f.Budget.setStretch(s)
}

// check reads one attempt and schedules its next read.
func (f *Follower) check(ctx context.Context, d ledger.Due) {
	a := d.Attempt
	next, tier := ledger.Never, ledger.Settled
	if m, ok := f.Merchant(a.MerchantID); ok {
		provider := f.Service.ProviderFor(m)
		if a.State == ledger.Unknown {
			f.Service.settle(ctx, provider, &a, false)
		} else {
			f.Service.refresh(ctx, provider, &a, false)
		}
		next, tier = schedule(a, f.Service.now(), f.Budget.Stretch())
	}
	if f.Checked != nil {
		f.Checked(max(0, f.Service.now().Sub(d.At)))
	}
	if ok, err := f.Service.Ledger.Checked(context.WithoutCancel(ctx), a.UpstreamID, f.Owner, next, tier); err != nil || !ok {
		f.Log.Warn("follower: the lease on an attempt ran out before its check was recorded", "attempt", a.UpstreamID, "err", err)
	}
}
