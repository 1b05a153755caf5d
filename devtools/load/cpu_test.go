package main

import (
	"testing"
	"time"
)

// A process's time is read past a name that holds spaces and parentheses.
func TestStatCPUTime(t *testing.T) {
	line := []byte("4242 (a (odd) name) S 1 4242 4242 0 -1 4194560 2561 0 0 0 1234 566 0 0 20 0 10 0 9000 2035332 28716 18446744073709551615\n")
	got, ok := statCPUTime(line)
	if !ok || got != 18*time.Second {
		t.Errorf("got %s, %v; want 18s (1,234 + 566 ticks of a hundredth)", got, ok)
	}
	if _, ok := statCPUTime([]byte("4242 (short) S 1")); ok {
		t.Error("a cut line was read")
	}
}

// A server process that ends during a turn (a vacuum worker, say) leaves
// the server's figure at what the others spent, never below; one that
// starts during it counts from its start.
func TestAProcessEndingInATurnTakesNothingAway(t *testing.T) {
	reads := []map[int]time.Duration{
		{1: 5 * time.Second, 2: 9 * time.Second},
		{1: 6 * time.Second, 3: 2 * time.Second},
	}
	server := process{"server", func() map[int]time.Duration {
		r := reads[0]
		reads = reads[1:]
		return r
	}}
	m := newCPUMeter(server, pid("gone", 0))
	m.turn(func() {})
	if got := m.per(1, time.Second); got != "server 3.00 s" {
		t.Errorf("got %q, want the 1 s process 1 spent and the 2 s process 3 spent, and no figure for a process never read", got)
	}
}
