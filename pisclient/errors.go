package pisclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Sentinels for what callers branch on; match them with errors.Is.
var (
	ErrUnauthorized   = errors.New("pisclient: the provider refused the API key")
	ErrNotFound       = errors.New("pisclient: not found")
	ErrDuplicateOrder = errors.New("pisclient: merchant_order_id already used")
	ErrRateLimited    = errors.New("pisclient: rate limited by the provider")
	ErrUnavailable    = errors.New("pisclient: provider unavailable")
	// ErrBadResponse means the provider answered with a body this client
	// cannot read (malformed JSON, a missing field).
	ErrBadResponse = errors.New("pisclient: unreadable provider response")
	// ErrOutcomeUnknown means a payment creation was sent but no answer came
	// back: the payment may or may not exist. Read its status before trying again.
	ErrOutcomeUnknown = errors.New("pisclient: payment creation outcome unknown")
)

// maxErrorBody bounds the copy of an error body kept in an APIError.
const maxErrorBody = 2048

// APIError is a non-2xx answer from the provider. The provider documents no
// error format, status codes or error codes (docs/provider.md), so Code and
// Message are filled from the common shapes when present and Body keeps a
// bounded copy.
type APIError struct {
	StatusCode int
	Code       string
	Message    string
	Body       string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("pisclient: provider answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Is maps the HTTP status and the provider's code onto the sentinels.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrUnavailable:
		return e.StatusCode >= 500
	case ErrDuplicateOrder:
		return e.StatusCode == http.StatusConflict || mentionsDuplicate(e.Code) || mentionsDuplicate(e.Message)
	}
	return false
}

func mentionsDuplicate(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "duplicate") || strings.Contains(s, "already exist") || strings.Contains(s, "already used")
}

// LinkNotFoundError means a creation answer carried no payment link under any
// key this client looks at. Keys lists the keys it saw, to help whoever
// reads the log adjust the client to the real provider.
type LinkNotFoundError struct {
	Keys []string
}

func (e *LinkNotFoundError) Error() string {
	return "pisclient: no payment link in the creation response; keys seen: " + strings.Join(e.Keys, ", ")
}

func (e *LinkNotFoundError) Unwrap() error { return ErrBadResponse }

// newAPIError reads the provider's error body defensively: {"code","message"},
// {"error":{"code","message"}}, {"error":"..."}, {"errors":[{...}]} or plain text.
func newAPIError(status int, body []byte, redact func(string) string) *APIError {
	e := &APIError{StatusCode: status, Body: redact(truncate(string(body), maxErrorBody))}
	var obj map[string]any
	if json.Unmarshal(body, &obj) == nil {
		e.Code, e.Message = errorFields(obj)
		if e.Code == "" && e.Message == "" {
			for _, k := range []string{"error", "errors"} {
				switch v := obj[k].(type) {
				case map[string]any:
					e.Code, e.Message = errorFields(v)
				case []any:
					if len(v) > 0 {
						if m, ok := v[0].(map[string]any); ok {
							e.Code, e.Message = errorFields(m)
						}
					}
				}
			}
		}
	}
	e.Code = redact(truncate(e.Code, 100))
	e.Message = redact(truncate(e.Message, 300))
	return e
}

func errorFields(obj map[string]any) (code, message string) {
	code = firstString(obj, "code", "error_code", "errorCode", "status", "error")
	message = firstString(obj, "message", "error_description", "detail", "title", "description")
	if message == code {
		message = ""
	}
	return code, message
}

func firstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
