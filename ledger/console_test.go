package ledger_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// pay walks an attempt of order id at bank through statuses, as the
// payment service and the follower would.
func pay(t *testing.T, l *ledger.Ledger, id string, seq int, bank string, statuses ...string) {
	t.Helper()
	a := attempt(id, seq)
	a.BankID = bank
	if err := l.InsertAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	if moved, err := l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id}); !moved || err != nil {
		t.Fatalf("open %s: %v %v", a.UpstreamID, moved, err)
	}
	for _, s := range statuses {
		ch := ledger.Change{Status: s}
		if s == "COMPLETED" || s == "CANCELED" {
			ch.State = ledger.Final
		}
		if moved, err := l.Move(ctx, a.UpstreamID, ledger.Open, ch); !moved || err != nil {
			t.Fatalf("%s to %s: %v %v", a.UpstreamID, s, moved, err)
		}
	}
}

func TestTheOverviewCountsOrdersNotRetries(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		for _, id := range []string{"A-1", "A-2", "A-3", "A-4"} {
			if _, err := l.OpenOrder(ctx, order(id, "49.90")); err != nil {
				t.Fatal(err)
			}
		}
		// A second visit to a link opens nothing more.
		l.OpenOrder(ctx, order("A-1", "49.90"))
		// A-1 cancels at one bank, then pays at another: one sale, not a loss.
		pay(t, l, "A-1", 1, "ing", "IN_PROGRESS", "CANCELED")
		pay(t, l, "A-1", 2, "deutsche-bank", "IN_PROGRESS", "COMPLETED")
		// A-2 never opens its bank's page; A-3 is still at the bank; A-4
		// only used its link.
		pay(t, l, "A-2", 1, "ing", "NOT_FOUND", "CANCELED")
		pay(t, l, "A-3", 1, "ing", "IN_PROGRESS")

		ov, err := l.Overview(ctx, "shop1", time.Now().Add(-24*time.Hour), time.Hour, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := (ledger.Funnel{Opened: 4, Sent: 3, Began: 2, Paid: 1}); ov.Funnel != want {
			t.Errorf("funnel %+v, want %+v", ov.Funnel, want)
		}
		if want := (ledger.AttemptCounts{Started: 4, Completed: 1, Canceled: 1, Abandoned: 1}); ov.Attempts != want || ov.Attempts.Open() != 1 {
			t.Errorf("attempts %+v (open %d), want %+v and one open", ov.Attempts, ov.Attempts.Open(), want)
		}
		if len(ov.Banks) != 2 || ov.Banks[0].BankID != "ing" || ov.Banks[0].Started != 3 || ov.Banks[0].Canceled != 1 || ov.Banks[0].Abandoned != 1 ||
			ov.Banks[1].BankID != "deutsche-bank" || ov.Banks[1].Completed != 1 {
			t.Errorf("banks %+v", ov.Banks)
		}
		var paid int64
		for _, n := range ov.PaidTimes {
			paid += n
		}
		if paid != 1 {
			t.Errorf("paid times %v, want one payment", ov.PaidTimes)
		}
		if other, _ := l.Overview(ctx, "shop2", time.Now().Add(-24*time.Hour), time.Hour, 10); other.Funnel != (ledger.Funnel{}) {
			t.Errorf("another merchant's overview counts shop1's orders: %+v", other.Funnel)
		}
		if all, _ := l.Overview(ctx, "", time.Now().Add(-24*time.Hour), 24*time.Hour, 10); all.Funnel.Opened != 4 || len(all.Buckets) == 0 {
			t.Errorf("every merchant's overview: %+v", all)
		}
	})
}

func TestTheListFindsOrdersByFilterAndPrefixPageByPage(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		for i := range 7 {
			id := fmt.Sprintf("B-%d", i)
			if _, err := l.OpenOrder(ctx, order(id, "49.90")); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				pay(t, l, id, 1, "ing", "COMPLETED")
			}
		}
		l.OpenOrder(ctx, order("B-10", "49.90"))
		l.OpenOrder(ctx, order("C-1", "49.90"))

		var seen []string
		var after ledger.OrderCursor
		for range 10 {
			page, err := l.ListOrders(ctx, ledger.OrderFilter{Merchant: "shop1", Prefix: "B-"}, after, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page {
				seen = append(seen, o.OrderID)
			}
			if len(page) < 3 {
				break
			}
			last := page[len(page)-1]
			after = ledger.OrderCursor{At: last.Updated, MerchantID: last.MerchantID, OrderID: last.OrderID}
			// The cursor survives a trip through a URL.
			if after, err = ledger.ParseOrderCursor(after.String()); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) != 8 {
			t.Errorf("pages of prefix B- listed %v, want the 8 B- orders once each", seen)
		}
		paid, _ := l.ListOrders(ctx, ledger.OrderFilter{Merchant: "shop1", Status: "COMPLETED", BankID: "ing", Country: "DE"}, ledger.OrderCursor{}, 50)
		if len(paid) != 4 || paid[0].BankID != "ing" || paid[0].Country != "DE" {
			t.Errorf("paid at ing in DE: %+v, want 4 with their bank", paid)
		}
		exact, _ := l.ListOrders(ctx, ledger.OrderFilter{Merchant: "shop1", Prefix: "B-1"}, ledger.OrderCursor{}, 50)
		if len(exact) != 2 {
			t.Errorf("prefix B-1 found %d orders, want B-1 and B-10", len(exact))
		}
		if none, _ := l.ListOrders(ctx, ledger.OrderFilter{Merchant: "shop2"}, ledger.OrderCursor{}, 50); len(none) != 0 {
			t.Errorf("another merchant lists shop1's orders: %+v", none)
		}
		future, _ := l.ListOrders(ctx, ledger.OrderFilter{Merchant: "shop1", From: time.Now().Add(time.Hour)}, ledger.OrderCursor{}, 50)
		if len(future) != 0 {
			t.Errorf("changes from an hour ahead: %d orders", len(future))
		}
	})
}

func TestAnAttemptKeepsEveryStatusItPassed(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		l.OpenOrder(ctx, order("A-1", "49.90"))
		pay(t, l, "A-1", 1, "ing", "NOT_FOUND", "IN_PROGRESS", "COMPLETED")
		id := attempt("A-1", 1).UpstreamID
		steps, err := l.History(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range steps[id] {
			got = append(got, string(s.State)+"/"+s.Status)
		}
		want := "[creating/ open/ open/NOT_FOUND open/IN_PROGRESS final/COMPLETED]"
		if fmt.Sprint(got) != want {
			t.Errorf("history %v, want %s", got, want)
		}
		events, err := l.OrderEvents(ctx, "shop1", "A-1")
		if err != nil || len(events) == 0 {
			t.Fatalf("events of A-1: %v, %v", events, err)
		}
		if other, _ := l.OrderEvents(ctx, "shop2", "A-1"); len(other) != 0 {
			t.Error("another merchant reads shop1's events")
		}
	})
}

func TestSignInFailuresAndSignOutsAreShared(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l, other := ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)
		now := time.Now()
		for range 3 {
			if ok, _, err := l.ReserveTry(ctx, "mail:x", 4, time.Minute, now); err != nil || !ok {
				t.Fatalf("a try within the limit: %v, %v", ok, err)
			}
		}
		if ok, _, _ := other.ReserveTry(ctx, "mail:x", 4, time.Minute, now); !ok {
			t.Error("the fourth try, on another instance, is refused")
		}
		ok, state, err := other.ReserveTry(ctx, "mail:x", 4, time.Minute, now)
		if err != nil || ok || state.Used != 4 {
			t.Errorf("a fifth try seen by another instance: taken %v, %+v, %v; want refused after the e-mail's 4", ok, state, err)
		}
		if ok, _, _ := other.ReserveTry(ctx, "ip:3", 4, time.Minute, now); !ok {
			t.Error("an address never refused is refused")
		}
		// A right try is given back; a window over starts again.
		if err := l.GiveBackTry(ctx, "mail:x", state.Start); err != nil {
			t.Fatal(err)
		}
		if ok, _, _ := l.ReserveTry(ctx, "mail:x", 4, time.Minute, now); !ok {
			t.Error("a try given back is not taken again")
		}
		ok, fresh, _ := l.ReserveTry(ctx, "mail:x", 4, time.Minute, now.Add(time.Minute))
		if !ok {
			t.Error("a new window still refuses")
		}
		// A try of the old window given back late lowers nothing of the
		// new one.
		if err := l.GiveBackTry(ctx, "mail:x", state.Start); err != nil {
			t.Fatal(err)
		}
		if now, _ := l.TriesOf(ctx, "mail:x"); now.Used != 1 || !now.Start.Equal(fresh.Start) {
			t.Errorf("after a late give-back the new window holds %d tries, want 1", now.Used)
		}
		if err := l.SignedOut(ctx, "s1", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if out, err := other.IsSignedOut(ctx, "s1"); err != nil || !out {
			t.Errorf("another instance does not know s1 signed out: %v %v", out, err)
		}
		if out, _ := other.IsSignedOut(ctx, "s2"); out {
			t.Error("a session never signed out reads as signed out")
		}
	})
}

// Fifty tries at once on two instances take no more than the limit: the
// reservation is one statement no other can interleave with.
func TestTriesAtOnceTakeNoMoreThanTheLimit(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		instances := []*ledger.Ledger{ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
		now := time.Now()
		var taken atomic.Int64
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				ok, _, err := instances[i%2].ReserveTry(ctx, "code:ann", 5, time.Minute, now)
				if err != nil {
					t.Error(err)
				}
				if ok {
					taken.Add(1)
				}
			})
		}
		wg.Wait()
		if n := taken.Load(); n != 5 {
			t.Errorf("50 tries at once took %d, want the limit's 5", n)
		}
		// A lock refuses every try until it ends, and the next is longer.
		lockFor := func(strikes int) time.Duration { return time.Minute << strikes }
		started, until, err := instances[0].LockTries(ctx, "code:ann", now, lockFor)
		if err != nil || !started || until.Sub(now) != time.Minute {
			t.Fatalf("the first lock: started %v, until %v (%v)", started, until.Sub(now), err)
		}
		if again, _, _ := instances[1].LockTries(ctx, "code:ann", now, lockFor); again {
			t.Error("a lock already on was started again")
		}
		if ok, _, _ := instances[1].ReserveTry(ctx, "code:ann", 5, time.Minute, now.Add(59*time.Second)); ok {
			t.Error("a try during the lock was taken")
		}
		later := now.Add(61 * time.Second)
		if ok, _, _ := instances[1].ReserveTry(ctx, "code:ann", 5, time.Minute, later); !ok {
			t.Error("a try after the lock was refused")
		}
		if _, until, _ := instances[0].LockTries(ctx, "code:ann", later, lockFor); until.Sub(later) < 2*time.Minute-time.Second {
			t.Errorf("the second lock lasts %v, want twice the first", until.Sub(later))
		}
	})
}

func TestFoldingTheCountsChangesNoFigure(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l, other := ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)
		overview := func() ledger.Overview {
			t.Helper()
			ov, err := l.Overview(ctx, "shop1", time.Now().Add(-24*time.Hour), time.Hour, 10)
			if err != nil {
				t.Fatal(err)
			}
			return ov
		}
		l.OpenOrder(ctx, order("A-1", "49.90"))
		pay(t, l, "A-1", 1, "ing", "IN_PROGRESS", "COMPLETED")
		l.OpenOrder(ctx, order("A-2", "49.90"))
		before := overview()
		// Two instances fold at once, then a payment changes, then again.
		errs := make(chan error, 2)
		go func() { errs <- l.FoldCounts(ctx) }()
		go func() { errs <- other.FoldCounts(ctx) }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if after := overview(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("after folding: %+v\nbefore: %+v", after, before)
		}
		pay(t, l, "A-2", 1, "dkb", "NOT_FOUND", "CANCELED")
		if err := l.FoldCounts(ctx); err != nil {
			t.Fatal(err)
		}
		ov := overview()
		if want := (ledger.Funnel{Opened: 2, Sent: 2, Began: 1, Paid: 1}); ov.Funnel != want {
			t.Errorf("funnel %+v after folding twice, want %+v", ov.Funnel, want)
		}
		if ov.Attempts.Started != 2 || ov.Attempts.Abandoned != 1 || len(ov.Banks) != 2 {
			t.Errorf("attempts %+v, banks %+v", ov.Attempts, ov.Banks)
		}
	})
}
