package payment_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
)

// simClock is a clock the test moves: the time of a simulation in which
// the followers (and a shop making payments) are the players. Each
// player's Sleep waits until every player sleeps; then the clock jumps to
// the earliest wake-up and those players go on. Time never moves while a
// player works, so what a test sees does not depend on the machine's
// speed. The simulation ends (its context is cancelled) when the clock
// reaches end.
type simClock struct {
	mu      sync.Mutex
	now     time.Time
	end     time.Time
	players int
	asleep  []*sleeper
	stop    context.CancelFunc
}

type sleeper struct {
	until time.Time
	wake  chan struct{}
}

func newSimClock(start time.Time, d time.Duration, players int) (*simClock, context.Context) {
	ctx, stop := context.WithCancel(context.Background())
	return &simClock{now: start, end: start.Add(d), players: players, stop: stop}, ctx
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	s := &sleeper{until: c.now.Add(d), wake: make(chan struct{})}
	c.asleep = append(c.asleep, s)
	c.moveOn()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// moveOn jumps to the earliest wake-up once every player sleeps. Callers
// hold c.mu.
func (c *simClock) moveOn() {
	if len(c.asleep) == 0 || len(c.asleep) < c.players {
		return
	}
	next := slices.MinFunc(c.asleep, func(a, b *sleeper) int { return a.until.Compare(b.until) }).until
	if next.After(c.now) {
		c.now = next
	}
	if !c.now.Before(c.end) {
		c.stop()
	}
	c.asleep = slices.DeleteFunc(c.asleep, func(s *sleeper) bool {
		if s.until.After(c.now) {
			return false
		}
		close(s.wake)
		return true
	})
}

// set puts the clock at t, for a test making payments before the
// simulation begins.
func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// leave takes a player out of the simulation (its work is done).
func (c *simClock) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.players--
	c.moveOn()
}

// script is how the provider answers for one payment: the status it
// holds from each time after its creation on.
type script []struct {
	from   time.Duration
	status pisclient.Status
}

func (s script) at(age time.Duration) pisclient.Status {
	status := pisclient.StatusNotFound
	for _, step := range s {
		if age >= step.from {
			status = step.status
		}
	}
	return status
}

// read is one status read the provider answered.
type read struct {
	at     time.Time
	status pisclient.Status
}

// scriptedProvider answers status reads by each payment's script, at the
// simulation's time, and keeps every read.
type scriptedProvider struct {
	clock   *simClock
	mu      sync.Mutex
	scripts map[string]script
	made    map[string]time.Time
	reads   map[string][]read
}

func newScriptedProvider(clock *simClock) *scriptedProvider {
	return &scriptedProvider{clock: clock, scripts: map[string]script{}, made: map[string]time.Time{}, reads: map[string][]read{}}
}

func (p *scriptedProvider) CreatePayment(context.Context, pisclient.PaymentRequest) (*pisclient.Payment, error) {
	panic("not made here")
}

func (p *scriptedProvider) PaymentStatus(_ context.Context, id string) (*pisclient.PaymentStatus, error) {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.scripts[id].at(now.Sub(p.made[id]))
	p.reads[id] = append(p.reads[id], read{at: now, status: st})
	return &pisclient.PaymentStatus{MerchantOrderID: id, Status: st}, nil
}

func (p *scriptedProvider) allReads() map[string][]read {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads
}

// pay makes a payment handed out at the clock's time, answered by s;
// unknown leaves its create call's outcome unknown.
func (p *scriptedProvider) pay(t testing.TB, l *ledger.Ledger, id string, s script, unknown bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := l.OpenOrder(ctx, ledger.Order{MerchantID: merchant.DemoID, OrderID: id, Amount: "49.90", Currency: "EUR", ReturnURL: "https://shop.example/"}); err != nil {
		t.Error(err)
		return
	}
	a := ledger.Attempt{UpstreamID: "up-" + id, MerchantID: merchant.DemoID, OrderID: id, Seq: 1, Amount: "49.90", Currency: "EUR", BankID: "ing", Country: "DE"}
	if err := l.InsertAttempt(ctx, a); err != nil {
		t.Error(err)
		return
	}
	change := ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id}
	if unknown {
		change = ledger.Change{State: ledger.Unknown}
	}
	if _, err := l.Move(ctx, a.UpstreamID, ledger.Creating, change); err != nil {
		t.Error(err)
		return
	}
	p.mu.Lock()
	p.scripts[a.UpstreamID], p.made[a.UpstreamID] = s, p.clock.Now()
	p.mu.Unlock()
}

// boundAfter is the longest a payment may go unread after a read that
// found status, which it had held since the read at since, as
// docs/operate.md promises operators; 0 after a final status.
func boundAfter(status pisclient.Status, held time.Duration) time.Duration {
	switch {
	case status.Final():
		return 0
	case status == pisclient.StatusNotFound:
		return time.Hour
	case held >= 5*time.Minute:
		return time.Hour
	case status == pisclient.StatusAccepted:
		return 2 * time.Minute
	}
	return 30 * time.Second
}

// checkBounds fails for every payment that went unread longer than its
// stage allows, from its creation (30 s for the first read) to end.
func checkBounds(t *testing.T, p *scriptedProvider, end time.Time) {
	t.Helper()
	for id, made := range p.made {
		reads := p.reads[id]
		last, bound := made, ledger.FirstReadBy
		var since time.Time
		for i, r := range reads {
			if bound == 0 {
				t.Errorf("%s read again at %v after a final status", id, r.at.Sub(made))
				break
			}
			if gap := r.at.Sub(last); gap > bound {
				t.Errorf("%s: read %d came %v after the one before, past its bound of %v (reads %v)", id, i+1, gap, bound, ages(reads, made))
			}
			if i == 0 || r.status != reads[i-1].status {
				since = r.at
			}
			last, bound = r.at, boundAfter(r.status, r.at.Sub(since))
		}
		if bound > 0 && end.Sub(last) > bound {
			t.Errorf("%s: unread for the last %v of the run, past its bound of %v", id, end.Sub(last), bound)
		}
	}
}

func ages(reads []read, made time.Time) []string {
	var out []string
	for _, r := range reads {
		out = append(out, fmt.Sprintf("%v %s", r.at.Sub(made).Round(time.Second/10), r.status))
	}
	return out
}

// simFollower is a follower of instance owner over l, playing in the
// simulation of clock with provider p and budget.
func simFollower(l *ledger.Ledger, p payment.Provider, owner string, budget *payment.Budget, clock *simClock) *payment.Follower {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir, _ := merchant.Demo("http://localhost:8080")
	svc := &payment.Service{Ledger: l, Log: log, Now: clock.Now, ProviderFor: func(*merchant.Merchant) payment.Provider { return p }, Budget: budget}
	return &payment.Follower{Service: svc, Merchant: dir.Get, Owner: owner, Log: log, Sleep: clock.Sleep, InFlight: 1}
}

// play runs each player until the simulation ends.
func play(clock *simClock, ctx context.Context, players ...func(context.Context)) {
	var wg sync.WaitGroup
	for _, run := range players {
		wg.Go(func() {
			run(ctx)
			clock.leave()
		})
	}
	wg.Wait()
}

var start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// Payments at every stage, on a budget that cannot read each as often as
// its stage wants but covers every bound: each is read within its bound
// for 8 simulated minutes, and the newest, made last, are read first,
// FirstCheck after they were made.
func TestEveryStageIsReadWithinItsBound(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		clock, ctx := newSimClock(start, 8*time.Minute, 1)
		l.UseClock(clock.Now)
		p := newScriptedProvider(clock)
		scripts := []struct {
			name string
			script
			unknown bool
		}{
			// Never opened at the bank.
			{"never", script{}, false},
			// At the bank, then gone without a word.
			{"left", script{{0, pisclient.StatusInProgress}}, false},
			// Approved after a minute, paid 30 s later.
			{"pays", script{{0, pisclient.StatusInProgress}, {time.Minute, pisclient.StatusAccepted}, {90 * time.Second, pisclient.StatusCompleted}}, false},
			// Accepted, and the money takes hours.
			{"slow", script{{20 * time.Second, pisclient.StatusInProgress}, {40 * time.Second, pisclient.StatusAccepted}}, false},
			// Opened four minutes on, cancelled at the bank.
			{"late", script{{4 * time.Minute, pisclient.StatusInProgress}, {6 * time.Minute, pisclient.StatusCanceled}}, false},
			// The create call's answer was lost; the shopper is at the bank.
			{"unknown", script{{0, pisclient.StatusInProgress}}, true},
			// Approved at once (the bank's page skipped), paid 3 s later.
			{"quick", script{{0, pisclient.StatusAccepted}, {3 * time.Second, pisclient.StatusCompleted}}, false},
		}
		at := start
		for _, sc := range scripts {
			for i := range 8 {
				clock.set(at)
				p.pay(t, l, fmt.Sprintf("%s-%d", sc.name, i), sc.script, sc.unknown)
				at = at.Add(10 * time.Millisecond)
			}
		}
		// 56 payments: their stages want about 8 reads a second at first,
		// their bounds about 2.
		f := simFollower(l, p, "instance-1", &payment.Budget{Ledger: l, Rate: 3}, clock)
		play(clock, ctx, f.Run)

		checkBounds(t, p, clock.Now())
		reads := p.allReads()
		for i := range 8 {
			id := fmt.Sprintf("up-quick-%d", i)
			if len(reads[id]) == 0 {
				t.Fatalf("%s never read", id)
			}
			// The newest of all: read FirstCheck on, out of the budget's
			// first few seconds, and found paid.
			if first := reads[id][0]; first.at.Sub(p.made[id]) > ledger.FirstCheck+3*time.Second || first.status != pisclient.StatusCompleted {
				t.Errorf("%s first read %v after it was made, %s", id, first.at.Sub(p.made[id]), first.status)
			}
		}
	})
}

// Three instances on one database share FOLLOW_RATE: over any second of
// the run the provider sees no more than the budget's reads, together they
// read at the rate, not three times over, each takes a part, and every
// payment is read within its bound.
func TestThreeInstancesShareOneReadBudget(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		const perSecond, window = 20, time.Second
		ledgers := []*ledger.Ledger{ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
		clock, ctx := newSimClock(start, time.Minute, len(ledgers))
		p := newScriptedProvider(clock)
		for _, l := range ledgers {
			l.UseClock(clock.Now)
		}
		// 300 shoppers at the bank: their stage wants 60 reads a second,
		// their bound 10.
		for i := range 300 {
			p.pay(t, ledgers[0], fmt.Sprintf("P-%03d", i), script{{0, pisclient.StatusInProgress}}, false)
		}
		counted := &countingProvider{Provider: p, by: map[string]int{}}
		var players []func(context.Context)
		for i, l := range ledgers {
			owner := fmt.Sprintf("instance-%d", i+1)
			f := simFollower(l, counted.as(owner), owner, &payment.Budget{Ledger: l, Rate: perSecond}, clock)
			players = append(players, f.Run)
		}
		play(clock, ctx, players...)

		var stamps []time.Time
		for _, reads := range p.allReads() {
			for _, r := range reads {
				stamps = append(stamps, r.at)
			}
		}
		slices.SortFunc(stamps, time.Time.Compare)
		// Reads 1/perSecond apart: a window of a second holds one at each
		// end.
		most := perSecond*window.Seconds() + 1
		busiest := 0
		for i, at := range stamps {
			j, _ := slices.BinarySearchFunc(stamps, at.Add(window), time.Time.Compare)
			busiest = max(busiest, j-i)
		}
		total := float64(len(stamps)) / clock.Now().Sub(start).Seconds()
		t.Logf("FOLLOW_RATE=%d, three instances: %.1f reads a second over the run, at most %d in any %v; by instance %v", perSecond, total, busiest, window, counted.by)
		if float64(busiest) > most {
			t.Errorf("%d reads in %v, past the budget's %.0f", busiest, window, most)
		}
		if total < 0.9*perSecond {
			t.Errorf("%.1f reads a second together, want the budget's %d", total, perSecond)
		}
		for owner, n := range counted.by {
			if n < len(stamps)/10 {
				t.Errorf("%s made %d of the %d reads", owner, n, len(stamps))
			}
		}
		checkBounds(t, p, clock.Now())
	})
}

// countingProvider counts each instance's reads.
type countingProvider struct {
	payment.Provider
	mu sync.Mutex
	by map[string]int
}

func (c *countingProvider) as(owner string) payment.Provider { return ownerProvider{c, owner} }

type ownerProvider struct {
	*countingProvider
	owner string
}

func (o ownerProvider) PaymentStatus(ctx context.Context, id string) (*pisclient.PaymentStatus, error) {
	o.mu.Lock()
	o.by[o.owner]++
	o.mu.Unlock()
	return o.Provider.PaymentStatus(ctx, id)
}

// A follower that comes back to a backlog, 300 payments past their
// bounds, while new ones keep coming: the new ones are still read first,
// FirstCheck after they were made, and the backlog is worked off meanwhile,
// the longest overdue first, none of it left behind.
func TestNothingStarvesUnderABacklog(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		clock, ctx := newSimClock(start.Add(-2*time.Hour), 2*time.Hour+150*time.Second, 2)
		l.UseClock(clock.Now)
		p := newScriptedProvider(clock)
		// Two hours ago: 300 payments, never read since (their follower
		// was down).
		for i := range 300 {
			p.pay(t, l, fmt.Sprintf("OLD-%03d", i), script{}, false)
		}
		clock.set(start)
		budget := &payment.Budget{Ledger: l, Rate: 8}
		f := simFollower(l, p, "instance-1", budget, clock)
		// The shop: a new payment every 500 ms for 2 minutes, each paid at
		// once.
		var fresh []string
		shop := func(ctx context.Context) {
			for i := 0; clock.Now().Before(start.Add(2 * time.Minute)); i++ {
				id := fmt.Sprintf("NEW-%03d", i)
				p.pay(t, l, id, script{{0, pisclient.StatusAccepted}, {time.Second, pisclient.StatusCompleted}}, false)
				fresh = append(fresh, "up-"+id)
				if clock.Sleep(ctx, 500*time.Millisecond) != nil {
					return
				}
			}
		}
		play(clock, ctx, f.Run, shop)

		reads := p.allReads()
		var firsts []time.Duration
		for _, id := range fresh {
			if len(reads[id]) == 0 {
				t.Errorf("%s never read", id)
				continue
			}
			firsts = append(firsts, reads[id][0].at.Sub(p.made[id]))
		}
		slices.Sort(firsts)
		if worst := firsts[len(firsts)-1]; worst > ledger.FirstCheck+time.Second {
			t.Errorf("new payments' first reads came up to %v after they were made, want FirstCheck (%v) and a round", worst, ledger.FirstCheck)
		}
		var lastOld time.Time
		for i := range 300 {
			id := fmt.Sprintf("up-OLD-%03d", i)
			if len(reads[id]) == 0 {
				t.Errorf("%s never read: starved", id)
				continue
			}
			lastOld = later(lastOld, reads[id][0].at)
		}
		// Half the budget, 4 a second, goes to the backlog at least: 75 s.
		t.Logf("backlog of 300 read by %v; new payments first read after %v (median) to %v", lastOld.Sub(start), firsts[len(firsts)/2], firsts[len(firsts)-1])
		if lastOld.Sub(start) > 80*time.Second {
			t.Errorf("the backlog took %v to read, want half the budget's pace (75 s)", lastOld.Sub(start))
		}
	})
}

// An overload: 600 payments at the bank at once want a read every 30 s,
// 20 a second, on a budget of 8, so that reads near their bound alone
// would fill every round. The 300 payments already past their bound when
// it began (their follower was down) are still all read, the longest
// overdue first, out of the quarter of each round kept for them, not left
// behind for as long as the overload lasts, nor given more than their
// quarter.
func TestPastBoundReadsUnderAnOverload(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		clock, ctx := newSimClock(start.Add(-2*time.Hour), 2*time.Hour+4*time.Minute, 1)
		l.UseClock(clock.Now)
		p := newScriptedProvider(clock)
		for i := range 300 {
			clock.set(start.Add(-2*time.Hour + time.Duration(i)*time.Second))
			p.pay(t, l, fmt.Sprintf("OLD-%03d", i), script{{0, pisclient.StatusInProgress}}, false)
		}
		clock.set(start)
		for i := range 600 {
			p.pay(t, l, fmt.Sprintf("BUSY-%03d", i), script{{0, pisclient.StatusInProgress}}, false)
		}
		f := simFollower(l, p, "instance-1", &payment.Budget{Ledger: l, Rate: 8}, clock)
		play(clock, ctx, f.Run)

		reads := p.allReads()
		var busy int
		for i := range 600 {
			busy += len(reads[fmt.Sprintf("up-BUSY-%03d", i)])
		}
		// The overload lasted the whole run: the busy payments' reads
		// alone would have taken all of the budget.
		if need := 600 * int((4*time.Minute)/(30*time.Second)); busy >= need {
			t.Fatalf("the busy payments had %d reads, all their bounds asked (%d): no overload to test", busy, need)
		}
		var lastOld, prev time.Time
		for i := range 300 {
			id := fmt.Sprintf("up-OLD-%03d", i)
			if len(reads[id]) == 0 {
				t.Errorf("%s never read in 4 minutes of overload: starved", id)
				continue
			}
			first := reads[id][0].at
			if first.Before(prev) {
				t.Errorf("%s, made later, first read at %v, before one made earlier (%v): want the longest overdue first", id, first.Sub(start), prev.Sub(start))
			}
			prev, lastOld = first, later(lastOld, first)
		}
		// A quarter of the budget, 2 of its 8 reads a second (one every
		// other round of 2): 150 s for 300. More would take reads from
		// payments that can still be read in time.
		t.Logf("300 overdue read by %v beside %d reads of the busy payments", lastOld.Sub(start), busy)
		if took := lastOld.Sub(start); took < 140*time.Second || took > 165*time.Second {
			t.Errorf("the overdue payments took %v to read, want the pace of the quarter kept for them (150 s)", took)
		}
	})
}

// stallingProvider is a scripted provider that, every every-th read,
// takes stall to answer: the simulation's clock moves on while the read
// is under way.
type stallingProvider struct {
	*scriptedProvider
	every int
	stall time.Duration
	reads atomic.Int64
}

func (p *stallingProvider) PaymentStatus(ctx context.Context, id string) (*pisclient.PaymentStatus, error) {
	st, err := p.scriptedProvider.PaymentStatus(ctx, id)
	if p.reads.Add(1)%int64(p.every) == 0 {
		p.clock.set(p.clock.Now().Add(p.stall))
	}
	return st, err
}

// A provider that now and then (every 205th read, in the middle of a
// round of 10) takes two seconds to answer one read: the reads whose times
// went by meanwhile are not made all at once when it answers, on top of
// the next ones. The provider never sees more than the budget's reads in
// any second (before, 45 to 50 of 40).
func TestASlowProviderGetsNoBurstOfReads(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		const perSecond = 40
		l := ledgertest.Open(t, databaseURL)
		clock, ctx := newSimClock(start, time.Minute, 1)
		l.UseClock(clock.Now)
		p := &stallingProvider{scriptedProvider: newScriptedProvider(clock), every: 205, stall: 2 * time.Second}
		// 400 shoppers at the bank want 80 reads a second: every round
		// is full.
		for i := range 400 {
			p.pay(t, l, fmt.Sprintf("BANK-%03d", i), script{{0, pisclient.StatusInProgress}}, false)
		}
		f := simFollower(l, p, "instance-1", &payment.Budget{Ledger: l, Rate: perSecond}, clock)
		play(clock, ctx, f.Run)

		var at []time.Time
		for _, reads := range p.allReads() {
			for _, r := range reads {
				at = append(at, r.at)
			}
		}
		slices.SortFunc(at, time.Time.Compare)
		// Each stall leaves the budget's pace for the reads between: half
		// of that at least, or the follower has stopped.
		cycle := time.Duration(p.every)*time.Second/perSecond + p.stall
		if want := int(time.Minute/cycle) * p.every / 2; len(at) < want {
			t.Fatalf("%d reads in a minute, want %d at least: the follower stopped", len(at), want)
		}
		busiest := 0
		for i, j := 0, 0; i < len(at); i++ {
			for at[i].Sub(at[j]) >= time.Second {
				j++
			}
			busiest = max(busiest, i-j+1)
		}
		t.Logf("%d reads in a minute, 2 s stalls every %d reads; the busiest second held %d", len(at), p.every, busiest)
		if busiest > perSecond {
			t.Errorf("the provider saw %d reads in one second after a stall, want at most the budget's %d", busiest, perSecond)
		}
	})
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
