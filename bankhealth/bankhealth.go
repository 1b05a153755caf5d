// Package bankhealth tells which banks work right now: how the payments of
// the whole deployment ended at each bank over the last hour, 24 hours and
// 7 days, and which banks are degraded. The figures are worked out in the
// background from the ledger and served from memory, so that no shopper's
// page waits for them.
package bankhealth

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/paybybank/checkout/ledger"
)

// Window is a period the figures cover.
type Window struct {
	// Name is how the API and the console write it: "1h", "24h", "7d".
	Name string
	Span time.Duration
}

// Windows are the periods counted, shortest first. The first is counted
// exactly, from the payments themselves, and judges which banks are
// degraded; the others from the hourly rollups, so they start at the top
// of the hour their span reaches back to.
var Windows = []Window{{"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// WindowNamed returns the window called name.
func WindowNamed(name string) (Window, bool) {
	for _, w := range Windows {
		if w.Name == name {
			return w, true
		}
	}
	return Window{}, false
}

// Thresholds say when a bank is degraded: at least MinFinished payments
// finished in the last hour, of which fewer than MinSuccess completed.
type Thresholds struct {
	MinFinished int64
	MinSuccess  float64
}

// DefaultThresholds are BANK_HEALTH_MIN_FINISHED's and
// BANK_HEALTH_MIN_SUCCESS's defaults.
var DefaultThresholds = Thresholds{MinFinished: 10, MinSuccess: 0.5}

// Bank is how one bank's payments ended in a window.
type Bank struct {
	ledger.BankFigures
	// Degraded is the bank's state right now, judged on the last hour
	// whatever the window.
	Degraded bool
}

// Finished are the payments that ended, paid or not.
func (b Bank) Finished() int64 { return b.Completed + b.Canceled + b.Abandoned }

// SuccessRate is completed ÷ finished; false when none finished.
func (b Bank) SuccessRate() (float64, bool) {
	if b.Finished() == 0 {
		return 0, false
	}
	return float64(b.Completed) / float64(b.Finished()), true
}

// Figures are every bank's in one window, by country then the most
// payments first.
type Figures struct {
	Window Window
	Banks  []Bank
}

// Snapshot is one reading of every window.
type Snapshot struct {
	// At is when it was read; zero before the first reading.
	At      time.Time
	Windows []Figures
	// degraded are the degraded banks' ids by country, sorted.
	degraded map[string][]string
	// mostPaid are the banks with the most completed payments over
	// popularWindow by country, most first.
	mostPaid map[string][]string
}

// popularWindow is how far back completed payments count for the banks
// most paid with.
const popularWindow = 30 * 24 * time.Hour

// mostPaidKept is how many of a country's most paid banks a Snapshot keeps:
// more than the bank page shows, so that it still has enough when some of
// them are failing.
const mostPaidKept = 12

// MostPaid are the banks of country with the most completed payments over
// the last 30 days, deployment-wide, most first: the bank page's popular
// banks when the merchant pins none.
func (s *Snapshot) MostPaid(country string) []string { return s.mostPaid[country] }

// Figures returns the figures of window w.
func (s *Snapshot) Figures(w Window) Figures {
	for _, f := range s.Windows {
		if f.Window == w {
			return f
		}
	}
	return Figures{Window: w}
}

// Degraded reports whether bank id of country is degraded.
func (s *Snapshot) Degraded(country, id string) bool {
	_, found := slices.BinarySearch(s.degraded[country], id)
	return found
}

// DegradedIn are the ids of country's degraded banks, sorted.
func (s *Snapshot) DegradedIn(country string) []string { return s.degraded[country] }

// Source is where the figures come from: the ledger.
type Source interface {
	RecentBankHealth(ctx context.Context, since time.Time) ([]ledger.BankFigures, error)
	BankHealth(ctx context.Context, since time.Time) ([]ledger.BankFigures, error)
	MostPaid(ctx context.Context, since time.Time, limit int) (map[string][]string, error)
}

// Keeper reads the figures every RefreshEvery and keeps the last reading.
type Keeper struct {
	Source     Source
	Thresholds Thresholds
	// Every is how often Run reads the figures; RefreshEvery when 0.
	Every time.Duration
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	Log *slog.Logger

	snap atomic.Pointer[Snapshot]
}

// RefreshEvery is how often Run reads the figures unless Every says
// otherwise (BANK_HEALTH_REFRESH): a bank's outage shows on the shoppers'
// pages within about this long.
const RefreshEvery = 30 * time.Second

var empty = &Snapshot{}

// Snapshot returns the last reading: an empty one before the first, or
// from a nil Keeper (no ledger, nothing known, nothing degraded).
func (k *Keeper) Snapshot() *Snapshot {
	if k == nil {
		return empty
	}
	if s := k.snap.Load(); s != nil {
		return s
	}
	return empty
}

// Refresh reads every window from the ledger and keeps the reading. A
// failed reading keeps the last good one.
func (k *Keeper) Refresh(ctx context.Context) error {
	now := time.Now()
	if k.Now != nil {
		now = k.Now()
	}
	s := &Snapshot{At: now, degraded: map[string][]string{}}
	for i, w := range Windows {
		var figures []ledger.BankFigures
		var err error
		if i == 0 {
			figures, err = k.Source.RecentBankHealth(ctx, now.Add(-w.Span))
		} else {
			figures, err = k.Source.BankHealth(ctx, now.Add(-w.Span))
		}
		if err != nil {
			return err
		}
		f := Figures{Window: w}
		for _, b := range figures {
			f.Banks = append(f.Banks, Bank{BankFigures: b})
		}
		slices.SortFunc(f.Banks, func(a, b Bank) int {
			return cmp.Or(cmp.Compare(a.Country, b.Country), cmp.Compare(b.Started, a.Started), cmp.Compare(a.BankID, b.BankID))
		})
		s.Windows = append(s.Windows, f)
	}
	mostPaid, err := k.Source.MostPaid(ctx, now.Add(-popularWindow), mostPaidKept)
	if err != nil {
		return err
	}
	s.mostPaid = mostPaid
	for _, b := range s.Windows[0].Banks {
		if k.degraded(b) {
			s.degraded[b.Country] = append(s.degraded[b.Country], b.BankID)
		}
	}
	for _, ids := range s.degraded {
		slices.Sort(ids)
	}
	for _, f := range s.Windows {
		for i, b := range f.Banks {
			f.Banks[i].Degraded = s.Degraded(b.Country, b.BankID)
		}
	}
	k.snap.Store(s)
	return nil
}

// degraded judges a bank on its last hour.
func (k *Keeper) degraded(b Bank) bool {
	rate, ok := b.SuccessRate()
	return ok && b.Finished() >= k.Thresholds.MinFinished && rate < k.Thresholds.MinSuccess
}

// Run reads the figures at once and then every Every until ctx ends.
func (k *Keeper) Run(ctx context.Context) {
	t := time.NewTicker(cmp.Or(k.Every, RefreshEvery))
	defer t.Stop()
	for {
		err := k.Refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && k.Log != nil {
			k.Log.Warn("bank health: reading the ledger failed, keeping the last figures", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
