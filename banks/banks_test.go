package banks_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/pisclient"
)

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Crédit Agricole":    "credit agricole",
		"Sparkasse KölnBonn": "sparkasse kolnbonn",
		"Caixa-Geral  d'Ó":   "caixa geral d o",
		"ΕΘΝΙΚΗ Τράπεζα":     "εθνικη τραπεζα",
		"Straße":             "strasse",
	} {
		if got := banks.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearch(t *testing.T) {
	l := banks.NewList([]pisclient.Institution{
		{ID: "ca", Name: "Crédit Agricole", CountryCode: "FR", BIC: "AGRIFRPP"},
		{ID: "cm", Name: "Crédit Mutuel", CountryCode: "FR"},
		{ID: "ca", Name: "Crédit Agricole Italia", CountryCode: "IT"},
		{ID: "t", Name: "Test Bank", CountryCode: "FR", IsForTest: true},
	}, false, time.Now())
	names := func(list []banks.Bank) (out []string) {
		for _, b := range list {
			out = append(out, b.Name)
		}
		return out
	}
	if got := names(l.Matches("FR", "credit agri")); len(got) != 1 || got[0] != "Crédit Agricole" {
		t.Errorf("credit agri: %v", got)
	}
	if got := names(l.Matches("FR", "agrifr")); len(got) != 1 {
		t.Errorf("by BIC: %v", got)
	}
	if got := names(l.Matches("FR", "")); len(got) != 2 {
		t.Errorf("all French banks without test banks: %v", got)
	}
	if got := l.Countries(); len(got) != 2 || got[0] != "FR" || got[1] != "IT" {
		t.Errorf("countries %v", got)
	}
}

type source struct {
	calls   atomic.Int32
	fail    atomic.Bool
	release chan struct{}
}

func (s *source) Institutions(ctx context.Context) ([]pisclient.Institution, error) {
	s.calls.Add(1)
	if s.release != nil {
		<-s.release
	}
	if s.fail.Load() {
		return nil, errors.New("provider down")
	}
	return []pisclient.Institution{{ID: "b", Name: "Bank", CountryCode: "DE"}}, nil
}

func TestCacheSharesOneCallAndNeverCachesErrors(t *testing.T) {
	src := &source{release: make(chan struct{})}
	c := banks.NewCache(src, time.Hour, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := c.List(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	for src.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the other 49 join the call in flight
	close(src.release)
	wg.Wait()
	if n := src.calls.Load(); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}

	failing := &source{}
	failing.fail.Store(true)
	c = banks.NewCache(failing, time.Hour, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := c.List(context.Background()); err == nil {
		t.Fatal("no error with no list at all")
	}
	failing.fail.Store(false)
	if l, err := c.List(context.Background()); err != nil || l.Stale {
		t.Errorf("after recovery: %v, stale=%v; the error was cached", err, l != nil && l.Stale)
	}
}

// lists answers with the next list each time it is asked.
type lists struct {
	mu   sync.Mutex
	next [][]pisclient.Institution
}

func (s *lists) Institutions(context.Context) ([]pisclient.Institution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.next[0]
	if len(s.next) > 1 {
		s.next = s.next[1:]
	}
	return l, nil
}

// A bank the provider drops keeps its name, for a link or a shopper that
// still names it, until it comes back.
func TestADroppedBankKeepsItsName(t *testing.T) {
	ing := pisclient.Institution{ID: "ing", Name: "ING", CountryCode: "DE"}
	dkb := pisclient.Institution{ID: "dkb", Name: "DKB", CountryCode: "DE"}
	n26 := pisclient.Institution{ID: "n26", Name: "N26", CountryCode: "DE"}
	src := &lists{next: [][]pisclient.Institution{{ing, dkb, n26}, {ing, n26}, {ing, n26}, {ing, dkb, n26}}}
	c := banks.NewCache(src, time.Nanosecond, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	list := func() *banks.List {
		t.Helper()
		time.Sleep(time.Millisecond)
		l, err := c.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := list(); l.Gone("DE", "dkb") {
		t.Error("DKB gone while listed")
	}
	for range 2 {
		l := list()
		if _, listed := l.Bank("DE", "dkb"); listed || !l.Gone("DE", "dkb") {
			t.Errorf("DKB dropped: listed %v, gone %v", listed, l.Gone("DE", "dkb"))
		}
		if name, ok := l.Name("DE", "dkb"); !ok || name != "DKB" {
			t.Errorf("a dropped bank's name %q %v, want DKB", name, ok)
		}
	}
	if l := list(); l.Gone("DE", "dkb") {
		t.Error("DKB back in the list but still gone")
	}
	if _, ok := list().Name("DE", "never"); ok {
		t.Error("a name for a bank no list held")
	}
}
