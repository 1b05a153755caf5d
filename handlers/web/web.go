// Package web is the small kit the app's audiences share (the shopper's
// steps in handlers/shopper, the merchant API in handlers/api, the console
// in handlers/console): the description of the request being served, the
// one renderer and the pages' content policy, errors told as pages and as
// JSON and the one mapping between them, the answer while the ledger is
// away, rate budgets, QR codes, and the logger of a request.
package web

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// APIError is an error told to a program as JSON:
// {"error": {"code", "message", "fields": [{"field", "reason", "message"}]}}.
// Err, when set, is the cause, for the log only.
type APIError struct {
	Status  int
	Code    string
	Message string
	Fields  []rules.FieldError
	// Remaining, when set, is what may still be refunded of an order
	// (refund_exceeds_paid).
	Remaining string
	Err       error
}

func (e *APIError) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *APIError) Unwrap() error { return e.Err }

type fieldJSON struct {
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Body is the error as the API's JSON.
func (e *APIError) Body() any {
	type errorJSON struct {
		Code      string      `json:"code"`
		Message   string      `json:"message"`
		Fields    []fieldJSON `json:"fields,omitempty"`
		Remaining string      `json:"remaining,omitempty"`
	}
	out := errorJSON{Code: e.Code, Message: e.Message, Remaining: e.Remaining}
	for _, f := range e.Fields {
		out.Fields = append(out.Fields, fieldJSON{f.Field, f.Reason, f.Message})
	}
	return map[string]any{"error": out}
}

// TellProgram answers c with e; a 401 says which scheme to use.
func TellProgram(c echo.Context, e *APIError) error {
	if e.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
	}
	return c.JSON(e.Status, e.Body())
}

// Logger is base carrying the request's id (X-Request-Id) and, when
// traces are on, its trace id, so that every line of one request can be
// found together, in the log and beside its trace.
func Logger(c echo.Context, base *slog.Logger) *slog.Logger {
	var attrs []any
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		attrs = append(attrs, "request_id", id)
	}
	if sc := trace.SpanContextFromContext(c.Request().Context()); sc.IsValid() {
		attrs = append(attrs, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	if len(attrs) == 0 {
		return base
	}
	return base.With(attrs...)
}

// OriginOf is the origin of a URL as text, "" when it does not parse.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return merchant.Origin(u)
}
