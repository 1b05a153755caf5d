package ledger_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

var ctx = context.Background()

func order(id, amount string) ledger.Order {
	return ledger.Order{MerchantID: "shop1", OrderID: id, Amount: amount, Currency: "EUR", ReturnURL: "https://shop.example/done"}
}

func attempt(id string, seq int) ledger.Attempt {
	return ledger.Attempt{UpstreamID: "shop1~" + string(rune('0'+seq)) + ":" + id, MerchantID: "shop1", OrderID: id, Seq: seq,
		Amount: "49.90", Currency: "EUR", BankID: "deutsche-bank", Country: "DE"}
}

func TestMigrationsRunFromEmptyAndAgain(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		first := ledgertest.Open(t, databaseURL)
		v, err := first.SchemaVersion(ctx)
		if err != nil || v < 1 {
			t.Fatalf("schema version %d, %v", v, err)
		}
		// A second instance starting on the same database finds it done.
		second := ledgertest.Open(t, databaseURL)
		if again, err := second.SchemaVersion(ctx); err != nil || again != v {
			t.Errorf("after a second start: version %d, %v; want %d", again, err, v)
		}
	})
}

func TestAnOrderKeepsItsFirstAmount(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		if _, err := l.RecordOrder(ctx, order("A-1", "10.00")); err != nil {
			t.Fatal(err)
		}
		if got, err := l.RecordOrder(ctx, order("A-1", "10.00")); err != nil || got.Amount != "10.00" {
			t.Errorf("the same order again: %+v, %v", got, err)
		}
		got, err := l.RecordOrder(ctx, order("A-1", "99.00"))
		if !errors.Is(err, ledger.ErrOrderChanged) || got.Amount != "10.00" {
			t.Errorf("another amount: %+v, %v; want ErrOrderChanged and the recorded 10.00", got, err)
		}
		eur := order("A-1", "10.00")
		eur.Currency = "SEK"
		if _, err := l.RecordOrder(ctx, eur); !errors.Is(err, ledger.ErrOrderChanged) {
			t.Errorf("another currency: %v", err)
		}
		if _, _, err := l.Order(ctx, "shop2", "A-1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("another merchant's order: %v, want ErrNotFound", err)
		}
	})
}

func TestOneLiveAttemptPerOrderWhoeverRaces(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		// Three connections, as three instances would have.
		others := []*ledger.Ledger{l, ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
		if _, err := l.RecordOrder(ctx, order("A-1", "49.90")); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, lost := 0, 0
		for i := range 30 {
			wg.Go(func() {
				a := attempt("A-1", 1)
				a.UpstreamID += strings.Repeat("x", i) // even under different ids
				err := others[i%3].InsertAttempt(ctx, a)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, ledger.ErrAttemptTaken):
					lost++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 || lost != 29 {
			t.Fatalf("%d inserts won and %d lost, want 1 and 29", won, lost)
		}
	})
}

func TestANewAttemptOnlyOnceTheLastCannotBePaid(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		l.RecordOrder(ctx, order("A-1", "49.90"))
		first := attempt("A-1", 1)
		if err := l.InsertAttempt(ctx, first); err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			from ledger.State
			to   ledger.Change
		}{{ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/1"}}, {ledger.Open, ledger.Change{Status: "IN_PROGRESS"}}} {
			if moved, err := l.Move(ctx, first.UpstreamID, step.from, step.to); !moved || err != nil {
				t.Fatalf("move %v to %+v: %v %v", step.from, step.to, moved, err)
			}
			if err := l.InsertAttempt(ctx, attempt("A-1", 2)); !errors.Is(err, ledger.ErrAttemptTaken) {
				t.Fatalf("a second attempt while the first is %s: %v", step.from, err)
			}
		}
		// Only the first of two deciders moves it.
		if moved, _ := l.Move(ctx, first.UpstreamID, ledger.Open, ledger.Change{State: ledger.Final, Status: "CANCELED"}); !moved {
			t.Fatal("cancel not recorded")
		}
		if moved, _ := l.Move(ctx, first.UpstreamID, ledger.Open, ledger.Change{State: ledger.Final, Status: "COMPLETED"}); moved {
			t.Fatal("a second decision about one attempt was recorded")
		}
		if err := l.InsertAttempt(ctx, attempt("A-1", 2)); err != nil {
			t.Fatalf("a new attempt after a cancelled one: %v", err)
		}
		_, list, err := l.Order(ctx, "shop1", "A-1")
		if err != nil || len(list) != 2 || list[0].Status != "CANCELED" || list[0].Link != "https://bank.example/1" || list[1].State != ledger.Creating {
			t.Errorf("attempts %+v, %v", list, err)
		}
	})
}

func TestTheSchemaRefusesAnAttemptWithoutItsOrder(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		if err := l.InsertAttempt(ctx, attempt("nobody", 1)); err == nil {
			t.Error("an attempt of an unrecorded order was stored")
		}
	})
}

func TestABadDatabaseURLIsRefused(t *testing.T) {
	for _, u := range []string{"mysql://x", "postgres://", "sqlite:/tmp/x.db?mode=ro"} {
		if _, err := ledger.Connect(ctx, u); err == nil {
			t.Errorf("%q: connected", u)
		}
	}
}

// TestTheDatabaseIsNamedWithoutItsPasswords checks the name logs and
// errors give the database: neither the address's password nor one among
// its parameters.
func TestTheDatabaseIsNamedWithoutItsPasswords(t *testing.T) {
	databaseURL := ledgertest.PostgresURL(t)
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	// The test server trusts every connection: the passwords go unused.
	u.User = url.UserPassword(u.User.Username(), "in-the-address")
	q := u.Query()
	q.Set("password", "among-the-parameters")
	u.RawQuery = q.Encode()
	l := ledgertest.Open(t, u.String())
	for _, secret := range []string{"in-the-address", "among-the-parameters"} {
		if strings.Contains(l.Where, secret) {
			t.Errorf("the database is named %q, with its password %q", l.Where, secret)
		}
	}
	if !strings.Contains(l.Where, u.Host) || !strings.Contains(l.Where, u.Path) {
		t.Errorf("the database is named %q, want its host %s and name %s", l.Where, u.Host, u.Path)
	}
}

func TestAHandoffOpensUntilItsTime(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		now := time.Now()
		if err := l.PutHandoff(ctx, "LATE", "/c/old", now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := l.PutHandoff(ctx, "CODE", "/c/token/banks?country=DE", now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, err := l.Handoff(ctx, "CODE"); err != nil || got != "/c/token/banks?country=DE" {
			t.Errorf("Handoff(CODE) = %q, %v", got, err)
		}
		for _, code := range []string{"LATE", "NONE"} {
			if _, err := l.Handoff(ctx, code); !errors.Is(err, ledger.ErrNoHandoff) {
				t.Errorf("Handoff(%s): %v, want ErrNoHandoff", code, err)
			}
		}
		// A code is given once: a second one alike is refused, not replaced.
		if err := l.PutHandoff(ctx, "CODE", "/c/other", now.Add(time.Minute)); err == nil {
			t.Error("a code given twice was accepted")
		}
	})
}

// A merchant's webhook sender waits on its own merchant's events: an
// event of another merchant does not wake it (each wakes one sender, not
// every merchant's), one of its own does, and so does any later one.
func TestNewEventsWakeTheirMerchantsSenderOnly(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		pay := func(merchantID, id string) {
			t.Helper()
			o := order(id, "49.90")
			o.MerchantID = merchantID
			a := attempt(id, 1)
			a.MerchantID = merchantID
			if _, err := l.RecordOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			if err := l.InsertAttempt(ctx, a); err != nil {
				t.Fatal(err)
			}
			if moved, err := l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Final, Status: "COMPLETED"}); !moved || err != nil {
				t.Fatalf("paying %s: %v %v", id, moved, err)
			}
		}
		woken := func(ch <-chan struct{}) bool {
			select {
			case <-ch:
				return true
			default:
				return false
			}
		}
		shop1, shop2 := l.NewEvents("shop1"), l.NewEvents("shop2")
		pay("shop2", "B-1")
		if woken(shop1) {
			t.Error("shop2's payment woke shop1's sender")
		}
		if !woken(shop2) {
			t.Fatal("shop2's payment did not wake shop2's sender")
		}
		pay("shop1", "A-1")
		if !woken(shop1) {
			t.Error("shop1's payment did not wake shop1's sender")
		}
		again := l.NewEvents("shop2")
		if woken(again) {
			t.Error("a sender waiting anew is woken by an event it has already had")
		}
		pay("shop2", "B-2")
		if !woken(again) {
			t.Error("shop2's next payment did not wake its sender")
		}
	})
}
