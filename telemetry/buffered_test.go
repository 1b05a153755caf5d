package telemetry_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/telemetry"
)

// syncBuffer is an output the test reads while the log writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Request lines wait a moment to be written out together; a warning is
// written out at once, with what waited before it; the rest goes out on
// its own within the interval, and at Close.
func TestTheLogWritesOutInBunches(t *testing.T) {
	out := &syncBuffer{}
	b := telemetry.NewBufferedLog(out, time.Hour)
	log := slog.New(b.Urgent(slog.LevelWarn, slog.NewJSONHandler(b, nil)))
	log.Info("request", "route", "/c/:token/banks")
	if got := out.String(); got != "" {
		t.Fatalf("a request line was written at once: %q", got)
	}
	log.Warn("the payments ledger does not answer")
	if got := out.String(); !strings.Contains(got, `"msg":"request"`) || !strings.Contains(got, `"level":"WARN"`) {
		t.Fatalf("after a warning the log holds %q", got)
	}
	log.Info("request", "route", "/c/:token/pay")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Count(got, "\n") != 3 || !strings.Contains(got, "/c/:token/pay") {
		t.Errorf("after Close the log holds %q", got)
	}

	soon := &syncBuffer{}
	b = telemetry.NewBufferedLog(soon, 10*time.Millisecond)
	defer b.Close()
	slog.New(slog.NewJSONHandler(b, nil)).Info("request")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(soon.String(), `"msg":"request"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a request line was never written out")
		}
	}
}
