package web

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Budgets are token buckets, one per key (an API token, a signed-in
// person): Rate requests a second on average, up to Burst at once. Each
// key's bucket may have its own rate (a merchant's api_rate). Buckets
// nobody used for budgetIdle are forgotten.
type Budgets struct {
	mu    sync.Mutex
	keys  map[string]*bucket
	swept time.Time
}

type bucket struct {
	*rate.Limiter
	used time.Time
}

// budgetIdle is how long an unused bucket is kept: by then it is full
// again at any rate worth setting.
const budgetIdle = 10 * time.Minute

// Spend is the answer of one request's spending: whether it may go on,
// and what the RateLimit headers tell the caller.
type Spend struct {
	OK bool
	// Quota and Window are the policy: Quota requests in Window seconds
	// (the burst, and the time it takes to earn it back).
	Quota, Window int
	// Remaining is how many more requests would pass now.
	Remaining int
	// Reset is the whole seconds until the bucket is full again; RetryAfter
	// those until one request would pass.
	Reset, RetryAfter int
}

// Spend takes one request from key's bucket, made or reset to r and burst.
func (b *Budgets) Spend(key string, r rate.Limit, burst int, now time.Time) Spend {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.keys == nil {
		b.keys = map[string]*bucket{}
	}
	if now.Sub(b.swept) > budgetIdle {
		for k, bk := range b.keys {
			if now.Sub(bk.used) > budgetIdle {
				delete(b.keys, k)
			}
		}
		b.swept = now
	}
	bk, ok := b.keys[key]
	if !ok {
		bk = &bucket{Limiter: rate.NewLimiter(r, burst)}
		b.keys[key] = bk
	}
	if bk.Limit() != r || bk.Burst() != burst {
		// The merchant's rate changed: keep what was spent, under the new
		// bounds.
		bk.SetLimitAt(now, r)
		bk.SetBurstAt(now, burst)
	}
	bk.used = now
	s := Spend{OK: bk.AllowN(now, 1), Quota: burst, Window: seconds(float64(burst) / float64(r))}
	tokens := bk.TokensAt(now)
	s.Remaining = max(0, int(math.Floor(tokens)))
	s.Reset = seconds((float64(burst) - tokens) / float64(r))
	if !s.OK {
		s.RetryAfter = max(1, seconds((1-tokens)/float64(r)))
	}
	return s
}

// seconds rounds a duration in seconds up to whole seconds, at least 0.
func seconds(f float64) int {
	if f <= 0 {
		return 0
	}
	return int(math.Ceil(f))
}

// Tell writes the RateLimit-Policy and RateLimit headers of the IETF
// httpapi draft (draft-ietf-httpapi-ratelimit-headers): the policy as
// quota q per window w seconds, and what is left of it (r) with the
// seconds until it is whole again (t). A refusal also says Retry-After.
func (s Spend) Tell(c echo.Context, name string) {
	h := c.Response().Header()
	h.Set("RateLimit-Policy", strconv.Quote(name)+";q="+strconv.Itoa(s.Quota)+";w="+strconv.Itoa(s.Window))
	h.Set("RateLimit", strconv.Quote(name)+";r="+strconv.Itoa(s.Remaining)+";t="+strconv.Itoa(s.Reset))
	if !s.OK {
		h.Set("Retry-After", strconv.Itoa(s.RetryAfter))
	}
}
