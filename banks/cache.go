package banks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Cache serves the banks list for TTL, then asks the provider again.
type Cache struct {
	src      Source
	ttl      time.Duration
	withTest bool
	log      *slog.Logger
	now      func() time.Time

	store *gocache.Cache
	group singleflight.Group
	last  atomic.Pointer[List]
	// shrunk counts fetches in a row that brought a much shorter list.
	shrunk atomic.Int64
	stats  stats
}

// Stats counts how the cache answered, for metrics and tests.
type Stats struct {
	Hits, Misses, StaleServes, Fetches, Failures int64
}

type stats struct {
	hits, misses, stale, fetches, failures atomic.Int64
}

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
	return &Cache{
		src: src, ttl: ttl, withTest: withTest, log: log, now: time.Now,
		store: gocache.New(ttl, 0),
	}
}

// List returns the banks list: the cached copy, a fresh one, or, when the
// provider fails, the last good copy marked Stale. It fails only when the
// provider fails and there has never been a good copy. Errors are not cached.
func (c *Cache) List(ctx context.Context) (*List, error) {
	if v, ok := c.store.Get(key); ok {
		l := v.(*List)
		c.stats.hits.Add(1)
		if l.Stale {
			c.stats.stale.Add(1)
		}
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

func (c *Cache) fetch(ctx context.Context) (*List, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	c.stats.fetches.Add(1)
	institutions, err := c.src.Institutions(ctx)
	if err == nil {
		l := NewList(institutions, c.withTest, c.now())
		if err = c.plausible(l); err == nil {
			l.remember(c.last.Load())
			c.last.Store(l)
			c.store.Set(key, l, c.ttl)
			return l, nil
		}
	}
	c.stats.failures.Add(1)
	last := c.last.Load()
	if last == nil {
		c.log.ErrorContext(ctx, "banks list unavailable", "err", err)
		return nil, err
	}
	c.log.WarnContext(ctx, "banks list: provider failed, serving the last good copy", "err", err, "fetched_at", last.FetchedAt)
	stale := *last
	stale.Stale = true
	c.stats.stale.Add(1)
	c.store.Set(key, &stale, min(c.ttl, staleRetry))
	return &stale, nil
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
	last := c.last.Load()
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
func (c *Cache) Warm() bool { return c.last.Load() != nil }

// Stats returns the counters so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.stats.hits.Load(), Misses: c.stats.misses.Load(), StaleServes: c.stats.stale.Load(),
		Fetches: c.stats.fetches.Load(), Failures: c.stats.failures.Load(),
	}
}
