// Package webhook tells merchants' servers of every change of their orders'
// status, as docs/integrate.md promises them: each event of the ledger is
// POSTed to the merchant's webhook_url, signed with its webhook_secret, at
// least once, and retried with growing, jittered pauses for three days. Each merchant has a
// sender of its own, so a slow or failing endpoint delays nobody else.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Header carries the signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.
const Header = "Checkout-Signature"

// Sign returns the Header value for body sent at t, one v1 per secret:
// the new one first while a secret is being rolled, then the old.
func Sign(secret string, t time.Time, body []byte, older ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	header := "t=" + ts + ",v1=" + mac(secret, ts, body)
	for _, s := range older {
		header += ",v1=" + mac(s, ts, body)
	}
	return header
}

func mac(secret, ts string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte("."))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks a Header value against body, as a merchant's server should:
// the signature matches (in constant time) and t is within tolerance of now.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("webhook: no t= and v1= in the signature header")
	}
	want := []byte(mac(secret, ts, body))
	if !slices.ContainsFunc(sigs, func(sig string) bool { return hmac.Equal([]byte(sig), want) }) {
		return errors.New("webhook: the signature does not match")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook: the signature's time is too far from now")
	}
	return nil
}

// Limits of a delivery.
const (
	// Timeout bounds one POST, answer included.
	Timeout = 10 * time.Second
	// RetryFor is how long an event is retried before it is given up.
	RetryFor = 72 * time.Hour
	// maxAnswer is how much of an answer is read.
	maxAnswer = 4 << 10
)

// ErrPrivateTarget refuses a webhook that resolves to this machine, a
// private network or any other address that is not Public, outside
// sandbox mode: the app must not be a way in.
var ErrPrivateTarget = errors.New("webhook: the address is on a private network")

// NewClient is the HTTP client of deliveries (and of logos): redirects are
// not followed (a 3xx is a failed try), each POST ends after Timeout, and
// unless allowPrivate the connection is refused when the name resolves to
// an address that is not Public.
func NewClient(allowPrivate bool) *http.Client {
	dialer := newDialer(allowPrivate)
	transport := &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second, ResponseHeaderTimeout: Timeout}
	return &http.Client{
		Transport:     transport,
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newDialer is NewClient's dialer. Unless allowPrivate, it checks each
// address the name resolved to after the socket is made and before it
// connects, so that no packet goes to an address that is not Public, and
// a name that resolves to another address at each lookup cannot slip
// through.
func newDialer(allowPrivate bool) *net.Dialer {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	if !allowPrivate {
		dialer.Control = refuseNotPublic
	}
	return dialer
}

// refuseNotPublic is the dialer's Control: address is the resolved
// "ip:port" about to be connected to.
func refuseNotPublic(_, address string, _ syscall.RawConn) error {
	target, err := netip.ParseAddrPort(address)
	if err != nil || !rules.PublicAddress(target.Addr()) {
		return ErrPrivateTarget
	}
	return nil
}

// backoff is the pause after a failed try: 10 s doubling to 6 hours, give
// or take a fifth, so that merchants recovering together are not flooded.
func backoff(tries int) time.Duration {
	d := 10 * time.Second << min(tries-1, 11)
	d = min(d, 6*time.Hour)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Dispatcher sends the events of the merchants that have a webhook_url.
type Dispatcher struct {
	Ledger *ledger.Ledger
	// Merchants are read again at every poll: a merchant given a webhook
	// by a reload gets a sender, one whose webhook went loses it, and a
	// changed URL or secret serves the next event.
	Merchants *merchant.Directory
	// Owner names this instance in leases.
	Owner  string
	Client *http.Client
	// Poll is the pause when a merchant has nothing due, unless this
	// instance records an event meanwhile: events other instances record
	// are found by it.
	Poll time.Duration
	// Backoff is the pause after a failed try (tries counts them); the
	// default grows from 10 s to 6 hours with jitter.
	Backoff func(tries int) time.Duration
	// Delivered, when set, is told each try's outcome ("delivered",
	// "retry", "failed") and how long after the event it happened.
	Delivered func(outcome string, sinceEvent time.Duration)
	Log       *slog.Logger
	Now       func() time.Time
}

// DefaultPoll is a Dispatcher's Poll when unset.
const DefaultPoll = time.Second

// Run sends until ctx ends: one sender per merchant with a webhook.
func (d *Dispatcher) Run(ctx context.Context) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		sending = map[string]bool{}
	)
	tick := time.NewTicker(d.poll())
	defer tick.Stop()
	for {
		for _, m := range d.Merchants.All() {
			mu.Lock()
			start := m.WebhookURL != "" && !sending[m.ID]
			if start {
				sending[m.ID] = true
			}
			mu.Unlock()
			if start {
				wg.Go(func() {
					d.serve(ctx, m.ID)
					mu.Lock()
					delete(sending, m.ID)
					mu.Unlock()
				})
			}
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
	}
}

func (d *Dispatcher) poll() time.Duration {
	if d.Poll <= 0 {
		return DefaultPoll
	}
	return d.Poll
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// serve sends one merchant's events, oldest first, one at a time, for as
// long as the merchant has a webhook.
func (d *Dispatcher) serve(ctx context.Context, id string) {
	const batch = 10
	for ctx.Err() == nil {
		m, ok := d.Merchants.Get(id)
		if !ok || m.WebhookURL == "" {
			return
		}
		// An event of the merchant this instance records from now on
		// ends the wait below.
		recorded := d.Ledger.NewEvents(m.ID)
		// The lease covers the whole batch sent one by one.
		events, err := d.Ledger.ClaimEvents(ctx, m.ID, d.Owner, batch*(Timeout+5*time.Second), batch)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("webhooks: claiming events", "merchant", m.ID, "err", err)
		}
		for _, e := range events {
			d.send(ctx, m, e)
		}
		if len(events) == 0 {
			t := time.NewTimer(d.poll())
			select {
			case <-ctx.Done():
			case <-t.C:
			case <-recorded:
			}
			t.Stop()
		}
	}
}

// tracer records each delivery when traces are on.
var tracer = otel.Tracer("github.com/paybybank/checkout/webhook")

// startDelivery starts the span of one try at sending an event: the
// merchant and the event's type, never the URL (which may hold a token)
// or the body.
func startDelivery(ctx context.Context, m *merchant.Merchant, eventType string) (context.Context, trace.Span) {
	return tracer.Start(ctx, "webhook "+eventType, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("merchant.id", m.ID), attribute.String("event.type", eventType)))
}

func endDelivery(span trace.Span, d ledger.Delivery) {
	span.SetAttributes(attribute.Int("http.response.status_code", d.Code))
	if d.Code < 200 || d.Code > 299 {
		span.SetStatus(codes.Error, "not taken")
	}
	span.End()
}

// post sends body to m's webhook, signed, and says how it went.
func (d *Dispatcher) post(ctx context.Context, m *merchant.Merchant, body []byte) ledger.Delivery {
	start := d.now()
	delivery := ledger.Delivery{At: start}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.WebhookURL, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "pay-by-bank-checkout webhook")
		req.Header.Set(Header, Sign(m.WebhookSecret, start, body, m.OlderWebhookSecrets(start)...))
		var res *http.Response
		if res, err = d.Client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswer))
			res.Body.Close()
			delivery.Code = res.StatusCode
		}
	}
	delivery.Duration = d.now().Sub(start)
	if err != nil {
		delivery.Error = describe(err)
	}
	return delivery
}

// EventPing is the type of the event the console sends to try an endpoint.
const EventPing = "ping"

// Ping sends m's endpoint a signed event of type ping,
// {"id","type":"ping","created_at","data":{}}, and says how it went. It is
// not recorded: it tells about the endpoint, not about a payment.
func (d *Dispatcher) Ping(ctx context.Context, m *merchant.Merchant) ledger.Delivery {
	b := make([]byte, 12)
	crand.Read(b)
	body, _ := json.Marshal(struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt time.Time `json:"created_at"`
		Data      struct{}  `json:"data"`
	}{ID: "evt_" + hex.EncodeToString(b), Type: EventPing, CreatedAt: d.now().UTC().Truncate(time.Millisecond)})
	ctx, span := startDelivery(ctx, m, EventPing)
	delivery := d.post(ctx, m, body)
	endDelivery(span, delivery)
	return delivery
}

// SendNow makes one try at an event the caller has leased to this
// dispatcher's Owner (ledger.ClaimEvent), records it, and returns it.
func (d *Dispatcher) SendNow(ctx context.Context, m *merchant.Merchant, e ledger.Event) ledger.Delivery {
	return d.send(ctx, m, e)
}

// send makes one try at an event and records it.
func (d *Dispatcher) send(ctx context.Context, m *merchant.Merchant, e ledger.Event) ledger.Delivery {
	ctx, span := startDelivery(ctx, m, e.Type)
	delivery := d.post(ctx, m, e.Body)
	defer endDelivery(span, delivery)
	outcome, next := ledger.Delivered, ledger.Never
	if delivery.Code < 200 || delivery.Code > 299 {
		pause := backoff
		if d.Backoff != nil {
			pause = d.Backoff
		}
		outcome, next = ledger.Pending, d.now().Add(pause(e.Tries+1))
		if next.Sub(e.Created) > RetryFor {
			outcome, next = ledger.Failed, ledger.Never
		}
	}
	if err := d.Ledger.RecordDelivery(context.WithoutCancel(ctx), e, d.Owner, delivery, outcome, next); err != nil {
		d.Log.Warn("webhooks: recording a delivery", "merchant", m.ID, "event", e.ID, "err", err)
	}
	if d.Delivered != nil {
		name := outcome
		if outcome == ledger.Pending {
			name = "retry"
		}
		d.Delivered(name, d.now().Sub(e.Created))
	}
	if outcome != ledger.Delivered {
		d.Log.Warn("webhooks: delivery failed", "merchant", m.ID, "event", e.ID, "code", delivery.Code, "err", delivery.Error, "outcome", outcome)
	}
	return delivery
}

// describe says why no answer came, in words safe to store and show the
// merchant: never the URL's query, which might hold a token.
func describe(err error) string {
	switch {
	case errors.Is(err, ErrPrivateTarget):
		return "refused: the address is on a private network"
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(err.Error(), "Client.Timeout"):
		return fmt.Sprintf("no answer within %s", Timeout)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "the host name does not resolve"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return "could not connect: " + opErr.Err.Error()
	}
	return "no answer"
}
