package payment_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
)

// fakeProvider answers every status read with IN_PROGRESS (the shopper
// still at the bank) unless told otherwise, and notes when each came.
type fakeProvider struct {
	mu     sync.Mutex
	reads  []time.Time
	order  []string
	status map[string]pisclient.Status
}

func (p *fakeProvider) CreatePayment(ctx context.Context, r pisclient.PaymentRequest) (*pisclient.Payment, error) {
	panic("not made here")
}

func (p *fakeProvider) PaymentStatus(_ context.Context, id string) (*pisclient.PaymentStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads = append(p.reads, time.Now())
	p.order = append(p.order, id)
	st := p.status[id]
	if st == "" {
		st = pisclient.StatusInProgress
	}
	return &pisclient.PaymentStatus{MerchantOrderID: id, Status: st}, nil
}

// readsBetween counts the reads made in [from, to).
func (p *fakeProvider) readsBetween(from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, at := range p.reads {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// openAttempts makes n payments handed out, created at created and due
// for a read at once; their ids are prefix-0, prefix-1…
func openAttempts(t testing.TB, l *ledger.Ledger, prefix string, n int, created time.Time) []string {
	t.Helper()
	l.FirstCheck = 0
	l.UseClock(func() time.Time { return created })
	defer l.UseClock(time.Now)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := l.OpenOrder(ctx, ledger.Order{MerchantID: merchant.DemoID, OrderID: id, Amount: "49.90", Currency: "EUR", ReturnURL: "https://shop.example/"}); err != nil {
			t.Fatal(err)
		}
		a := ledger.Attempt{UpstreamID: "up-" + id, MerchantID: merchant.DemoID, OrderID: id, Seq: 1, Amount: "49.90", Currency: "EUR", BankID: "ing", Country: "DE"}
		if err := l.InsertAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.UpstreamID)
	}
	return ids
}

// follow runs a follower of instance owner over l with budget until the
// test ends or stop is called.
func follow(t testing.TB, l *ledger.Ledger, p payment.Provider, owner string, budget *payment.Budget) (stop func()) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir, _ := merchant.Demo("http://localhost:8080")
	svc := &payment.Service{Ledger: l, Log: log, ProviderFor: func(*merchant.Merchant) payment.Provider { return p }, Budget: budget}
	f := &payment.Follower{Service: svc, Merchant: dir.Get, Owner: owner, Idle: 20 * time.Millisecond, Log: log}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { f.Run(ctx) })
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// FOLLOW_RATE is the reads of the whole deployment: one instance alone
// reads at it, and three instances on one PostgreSQL read at it together,
// not three times over.
func TestThreeInstancesShareOneReadBudget(t *testing.T) {
	databaseURL := ledgertest.PostgresURL(t)
	const perSecond = 20
	ledgers := []*ledger.Ledger{ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
	openAttempts(t, ledgers[0], "P", 400, time.Now())
	p := &fakeProvider{}
	measure := func(instances int, d time.Duration) float64 {
		var stops []func()
		for i := range instances {
			stops = append(stops, follow(t, ledgers[i], p, fmt.Sprintf("instance-%d", i+1), &payment.Budget{Ledger: ledgers[i], Rate: perSecond}))
		}
		// The first second fills the pipes; the rest is measured.
		time.Sleep(time.Second)
		from := time.Now()
		time.Sleep(d)
		to := time.Now()
		for _, stop := range stops {
			stop()
		}
		return float64(p.readsBetween(from, to)) / to.Sub(from).Seconds()
	}
	alone := measure(1, 3*time.Second)
	together := measure(3, 4*time.Second)
	t.Logf("reads a second at FOLLOW_RATE=%d: one instance %.1f, three instances %.1f", perSecond, alone, together)
	if alone < 0.85*perSecond || alone > 1.1*perSecond {
		t.Errorf("one instance read %.1f a second, want all of the %d", alone, perSecond)
	}
	if together < 0.85*perSecond || together > 1.1*perSecond {
		t.Errorf("three instances read %.1f a second together, want %d ±10%%", together, perSecond)
	}
}

// Under a backlog of old payments, a payment made a moment ago is read
// first, the old ones still get a share, and their intervals stretch
// instead of all falling behind.
func TestFreshPaymentsAreReadBeforeABacklog(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	// 200 payments made an hour ago, never opened at the bank, read once
	// and due again long ago: a backlog.
	old := openAttempts(t, l, "OLD", 200, time.Now().Add(-time.Hour))
	p := &fakeProvider{status: map[string]pisclient.Status{}}
	for _, id := range old {
		p.status[id] = pisclient.StatusNotFound
		claimed, err := l.ClaimDue(ctx, "seed", time.Minute, ledger.Fresh, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatal(claimed, err)
		}
		l.Checked(ctx, claimed[0].UpstreamID, "seed", time.Now().Add(-30*time.Minute), ledger.Settled)
	}
	fresh := openAttempts(t, l, "NEW", 5, time.Now())
	budget := &payment.Budget{Ledger: l, Rate: 20}
	stop := follow(t, l, p, "instance-1", budget)
	deadline := time.Now().Add(10 * time.Second)
	for p.readsBetween(time.Time{}, time.Now()) < 40 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	p.mu.Lock()
	first := p.order[:min(10, len(p.order))]
	p.mu.Unlock()
	isFresh := map[string]bool{}
	for _, id := range fresh {
		isFresh[id] = true
	}
	freshFirst, oldFirst := 0, 0
	for _, id := range first {
		if isFresh[id] {
			freshFirst++
		} else {
			oldFirst++
		}
	}
	if freshFirst != len(fresh) {
		t.Errorf("%d of the %d fresh payments among the first 10 reads %v", freshFirst, len(fresh), first)
	}
	if oldFirst == 0 {
		t.Error("no old payment read in the first round: a backlog of fresh ones would starve them")
	}
	if budget.Stretch() <= 1 {
		t.Errorf("stretch %.2f after reading a backlog half an hour late, want more than 1", budget.Stretch())
	}
	// An old payment read after the first round waits its interval (30
	// min at its age) times the stretch.
	p.mu.Lock()
	read := p.order[len(p.order)-1]
	p.mu.Unlock()
	if isFresh[read] {
		t.Fatalf("the last read was of a fresh payment, %s", read)
	}
	next, tier, err := l.NextRead(ctx, read)
	if err != nil || tier != ledger.Settled || time.Until(next) < 36*time.Minute {
		t.Errorf("an old payment's next read in %v (tier %d), %v; want 30 min stretched, settled", time.Until(next), tier, err)
	}
}
