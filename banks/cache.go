package banks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	gocache "github.com/patrickmn/go-cache"
	"golang.org/x/sync/singleflight"

	"github.com/paybybank/checkout/pisclient"
)

// Source is where the banks list comes from: the provider client.
type Source interface {
	Institutions(ctx context.Context) ([]pisclient.Institution, error)
}

// Cache serves the banks list for TTL. A request that finds the list past
// refreshShare of its TTL starts one refresh in the background and is
// answered from the list at hand, as is every request until the refresh
// ends, past the TTL too: shoppers who come while the provider answers
// never wait for it. A list nobody asked for in the last part of its TTL
// is still taken, and refreshed, up to one TTL past its own; only one
// older than that, or none at all, is fetched while the request waits.
type Cache struct {
	src      Source
	ttl      time.Duration
	withTest bool
	log      *slog.Logger
	now      func() time.Time

	// store holds the entry served, under key, until a while after it
	// lapses (by then no refresh can still be serving it); held is the
	// last list fetched, fresh or stale, kept past that for the stale
	// copy an outage serves (held), and nil before the first good fetch.
	store *gocache.Cache
	held  atomic.Pointer[entry]
	// refreshing is set while a background refresh runs.
	refreshing atomic.Bool
	group      singleflight.Group
	// shrunk counts fetches in a row that brought a much shorter list.
	shrunk atomic.Int64
	stats  stats
}

// entry is one list as the cache holds it.
type entry struct {
	list *List
	// refreshAt is when a request starts a background refresh; lapses,
	// one TTL past the list's own, when a request no longer takes it
	// unless a refresh is under way.
	refreshAt, lapses time.Time
	// answered is when the provider last sent a good list.
	answered time.Time
}

// Stats counts how the cache answered, for metrics and tests.
type Stats struct {
	Hits, Misses, StaleServes, Fetches, Failures int64
	// Refreshes are the fetches started in the background while
	// requests are answered from the list at hand.
	Refreshes int64
}

type stats struct {
	hits, misses, stale, fetches, failures, refreshes atomic.Int64
}

// refreshShare is the share of the TTL after which a request starts a
// refresh: early enough that a provider slow to answer still answers
// before the list expires.
const refreshShare = 0.8

// staleRetry is how long a stale copy is served before the provider is asked
// again, so that an outage does not turn every page view into an upstream call.
const staleRetry = 15 * time.Second

// fetchTimeout bounds one upstream fetch, retries included. The fetch runs for
// every shopper waiting on it, so it does not end when the first one leaves.
const fetchTimeout = 20 * time.Second

const key = "institutions"

// NewCache returns a cache over src. Test banks are kept only withTest
// (sandbox mode).
func NewCache(src Source, ttl time.Duration, withTest bool, log *slog.Logger) *Cache {
	return &Cache{src: src, ttl: ttl, withTest: withTest, log: log, now: time.Now, store: gocache.New(gocache.NoExpiration, 0)}
}

// List returns the banks list: the cached copy, a fresh one, or, when the
// provider fails, the last good copy marked Stale. It fails only when the
// provider fails and there has never been a good copy. Errors are not cached.
func (c *Cache) List(ctx context.Context) (*List, error) {
	if l, ok := c.cached(); ok {
		return l, nil
	}
	c.stats.misses.Add(1)
	ch := c.group.DoChan(key, func() (any, error) {
		return c.fetch(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*List), nil
	}
}

// cached is the list at hand, unless it lapsed with no refresh under way;
// past refreshShare of its TTL it starts one.
func (c *Cache) cached() (*List, bool) {
	now := c.now()
	e := c.entry()
	if e != nil && !now.Before(e.lapses) && !c.refreshing.Load() {
		// A refresh may have ended between the two reads: its list is
		// in place now.
		e = c.entry()
	}
	if e == nil || !now.Before(e.lapses) && !c.refreshing.Load() {
		return nil, false
	}
	if !now.Before(e.refreshAt) {
		c.refresh()
	}
	c.stats.hits.Add(1)
	if e.list.Stale {
		c.stats.stale.Add(1)
	}
	return e.list, true
}

// refresh fetches the list in the background, unless a refresh is under
// way already. It shares its call with any request that finds no list.
func (c *Cache) refresh() {
	if !c.refreshing.CompareAndSwap(false, true) {
		return
	}
	c.stats.refreshes.Add(1)
	go func() {
		// Cleared once the new list is in place, so that no request
		// between the two finds the old one lapsed with no refresh.
		defer c.refreshing.Store(false)
		c.group.Do(key, func() (any, error) { return c.fetch(context.Background()) })
	}()
}

func (c *Cache) fetch(ctx context.Context) (*List, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	c.stats.fetches.Add(1)
	institutions, err := c.src.Institutions(ctx)
	if last := c.last(); err == nil && last != nil && !last.Stale && reflect.DeepEqual(last.source, institutions) {
		// The same list again: the same value, so that the pages kept
		// rendered from it stay (handlers/shopper's pageCache).
		c.shrunk.Store(0)
		c.keep(last, c.ttl, c.now())
		return last, nil
	}
	if err == nil {
		l := NewList(institutions, c.withTest, c.now())
		if err = c.plausible(l); err == nil {
			l.remember(c.last())
			c.keep(l, c.ttl, c.now())
			return l, nil
		}
	}
	c.stats.failures.Add(1)
	last := c.last()
	if last == nil {
		c.log.ErrorContext(ctx, "banks list unavailable", "err", err)
		return nil, err
	}
	answered := c.held.Load().answered
	c.log.WarnContext(ctx, "banks list: provider failed, serving the last good copy", "err", err, "answered_at", answered)
	stale := *last
	stale.Stale = true
	c.stats.stale.Add(1)
	c.keep(&stale, min(c.ttl, staleRetry), answered)
	return &stale, nil
}

// keep makes l the list served for ttl from now, and while it is
// refreshed for one ttl more; the provider last sent a good list at
// answered. The store (go-cache) lets go of it a fetch's time after that,
// when no refresh can still be serving it.
func (c *Cache) keep(l *List, ttl time.Duration, answered time.Time) {
	now := c.now()
	e := &entry{list: l, refreshAt: now.Add(time.Duration(refreshShare * float64(ttl))), lapses: now.Add(2 * ttl), answered: answered}
	c.held.Store(e)
	c.store.Set(key, e, 2*ttl+fetchTimeout)
}

// entry is the entry in the store, nil when there is none.
func (c *Cache) entry() *entry {
	if v, ok := c.store.Get(key); ok {
		return v.(*entry)
	}
	return nil
}

// last is the list served last, fresh or stale; nil before the first
// good fetch.
func (c *Cache) last() *List {
	if e := c.held.Load(); e != nil {
		return e.list
	}
	return nil
}

// ErrImplausibleList means the provider answered with a list that is empty
// or a fraction of the last good one: an upstream failure, not the truth.
var ErrImplausibleList = errors.New("banks: the provider's list is empty or implausibly short")

// shrinkAccepted is how many fetches in a row must bring the same shrunken
// list before it is believed: banks do close, but not half of them at once.
const shrinkAccepted = 3

// plausible refuses an empty list, and one under half the last good list
// until it has come shrinkAccepted times in a row.
func (c *Cache) plausible(l *List) error {
	n := l.Len()
	if n == 0 {
		return ErrImplausibleList
	}
	last := c.last()
	if last == nil || n*2 >= last.Len() {
		c.shrunk.Store(0)
		return nil
	}
	if c.shrunk.Add(1) >= shrinkAccepted {
		c.log.Warn("banks list: accepting a much shorter list after it came again and again", "banks", n, "before", last.Len())
		c.shrunk.Store(0)
		return nil
	}
	return fmt.Errorf("%w: %d banks where there were %d", ErrImplausibleList, n, last.Len())
}

// Warm reports whether a list, fresh or stale, is at hand.
func (c *Cache) Warm() bool { return c.held.Load() != nil }

// Stats returns the counters so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.stats.hits.Load(), Misses: c.stats.misses.Load(), StaleServes: c.stats.stale.Load(),
		Fetches: c.stats.fetches.Load(), Failures: c.stats.failures.Load(), Refreshes: c.stats.refreshes.Load(),
	}
}
