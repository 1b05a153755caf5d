package payment

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
)

// Budget is the deployment's status reads at the provider: FOLLOW_RATE a
// second for every instance together (docs/operate.md), handed out by the
// ledger one after another, 1/FOLLOW_RATE apart. The follower takes its
// reads from it; reads the app makes anyway (a shopper's status page, the
// status API, the console's check) are charged to it too, so that the
// provider never sees more than the rate in all.
type Budget struct {
	Ledger *ledger.Ledger
	// Rate is the reads per second of the whole deployment.
	Rate rate.Limit
	// spent counts reads made outside the follower since the bucket was
	// last charged.
	spent atomic.Int64
}

// DefaultFollowRate is FOLLOW_RATE's default.
const DefaultFollowRate = rate.Limit(20)

func (b *Budget) rate() float64 { return float64(cmp.Or(b.Rate, DefaultFollowRate)) }

// interval is the time between two reads of the deployment.
func (b *Budget) interval() time.Duration { return time.Duration(float64(time.Second) / b.rate()) }

// Spent charges one read made outside the follower. A nil Budget counts
// nothing.
func (b *Budget) Spent() {
	if b != nil {
		b.spent.Add(1)
	}
}

// Unpaid are the reads made outside the follower not yet charged to the
// ledger's budget: the follower charges them when it next takes reads.
func (b *Budget) Unpaid() int64 { return b.spent.Load() }

// take takes up to want reads due within the next roundTime, charging the
// reads spent elsewhere first, and returns when the first may be made and
// how many it got; the others follow interval apart.
func (b *Budget) take(ctx context.Context, want int) (time.Time, int, error) {
	spent := int(b.spent.Swap(0))
	first, got, err := b.Ledger.TakeReads(ctx, want, spent, b.rate(), roundTime)
	if err != nil {
		b.spent.Add(int64(spent))
	}
	return first, got, err
}

// Follower reads every attempt that is not final from the provider until
// it is final, since the provider calls nobody back (docs/provider.md):
// shoppers who never come back from the bank still have their payment
// recorded, and their merchant told. Several instances follow together:
// each attempt is leased to one at a time, a dead instance's leases run
// out for another to take, and all take their reads from one Budget. When
// each attempt is read is plan's rule; which due read goes first is
// claim's.
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
	// Idle is the pause after a round that found fewer reads due than it
	// could make.
	Idle time.Duration
	// Checked, when set, is told of each attempt read: how late past its
	// wanted time the read came, and how far past its bound (0 when in
	// time), for metrics.
	Checked func(late, pastBound time.Duration)
	Log     *slog.Logger
	// Sleep waits for d or until ctx ends; a real wait when nil. Tests
	// give one that moves their clock, with the Service's Now.
	Sleep func(ctx context.Context, d time.Duration) error
	// InFlight is how many reads this instance has under way at once;
	// DefaultFollowInFlight when 0. A real provider takes a while to
	// answer each.
	InFlight int
	// window is nearBound's last weighing, made at weighed.
	window  time.Duration
	weighed time.Time
	// lateShare is what claim owes, in parts of a read, to the attempts
	// past their bound.
	lateShare float64
	// reads are the reads under way, at most InFlight.
	reads    sync.WaitGroup
	inFlight chan struct{}
}

// Pace of a Follower.
const (
	DefaultFollowLease    = 30 * time.Second
	DefaultFollowIdle     = 100 * time.Millisecond
	DefaultFollowInFlight = 16
	// roundTime is the share of a second's budget one round claims: a read
	// that falls due during a round waits at most about that long.
	roundTime = 250 * time.Millisecond
	// maxRound bounds the reads of one round, whatever the rate.
	maxRound = 50
	// minNearBound is how near its bound a read always goes before any
	// other (see nearBound).
	minNearBound = 10 * time.Second
)

func (f *Follower) sleep(ctx context.Context, d time.Duration) error {
	if f.Sleep != nil {
		return f.Sleep(ctx, d)
	}
	return sleep(ctx, d)
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
	f.inFlight = make(chan struct{}, cmp.Or(f.InFlight, DefaultFollowInFlight))
	defer f.reads.Wait()
	for ctx.Err() == nil {
		n, full, err := f.round(ctx)
		if err != nil && ctx.Err() == nil {
			f.Log.Warn("follower: claiming attempts", "err", err)
		}
		if full {
			continue
		}
		// Nothing more to begin now: the reads under way end first.
		f.reads.Wait()
		if n < 0 {
			// The budget is spent: the next round's reads come in about
			// a round's time.
			f.sleep(ctx, roundTime)
			continue
		}
		if n == 0 && f.Budget.Unpaid() > 0 {
			// Charge the reads made elsewhere while nothing was due.
			if _, _, err := f.Budget.take(ctx, 0); err != nil && ctx.Err() == nil {
				f.Log.Warn("follower: charging the read budget", "err", err)
			}
		}
		f.sleep(ctx, cmp.Or(f.Idle, DefaultFollowIdle))
	}
}

// round claims what the budget may let it read in the next roundTime,
// takes that many reads' times from the budget, or as many as it can, the
// first claimed first, releases the others for any instance to claim
// again, and begins each read it kept at its time. Reads still under way
// go on while the next round claims. It returns how many it claimed (-1
// when the budget had no time left) and whether that was all it asked for.
func (f *Follower) round(ctx context.Context) (int, bool, error) {
	want := min(maxRound, max(2, int(f.Budget.rate()*roundTime.Seconds())))
	claimed, err := f.claim(ctx, want)
	if err != nil || len(claimed) == 0 {
		// Those claimed before the error are handed back, not left leased.
		f.release(ctx, claimed)
		return 0, false, err
	}
	first, got, err := f.Budget.take(ctx, len(claimed))
	if got < len(claimed) {
		// Nobody waits on a lease held for a read with no budget behind it.
		f.release(ctx, claimed[got:])
		claimed = claimed[:got]
	}
	if err != nil || got == 0 {
		return -1, false, err
	}
	for k, d := range claimed {
		if !f.begin(ctx, first.Add(time.Duration(k)*f.Budget.interval())) {
			// Stopping (a deploy, say), or the provider was slow: the
			// reads not begun are handed back now, not left leased to an
			// instance that is going, nor made all at once on top of the
			// next ones.
			f.release(ctx, claimed[k:])
			return k, false, nil
		}
		f.reads.Go(func() {
			defer func() { <-f.inFlight }()
			f.check(ctx, d)
		})
	}
	return len(claimed), len(claimed) == want, nil
}

// begin takes a place for a read among those under way and waits for the
// read's time, at. It reports false, the place given back, when ctx ends,
// or when at went by more than roundTime ago: the provider was slow (the
// reads under way held every place, or took the time), and a read made
// now would come back-to-back with the next ones.
func (f *Follower) begin(ctx context.Context, at time.Time) bool {
	select {
	case f.inFlight <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	wait := at.Sub(f.Service.now())
	if wait < -roundTime || wait > 0 && f.sleep(ctx, wait) != nil {
		<-f.inFlight
		return false
	}
	return true
}

// release hands back claimed attempts for any instance to claim again.
func (f *Follower) release(ctx context.Context, list []ledger.Due) {
	if err := f.Service.Ledger.Release(context.WithoutCancel(ctx), f.Owner, list); err != nil {
		f.Log.Warn("follower: releasing attempts", "err", err)
	}
}

// claim leases up to want due attempts, in order: a quarter of the round
// for those past their bound, the longest past first, so that no stream
// of reads near their bound, however long, leaves them unread for good;
// those whose bound is near, the nearest first, which can still be read in
// time; more of those past their bound, up to half the round, so that a
// backlog already late never holds up the newest payments; fresh
// attempts, the newest first; settled ones, the nearest to their bound
// first; and, if there is room, more of those past their bound.
func (f *Follower) claim(ctx context.Context, want int) ([]ledger.Due, error) {
	lease := cmp.Or(f.Lease, DefaultFollowLease)
	l := f.Service.Ledger
	window, err := f.nearBound(ctx)
	if err != nil {
		return nil, err
	}
	claimed := make([]ledger.Due, 0, want)
	// pastBound claims up to limit of those past their bound and tells
	// whether it had them all: more may be left.
	pastBound := func(limit int) (bool, error) {
		more, err := l.ClaimPastBound(ctx, f.Owner, lease, limit)
		claimed = append(claimed, more...)
		return len(more) == limit, err
	}
	// A quarter of the round: at low rates, when a round is of two or
	// three reads, a read every other round or so, the share carried on.
	f.lateShare += float64(want) / 4
	floor := int(f.lateShare)
	f.lateShare -= float64(floor)
	backlog, err := pastBound(floor)
	if err != nil {
		return claimed, err
	}
	near, err := l.ClaimNearBound(ctx, f.Owner, lease, window, want-len(claimed))
	claimed = append(claimed, near...)
	if err != nil {
		return claimed, err
	}
	if share := min(max(1, want/2)-floor, want-len(claimed)); backlog && share > 0 {
		if backlog, err = pastBound(share); err != nil {
			return claimed, err
		}
	}
	for _, tier := range []ledger.Tier{ledger.Fresh, ledger.Settled} {
		more, err := l.ClaimDue(ctx, f.Owner, lease, tier, want-len(claimed))
		claimed = append(claimed, more...)
		if err != nil {
			return claimed, err
		}
	}
	if backlog && len(claimed) < want {
		_, err = pastBound(want - len(claimed))
	}
	return claimed, err
}

// nearBound is how near its bound a read goes before any other: at least
// minNearBound, and as far ahead as the bounds ending there would take
// more than half the budget, as when many payments were made together.
// Reads by bound first are then begun early enough to all come in time.
// It is weighed again once a second.
func (f *Follower) nearBound(ctx context.Context) (time.Duration, error) {
	now := f.Service.now()
	if now.Sub(f.weighed) < time.Second {
		return f.window, nil
	}
	counts, err := f.Service.Ledger.BoundsWithin(ctx, horizons)
	if err != nil {
		return minNearBound, err
	}
	f.window, f.weighed = minNearBound, now
	for i, h := range horizons {
		if float64(counts[i]) > f.Budget.rate()*h.Seconds()/2 {
			f.window = h
		}
	}
	return f.window, nil
}

// horizons are the windows nearBound weighs.
var horizons = []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, 640 * time.Second}

// check reads one attempt and schedules its next read.
func (f *Follower) check(ctx context.Context, d ledger.Due) {
	a := d.Attempt
	next := ledger.NotFollowed
	if m, ok := f.Merchant(a.MerchantID); ok {
		provider := f.Service.ProviderFor(m)
		if a.State == ledger.Unknown {
			f.Service.settle(ctx, provider, &a, false)
		} else {
			f.Service.refresh(ctx, provider, &a, false)
		}
		next = plan(a, f.Service.now())
	}
	if f.Checked != nil {
		now := f.Service.now()
		f.Checked(max(0, now.Sub(d.At)), max(0, now.Sub(d.By)))
	}
	if ok, err := f.Service.Ledger.Checked(context.WithoutCancel(ctx), a.UpstreamID, f.Owner, next); err != nil || !ok {
		f.Log.Warn("follower: the lease on an attempt ran out before its check was recorded", "attempt", a.UpstreamID, "err", err)
	}
}
