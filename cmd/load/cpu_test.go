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
