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

// slowSource is a provider whose every institutions call waits until the
// test answers it: began says a call is waiting, answer ends it.
type slowSource struct {
	began  chan struct{}
	answer chan []pisclient.Institution
}

func newSlowSource() *slowSource {
	return &slowSource{began: make(chan struct{}, 10), answer: make(chan []pisclient.Institution)}
}

func (s *slowSource) Institutions(ctx context.Context) ([]pisclient.Institution, error) {
	s.began <- struct{}{}
	select {
	case l := <-s.answer:
		if l == nil {
			return nil, errors.New("provider down")
		}
		return l, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// answered asks c for the list as a shopper's page does, and fails the
// test when the answer waits on the provider, whose calls the tests hold
// until they answer them.
func answered(t *testing.T, c *banks.Cache) *banks.List {
	t.Helper()
	got := make(chan *banks.List, 1)
	go func() {
		l, err := c.List(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		// Error, not Fatal: shoppers are asked for from goroutines too.
		t.Error("a request waited for the provider's answer")
		return &banks.List{}
	}
}

var (
	ing = pisclient.Institution{ID: "ing", Name: "ING", CountryCode: "DE"}
	dkb = pisclient.Institution{ID: "dkb", Name: "DKB", CountryCode: "DE"}
)

// asked waits until the provider is asked, and fails the test if it is
// not.
func asked(t *testing.T, src *slowSource) {
	t.Helper()
	select {
	case <-src.began:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider was never asked")
	}
}

// warmCache is a cache of ttl over a slow provider that has answered its
// first call with ING alone.
func warmCache(t *testing.T, ttl time.Duration) (*banks.Cache, *slowSource, *clock) {
	t.Helper()
	src, now := newSlowSource(), &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	c := banks.NewCache(src, ttl, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	banks.SetClock(c, now.Now)
	first := make(chan error, 1)
	go func() { _, err := c.List(context.Background()); first <- err }()
	asked(t, src)
	src.answer <- []pisclient.Institution{ing}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	return c, src, now
}

// until asks c for the list until it satisfies ok: a background refresh
// that was answered is in place soon, however busy the machine.
func until(t *testing.T, c *banks.Cache, ok func(*banks.List) bool) *banks.List {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if l := answered(t, c); ok(l) {
			return l
		} else if time.Now().After(deadline) {
			t.Fatalf("the refreshed list never came; the cache serves %d banks, stale %v", l.Len(), l.Stale)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShoppersAcrossAnExpiryDoNotWaitForTheProvider: past most of its TTL
// the list is refreshed in the background, and every shopper who comes
// while the provider takes its time, before and after the list's expiry,
// is answered from the list at hand; the provider is asked once.
func TestShoppersAcrossAnExpiryDoNotWaitForTheProvider(t *testing.T) {
	const ttl = 5 * time.Minute
	c, src, now := warmCache(t, ttl)

	now.Add(ttl * 7 / 10)
	if l := answered(t, c); l.Len() != 1 {
		t.Fatalf("before the refresh is due: %d banks", l.Len())
	}
	select {
	case <-src.began:
		t.Fatal("the provider was asked at 70 % of the TTL")
	default:
	}

	now.Add(ttl * 15 / 100) // 85 %: the refresh is due
	if l := answered(t, c); l.Len() != 1 || l.Stale {
		t.Fatalf("while the refresh begins: %d banks, stale %v", l.Len(), l.Stale)
	}
	asked(t, src) // the refresh waits on the provider from here on

	now.Add(ttl * 3 / 2) // the list's TTL is behind, twice over
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if l := answered(t, c); l.Len() != 1 || l.Stale {
				t.Errorf("past the expiry, during the refresh: %d banks, stale %v", l.Len(), l.Stale)
			}
		})
	}
	wg.Wait()
	select {
	case <-src.began:
		t.Error("a second call to the provider while one is under way")
	default:
	}

	src.answer <- []pisclient.Institution{ing, dkb}
	until(t, c, func(l *banks.List) bool { return l.Len() == 2 && !l.Stale })
	if st := c.Stats(); st.Fetches != 2 || st.Refreshes != 1 || st.Misses != 1 {
		t.Errorf("stats %+v: want the first fetch, one refresh, and no miss after the first", st)
	}
}

// TestAFailedRefreshKeepsTheLastGoodListMarkedStale: a provider that fails
// the refresh leaves shoppers the list they had, now marked stale, and
// none of them waits for it; the provider is asked again after a while,
// again in the background.
func TestAFailedRefreshKeepsTheLastGoodListMarkedStale(t *testing.T) {
	const ttl = 5 * time.Minute
	c, src, now := warmCache(t, ttl)

	now.Add(ttl * 9 / 10)
	answered(t, c)
	asked(t, src)
	now.Add(ttl / 2)
	if l := answered(t, c); l.Len() != 1 || l.Stale {
		t.Fatalf("during the refresh: %d banks, stale %v", l.Len(), l.Stale)
	}
	src.answer <- nil // the provider fails
	until(t, c, func(l *banks.List) bool { return l.Stale && l.Len() == 1 })

	// The stale copy is refreshed ahead of its own end too.
	now.Add(14 * time.Second)
	if l := answered(t, c); !l.Stale || l.Len() != 1 {
		t.Fatalf("the stale copy: %d banks, stale %v", l.Len(), l.Stale)
	}
	asked(t, src)
	src.answer <- []pisclient.Institution{ing, dkb}
	until(t, c, func(l *banks.List) bool { return l.Len() == 2 && !l.Stale })
	if st := c.Stats(); st.Failures != 1 || st.Misses != 1 {
		t.Errorf("stats %+v: want one failure and no miss after the first", st)
	}
}

// TestAListPastItsTTLIsServedWhileItIsRefreshed: an instance nobody asked
// for the list in the last part of its TTL answers its next shopper from
// the list at hand, up to one TTL past its own, and refreshes it.
func TestAListPastItsTTLIsServedWhileItIsRefreshed(t *testing.T) {
	const ttl = 5 * time.Minute
	c, src, now := warmCache(t, ttl)
	now.Add(ttl * 19 / 10)
	if l := answered(t, c); l.Len() != 1 {
		t.Fatalf("past the TTL: %d banks", l.Len())
	}
	asked(t, src)
	src.answer <- []pisclient.Institution{ing, dkb}
	until(t, c, func(l *banks.List) bool { return l.Len() == 2 })
}

// TestAListNobodyAskedForIsFetchedAnew: an instance that served no one for
// twice the list's TTL does not hand out that list; its next shopper
// waits for the provider, as the first did.
func TestAListNobodyAskedForIsFetchedAnew(t *testing.T) {
	const ttl = 5 * time.Minute
	c, src, now := warmCache(t, ttl)
	now.Add(2 * ttl)
	got := make(chan *banks.List, 1)
	go func() { l, _ := c.List(context.Background()); got <- l }()
	asked(t, src)
	src.answer <- []pisclient.Institution{ing, dkb}
	if l := <-got; l.Len() != 2 {
		t.Errorf("the shopper after the expiry got %d banks, want the 2 of the new list", l.Len())
	}
}

// TestTheSameListAgainKeepsItsPages: a refresh that brings the list as it
// was keeps the same value, so the bank pages kept rendered from it stay
// and no shopper waits for them to be rendered again; a changed list is a
// new value.
func TestTheSameListAgainKeepsItsPages(t *testing.T) {
	const ttl = 5 * time.Minute
	c, src, now := warmCache(t, ttl)
	first := answered(t, c)
	refreshWith := func(institutions []pisclient.Institution) *banks.List {
		t.Helper()
		now.Add(ttl * 9 / 10)
		answered(t, c)
		asked(t, src)
		src.answer <- institutions
		deadline := time.Now().Add(10 * time.Second)
		for banks.Refreshing(c) {
			if time.Now().After(deadline) {
				t.Fatal("the refresh never ended")
			}
			time.Sleep(time.Millisecond)
		}
		return answered(t, c)
	}
	if l := refreshWith([]pisclient.Institution{ing}); l != first {
		t.Error("the same list again is a new value: every kept page is rendered again")
	}
	if l := refreshWith([]pisclient.Institution{ing, dkb}); l == first || l.Len() != 2 {
		t.Errorf("a changed list: the same value %v, %d banks", l == first, l.Len())
	}
	if st := c.Stats(); st.Misses != 1 || st.Refreshes != 2 {
		t.Errorf("stats %+v: want two refreshes ahead and no miss after the first", st)
	}
}
