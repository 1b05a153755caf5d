package password

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// Gate bounds how many passwords are hashed at once. Each hash holds its
// memory cost (19 MiB by default) while it runs: a hundred sign-ins at once
// would otherwise take gigabytes. A try that finds every slot taken waits a
// little, then is turned away (ErrBusy) and asked to come back, rather than
// growing the app's memory.
type Gate struct {
	slots chan struct{}
	wait  time.Duration
	// hashed counts the hashes computed through the gate; running and
	// peak those running now and at most.
	hashed, running, peak atomic.Int64
}

// DefaultSlots is about twice the cores: hashes are computed as fast as
// the machine can, and no more are held in memory than that.
func DefaultSlots() int { return 2 * runtime.GOMAXPROCS(0) }

// NewGate lets slots hashes run at once; a try waits up to wait for one.
func NewGate(slots int, wait time.Duration) *Gate {
	return &Gate{slots: make(chan struct{}, max(slots, 1)), wait: wait}
}

// ErrBusy means every slot stayed taken while the try waited.
var ErrBusy = errors.New("password: too many passwords being checked at once")

// Do runs hash once a slot is free, or returns ErrBusy.
func (g *Gate) Do(ctx context.Context, hash func()) error {
	select {
	case g.slots <- struct{}{}:
	default:
		timer := time.NewTimer(g.wait)
		defer timer.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-timer.C:
			return ErrBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { <-g.slots }()
	g.hashed.Add(1)
	now := g.running.Add(1)
	defer g.running.Add(-1)
	for seen := g.peak.Load(); now > seen && !g.peak.CompareAndSwap(seen, now); seen = g.peak.Load() {
	}
	hash()
	return nil
}

// Peak is the most hashes that ran at once.
func (g *Gate) Peak() int64 { return g.peak.Load() }

// Hashed is how many hashes were computed through the gate.
func (g *Gate) Hashed() int64 { return g.hashed.Load() }
