package bankhealth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/ledger"
)

// fixed answers with set figures: recent for the last hour, longer for
// the rollups' windows.
type fixed struct {
	recent, longer []ledger.BankFigures
	err            error
}

func (f *fixed) RecentBankHealth(context.Context, time.Time) ([]ledger.BankFigures, error) {
	return f.recent, f.err
}

func (f *fixed) BankHealth(context.Context, time.Time) ([]ledger.BankFigures, error) {
	return f.longer, f.err
}

func (f *fixed) MostPaid(context.Context, time.Time, int) (map[string][]string, error) {
	return nil, f.err
}

func bank(country, id string, completed, canceled, abandoned, open int64) ledger.BankFigures {
	return ledger.BankFigures{Country: country, BankID: id, AttemptCounts: ledger.AttemptCounts{
		Started: completed + canceled + abandoned + open, Completed: completed, Canceled: canceled, Abandoned: abandoned,
	}}
}

func TestABankIsDegradedOnlyWithEnoughFailuresInTheLastHour(t *testing.T) {
	src := &fixed{
		recent: []ledger.BankFigures{
			bank("DE", "commerzbank", 4, 3, 3, 5), // 10 finished, 40 %: degraded
			bank("DE", "ing", 5, 3, 2, 0),         // 10 finished, 50 %: not below half
			bank("DE", "dkb", 0, 6, 3, 9),         // 9 finished: too few to judge
			bank("FR", "bnp", 0, 0, 12, 0),        // abandoned counts as not paid
		},
		longer: []ledger.BankFigures{bank("DE", "commerzbank", 400, 10, 10, 5), bank("DE", "ing", 50, 3, 2, 0)},
	}
	k := &bankhealth.Keeper{Source: src, Thresholds: bankhealth.DefaultThresholds}
	if k.Snapshot().Degraded("DE", "commerzbank") {
		t.Error("degraded before any reading")
	}
	if err := k.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := k.Snapshot()
	for _, c := range []struct {
		country, id string
		want        bool
	}{{"DE", "commerzbank", true}, {"DE", "ing", false}, {"DE", "dkb", false}, {"FR", "bnp", true}, {"FR", "commerzbank", false}} {
		if got := s.Degraded(c.country, c.id); got != c.want {
			t.Errorf("%s %s degraded %v, want %v", c.country, c.id, got, c.want)
		}
	}
	// The day looks fine for commerzbank, but right now it is degraded:
	// every window says so.
	day := s.Figures(bankhealth.Windows[1])
	if len(day.Banks) != 2 || day.Banks[0].BankID != "commerzbank" || !day.Banks[0].Degraded || day.Banks[1].Degraded {
		t.Errorf("24 h figures %+v: want commerzbank first and marked degraded", day.Banks)
	}
	// The hour's banks come by country, the busiest first.
	hour := s.Figures(bankhealth.Windows[0])
	var order []string
	for _, b := range hour.Banks {
		order = append(order, b.Country+" "+b.BankID)
	}
	if got := strings.Join(order, ", "); got != "DE dkb, DE commerzbank, DE ing, FR bnp" {
		t.Errorf("the hour's banks in order %s", got)
	}
	if c := hour.Banks[1]; c.BankID != "commerzbank" {
		t.Fatalf("second bank %s", c.BankID)
	} else if rate, ok := c.SuccessRate(); !ok || rate != 0.4 || c.Open() != 5 {
		t.Errorf("commerzbank's hour: rate %v %v, open %d; want 0.4 and 5 open", rate, ok, c.Open())
	}

	// Stricter thresholds, as the variables set them.
	k.Thresholds = bankhealth.Thresholds{MinFinished: 9, MinSuccess: 0.6}
	k.Refresh(context.Background())
	if s := k.Snapshot(); !s.Degraded("DE", "ing") || !s.Degraded("DE", "dkb") {
		t.Errorf("with 9 finished and 60 %%: ing %v, dkb %v; want both degraded", s.Degraded("DE", "ing"), s.Degraded("DE", "dkb"))
	}
	if got := k.Snapshot().DegradedIn("DE"); len(got) != 3 || got[0] != "commerzbank" || got[1] != "dkb" || got[2] != "ing" {
		t.Errorf("degraded in DE %v, want the three, sorted", got)
	}

	// A failing ledger keeps the last reading.
	src.err = errors.New("ledger down")
	if err := k.Refresh(context.Background()); err == nil || !k.Snapshot().Degraded("DE", "commerzbank") {
		t.Errorf("after a failed reading: %v, commerzbank degraded %v; want the error and the last reading kept", err, k.Snapshot().Degraded("DE", "commerzbank"))
	}
	var none *bankhealth.Keeper
	if none.Snapshot().Degraded("DE", "commerzbank") || len(none.Snapshot().Windows) != 0 {
		t.Error("no keeper: something is degraded")
	}
}
