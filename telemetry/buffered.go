package telemetry

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// BufferedLog holds log lines for a moment and writes them out together:
// one write a tenth of a second instead of one a request, which was a
// tenth of the bank page's work. Lines at or above a level (see Urgent)
// and every line at Close are written out at once; a line bigger than the
// buffer goes straight through.
type BufferedLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// NewBufferedLog writes to w in bunches, at least every interval.
func NewBufferedLog(w io.Writer, interval time.Duration) *BufferedLog {
	b := &BufferedLog{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-tick.C:
				b.Flush()
			}
		}
	}()
	return b
}

func (b *BufferedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out the lines held.
func (b *BufferedLog) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close writes out the lines held and stops the writing in bunches.
func (b *BufferedLog) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}

// Urgent wraps next, which writes to b, so that records at level or above
// are written out at once: an operator watching for a warning sees it when
// it happens.
func (b *BufferedLog) Urgent(level slog.Level, next slog.Handler) slog.Handler {
	return urgent{next: next, level: level, log: b}
}

type urgent struct {
	next  slog.Handler
	level slog.Level
	log   *BufferedLog
}

func (u urgent) Enabled(ctx context.Context, l slog.Level) bool { return u.next.Enabled(ctx, l) }

func (u urgent) Handle(ctx context.Context, r slog.Record) error {
	err := u.next.Handle(ctx, r)
	if r.Level >= u.level {
		if ferr := u.log.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (u urgent) WithAttrs(attrs []slog.Attr) slog.Handler {
	return urgent{next: u.next.WithAttrs(attrs), level: u.level, log: u.log}
}

func (u urgent) WithGroup(name string) slog.Handler {
	return urgent{next: u.next.WithGroup(name), level: u.level, log: u.log}
}
