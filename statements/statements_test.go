package statements_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/sepa/sepatest"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/statements"
)

var ctx = context.Background()

const shopIBAN = "DE89370400440532013000"

var shop = &merchant.Merchant{ID: "shop1", Name: "Shop One", AccountName: "Shop One GmbH", AccountIBAN: shopIBAN}

var by = settings.Actor{Name: "owner@shop.example"}

// paid records order id for amount and pays it, as the payment service and
// the follower would; it returns the id the provider knew the payment by.
func paid(t *testing.T, l *ledger.Ledger, id, amount string) string {
	t.Helper()
	if _, err := l.RecordOrder(ctx, ledger.Order{MerchantID: "shop1", OrderID: id, Amount: amount, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	a := ledger.Attempt{UpstreamID: shop.AttemptID(id, 1), MerchantID: "shop1", OrderID: id, Seq: 1, Amount: amount, Currency: "EUR",
		BankID: "deutsche-bank", Country: "DE"}
	if err := l.InsertAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		from ledger.State
		ch   ledger.Change
	}{{ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/p"}}, {ledger.Open, ledger.Change{State: ledger.Final, Status: "COMPLETED"}}} {
		if ok, err := l.Move(ctx, a.UpstreamID, step.from, step.ch); !ok || err != nil {
			t.Fatalf("paying %s: %v %v", id, ok, err)
		}
	}
	return a.UpstreamID
}

// sent makes a refund of order of amount and sends it, as a transfer file
// would; it returns the refund's id.
func sent(t *testing.T, l *ledger.Ledger, order, amount, id string) string {
	t.Helper()
	r := ledger.Refund{ID: id, MerchantID: "shop1", OrderID: order, Amount: amount, Currency: "EUR", Reason: "returned",
		State: ledger.RefundReady, AccountSealed: "sealed", AccountMasked: "FR14 **** **** **** 2606", PageID: "p" + id[3:], CreatedBy: "support"}
	if _, _, err := l.CreateRefund(ctx, r, ledger.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.MoveRefund(ctx, "shop1", id, ledger.RefundChange{From: []string{ledger.RefundReady}, To: ledger.RefundSent, Step: ledger.StepFile},
		ledger.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	return id
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var monday = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)

// TestStatementsBookRefundsAndReceivePayments: in every camt version named,
// a debit naming a refund books it, a credit naming an order (by its id or
// the provider's) for its amount receives it, one for another amount is a
// mismatch, one naming nothing is left for a person with its party and
// remittance; a return marks its refund returned, refundable again. The
// same statement twice, and an overlapping one, change nothing more. Each
// test statement is valid against its official schema.
func TestStatementsBookRefundsAndReceivePayments(t *testing.T) {
	for _, version := range []struct{ kind, v string }{{"053", "02"}, {"053", "04"}, {"053", "08"}, {"054", "02"}, {"054", "04"}, {"054", "08"}} {
		t.Run("camt."+version.kind+".001."+version.v, func(t *testing.T) {
			ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
				l := ledgertest.Open(t, databaseURL)
				s := &statements.Service{Ledger: l}
				upstream := paid(t, l, "A-1", "49.90")
				paid(t, l, "A-2", "20.00")
				paid(t, l, "A-3", "15.00")
				refund := sent(t, l, "A-1", "10.00", "rf_aaaaaaaaaaaaaaaa")
				back := sent(t, l, "A-2", "5.00", "rf_bbbbbbbbbbbbbbbb")
				entries := []sepatest.Entry{
					{Ref: "E1", Booked: monday, Amount: d("49.90"), Credit: true, EndToEndID: upstream, Remittance: upstream, Counterparty: "Anna Schmidt", CounterIBAN: "FR1420041010050500013M02606"},
					{Ref: "E2", Booked: monday, Amount: d("20.00"), Credit: true, Remittance: "Order A-2, thank you", Counterparty: "Ben"},
					{Ref: "E3", Booked: monday, Amount: d("10.00"), EndToEndID: sepa.Reference(refund), Remittance: "Refund A-1: returned", Counterparty: "Anna Schmidt", CounterIBAN: "FR1420041010050500013M02606"},
					{Ref: "E4", Booked: monday, Amount: d("14.00"), Credit: true, Remittance: "A-3", Counterparty: "Carla"},
					{Ref: "E5", Booked: monday, Amount: d("99.99"), Credit: true, Remittance: "Invoice 2026-9", Counterparty: "Dora Weiss", CounterIBAN: "NL91ABNA0417164300"},
				}
				doc := sepatest.Statement(version.v, shopIBAN, monday, monday, entries)
				if version.kind == "054" {
					doc = sepatest.Notification(version.v, shopIBAN, entries)
				}
				message := "camt." + version.kind + ".001." + version.v
				t.Run("schema", func(t *testing.T) { sepatest.ValidateXSD(t, sepatest.Schema(message), doc) })
				got, err := s.Import(ctx, by, shop, statements.Upload{Name: "statement.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].Booked != 1 || got[0].Received != 2 || got[0].Mismatched != 1 || got[0].Unmatched != 1 || got[0].Message != message {
					t.Fatalf("imported %+v", got)
				}
				if r, _ := l.Refund(ctx, "shop1", refund); r.State != ledger.RefundBooked || r.BookedOn != "2026-12-07" {
					t.Errorf("the refund: %s on %q", r.State, r.BookedOn)
				}
				for order, want := range map[string]string{"A-1": "2026-12-07", "A-2": "2026-12-07", "A-3": ""} {
					if on, err := l.Received(ctx, "shop1", order); err != nil || on != want {
						t.Errorf("%s received %q, want %q", order, on, want)
					}
				}
				open, err := l.OpenEntries(ctx, "shop1", 50)
				if err != nil || len(open) != 2 {
					t.Fatalf("open entries %+v, %v", open, err)
				}
				for _, e := range open {
					switch e.Outcome {
					case ledger.EntryMismatch:
						if e.Target != "A-3" || e.Amount() != "14.00" {
							t.Errorf("the mismatch: %+v", e)
						}
					case ledger.EntryUnmatched:
						if e.Counterparty != "Dora Weiss" || e.Remittance != "Invoice 2026-9" || e.CounterIBAN != "NL91 **** **** 4300" {
							t.Errorf("the unmatched entry: %+v", e)
						}
					}
				}
				// The same statement again, and one overlapping it with a
				// return of the second refund: only the return is new.
				again, err := s.Import(ctx, by, shop, statements.Upload{Name: "statement.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true})
				if err != nil || again[0].Repeated != 5 || again[0].Booked+again[0].Received+again[0].Unmatched+again[0].Mismatched != 0 {
					t.Errorf("the same statement again: %+v, %v", again, err)
				}
				overlap := sepatest.Statement("08", shopIBAN, monday, monday.AddDate(0, 0, 1), append(entries[:2:2],
					sepatest.Entry{Ref: "E6", Booked: monday.AddDate(0, 0, 1), Amount: d("5.00"), Credit: true, EndToEndID: sepa.Reference(back),
						ReturnReason: "AC04", Counterparty: "Ben"}))
				more, err := s.Import(ctx, by, shop, statements.Upload{Name: "overlap.xml", File: bytes.NewReader(overlap), Size: int64(len(overlap)), MovesRefunds: true})
				if err != nil || more[0].Repeated != 2 || more[0].Returned != 1 {
					t.Errorf("an overlapping statement: %+v, %v", more, err)
				}
				if r, _ := l.Refund(ctx, "shop1", back); r.State != ledger.RefundReturned || r.ReturnReason != "AC04" {
					t.Errorf("the returned refund: %s (%q)", r.State, r.ReturnReason)
				}
				if refunded, _ := l.Refunded(ctx, "shop1", "A-2"); refunded != "0.00" {
					t.Errorf("a returned refund still counts: %s refunded", refunded)
				}
				events, _ := l.OrderEvents(ctx, "shop1", "A-1")
				if !strings.Contains(fmt.Sprint(eventTypes(events)), ledger.EventPaymentReceived) {
					t.Errorf("no payment.received event: %v", eventTypes(events))
				}
			})
		})
	}
}

func eventTypes(list []ledger.Event) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Type)
	}
	return out
}

// TestABadFileChangesNothing: a PDF, an MT940, an HTML page, an empty or
// truncated file, XML with a DOCTYPE, a zip bomb: each refused with its
// reason, nothing recorded.
func TestABadFileChangesNothing(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := &statements.Service{Ledger: l}
	upstream := paid(t, l, "A-1", "49.90")
	good := sepatest.Statement("08", shopIBAN, monday, monday, []sepatest.Entry{{Ref: "E1", Booked: monday, Amount: d("49.90"), Credit: true, Remittance: upstream}})
	bomb := sepatest.Zip(map[string][]byte{"big.xml": append([]byte("<?xml version=\"1.0\"?>"), bytes.Repeat([]byte(" "), 120<<20)...)})
	for name, file := range map[string][]byte{
		"invoice.pdf": []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj"),
		"mt940.sta":   []byte(":20:STARTUMSE\r\n:25:37040044/0532013000\r\n:28C:00001/001\r\n"),
		"page.html":   []byte("<!DOCTYPE html><html><body>Login</body></html>"),
		"empty.xml":   nil,
		"cut.xml":     good[:len(good)/2],
		"laughs.xml":  []byte(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">&lol;</Document>`),
		"bomb.zip":    bomb,
	} {
		_, err := s.Import(ctx, by, shop, statements.Upload{Name: name, File: bytes.NewReader(file), Size: int64(len(file)), MovesRefunds: true})
		var fe *sepa.FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a file error", name, err)
		}
	}
	if list, err := l.Statements(ctx, "shop1", 10); err != nil || len(list) != 0 {
		t.Errorf("%d statements kept", len(list))
	}
	if on, err := l.Received(ctx, "shop1", "A-1"); err != nil || on != "" {
		t.Error("a refused file received an order")
	}
}

// TestAStatementOfAnotherAccountIsImportedOnlyWhenAsked: the shop's own
// account is not the statement's: refused, unless the person says so.
func TestAStatementOfAnotherAccountIsImportedOnlyWhenAsked(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := &statements.Service{Ledger: l}
	m := *shop
	m.AccountName, m.AccountIBAN = "Shop One GmbH", "FR1420041010050500013M02606"
	doc := sepatest.Statement("08", shopIBAN, monday, monday, []sepatest.Entry{{Ref: "E1", Booked: monday, Amount: d("1.00"), Credit: true, Remittance: "x"}})
	var other *statements.OtherAccountError
	if _, err := s.Import(ctx, by, &m, statements.Upload{Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true}); !errors.As(err, &other) {
		t.Fatalf("another account's statement: %v", err)
	}
	if list, err := l.Statements(ctx, "shop1", 10); err != nil || len(list) != 0 {
		t.Error("the refused statement is kept")
	}
	if got, err := s.Import(ctx, by, &m, statements.Upload{Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true, OtherAccount: true}); err != nil || len(got) != 1 || got[0].Unmatched != 1 {
		t.Errorf("imported when asked: %+v, %v", got, err)
	}
}

// TestOnlyAnOwnersStatementOfTheShopsAccountMovesRefunds: a made-up
// statement is the way to make a refunded amount refundable again. A
// statement uploaded by someone who may not pay refunds, or of another
// account, or naming no account, leaves every entry naming a refund
// alone (held, not kept), while it still receives payments; the same file
// uploaded by an owner then books them.
func TestOnlyAnOwnersStatementOfTheShopsAccountMovesRefunds(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := &statements.Service{Ledger: l}
	paid(t, l, "A-1", "49.90")
	paid(t, l, "A-2", "20.00")
	refund := sent(t, l, "A-1", "10.00", "rf_aaaaaaaaaaaaaaaa")
	entries := []sepatest.Entry{
		{Ref: "E1", Booked: monday, Amount: d("10.00"), EndToEndID: sepa.Reference(refund), Counterparty: "Anna"},
		{Ref: "E2", Booked: monday, Amount: d("20.00"), Credit: true, Remittance: "A-2"},
	}
	doc := sepatest.Statement("08", shopIBAN, monday, monday, entries)
	other := sepatest.Statement("08", "FR1420041010050500013M02606", monday, monday, entries)
	for what, up := range map[string]statements.Upload{
		"support's upload":  {Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc))},
		"another account's": {Name: "o.xml", File: bytes.NewReader(other), Size: int64(len(other)), OtherAccount: true, MovesRefunds: true},
	} {
		got, err := s.Import(ctx, by, shop, up)
		if err != nil || len(got) != 1 || got[0].Held != 1 {
			t.Fatalf("%s: %+v, %v", what, got, err)
		}
		if r, _ := l.Refund(ctx, "shop1", refund); r.State != ledger.RefundSent {
			t.Errorf("%s moved the refund to %s", what, r.State)
		}
	}
	if on, err := l.Received(ctx, "shop1", "A-2"); err != nil || on != "2026-12-07" {
		t.Errorf("support's upload did not receive A-2: %q", on)
	}
	got, err := s.Import(ctx, by, shop, statements.Upload{Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true})
	if err != nil || got[0].Booked != 1 || got[0].Held != 0 {
		t.Fatalf("the owner's upload: %+v, %v", got, err)
	}
	if r, _ := l.Refund(ctx, "shop1", refund); r.State != ledger.RefundBooked {
		t.Errorf("the owner's upload left the refund %s", r.State)
	}
}

// TestOnlyWhatIsSureIsMatched: a debit with a return reason is no return
// (a return brings money back), money in another currency matches
// nothing, and a batch whose transactions do not say
// their amounts matches nothing: each is left for a person.
func TestOnlyWhatIsSureIsMatched(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := &statements.Service{Ledger: l}
	paid(t, l, "A-1", "49.90")
	paid(t, l, "A-2", "20.00")
	paid(t, l, "A-3", "15.00")
	refund := sent(t, l, "A-1", "10.00", "rf_aaaaaaaaaaaaaaaa")
	doc := sepatest.Statement("08", shopIBAN, monday, monday, []sepatest.Entry{
		{Ref: "E1", Booked: monday, Amount: d("10.00"), EndToEndID: sepa.Reference(refund), ReturnReason: "AC04"},
		{Ref: "E3", Booked: monday, Amount: d("30.00"), Credit: true, Batch: []sepatest.Entry{
			{Amount: d("0"), Remittance: "A-3"}, {Amount: d("0"), Remittance: "A-2"}}},
	})
	got, err := s.Import(ctx, by, shop, statements.Upload{Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true})
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v, %v", got, err)
	}
	if r, _ := l.Refund(ctx, "shop1", refund); r.State != ledger.RefundBooked {
		t.Errorf("a debit with a return reason left the refund %s, want booked (it left the account)", r.State)
	}
	for _, order := range []string{"A-2", "A-3"} {
		if on, err := l.Received(ctx, "shop1", order); err != nil || on != "" {
			t.Errorf("%s received by an entry that is not sure: %s", order, on)
		}
	}
	if got[0].Unmatched != 1 {
		t.Errorf("%d entries left for a person, want the batch: %+v", got[0].Unmatched, got[0])
	}
	chf := bytes.Replace(sepatest.Statement("08", shopIBAN, monday, monday, []sepatest.Entry{
		{Ref: "F1", Booked: monday, Amount: d("20.00"), Credit: true, Remittance: "A-2"}}), []byte(`Ccy="EUR"`), []byte(`Ccy="CHF"`), -1)
	chf = bytes.Replace(chf, []byte("<Ccy>EUR</Ccy>"), []byte("<Ccy>CHF</Ccy>"), -1)
	if got, err := s.Import(ctx, by, shop, statements.Upload{Name: "chf.xml", File: bytes.NewReader(chf), Size: int64(len(chf)), MovesRefunds: true}); err != nil || got[0].Unmatched != 1 {
		t.Errorf("a statement in francs: %+v, %v", got, err)
	}
	if on, err := l.Received(ctx, "shop1", "A-2"); err != nil || on != "" {
		t.Error("20 francs received a 20-euro order")
	}
}

// TestTheOtherPartiesAreForgottenAfterAYear: who paid, their masked IBAN
// and the remittance of an entry left for a person are dropped once it is
// KeepParties old; its date and amount stay.
func TestTheOtherPartiesAreForgottenAfterAYear(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	doc := sepatest.Statement("08", shopIBAN, monday, monday, []sepatest.Entry{
		{Ref: "E1", Booked: monday, Amount: d("12.34"), Credit: true, Remittance: "Invoice 9", Counterparty: "Dora Weiss", CounterIBAN: "NL91ABNA0417164300"}})
	s := &statements.Service{Ledger: l}
	if _, err := s.Import(ctx, by, shop, statements.Upload{Name: "s.xml", File: bytes.NewReader(doc), Size: int64(len(doc)), MovesRefunds: true}); err != nil {
		t.Fatal(err)
	}
	later := &statements.Service{Ledger: l, Now: func() time.Time { return monday.Add(statements.KeepParties + 48*time.Hour) }}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { later.Run(run, time.Hour); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		open, err := l.OpenEntries(ctx, "shop1", 10)
		if err != nil || len(open) != 1 {
			t.Fatalf("%+v, %v", open, err)
		}
		if e := open[0]; e.Counterparty == "" && e.CounterIBAN == "" && e.Remittance == "" {
			if e.Amount() != "12.34" || e.BookedOn != "2026-12-07" {
				t.Errorf("the entry lost its date or amount: %+v", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parties are still kept: %+v", open[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
}
