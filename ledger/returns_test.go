package ledger_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// A shopper who cancels at the bank before the follower reads any status
// in between comes back through the return URL: the payment counts as
// opened and cancelled at the bank, not abandoned, whether the return is
// seen before the cancellation is read or after.
func TestAReturnFromTheBankCountsThePaymentAsOpenedThere(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		now := time.Now()
		// Returned, then cancelled.
		l.OpenOrder(ctx, order("R-1", "49.90"))
		pay(t, l, "R-1", 1, "ing", "NOT_FOUND")
		if changed, err := l.ReturnedFromBank(ctx, "shop1", "R-1", ""); !changed || err != nil {
			t.Fatalf("return of R-1: %v %v", changed, err)
		}
		if moved, err := l.Move(ctx, attempt("R-1", 1).UpstreamID, ledger.Open, ledger.Change{State: ledger.Final, Status: "CANCELED"}); !moved || err != nil {
			t.Fatal(moved, err)
		}
		// Cancelled (read first), then returned.
		l.OpenOrder(ctx, order("R-2", "49.90"))
		pay(t, l, "R-2", 1, "ing", "NOT_FOUND", "CANCELED")
		if changed, err := l.ReturnedFromBank(ctx, "shop1", "R-2", ""); !changed || err != nil {
			t.Fatalf("return of R-2: %v %v", changed, err)
		}
		// A second return changes nothing.
		if changed, err := l.ReturnedFromBank(ctx, "shop1", "R-2", ""); changed || err != nil {
			t.Errorf("second return of R-2: changed %v, %v", changed, err)
		}
		// Never returned: abandoned, never opened at the bank.
		l.OpenOrder(ctx, order("R-3", "49.90"))
		pay(t, l, "R-3", 1, "ing", "NOT_FOUND", "CANCELED")
		// No payment handed out: nothing to mark.
		l.OpenOrder(ctx, order("R-4", "49.90"))
		if changed, err := l.ReturnedFromBank(ctx, "shop1", "R-4", ""); changed || err != nil {
			t.Errorf("return of an order without a payment: changed %v, %v", changed, err)
		}

		want := ledger.AttemptCounts{Started: 3, Canceled: 2, Abandoned: 1}
		recent, err := l.RecentBankHealth(ctx, now.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(recent) != 1 || recent[0].AttemptCounts != want {
			t.Errorf("bank health of the last hour: %+v, want ing with %+v", recent, want)
		}
		for _, folded := range []bool{false, true} {
			if folded {
				if err := l.FoldCounts(ctx); err != nil {
					t.Fatal(err)
				}
			}
			ov, err := l.Overview(ctx, "shop1", now.Add(-time.Hour), time.Hour, 5)
			if err != nil {
				t.Fatal(err)
			}
			if ov.Funnel.Began != 2 || ov.Attempts != want {
				t.Errorf("console (folded %v): began at the bank %d, attempts %+v; want 2 and %+v", folded, ov.Funnel.Began, ov.Attempts, want)
			}
			day, err := l.BankHealth(ctx, now.Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if len(day) != 1 || day[0].AttemptCounts != want {
				t.Errorf("bank health over 24 h (folded %v): %+v, want ing with %+v", folded, day, want)
			}
		}
	})
}

// A return and the follower's read of the cancellation arriving at once,
// on any instance, still count the payment once, as cancelled at the bank:
// whichever comes second sees the first.
func TestAReturnRacingTheCancellationIsCountedOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		other := ledgertest.Open(t, databaseURL)
		now := time.Now()
		const n = 40
		for i := range n {
			id := fmt.Sprintf("RACE-%02d", i)
			l.OpenOrder(ctx, order(id, "49.90"))
			pay(t, l, id, 1, "ing", "NOT_FOUND")
		}
		var wg sync.WaitGroup
		for i := range n {
			id := fmt.Sprintf("RACE-%02d", i)
			wg.Go(func() {
				if moved, err := l.Move(ctx, attempt(id, 1).UpstreamID, ledger.Open, ledger.Change{State: ledger.Final, Status: "CANCELED"}); !moved || err != nil {
					t.Errorf("cancel %s: %v %v", id, moved, err)
				}
			})
			wg.Go(func() {
				if _, err := other.ReturnedFromBank(ctx, "shop1", id, ""); err != nil {
					t.Errorf("return of %s: %v", id, err)
				}
			})
		}
		wg.Wait()
		if err := l.FoldCounts(ctx); err != nil {
			t.Fatal(err)
		}
		want := ledger.AttemptCounts{Started: n, Canceled: n}
		day, err := l.BankHealth(ctx, now.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(day) != 1 || day[0].AttemptCounts != want {
			t.Errorf("bank health over 24 h: %+v, want ing with %+v", day, want)
		}
		ov, err := l.Overview(ctx, "shop1", now.Add(-time.Hour), time.Hour, 5)
		if err != nil {
			t.Fatal(err)
		}
		if ov.Funnel.Began != n || ov.Attempts != want {
			t.Errorf("console: began %d, attempts %+v; want %d and %+v", ov.Funnel.Began, ov.Attempts, n, want)
		}
	})
}
