package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
)

// PageError is an error a person is shown, in their language: Key names
// its heading in the catalog of package i18n, Key+".text" its message (with
// Args). Pages for staff (the studio) give Heading and Message as they are.
// Err, when set, is the cause, for the log only.
type PageError struct {
	Status   int
	Key      string
	Args     []any
	Heading  string
	Message  string
	RetryURL templ.SafeURL
	Err      error
}

func (e *PageError) Error() string {
	name := e.Key
	if name == "" {
		name = e.Heading
	}
	if e.Err != nil {
		return name + ": " + e.Err.Error()
	}
	return name
}

// Texts are the error's heading and message in the language of l.
func (e *PageError) Texts(l *i18n.Localizer) (heading, message string) {
	if e.Key == "" {
		return e.Heading, e.Message
	}
	return l.T(e.Key), l.T(e.Key+".text", e.Args...)
}

func (e *PageError) Unwrap() error { return e.Err }

// Errors a person may meet more than once.
var (
	ErrNotFound = &PageError{Status: http.StatusNotFound, Key: "error.notFound"}
	ErrInternal = &PageError{Status: http.StatusInternalServerError, Key: "error.internal"}
)

// Unavailable is the failure told while the payments ledger does not
// answer: a moment's trouble on our side, in which nothing was done.
func Unavailable() Failure {
	return Failure{
		Page: &PageError{Status: http.StatusServiceUnavailable, Key: "error.unavailable"},
		API: &APIError{Status: http.StatusServiceUnavailable, Code: "unavailable",
			Message: "the payments ledger does not answer for a moment; nothing was done: try again after Retry-After seconds"},
	}
}

// Failure is an error mapped once, in both the ways it can be told: a page
// for people and a JSON error for programs.
type Failure struct {
	Page *PageError
	API  *APIError
}

// Status is the failure's HTTP status.
func (f Failure) Status() int { return f.API.Status }

// Classify is the one error mapper: our own errors keep their status and
// words, Echo's become their status, anything else is an internal error
// whose text nobody outside sees.
func Classify(err error) Failure {
	var pe *PageError
	var ae *APIError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return Failure{Page: &PageError{Status: ae.Status, Key: "error.request"}, API: ae}
	case errors.As(err, &pe):
		_, message := pe.Texts(i18n.New("en"))
		return Failure{Page: pe, API: &APIError{Status: pe.Status, Code: strings.TrimPrefix(pe.Key, "error."), Message: message}}
	case errors.As(err, &he):
		page := &PageError{Status: he.Code, Key: "error.request"}
		if he.Code == http.StatusNotFound {
			page = ErrNotFound
		}
		code := strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_"))
		return Failure{Page: page, API: &APIError{Status: he.Code, Code: code, Message: http.StatusText(he.Code)}}
	}
	return Failure{Page: ErrInternal, API: &APIError{Status: http.StatusInternalServerError, Code: "internal_error", Message: "something went wrong on our side"}}
}
