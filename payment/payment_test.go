package payment_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

var ctx = context.Background()

// fixture is a Service over a fresh ledger and an in-process sandbox.
type fixture struct {
	svc      *payment.Service
	sandbox  *sandbox.Sandbox
	client   *pisclient.Client
	merchant *merchant.Merchant
}

func newFixture(t testing.TB, databaseURL string) *fixture {
	t.Helper()
	sb := sandbox.New(sandbox.Config{PublicURL: "https://sandbox.example"})
	client, err := pisclient.New("http://sandbox.internal", sandbox.DefaultAPIKey,
		pisclient.WithHTTPClient(&http.Client{Transport: sb}),
		pisclient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := merchant.Demo("http://localhost:8080")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := dir.Get(merchant.DemoID)
	svc := &payment.Service{Ledger: ledgertest.Open(t, databaseURL), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ProviderFor: func(*merchant.Merchant) payment.Provider { return client }}
	return &fixture{svc: svc, sandbox: sb, client: client, merchant: m}
}

func (f *fixture) order(id string) payment.Order {
	return payment.Order{Merchant: f.merchant, ID: id, Amount: "49.9", Currency: "EUR", ReturnURL: "http://localhost:8080/sandbox/shop/return"}
}

func request() pisclient.PaymentRequest {
	return pisclient.PaymentRequest{ReturnURL: "http://localhost:8080/c/x/return", InstitutionID: "deutsche-bank", InstitutionCountryCode: "DE"}
}

func TestAnInstanceThatDiedMidCreateDoesNotBlockTheOrder(t *testing.T) {
	f := newFixture(t, ledgertest.SQLiteURL(t))
	o := f.order("A-1")
	rec, err := f.svc.Record(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// An instance won the insert, then died before the provider answered.
	if err := f.svc.Ledger.InsertAttempt(ctx, ledger.Attempt{UpstreamID: f.merchant.UpstreamOrderID("A-1"), MerchantID: f.merchant.ID,
		OrderID: "A-1", Seq: 1, Amount: rec.Amount, Currency: "EUR", BankID: "deutsche-bank", Country: "DE"}); err != nil {
		t.Fatal(err)
	}
	f.svc.Now = func() time.Time { return time.Now().Add(time.Hour) }
	out, err := f.svc.Pay(ctx, o, request())
	if err != nil || !strings.HasPrefix(out.Link, "https://sandbox.example/checkout/") {
		t.Fatalf("Pay after the dead instance: %+v, %v; want a payment link", out, err)
	}
	if out.Attempt.Seq != 2 || out.Attempt.UpstreamID != "demo~2:A-1" {
		t.Errorf("the new payment is attempt %d under %q, want 2 under demo~2:A-1", out.Attempt.Seq, out.Attempt.UpstreamID)
	}
	_, list, _ := f.svc.Ledger.Order(ctx, f.merchant.ID, "A-1")
	if len(list) != 2 || list[0].State != ledger.Orphaned {
		t.Errorf("attempts %+v: the dead instance's attempt is not orphaned", list)
	}
}

func TestAmountsAreRecordedInTheProvidersForm(t *testing.T) {
	f := newFixture(t, ledgertest.SQLiteURL(t))
	out, err := f.svc.Pay(ctx, f.order("A-1"), request())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.sandbox.Received(out.Attempt.UpstreamID)
	if out.Attempt.Amount != "49.90" || got.Amount != "49.90" {
		t.Errorf("recorded %q, sent %q; want 49.90 for 49.9", out.Attempt.Amount, got.Amount)
	}
	if _, err := f.svc.Record(ctx, payment.Order{Merchant: f.merchant, ID: "A-1", Amount: "49.90", Currency: "EUR"}); err != nil {
		t.Errorf("49.90 after 49.9 is the same amount: %v", err)
	}
}

func TestARefusedCreateSaysSoAndBlocksNothing(t *testing.T) {
	f := newFixture(t, ledgertest.SQLiteURL(t))
	req := request()
	req.InstitutionID = "no-such-bank"
	_, err := f.svc.Pay(ctx, f.order("A-1"), req)
	var refused *payment.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("a create the provider refused: %v, want a RefusedError", err)
	}
	if out, err := f.svc.Pay(ctx, f.order("A-1"), request()); err != nil || out.Link == "" {
		t.Errorf("after the refusal, another bank: %+v, %v", out, err)
	}
}

// BenchmarkCreate measures a submit's create path: the provider call alone
// (the sandbox in process, the baseline), then the same through the ledger
// on each back end, one new order per iteration.
func BenchmarkCreate(b *testing.B) {
	b.Run("provider-only", func(b *testing.B) {
		f := newFixture(b, ledgertest.SQLiteURL(b))
		req := request()
		for i := 0; b.Loop(); i++ {
			req.MerchantOrderID = fmt.Sprintf("demo:B-%d", i)
			req.Amount, req.Currency = "49.90", "EUR"
			if _, err := f.client.CreatePayment(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, newURL := range ledgertest.Backends() {
		b.Run("ledger-"+name, func(b *testing.B) {
			f := newFixture(b, newURL(b))
			for i := 0; b.Loop(); i++ {
				if _, err := f.svc.Pay(ctx, f.order(fmt.Sprintf("B-%d", i)), request()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
