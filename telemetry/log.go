package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// ibanPattern finds IBANs in free text, written with or without spaces.
var ibanPattern = regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b`)

// MaskIBANs keeps the first and last four characters of every IBAN in s and
// hides the rest, DE89********3000, so that no log line carries a whole IBAN.
func MaskIBANs(s string) string {
	if !mayHoldIBAN(s) {
		return s
	}
	return ibanPattern.ReplaceAllStringFunc(s, func(iban string) string {
		compact := strings.ReplaceAll(iban, " ", "")
		if len(compact) <= 8 {
			return compact
		}
		return compact[:4] + strings.Repeat("*", len(compact)-8) + compact[len(compact)-4:]
	})
}

// mayHoldIBAN is a quick look for the start of an IBAN (two capital letters
// and two digits) and enough length, before the pattern's slower search:
// most log values (routes, ids, durations) have none.
func mayHoldIBAN(s string) bool {
	if len(s) < 15 {
		return false
	}
	for i := 0; i+3 < len(s); i++ {
		if isUpper(s[i]) && isUpper(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			return true
		}
	}
	return false
}

func isUpper(b byte) bool { return 'A' <= b && b <= 'Z' }
func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// Masking wraps a slog handler so that no IBAN reaches the log, whatever
// attribute or message carries it (an error text from the provider, say).
func Masking(next slog.Handler) slog.Handler { return masking{next} }

type masking struct{ next slog.Handler }

func (m masking) Enabled(ctx context.Context, l slog.Level) bool { return m.next.Enabled(ctx, l) }

func (m masking) Handle(ctx context.Context, r slog.Record) error {
	if !recordMayHoldIBAN(r) {
		return m.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, MaskIBANs(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(mask(a))
		return true
	})
	return m.next.Handle(ctx, out)
}

func (m masking) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = mask(a)
	}
	return masking{m.next.WithAttrs(masked)}
}

func (m masking) WithGroup(name string) slog.Handler { return masking{m.next.WithGroup(name)} }

// recordMayHoldIBAN reports whether any text of r may hold an IBAN; most
// records (a request's route, status and duration) pass as they are.
func recordMayHoldIBAN(r slog.Record) bool {
	found := mayHoldIBAN(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		switch v := a.Value.Resolve(); v.Kind() {
		case slog.KindString:
			found = mayHoldIBAN(v.String())
		case slog.KindGroup, slog.KindAny:
			// Groups, errors and other values are looked into by mask.
			found = true
		}
		return !found
	})
	return found
}

func mask(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, MaskIBANs(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		masked := make([]any, len(attrs))
		for i, g := range attrs {
			masked[i] = mask(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, MaskIBANs(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, MaskIBANs(x.String()))
		}
	}
	return a
}
