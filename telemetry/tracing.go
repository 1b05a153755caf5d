package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName names the app in traces unless OTEL_SERVICE_NAME says
// otherwise.
const ServiceName = "pay-by-bank-checkout"

// TracingWanted reports whether the standard OpenTelemetry variables ask
// for traces: an OTLP endpoint is set, and neither OTEL_SDK_DISABLED nor
// OTEL_TRACES_EXPORTER=none turns them off.
func TracingWanted(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// StartTracing sends traces over OTLP/HTTP, configured by the standard
// OTEL_* variables (endpoint, headers, timeout, compression, sampler, batch
// sizes, service name and resource attributes), and makes W3C trace
// context the way traces cross to and from other programs. A failed export
// is logged to log. The returned function flushes what is left and stops.
func StartTracing(ctx context.Context, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("traces: export failed", "err", err) }))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp.Shutdown, nil
}

// Tracer is the app's tracer, from the provider StartTracing installed; it
// records nothing when tracing is off.
func Tracer() trace.Tracer { return otel.Tracer("github.com/paybybank/checkout") }

// TraceRequests starts a span per request named by its route template
// ("POST /c/:token/pay"), never by its path, which holds tokens and order
// ids. Its attributes are the method, the route and the status: no
// address, query, header or body. Errors are handed to Echo's error
// handler inside the span, so the error's log line carries the trace id.
func TraceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	tracer := Tracer()
	return func(c echo.Context) error {
		r := c.Request()
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		method := r.Method
		if !slices.Contains(knownMethods, method) {
			method = "_OTHER" // as the semantic conventions say: any token may come
		}
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route)))
		defer span.End()
		c.SetRequest(r.WithContext(ctx))
		if err := next(c); err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return nil
	}
}

var knownMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}

// TraceTransport makes each call to the provider a client span, named by
// its endpoint (institutions, create, status), and passes the trace on in
// a traceparent header. The payment's id, the key and the bodies stay out.
func TraceTransport(next http.RoundTripper) http.RoundTripper {
	tracer := Tracer()
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		endpoint := Endpoint(r)
		ctx, span := tracer.Start(r.Context(), "provider "+endpoint, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(r.Method), attribute.String("provider.endpoint", endpoint),
				semconv.ServerAddress(r.URL.Hostname())))
		defer span.End()
		r = r.Clone(ctx)
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(r.Header))
		res, err := next.RoundTrip(r)
		switch {
		case err != nil:
			span.SetStatus(codes.Error, "no answer")
		default:
			span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
			if res.StatusCode >= 500 {
				span.SetStatus(codes.Error, http.StatusText(res.StatusCode))
			}
		}
		return res, err
	})
}

// WithTraceIDs is next with the trace and span ids of the context's span
// in every line logged with a context (slog's …Context calls, LogAttrs),
// unless the logger carries them already (web.Logger).
func WithTraceIDs(next slog.Handler) slog.Handler { return traceIDs{next: next} }

type traceIDs struct {
	next slog.Handler
	// carried is set once a trace_id was added with With.
	carried bool
}

func (t traceIDs) Enabled(ctx context.Context, l slog.Level) bool { return t.next.Enabled(ctx, l) }

func (t traceIDs) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !t.carried {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return t.next.Handle(ctx, r)
}

func (t traceIDs) WithAttrs(as []slog.Attr) slog.Handler {
	carried := t.carried || slices.ContainsFunc(as, func(a slog.Attr) bool { return a.Key == "trace_id" })
	return traceIDs{next: t.next.WithAttrs(as), carried: carried}
}

func (t traceIDs) WithGroup(name string) slog.Handler {
	return traceIDs{next: t.next.WithGroup(name), carried: t.carried}
}
