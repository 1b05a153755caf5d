// Package pisclient talks to the bank payment initiation provider: the banks
// list, payment creation and payment status. docs/provider.md describes the
// provider's interface as we use it.
//
// The provider documents little. This client is exact where the provider's
// document is clear and tolerant where it says "not shown": it reads error
// bodies, payment links and statuses from the common shapes and never
// depends on the sandbox's choices.
package pisclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paybybank/checkout/rules"
)

// Client calls the provider. It is safe for concurrent use.
type Client struct {
	base       *url.URL
	apiKey     string
	http       *http.Client
	timeout    time.Duration
	maxTries   int
	backoff    time.Duration
	maxBackoff time.Duration
	log        *slog.Logger
	seen       sync.Map // values logged once: unknown extraFields and statuses
}

// Option changes a Client built by New.
type Option func(*Client)

// WithHTTPClient sets the HTTP client; its own Timeout should be zero, deadlines
// come from WithTimeout and the caller's context.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout sets the deadline of one attempt (default 10s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetry sets how often reads are tried in all (default 4) and the first and
// largest pause between tries (default 100ms and 2s).
func WithRetry(tries int, first, max time.Duration) Option {
	return func(c *Client) { c.maxTries, c.backoff, c.maxBackoff = tries, first, max }
}

// WithLogger sets where the client logs what it tolerated.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New returns a client for the provider at baseURL, sending apiKey as x-api-key.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, ok := rules.WebURL(strings.TrimRight(baseURL, "/"))
	if !ok {
		return nil, fmt.Errorf("pisclient: base URL %q is not an absolute http(s) URL", baseURL)
	}
	if apiKey == "" {
		return nil, errors.New("pisclient: API key is empty")
	}
	c := &Client{
		base:       u,
		apiKey:     apiKey,
		http:       &http.Client{},
		timeout:    10 * time.Second,
		maxTries:   4,
		backoff:    100 * time.Millisecond,
		maxBackoff: 2 * time.Second,
		log:        slog.Default(),
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// String describes the client without its API key, so that printing one
// by accident leaks nothing.
func (c *Client) String() string { return "pisclient.Client{" + c.base.String() + "}" }

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// redact removes the API key from text that came from the provider, in case
// the provider echoes request headers in its errors.
func (c *Client) redact(s string) string {
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// newRequest is the one place requests are built.
func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	// path arrives escaped (an order id may hold "/"); Path must be its
	// unescaped form, or url.URL escapes it a second time.
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("pisclient: bad request path: %w", err)
	}
	u.Path = unescaped
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("pisclient: encoding request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("pisclient: building request: %w", err)
	}
	req.Header.Set("x-api-key", c.apiKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// maxBody bounds every response body read.
const maxBody = 8 << 20

// response is an answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send is the one place requests are sent: one attempt under its own deadline.
// A transport error is returned as ErrUnavailable, with the key redacted.
func (c *Client) send(req *http.Request) (*response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), c.timeout)
	defer cancel()
	res, err := c.http.Do(req.WithContext(ctx))
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, c.redact(err.Error()))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, fmt.Errorf("%w: reading body: %s", ErrUnavailable, c.redact(err.Error()))
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// get sends a read, retrying network errors, 429 and 5xx with capped,
// jittered backoff until the tries or the context run out. Any answer that is
// not retried is returned as it came, for the caller to interpret.
func (c *Client) get(ctx context.Context, path string) (*response, error) {
	var lastErr error
	for try := 0; try < c.maxTries; try++ {
		if try > 0 {
			if c.pause(ctx, try, lastErr) != nil {
				break
			}
		}
		req, err := c.newRequest(ctx, http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		res, err := c.send(req)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			lastErr = err
		case res.status == http.StatusTooManyRequests || res.status >= 500:
			lastErr = &retryable{res, newAPIError(res.status, res.body, c.redact)}
		default:
			return res, nil
		}
	}
	var r *retryable
	if errors.As(lastErr, &r) {
		return nil, r.apiErr
	}
	return nil, lastErr
}

// retryable carries a retryable answer between tries, so Retry-After can be read.
type retryable struct {
	res    *response
	apiErr *APIError
}

func (r *retryable) Error() string { return r.apiErr.Error() }

// pause waits before try number `try`, honouring Retry-After up to the cap,
// and returns early with the context's error when it ends.
func (c *Client) pause(ctx context.Context, try int, lastErr error) error {
	d := min(c.backoff<<(try-1), c.maxBackoff)
	d = d/2 + rand.N(d/2+1) // jitter: between half and all of the step
	var r *retryable
	if errors.As(lastErr, &r) {
		if s, err := strconv.Atoi(r.res.header.Get("Retry-After")); err == nil && s >= 0 {
			d = min(time.Duration(s)*time.Second, c.maxBackoff)
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// logOnce logs a tolerated surprise once per distinct value.
func (c *Client) logOnce(kind, value string) {
	if _, dup := c.seen.LoadOrStore(kind+"\x00"+value, true); !dup {
		c.log.Warn("pisclient: tolerated an undocumented value", "kind", kind, "value", value)
	}
}
