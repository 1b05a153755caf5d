package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/handlers/api/contracttest"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/webhook"
)

// shopServer is a merchant's webhook endpoint: it checks each signature,
// answers with the codes it is given (then 204), and handles each event
// once by its id, as docs/integrate.md tells merchants to.
type shopServer struct {
	t     testing.TB
	url   string
	mu    sync.Mutex
	codes []int
	// received lists the event id of each POST, in order; handled the
	// events acted on, once each.
	received []string
	handled  map[string]ledger.EventBody
	// took is, per event handled, how long after its creation it arrived.
	took map[string]time.Duration
}

func newShopServer(t testing.TB, codes ...int) *shopServer {
	s := &shopServer{t: t, codes: codes, handled: map[string]ledger.EventBody{}, took: map[string]time.Duration{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(webhookSecret, r.Header.Get(webhook.Header), body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("a webhook that does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		contracttest.CheckWebhook(t, body)
		var e ledger.EventBody
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("a webhook that is not an event: %s", body)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.received = append(s.received, e.ID)
		if len(s.codes) > 0 {
			code := s.codes[0]
			s.codes = s.codes[1:]
			w.WriteHeader(code)
			return
		}
		if _, seen := s.handled[e.ID]; !seen {
			s.handled[e.ID] = e
			s.took[e.ID] = time.Since(e.CreatedAt)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/hooks/pay-by-bank"
	return s
}

// waitFor polls until done holds, for up to 20 s.
func waitFor(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *shopServer) handledCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handled)
}

// startWorkers runs the follower and the webhook dispatcher of an instance
// at test pace until the test ends; owner names the instance.
func (a *app) startWorkers(t testing.TB, owner string, provider payment.Provider, lease time.Duration) *payment.Follower {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := a.orders
	if provider != nil {
		svc = &payment.Service{Ledger: a.ledger, Log: log, ProviderFor: func(*merchant.Merchant) payment.Provider { return provider }}
	}
	f := &payment.Follower{Service: svc, Merchant: a.merchants.Get, Owner: owner, Rate: 1000, Idle: 10 * time.Millisecond, Lease: lease, Log: log}
	d := &webhook.Dispatcher{Ledger: a.ledger, Merchants: a.merchants, Owner: owner, Client: webhook.NewClient(true),
		Poll: 10 * time.Millisecond, Backoff: func(int) time.Duration { return 20 * time.Millisecond }, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.Run(ctx) })
	wg.Go(func() { d.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return f
}

// payAndApprove makes order id's payment and approves it at the sandbox
// bank; the shopper never comes back to the app.
func (a *app) payAndApprove(id string) {
	a.t.Helper()
	res := a.post(a.enter(id, nil)+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("submit %s: %d", id, res.StatusCode)
	}
	if res := a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("approve %s: %d", id, res.StatusCode)
	}
}

func TestTheMerchantHearsOfAPaymentWhoseShopperNeverCameBack(t *testing.T) {
	shop := newShopServer(t)
	a := setup(t, options{knobs: settleNow, webhook: shop.url})
	a.payAndApprove("A-1")
	a.startWorkers(t, "instance-1", nil, 0)
	waitFor(t, "the merchant to be told", func() bool { return shop.handledCount() == 1 })
	shop.mu.Lock()
	defer shop.mu.Unlock()
	for _, e := range shop.handled {
		if e.Type != "payment.status_changed" || e.Data.MerchantOrderID != "A-1" || e.Data.Status != "COMPLETED" ||
			!e.Data.Paid || !e.Data.Final || e.Data.Amount != "49.90" || e.Data.Currency != "EUR" || e.Data.Attempt != 1 {
			t.Errorf("event %+v", e)
		}
	}
}

func TestAFailingEndpointGetsTheEventAgainUntilItTakesIt(t *testing.T) {
	shop := newShopServer(t, http.StatusInternalServerError, http.StatusBadGateway)
	a := setup(t, options{knobs: settleNow, webhook: shop.url})
	a.payAndApprove("A-1")
	a.startWorkers(t, "instance-1", nil, 0)
	waitFor(t, "the third delivery", func() bool { return shop.handledCount() == 1 })
	// The sender records a try once the endpoint's answer is in: the
	// endpoint may have counted it a moment before.
	var events []ledger.Event
	waitFor(t, "the delivery recorded", func() bool {
		events, _ = a.ledger.Events(context.Background(), "shop1", time.Time{}, ledger.Cursor{}, 10)
		return len(events) == 1 && events[0].Delivery != ledger.Pending
	})
	var codes []int
	for _, d := range events[0].Deliveries {
		codes = append(codes, d.Code)
	}
	if fmt.Sprint(codes) != "[500 502 204]" || events[0].Delivery != ledger.Delivered {
		t.Errorf("deliveries %v (%s), want [500 502 204] and delivered", codes, events[0].Delivery)
	}
	shop.mu.Lock()
	defer shop.mu.Unlock()
	if len(shop.received) != 3 || shop.received[0] != events[0].ID || shop.received[2] != events[0].ID {
		t.Errorf("the endpoint received %v, want event %s three times", shop.received, events[0].ID)
	}
	// The API shows the same.
	status, body, _ := a.apiCall(http.MethodGet, "/api/v1/events", shop1Token, "")
	list, _ := body["events"].([]any)
	if status != http.StatusOK || len(list) != 1 || !strings.Contains(mustJSON(list[0]), `"code":502`) {
		t.Errorf("GET /api/v1/events: %d %v", status, body)
	}
}

// countingProvider passes status reads to the sandbox, counting them per
// payment and noting when one payment is read by two instances at once.
type countingProvider struct {
	payment.Provider
	mu       sync.Mutex
	inFlight map[string]int
	reads    map[string]int
	overlaps []string
}

func (p *countingProvider) PaymentStatus(ctx context.Context, id string) (*pisclient.PaymentStatus, error) {
	p.mu.Lock()
	p.inFlight[id]++
	p.reads[id]++
	if p.inFlight[id] > 1 {
		p.overlaps = append(p.overlaps, id)
	}
	p.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // a read takes a moment, as it would
	defer func() { p.mu.Lock(); p.inFlight[id]--; p.mu.Unlock() }()
	return p.Provider.PaymentStatus(ctx, id)
}

func TestThreeInstancesFollowFiftyPaymentsOneAtATime(t *testing.T) {
	databaseURL := ledgertest.PostgresURL(t)
	shop := newShopServer(t)
	provider := sandbox.New(sandbox.Config{Knobs: settleNow})
	var instances []*app
	for range 3 {
		instances = append(instances, setup(t, options{upstream: provider, webhook: shop.url, ledger: ledgertest.Open(t, databaseURL)}))
	}
	const payments = 50
	for i := range payments {
		instances[0].payAndApprove(fmt.Sprintf("P-%02d", i))
	}
	counter := &countingProvider{Provider: instances[0].orders.ProviderFor(nil), inFlight: map[string]int{}, reads: map[string]int{}}
	for i, a := range instances {
		a.startWorkers(t, fmt.Sprintf("instance-%d", i+1), counter, 0)
	}
	waitFor(t, "every payment's event", func() bool { return shop.handledCount() == payments })
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if len(counter.overlaps) > 0 {
		t.Errorf("payments read by two instances at once: %v", counter.overlaps)
	}
	if len(counter.reads) != payments {
		t.Errorf("%d payments read, want %d", len(counter.reads), payments)
	}
	total := 0
	for _, n := range counter.reads {
		total += n
	}
	t.Logf("%d status reads for %d payments", total, payments)
	shop.mu.Lock()
	defer shop.mu.Unlock()
	if len(shop.received) != payments {
		t.Errorf("%d deliveries for %d events: an event was sent twice without a failure between", len(shop.received), payments)
	}
}

func TestWhenTheInstanceHoldingALeaseDiesAnotherTakesOver(t *testing.T) {
	shop := newShopServer(t)
	a := setup(t, options{knobs: settleNow, webhook: shop.url})
	a.payAndApprove("A-1")
	// Instance 1 claims the attempt for a short lease, then dies.
	claimed, err := a.ledger.ClaimDue(context.Background(), "instance-1", 300*time.Millisecond, ledger.Fresh, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	died := time.Now()
	a.startWorkers(t, "instance-2", nil, 0)
	waitFor(t, "instance 2 to take the payment over", func() bool { return shop.handledCount() == 1 })
	if waited := time.Since(died); waited < 300*time.Millisecond {
		t.Errorf("instance 2 read the payment %v after instance 1 claimed it, inside its lease", waited)
	}
}

func TestMerchantsReconcileAndReplayThroughTheAPI(t *testing.T) {
	shop := newShopServer(t)
	a := setup(t, options{knobs: settleNow, webhook: shop.url})
	a.payAndApprove("A-1")
	if res := a.post(a.enter("A-2", nil)+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit A-2: %d", res.StatusCode)
	}
	a.startWorkers(t, "instance-1", nil, 0)
	waitFor(t, "A-1's event", func() bool { return shop.handledCount() == 1 })

	ids := func(body map[string]any) []string {
		var out []string
		list, _ := body["payments"].([]any)
		for _, p := range list {
			out = append(out, p.(map[string]any)["merchant_order_id"].(string))
		}
		return out
	}
	status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments?status=COMPLETED", shop1Token, "")
	if status != http.StatusOK || fmt.Sprint(ids(body)) != "[A-1]" || !strings.Contains(mustJSON(body), `"paid":true`) {
		t.Errorf("completed payments: %d %v", status, body)
	}
	// Two pages of one, newest change first, then none after.
	_, first, _ := a.apiCall(http.MethodGet, "/api/v1/payments?limit=1", shop1Token, "")
	cursor, _ := first["next_cursor"].(string)
	_, second, _ := a.apiCall(http.MethodGet, "/api/v1/payments?limit=1&cursor="+url.QueryEscape(cursor), shop1Token, "")
	if got := append(ids(first), ids(second)...); len(got) != 2 || got[0] == got[1] {
		t.Errorf("pages %v then %v", ids(first), ids(second))
	}
	if status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments?updated_since=2999-01-01T00:00:00Z", shop1Token, ""); status != http.StatusOK || len(ids(body)) != 0 {
		t.Errorf("updated since the future: %d %v", status, body)
	}
	if status, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments?limit=0", shop1Token, ""); status != http.StatusBadRequest || !strings.Contains(mustJSON(body), `"field":"limit"`) {
		t.Errorf("limit=0: %d %v", status, body)
	}
	if _, body, _ := a.apiCall(http.MethodGet, "/api/v1/payments", shop2Token, ""); len(ids(body)) != 0 {
		t.Errorf("shop2 sees %v", ids(body))
	}

	// Replaying an event sends it again, to its own merchant only.
	_, events, _ := a.apiCall(http.MethodGet, "/api/v1/events", shop1Token, "")
	list, _ := events["events"].([]any)
	if len(list) != 1 {
		t.Fatalf("events %v", events)
	}
	id := list[0].(map[string]any)["id"].(string)
	if status, _, _ := a.apiCall(http.MethodPost, "/api/v1/events/"+id+"/redeliver", shop2Token, ""); status != http.StatusNotFound {
		t.Errorf("shop2 replaying shop1's event: %d", status)
	}
	if status, _, _ := a.apiCall(http.MethodPost, "/api/v1/events/"+id+"/redeliver", shop1Token, ""); status != http.StatusAccepted {
		t.Errorf("replay: %d", status)
	}
	waitFor(t, "the replay", func() bool {
		shop.mu.Lock()
		defer shop.mu.Unlock()
		return len(shop.received) == 2
	})
	if shop.handledCount() != 1 {
		t.Error("the merchant handled a replayed event twice")
	}
}

// A shopper's status page reads the provider anyway: that read is the
// attempt's, charged to the deployment's budget, and the follower's next
// read waits its interval from it instead of coming on top.
func TestAStatusPageReadCountsAsTheFollowersRead(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	// The shopper opens the bank's page and comes back before approving.
	link := res.Header.Get("Location")
	if res := a.get(link); res.StatusCode != http.StatusOK {
		t.Fatalf("the bank's page: %d", res.StatusCode)
	}
	_, attempts, err := a.ledger.Order(context.Background(), "shop1", "A-1")
	if err != nil || len(attempts) != 1 {
		t.Fatal(attempts, err)
	}
	id := attempts[0].UpstreamID
	if next, _ := a.ledger.NextRead(context.Background(), id); time.Until(next.At) > 0 {
		t.Fatalf("a new attempt due in %v, want at once", time.Until(next.At))
	}
	before := a.sandbox.Stats().StatusCalls
	readFrom := time.Now().Truncate(time.Millisecond)
	page(t, a.get(checkout+"/return"), http.StatusOK)
	readUntil := time.Now()
	if n := a.sandbox.Stats().StatusCalls - before; n != 1 {
		t.Fatalf("the status page read the provider %d times", n)
	}
	// The shopper is back from the bank: read every 5 s, at the latest
	// every 30 s, from the status page's read (made while the page was
	// asked for, however long that took).
	within := func(at time.Time, after time.Duration) bool {
		return !at.Before(readFrom.Add(after)) && !at.After(readUntil.Add(after))
	}
	next, err := a.ledger.NextRead(context.Background(), id)
	if err != nil || next.Tier != ledger.Fresh || !within(next.At, 5*time.Second) || !within(next.By, 30*time.Second) {
		t.Errorf("after the status page's read: next read %v after it, at the latest %v after (tier %d), %v; want 5 s and 30 s, fresh",
			next.At.Sub(readFrom), next.By.Sub(readFrom), next.Tier, err)
	}
	if n := a.orders.Budget.Unpaid(); n != 1 {
		t.Errorf("%d reads charged to the budget, want the status page's one", n)
	}
	// A follower finds nothing due.
	a.startWorkers(t, "instance-1", nil, 0)
	time.Sleep(500 * time.Millisecond)
	if n := a.sandbox.Stats().StatusCalls - before; n != 1 {
		t.Errorf("the follower read the attempt again right after the status page: %d reads", n)
	}
}

func TestAReloadedWebhookIsUsedForTheNextEvent(t *testing.T) {
	first, second := newShopServer(t), newShopServer(t)
	a := setup(t, options{knobs: settleNow})
	a.startWorkers(t, "instance-1", nil, 0)
	withWebhook := func(url string) {
		t.Helper()
		file := merchantsFile
		if url != "" {
			file = strings.Replace(file, `"id":"shop1",`, `"id":"shop1","webhook_url":"`+url+`","webhook_secret":"`+webhookSecret+`",`, 1)
		}
		next, err := merchant.Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		a.merchants.Replace(next)
	}
	told := func(s *shopServer, id string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.handled {
			if e.Data.MerchantOrderID == id {
				return true
			}
		}
		return false
	}

	withWebhook(first.url)
	a.payAndApprove("A-1")
	waitFor(t, "the webhook added by a reload to be told of A-1", func() bool { return told(first, "A-1") })

	withWebhook(second.url)
	a.payAndApprove("A-2")
	waitFor(t, "the changed webhook to be told of A-2", func() bool { return told(second, "A-2") })
	if told(first, "A-2") {
		t.Error("the webhook replaced by a reload was still sent A-2")
	}

	withWebhook("")
	a.payAndApprove("A-3")
	time.Sleep(200 * time.Millisecond) // twenty polls of the dispatcher
	if told(first, "A-3") || told(second, "A-3") {
		t.Error("a webhook taken out of the file was still sent A-3")
	}
}
