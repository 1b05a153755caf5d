package ledger_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// Events and their deliveries older than the retention go, a batch at a
// time; younger ones, every order and attempt, and live hand-off codes
// stay.
func TestRetentionRemovesOldEventsInBatches(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		now := time.Now()
		clock := now
		l.UseClock(func() time.Time { return clock })
		// Five payments 100 days ago, two yesterday: each makes two events
		// (IN_PROGRESS, COMPLETED), delivered once each.
		for i, ago := range []time.Duration{100, 100, 100, 100, 100, 1, 1} {
			clock = now.Add(-ago * 24 * time.Hour)
			id := fmt.Sprintf("R-%d", i)
			l.OpenOrder(ctx, order(id, "49.90"))
			pay(t, l, id, 1, "ing", "IN_PROGRESS", "COMPLETED")
			events, err := l.ClaimEvents(ctx, "shop1", "me", time.Minute, 10)
			if err != nil || len(events) != 2 {
				t.Fatalf("%s: %d events, %v", id, len(events), err)
			}
			for _, e := range events {
				if err := l.RecordDelivery(ctx, e, "me", ledger.Delivery{Try: 1, At: clock, Code: 204}, ledger.Delivered, ledger.Never); err != nil {
					t.Fatal(err)
				}
			}
		}
		clock = now
		l.PutHandoff(ctx, "GONE1", "/c/a", now.Add(-time.Minute))
		l.PutHandoff(ctx, "GONE2", "/c/b", now.Add(-time.Second))
		l.PutHandoff(ctx, "LIVE", "/c/c", now.Add(time.Minute))

		var batches []ledger.Pruned
		for range 10 {
			p, err := l.Prune(ctx, now.Add(-90*24*time.Hour), 4)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total() == 0 {
				break
			}
			batches = append(batches, p)
		}
		want := []ledger.Pruned{{Events: 4, Deliveries: 4, Handoffs: 2}, {Events: 4, Deliveries: 4}, {Events: 2, Deliveries: 2}}
		if !slices.Equal(batches, want) {
			t.Errorf("batches %+v, want %+v", batches, want)
		}
		events, err := l.Events(ctx, "shop1", time.Time{}, ledger.Cursor{}, 100)
		if err != nil || len(events) != 4 {
			t.Errorf("%d events left, %v; want yesterday's 4", len(events), err)
		}
		for _, e := range events {
			if now.Sub(e.Created) > 48*time.Hour || len(e.Deliveries) != 1 {
				t.Errorf("event of %v kept with %d deliveries", e.Created, len(e.Deliveries))
			}
		}
		for i := range 7 {
			if _, attempts, err := l.Order(ctx, "shop1", fmt.Sprintf("R-%d", i)); err != nil || len(attempts) != 1 {
				t.Errorf("order R-%d: %d attempts, %v; orders and attempts are kept", i, len(attempts), err)
			}
		}
		if _, err := l.Handoff(ctx, "LIVE"); err != nil {
			t.Errorf("a live hand-off code: %v", err)
		}
	})
}

// The read budget hands out one line of times, 1/rate apart, to every
// caller: what one takes, another cannot; only times within the horizon
// are handed out; reads made elsewhere take the next times first; and time
// left unused is not saved up for a burst.
func TestTheReadBudgetSpacesReads(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one := ledgertest.Open(t, databaseURL)
		two := ledgertest.Open(t, databaseURL)
		now := time.Now().Truncate(time.Millisecond)
		clock := now
		for _, l := range []*ledger.Ledger{one, two} {
			l.UseClock(func() time.Time { return clock })
		}
		take := func(l *ledger.Ledger, want, spent int, wantFirst time.Duration, wantGot int) {
			t.Helper()
			// 20 a second: 50 ms apart, handed out 250 ms ahead.
			first, got, err := l.TakeReads(ctx, want, spent, 20, 250*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if got != wantGot || first.Sub(now) != wantFirst {
				t.Errorf("at %v: %d reads from %v on, want %d from %v", clock.Sub(now), got, first.Sub(now), wantGot, wantFirst)
			}
		}
		take(one, 10, 0, 0, 6)                    // 0, 50… 250 ms
		take(two, 10, 0, 300*time.Millisecond, 0) // nothing left within 250 ms
		clock = now.Add(100 * time.Millisecond)
		take(two, 2, 0, 300*time.Millisecond, 2)  // 300 and 350 ms
		take(one, 10, 3, 550*time.Millisecond, 0) // 400 to 500 ms went to reads made elsewhere
		clock = now.Add(5 * time.Second)          // idle for seconds
		take(one, 100, 0, 5*time.Second, 6)       // still 6 within 250 ms: nothing saved up
	})
}

// Fresh attempts are claimed apart from settled ones, fresh the newest
// first and settled the nearest to their bound first; those near or past
// their bound are claimed by it, whatever their tier; and a read made
// elsewhere moves the follower's next one.
func TestAttemptsAreClaimedByTierAndBound(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		l.FirstCheck = 0
		now := time.Now()
		clock := now.Add(-time.Minute)
		l.UseClock(func() time.Time { return clock })
		for i := range 6 {
			id := fmt.Sprintf("T-%d", i)
			l.OpenOrder(ctx, order(id, "49.90"))
			pay(t, l, id, 1, "ing")
			clock = clock.Add(time.Second)
		}
		clock = now
		// T-0 to T-3 read once, settled, due again, their bounds an hour,
		// 3 s, 30 s and two minutes ahead.
		bounds := map[string]time.Duration{"T-0": time.Hour, "T-1": 3 * time.Second, "T-2": 30 * time.Second, "T-3": 2 * time.Minute}
		var order []string
		for range 4 {
			claimed, err := l.ClaimDue(ctx, "me", time.Minute, ledger.Fresh, 1)
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claimed %+v, %v", claimed, err)
			}
			d := claimed[0]
			order = append(order, d.OrderID)
			next := ledger.Next{At: now.Add(-time.Minute), By: now.Add(bounds[d.OrderID]), Tier: ledger.Settled}
			if d.OrderID == "T-5" || d.OrderID == "T-4" {
				next = ledger.Next{At: now.Add(time.Hour), By: now.Add(2 * time.Hour), Tier: ledger.Fresh}
			}
			if ok, err := l.Checked(ctx, d.UpstreamID, "me", next); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		// Fresh ones come the newest first; the oldest two are left.
		if got := strings.Join(order, ","); got != "T-5,T-4,T-3,T-2" {
			t.Fatalf("fresh attempts claimed in the order %s, want the newest first", got)
		}
		fresh, _ := l.ClaimDue(ctx, "me", time.Minute, ledger.Fresh, 10)
		if got := ids(fresh); got != "T-0,T-1" {
			t.Fatalf("fresh left %s", got)
		}
		for _, d := range fresh {
			l.Checked(ctx, d.UpstreamID, "me", ledger.Next{At: now.Add(-time.Minute), By: now.Add(bounds[d.OrderID]), Tier: ledger.Settled})
		}
		near, _ := l.ClaimNearBound(ctx, "me", time.Minute, 10*time.Second, 10)
		if ids(near) != "T-1" {
			t.Errorf("near their bound: %s, want T-1", ids(near))
		}
		settled, _ := l.ClaimDue(ctx, "me", time.Minute, ledger.Settled, 10)
		if got := ordered(settled); got != "T-2,T-3,T-0" {
			t.Errorf("settled %s, want the nearest bound first", got)
		}
		clock = now.Add(time.Hour)
		for _, d := range append(near, settled...) {
			l.Checked(ctx, d.UpstreamID, "me", ledger.Next{At: now, By: now.Add(bounds[d.OrderID]), Tier: ledger.Settled})
		}
		past, _ := l.ClaimPastBound(ctx, "me", time.Minute, 2)
		if got := ordered(past); got != "T-1,T-2" {
			t.Errorf("past their bound, two: %s, want the longest past first", got)
		}
		if n, err := l.BoundsWithin(ctx, []time.Duration{time.Minute, 2 * time.Hour}); err != nil || fmt.Sprint(n) != "[1 3]" {
			t.Errorf("bounds within a minute and two hours: %v, %v; want T-0 (now), T-4 and T-5 (within the hour)", n, err)
		}

		// Leased: another read elsewhere leaves it to its holder.
		a := past[0].Attempt
		if err := l.ReadElsewhere(ctx, a.UpstreamID, ledger.Next{At: clock.Add(time.Minute), By: clock.Add(time.Hour), Tier: ledger.Fresh}); err != nil {
			t.Fatal(err)
		}
		if next, _ := l.NextRead(ctx, a.UpstreamID); !next.At.Equal(past[0].At) {
			t.Errorf("a leased attempt's next read moved to %v", next.At)
		}
		l.Checked(ctx, a.UpstreamID, "me", past[0].Next)
		want := ledger.Next{At: clock.Add(time.Minute), By: clock.Add(time.Hour), Tier: ledger.Fresh}
		if err := l.ReadElsewhere(ctx, a.UpstreamID, want); err != nil {
			t.Fatal(err)
		}
		if next, _ := l.NextRead(ctx, a.UpstreamID); next.At.UnixMilli() != want.At.UnixMilli() || next.By.UnixMilli() != want.By.UnixMilli() || next.Tier != ledger.Fresh {
			t.Errorf("after a read elsewhere: next %+v, want %+v", next, want)
		}
	})
}

// ordered lists the order ids of claimed attempts in the order given.
func ordered(list []ledger.Due) string {
	var out []string
	for _, d := range list {
		out = append(out, d.OrderID)
	}
	return strings.Join(out, ",")
}

func ids(list []ledger.Due) string {
	var out []string
	for _, d := range list {
		out = append(out, d.OrderID)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// BenchmarkFollowRound is the follower's work in the ledger for one read:
// claiming due attempts by tier (8 fresh, 2 settled a round, as at
// FOLLOW_RATE=20) and recording each read's next one, with 10,000
// attempts open of which half are due, on each database. The provider
// call is not in it.
func BenchmarkFollowRound(b *testing.B) {
	for name, newURL := range ledgertest.Backends() {
		b.Run(name, func(b *testing.B) { benchmarkFollowRound(b, newURL(b)) })
	}
}

func benchmarkFollowRound(b *testing.B, databaseURL string) {
	{
		l := ledgertest.Open(b, databaseURL)
		l.FirstCheck = 0
		now := time.Now()
		seedOpen(b, l, 10_000)
		// Half settled, half fresh; a quarter of each due later.
		claimed, err := l.ClaimDue(ctx, "seed", time.Minute, ledger.Fresh, 10_000)
		if err != nil {
			b.Fatal(err)
		}
		for i, d := range claimed {
			next := ledger.Next{At: now.Add(-time.Minute), By: now.Add(time.Hour), Tier: ledger.Tier(i % 2)}
			if i%4 >= 2 {
				next.At = now.Add(time.Hour)
			}
			l.Checked(ctx, d.UpstreamID, "seed", next)
		}
		b.ResetTimer()
		reads := 0
		for b.Loop() {
			fresh, err := l.ClaimDue(ctx, "me", time.Minute, ledger.Fresh, 8)
			if err != nil {
				b.Fatal(err)
			}
			settled, err := l.ClaimDue(ctx, "me", time.Minute, ledger.Settled, 10-len(fresh))
			if err != nil {
				b.Fatal(err)
			}
			for _, d := range append(fresh, settled...) {
				// Read again in an hour: the due set shrinks as slowly as
				// 10,000 attempts allow.
				l.Checked(ctx, d.UpstreamID, "me", ledger.Next{At: now.Add(time.Hour), By: now.Add(2 * time.Hour), Tier: d.Tier})
				reads++
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(max(1, reads)), "µs/read")
	}
}

// seedOpen inserts n open attempts of n orders in one go.
func seedOpen(b *testing.B, l *ledger.Ledger, n int) {
	for i := range n {
		id := fmt.Sprintf("B-%06d", i)
		if _, err := l.RecordOrder(ctx, order(id, "49.90")); err != nil {
			b.Fatal(err)
		}
		a := attempt(id, 1)
		if err := l.InsertAttempt(ctx, a); err != nil {
			b.Fatal(err)
		}
		l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id})
	}
}
