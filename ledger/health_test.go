package ledger_test

import (
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// Bank health counts every merchant's payments by how they ended: the
// last hour exactly, from the attempts, and longer windows from the
// rollups, before and after they are folded.
func TestBankHealthCountsEachEndingPerWindow(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		now := time.Now()
		clock := now
		l.UseClock(func() time.Time { return clock })
		at := func(ago time.Duration) { clock = now.Add(-ago) }

		// Two days ago, one payment at ing, paid.
		at(48 * time.Hour)
		l.OpenOrder(ctx, order("OLD-1", "49.90"))
		pay(t, l, "OLD-1", 1, "ing", "IN_PROGRESS", "COMPLETED")
		// Three hours ago at ing: one cancelled at the bank.
		at(3 * time.Hour)
		l.OpenOrder(ctx, order("DAY-1", "49.90"))
		pay(t, l, "DAY-1", 1, "ing", "IN_PROGRESS", "CANCELED")
		// In the last hour, at ing: one paid after 40 s, one cancelled at
		// the bank, one abandoned before the bank's page, one still open,
		// one never handed out (no link): it does not count. Another
		// merchant's payment at ing counts too.
		for _, id := range []string{"H-1", "H-2", "H-3", "H-4", "H-5"} {
			at(30 * time.Minute)
			l.OpenOrder(ctx, order(id, "49.90"))
		}
		at(30 * time.Minute)
		pay(t, l, "H-1", 1, "ing", "IN_PROGRESS")
		other := ledger.Order{MerchantID: "shop2", OrderID: "S-1", Amount: "5.00", Currency: "EUR", ReturnURL: "https://two.example/"}
		l.OpenOrder(ctx, other)
		o := ledger.Attempt{UpstreamID: "shop2~1:S-1", MerchantID: "shop2", OrderID: "S-1", Seq: 1, Amount: "5.00", Currency: "EUR", BankID: "ing", Country: "DE"}
		if err := l.InsertAttempt(ctx, o); err != nil {
			t.Fatal(err)
		}
		l.Move(ctx, o.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/S-1"})
		at(30*time.Minute - 40*time.Second)
		for _, id := range []string{attempt("H-1", 1).UpstreamID, o.UpstreamID} {
			if moved, err := l.Move(ctx, id, ledger.Open, ledger.Change{State: ledger.Final, Status: "COMPLETED"}); !moved || err != nil {
				t.Fatal(moved, err)
			}
		}
		at(20 * time.Minute)
		pay(t, l, "H-2", 1, "ing", "IN_PROGRESS", "CANCELED")
		pay(t, l, "H-3", 1, "ing", "NOT_FOUND", "CANCELED")
		pay(t, l, "H-4", 1, "ing", "IN_PROGRESS")
		b := attempt("H-5", 1)
		b.BankID = "ing"
		if err := l.InsertAttempt(ctx, b); err != nil {
			t.Fatal(err)
		}
		// And one at another bank.
		at(10 * time.Minute)
		l.OpenOrder(ctx, order("H-6", "49.90"))
		pay(t, l, "H-6", 1, "deutsche-bank", "IN_PROGRESS", "COMPLETED")
		clock = now

		byBank := func(figures []ledger.BankFigures) map[string]ledger.BankFigures {
			m := map[string]ledger.BankFigures{}
			for _, f := range figures {
				if f.Country != "DE" {
					t.Errorf("bank %s in %q, want DE", f.BankID, f.Country)
				}
				m[f.BankID] = f
			}
			return m
		}
		recent, err := l.RecentBankHealth(ctx, now.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ing := byBank(recent)["ing"]
		if want := (ledger.AttemptCounts{Started: 5, Completed: 2, Canceled: 1, Abandoned: 1}); ing.AttemptCounts != want || ing.Open() != 1 {
			t.Errorf("ing in the last hour: %+v (open %d), want %+v and one open", ing.AttemptCounts, ing.Open(), want)
		}
		// Both paid 40 s after they were made.
		if ing.MedianToPaid != 40*time.Second {
			t.Errorf("ing's median time to pay %v, want 40s", ing.MedianToPaid)
		}
		if db := byBank(recent)["deutsche-bank"]; db.Started != 1 || db.Completed != 1 {
			t.Errorf("deutsche-bank in the last hour: %+v", db)
		}

		for _, folded := range []bool{false, true} {
			if folded {
				if err := l.FoldCounts(ctx); err != nil {
					t.Fatal(err)
				}
			}
			day, err := l.BankHealth(ctx, now.Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			ing := byBank(day)["ing"]
			if want := (ledger.AttemptCounts{Started: 6, Completed: 2, Canceled: 2, Abandoned: 1}); ing.AttemptCounts != want {
				t.Errorf("ing over 24 h (folded %v): %+v, want %+v", folded, ing.AttemptCounts, want)
			}
			if ing.MedianToPaid < 36*time.Second || ing.MedianToPaid > 44*time.Second {
				t.Errorf("ing's median over 24 h (folded %v) %v, want 40 s within the buckets' spread", folded, ing.MedianToPaid)
			}
			week, err := l.BankHealth(ctx, now.Add(-7*24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if got := byBank(week)["ing"]; got.Started != 7 || got.Completed != 3 {
				t.Errorf("ing over 7 days (folded %v): %+v, want 7 started, 3 paid", folded, got.AttemptCounts)
			}
		}
	})
}
