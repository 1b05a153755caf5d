package ledger

import (
	"context"

	"go.opentelemetry.io/otel"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// tracer records the ledger's transactions when traces are on
// (telemetry.StartTracing); it records nothing otherwise.
var tracer = otel.Tracer("github.com/paybybank/checkout/ledger")

// span starts the span of one transaction, named "ledger <name>": which
// database, never a statement's values.
func (l *Ledger) span(ctx context.Context, name string) (context.Context, trace.Span) {
	system := semconv.DBSystemNameSQLite
	if l.dialect == postgres {
		system = semconv.DBSystemNamePostgreSQL
	}
	return tracer.Start(ctx, "ledger "+name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(system))
}
