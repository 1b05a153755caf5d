package ledger_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// paidOrder records order id for 49.90 and pays it.
func paidOrder(t *testing.T, l *ledger.Ledger, id string) {
	t.Helper()
	if _, err := l.RecordOrder(ctx, order(id, "49.90")); err != nil {
		t.Fatal(err)
	}
	pay(t, l, id, 1, "deutsche-bank", "COMPLETED")
}

var refundSeq sync.Mutex
var refundN int

func newRefund(orderID, amount string) ledger.Refund {
	refundSeq.Lock()
	defer refundSeq.Unlock()
	refundN++
	return ledger.Refund{ID: fmt.Sprintf("rf_%016d", refundN), MerchantID: "shop1", OrderID: orderID, Amount: amount, Currency: "EUR",
		Reason: "returned", State: ledger.RefundAwaitingAccount, PageID: fmt.Sprintf("page%012d", refundN), CreatedBy: "support@shop.example"}
}

// TestRefundsNeverPassWhatWasPaid: twenty refunds of the whole amount at
// once through three instances make exactly one; the others are told what
// remains (nothing). A cancelled refund gives its amount back; an order
// not paid, or unknown, refunds nothing.
func TestRefundsNeverPassWhatWasPaid(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		instances := []*ledger.Ledger{ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
		l := instances[0]
		paidOrder(t, l, "R-1")
		made, exceeded := 0, 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				_, ok, err := instances[i%3].CreateRefund(ctx, newRefund("R-1", "49.90"), ledger.AuditEntry{})
				var exceeds *ledger.RefundExceedsError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && ok:
					made++
				case errors.As(err, &exceeds) && exceeds.Remaining == "0.00":
					exceeded++
				default:
					t.Errorf("refund %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if made != 1 || exceeded != 19 {
			t.Fatalf("%d refunds made, %d refused; want 1 and 19", made, exceeded)
		}
		if got, err := l.Refunded(ctx, "shop1", "R-1"); err != nil || got != "49.90" {
			t.Errorf("refunded %s, %v", got, err)
		}
		list, err := l.ListRefunds(ctx, ledger.RefundFilter{Merchant: "shop1", Order: "R-1"}, ledger.Cursor{}, 50)
		if err != nil || len(list) != 1 {
			t.Fatalf("%d refunds kept, %v", len(list), err)
		}
		// Cancelled, its amount may be refunded again, in parts.
		if _, err := l.MoveRefund(ctx, "shop1", list[0].ID, ledger.RefundChange{From: []string{ledger.RefundAwaitingAccount},
			To: ledger.RefundCancelled, Step: ledger.StepCancelled, Actor: "owner"}, ledger.AuditEntry{}); err != nil {
			t.Fatal(err)
		}
		for _, amount := range []string{"20.00", "29.90"} {
			if _, _, err := l.CreateRefund(ctx, newRefund("R-1", amount), ledger.AuditEntry{}); err != nil {
				t.Errorf("a part of %s after the cancel: %v", amount, err)
			}
		}
		var exceeds *ledger.RefundExceedsError
		if _, _, err := l.CreateRefund(ctx, newRefund("R-1", "0.01"), ledger.AuditEntry{}); !errors.As(err, &exceeds) || exceeds.Remaining != "0.00" {
			t.Errorf("a cent more than was paid: %v", err)
		}
		// A cancelled refund cannot be cancelled again, nor sent.
		if _, err := l.MoveRefund(ctx, "shop1", list[0].ID, ledger.RefundChange{From: []string{ledger.RefundReady}, To: ledger.RefundSent},
			ledger.AuditEntry{}); !errors.Is(err, ledger.ErrRefundMoved) {
			t.Errorf("sending a cancelled refund: %v", err)
		}
		if _, err := l.RecordOrder(ctx, order("R-2", "10.00")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.CreateRefund(ctx, newRefund("R-2", "1.00"), ledger.AuditEntry{}); !errors.Is(err, ledger.ErrOrderNotPaid) {
			t.Errorf("an order not paid: %v", err)
		}
		if _, _, err := l.CreateRefund(ctx, newRefund("R-404", "1.00"), ledger.AuditEntry{}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("an unknown order: %v", err)
		}
		events, err := l.OrderEvents(ctx, "shop1", "R-1")
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]int{}
		for _, e := range events {
			types[e.Type]++
		}
		if types[ledger.EventRefundCreated] != 3 || types[ledger.EventRefundStateChanged] != 1 {
			t.Errorf("events %v: want 3 refund.created and 1 refund.state_changed", types)
		}
	})
}

// TestTheSameIdempotencyKeyGivesTheSameRefund: a program's retry, even
// twenty at once on two instances, makes one refund; the key reused for
// another sum is refused.
func TestTheSameIdempotencyKeyGivesTheSameRefund(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one, two := ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)
		paidOrder(t, one, "K-1")
		ids := make([]string, 20)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				r := newRefund("K-1", "10.00")
				r.IdempotencyKey = "medusa-ref-1"
				got, _, err := []*ledger.Ledger{one, two}[i%2].CreateRefund(ctx, r, ledger.AuditEntry{})
				if err != nil {
					t.Errorf("try %d: %v", i, err)
				}
				ids[i] = got.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("one key made refunds %v", ids)
			}
		}
		if got, _ := one.Refunded(ctx, "shop1", "K-1"); got != "10.00" {
			t.Errorf("refunded %s, want 10.00 once", got)
		}
		r := newRefund("K-1", "12.00")
		r.IdempotencyKey = "medusa-ref-1"
		if _, _, err := one.CreateRefund(ctx, r, ledger.AuditEntry{}); !errors.Is(err, ledger.ErrIdempotencyReused) {
			t.Errorf("the key for another sum: %v", err)
		}
	})
}

// TestARefundIsInOneTransferFileAtMost: two files asked at once of the
// same ready refunds: one is kept, the other refused, and the kept file's
// bytes come back as they were.
func TestARefundIsInOneTransferFileAtMost(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one, two := ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)
		paidOrder(t, one, "T-1")
		var ids []string
		for range 3 {
			r := newRefund("T-1", "5.00")
			r.State, r.AccountSealed, r.AccountMasked = ledger.RefundReady, "sealed", "DE89 **** **** **** 3000"
			got, _, err := one.CreateRefund(ctx, r, ledger.AuditEntry{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got.ID)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, l := range []*ledger.Ledger{one, two} {
			wg.Go(func() {
				errs[i] = l.CreateTransfer(ctx, ledger.Transfer{ID: fmt.Sprint("tr_file", i), MerchantID: "shop1", CreatedBy: "owner", Refunds: 3,
					TotalCents: 1500, File: []byte(fmt.Sprint("<Document>", i, "</Document>"))}, ids, "owner", ledger.AuditEntry{})
			})
		}
		wg.Wait()
		kept := -1
		for i, err := range errs {
			switch {
			case err == nil && kept < 0:
				kept = i
			case err == nil:
				t.Fatal("two files hold the same refunds")
			case !errors.Is(err, ledger.ErrRefundMoved):
				t.Errorf("file %d: %v", i, err)
			}
		}
		if kept < 0 {
			t.Fatal("no file was kept")
		}
		file, err := two.TransferFile(ctx, "shop1", fmt.Sprint("tr_file", kept))
		if err != nil || string(file.File) != fmt.Sprint("<Document>", kept, "</Document>") || file.Total() != "15.00" {
			t.Errorf("the file downloaded again: %q, %v", file.File, err)
		}
		if _, err := two.TransferFile(ctx, "shop1", fmt.Sprint("tr_file", 1-kept)); !errors.Is(err, ledger.ErrRefundNotFound) {
			t.Errorf("the refused file is kept: %v", err)
		}
		for _, id := range ids {
			r, err := one.Refund(ctx, "shop1", id)
			if err != nil || r.State != ledger.RefundSent || r.TransferID != fmt.Sprint("tr_file", kept) {
				t.Errorf("%s: %s in %q, %v", id, r.State, r.TransferID, err)
			}
		}
	})
}
