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
