package telemetry_test

import (
	"context"
	"testing"

	"github.com/paybybank/checkout/telemetry"
)

// BenchmarkSpanWhenTracingIsOff is what a ledger transaction, a provider
// call or a webhook delivery pays for its span when no OTLP endpoint is
// set: the global no-op tracer.
func BenchmarkSpanWhenTracingIsOff(b *testing.B) {
	tracer := telemetry.Tracer()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, "ledger Move")
		span.End()
	}
}
