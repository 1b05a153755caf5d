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

// The read budget is one bucket: what one caller takes, another cannot,
// it fills at the rate, holds at most its burst, and reads made elsewhere
// are paid back before the follower gets more.
func TestTheReadBudgetIsOneBucket(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one := ledgertest.Open(t, databaseURL)
		two := ledgertest.Open(t, databaseURL)
		now := time.Now()
		clock := now
		for _, l := range []*ledger.Ledger{one, two} {
			l.UseClock(func() time.Time { return clock })
		}
		take := func(l *ledger.Ledger, want, spent int) int {
			t.Helper()
			n, err := l.TakeReads(ctx, want, spent, 20, 10)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		take(one, 10, 0) // a new bucket is full: this empties it
		clock = clock.Add(time.Second)
		// A second at 20 a second, held to the burst of 10.
		if got := take(one, 8, 0); got != 8 {
			t.Errorf("first instance got %d of 8", got)
		}
		if got := take(two, 8, 0); got != 2 {
			t.Errorf("second instance got %d, want the 2 left", got)
		}
		clock = clock.Add(250 * time.Millisecond) // 5 more
		if got := take(two, 8, 3); got != 2 {
			t.Errorf("after 3 reads elsewhere: got %d, want 5-3", got)
		}
		clock = clock.Add(100 * time.Millisecond) // 2 more
		if got := take(one, 8, 6); got != 0 {
			t.Errorf("in debt: got %d", got)
		}
		clock = clock.Add(300 * time.Millisecond) // 6 more
		if got := take(one, 20, 0); got != 2 {
			t.Errorf("after a debt of 4 and 300 ms: got %d, want 6-4", got)
		}
	})
}

// Fresh attempts are claimed apart from settled ones, each the longest due
// first, and a read made elsewhere moves the follower's next one.
func TestAttemptsAreClaimedByTier(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		l.FirstCheck = 0
		now := time.Now()
		clock := now.Add(-time.Minute)
		l.UseClock(func() time.Time { return clock })
		for i := range 4 {
			id := fmt.Sprintf("T-%d", i)
			l.OpenOrder(ctx, order(id, "49.90"))
			pay(t, l, id, 1, "ing")
			clock = clock.Add(time.Second)
		}
		clock = now
		// T-0 and T-1 read once: settled, due again before the others.
		for _, id := range []string{"T-0", "T-1"} {
			claimed, err := l.ClaimDue(ctx, "me", time.Minute, ledger.Fresh, 1)
			if err != nil || len(claimed) != 1 || claimed[0].OrderID != id {
				t.Fatalf("claimed %+v, %v; want %s, the longest due", claimed, err, id)
			}
			if ok, err := l.Checked(ctx, claimed[0].UpstreamID, "me", now.Add(-time.Hour), ledger.Settled); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		fresh, _ := l.ClaimDue(ctx, "me", time.Minute, ledger.Fresh, 10)
		settled, _ := l.ClaimDue(ctx, "me", time.Minute, ledger.Settled, 10)
		if ids(fresh) != "T-2,T-3" || ids(settled) != "T-0,T-1" {
			t.Errorf("fresh %s, settled %s", ids(fresh), ids(settled))
		}
		// Leased: another read elsewhere leaves it to its holder.
		a := attempt("T-2", 1)
		if err := l.ReadElsewhere(ctx, a.UpstreamID, now.Add(time.Minute), ledger.Settled); err != nil {
			t.Fatal(err)
		}
		if next, _, _ := l.NextRead(ctx, a.UpstreamID); fresh[0].OrderID != "T-2" || !next.Equal(fresh[0].At) {
			t.Errorf("a leased attempt's next read moved to %v", next)
		}
		l.Checked(ctx, a.UpstreamID, "me", now, ledger.Fresh)
		if err := l.ReadElsewhere(ctx, a.UpstreamID, now.Add(time.Minute), ledger.Settled); err != nil {
			t.Fatal(err)
		}
		if next, tier, _ := l.NextRead(ctx, a.UpstreamID); next.UnixMilli() != now.Add(time.Minute).UnixMilli() || tier != ledger.Settled {
			t.Errorf("after a read elsewhere: next %v in tier %d", next, tier)
		}
	})
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
			next, tier := now.Add(-time.Minute), ledger.Tier(i%2)
			if i%4 >= 2 {
				next = now.Add(time.Hour)
			}
			l.Checked(ctx, d.UpstreamID, "seed", next, tier)
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
				l.Checked(ctx, d.UpstreamID, "me", now.Add(time.Hour), d.Tier)
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
