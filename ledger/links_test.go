package ledger_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

func newLink(id, reference, kind string, max int) ledger.PaymentLink {
	return ledger.PaymentLink{ID: id, MerchantID: "shop1", Amount: "25.00", Currency: "EUR", Description: "Club fee 2026",
		Reference: reference, Lang: "de", Kind: kind, MaxPayments: max, Expires: time.Now().Add(24 * time.Hour),
		CreatedBy: "support@shop.example", Created: time.Now()}
}

func made(t *testing.T, l *ledger.Ledger, p ledger.PaymentLink) {
	t.Helper()
	if err := l.CreateLink(ctx, p, ledger.AuditEntry{Actor: p.CreatedBy, MerchantID: p.MerchantID, Action: "payment link made: " + p.ID}); err != nil {
		t.Fatal(err)
	}
}

// payLink moves an attempt of the order to COMPLETED, as the follower would.
func payLink(t *testing.T, l *ledger.Ledger, a ledger.Attempt) {
	t.Helper()
	for _, step := range []struct {
		from ledger.State
		ch   ledger.Change
	}{{ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/p"}}, {ledger.Open, ledger.Change{State: ledger.Final, Status: "COMPLETED"}}} {
		if ok, err := l.Move(ctx, a.UpstreamID, step.from, step.ch); !ok || err != nil {
			t.Fatalf("move %s: %v, %v", a.UpstreamID, ok, err)
		}
	}
}

func linkAttempt(p ledger.PaymentLink, orderID string, seq int) ledger.Attempt {
	return ledger.Attempt{UpstreamID: fmt.Sprintf("shop1~%d:%s", seq, orderID), MerchantID: p.MerchantID, OrderID: orderID, Seq: seq,
		Amount: p.Amount, Currency: p.Currency, BankID: "dkb", Country: "DE", PaymentLink: p.ID}
}

func TestAReferenceIsTakenOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		made(t, l, newLink("aaaaaaaaaaaaaa", "INV-117", ledger.LinkSingle, 0))
		var taken *ledger.ReferenceTakenError
		err := l.CreateLink(ctx, newLink("bbbbbbbbbbbbbb", "INV-117", ledger.LinkReusable, 0), ledger.AuditEntry{})
		if !errors.As(err, &taken) || taken.LinkID != "aaaaaaaaaaaaaa" {
			t.Errorf("the same reference again: %v; want it taken by aaaaaaaaaaaaaa", err)
		}
		if _, err := l.RecordOrder(ctx, order("A-9", "49.90")); err != nil {
			t.Fatal(err)
		}
		err = l.CreateLink(ctx, newLink("cccccccccccccc", "A-9", ledger.LinkSingle, 0), ledger.AuditEntry{})
		if !errors.As(err, &taken) || taken.OrderID != "A-9" {
			t.Errorf("a single link under an order's id: %v; want it taken by the order", err)
		}
		other := newLink("dddddddddddddd", "INV-117", ledger.LinkSingle, 0)
		other.MerchantID = "shop2"
		made(t, l, other)
	})
}

func TestASingleLinkIsOneOrderPaidOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		p := newLink("ssssssssssssss", "INV-1", ledger.LinkSingle, 0)
		made(t, l, p)
		for i := range 3 {
			_, o, err := l.LinkOrder(ctx, p.ID, fmt.Sprint("payer-", i))
			if err != nil || o.OrderID != "INV-1" || o.PaymentLink != p.ID || o.Amount != "25.00" {
				t.Fatalf("opened: %+v, %v", o, err)
			}
		}
		// A signed link under the link's order id is another order's.
		signed := order("INV-1", "25.00")
		if _, err := l.RecordOrder(ctx, signed); !errors.Is(err, ledger.ErrOrderChanged) {
			t.Errorf("a signed link for the link's order: %v, want ErrOrderChanged", err)
		}
		a := linkAttempt(p, "INV-1", 1)
		if err := l.InsertAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
		payLink(t, l, a)
		got, err := l.Link(ctx, "shop1", p.ID)
		if err != nil || got.State(time.Now()) != ledger.LinkPaid || got.Payments != 1 || got.PaidAmount() != "25.00" {
			t.Errorf("after paying: %+v, %v", got, err)
		}
		if _, _, err := l.LinkOrder(ctx, p.ID, "payer-9"); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("paying a paid link: %v, want ErrLinkEnded", err)
		}
		if err := l.InsertAttempt(ctx, linkAttempt(p, "INV-1", 2)); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("a second payment of a paid link: %v, want ErrLinkEnded", err)
		}
		f, err := l.Funnel(ctx, "shop1", p.ID)
		if err != nil || f != (ledger.LinkFunnel{Opened: 1, BankChosen: 1, AtBank: 1, Paid: 1}) {
			t.Errorf("funnel %+v, %v", f, err)
		}
		events, err := l.OrderEvents(ctx, "shop1", "INV-1")
		if err != nil || len(events) == 0 {
			t.Fatalf("events %v, %v", events, err)
		}
		var body ledger.EventBody
		if err := jsonUnmarshal(events[len(events)-1].Body, &body); err != nil || body.Data.PaymentLink != p.ID {
			t.Errorf("the event's payment_link: %+v, %v", body.Data, err)
		}
	})
}

// TestAReusableLinkNeverPassesItsBound: payers arrive at once, on three
// instances; the link allows three payments, so three attempts are made,
// whoever races, and the fourth place frees only when a payment under way
// ends unpaid.
func TestAReusableLinkNeverPassesItsBound(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		instances := []*ledger.Ledger{l, ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)}
		p := newLink("rrrrrrrrrrrrrr", "FEE", ledger.LinkReusable, 3)
		made(t, l, p)
		const payers = 12
		orders := make([]string, payers)
		for i := range payers {
			_, o, err := instances[i%3].LinkOrder(ctx, p.ID, fmt.Sprint("payer-", i))
			if err != nil {
				t.Fatal(err)
			}
			orders[i] = o.OrderID
		}
		if orders[0] != "FEE-1" || orders[payers-1] != fmt.Sprintf("FEE-%d", payers) {
			t.Errorf("orders %v, want FEE-1 to FEE-%d", orders, payers)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []ledger.Attempt
		full := 0
		for i := range payers {
			wg.Go(func() {
				a := linkAttempt(p, orders[i], 1)
				err := instances[i%3].InsertAttempt(ctx, a)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, a)
				case errors.Is(err, ledger.ErrLinkFull):
					full++
				default:
					t.Errorf("payer %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 3 || full != payers-3 {
			t.Fatalf("%d attempts made, %d refused as full; want 3 and %d", len(won), full, payers-3)
		}
		if _, _, err := l.LinkOrder(ctx, p.ID, "payer-new"); !errors.Is(err, ledger.ErrLinkFull) {
			t.Errorf("a new payer of a link whose places are all taken: %v, want ErrLinkFull", err)
		}
		if full, err := l.LinkFull(ctx, p); !full || err != nil {
			t.Errorf("LinkFull of a link whose places are all taken: %v, %v", full, err)
		}
		// One payer gives up at the bank: their place is free again.
		if ok, err := l.Move(ctx, won[0].UpstreamID, ledger.Creating, ledger.Change{State: ledger.Final, Status: "CANCELED"}); !ok || err != nil {
			t.Fatal(ok, err)
		}
		payLink(t, l, won[1])
		payLink(t, l, won[2])
		var waiting []string
		for _, id := range orders {
			if !slices.ContainsFunc(won, func(a ledger.Attempt) bool { return a.OrderID == id }) {
				waiting = append(waiting, id)
			}
		}
		late := linkAttempt(p, waiting[0], 1)
		if err := l.InsertAttempt(ctx, late); err != nil {
			t.Fatalf("a place given back: %v", err)
		}
		payLink(t, l, late)
		got, err := l.Link(ctx, "shop1", p.ID)
		if err != nil || got.State(time.Now()) != ledger.LinkPaid || got.Payments != 3 || got.PaidAmount() != "75.00" {
			t.Errorf("after three payments: %+v, %v", got, err)
		}
		if err := l.InsertAttempt(ctx, linkAttempt(p, waiting[1], 1)); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("a fourth payment: %v, want ErrLinkEnded", err)
		}
	})
}

// TestACancelHoldsOnEveryInstance: a link cancelled through one
// connection neither opens nor starts a payment through another, while the
// payment already made is still moved (followed) to its end.
func TestACancelHoldsOnEveryInstance(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one, two := ledgertest.Open(t, databaseURL), ledgertest.Open(t, databaseURL)
		p := newLink("cccccccccccccc", "R-1", ledger.LinkReusable, 0)
		p.EmailSealed = "sealed:k:opaque"
		made(t, one, p)
		_, first, err := two.LinkOrder(ctx, p.ID, "payer-1")
		if err != nil {
			t.Fatal(err)
		}
		_, second, err := two.LinkOrder(ctx, p.ID, "payer-2")
		if err != nil {
			t.Fatal(err)
		}
		atBank := linkAttempt(p, first.OrderID, 1)
		if err := two.InsertAttempt(ctx, atBank); err != nil {
			t.Fatal(err)
		}
		got, err := one.CancelLink(ctx, "shop1", p.ID, ledger.AuditEntry{Actor: "owner@shop.example", MerchantID: "shop1", Action: "payment link cancelled"})
		if err != nil || got.Stored != ledger.LinkCancelled || got.EmailSealed != "" {
			t.Fatalf("cancel: %+v, %v", got, err)
		}
		if _, _, err := two.LinkOrder(ctx, p.ID, "payer-3"); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("a new payer after the cancel elsewhere: %v", err)
		}
		if err := two.InsertAttempt(ctx, linkAttempt(p, second.OrderID, 1)); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("a payment after the cancel elsewhere: %v", err)
		}
		payLink(t, two, atBank)
		if _, err := one.CancelLink(ctx, "shop1", p.ID, ledger.AuditEntry{}); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("cancelling twice: %v", err)
		}
		after, err := one.Link(ctx, "shop1", p.ID)
		if err != nil || after.State(time.Now()) != ledger.LinkCancelled || after.Payments != 1 {
			t.Errorf("the payment at the bank still counts: %+v, %v", after, err)
		}
		if _, err := one.Link(ctx, "shop2", p.ID); !errors.Is(err, ledger.ErrLinkNotFound) {
			t.Errorf("another merchant's link: %v", err)
		}
	})
}

func TestAnExpiredLinkStartsNothing(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		p := newLink("eeeeeeeeeeeeee", "E-1", ledger.LinkSingle, 0)
		p.Expires = time.Now().Add(300 * time.Millisecond)
		p.EmailSealed = "sealed:k:opaque"
		made(t, l, p)
		if _, _, err := l.LinkOrder(ctx, p.ID, "payer-1"); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(p.Expires) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		if _, _, err := l.LinkOrder(ctx, p.ID, "payer-2"); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("a payer after expiry: %v", err)
		}
		if err := l.InsertAttempt(ctx, linkAttempt(p, "E-1", 1)); !errors.Is(err, ledger.ErrLinkEnded) {
			t.Errorf("paying after expiry: %v", err)
		}
		list, err := l.ListLinks(ctx, ledger.LinkFilter{Merchant: "shop1", State: ledger.LinkExpired}, ledger.Cursor{}, 10)
		if err != nil || len(list) != 1 || list[0].ID != p.ID {
			t.Errorf("expired links: %+v, %v", list, err)
		}
		if n, err := l.ForgetEndedEmails(ctx, 100); err != nil || n != 1 {
			t.Errorf("e-mails forgotten: %d, %v", n, err)
		}
		tables, err := l.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range tables["payment_links"] {
			if v == "sealed:k:opaque" {
				t.Error("an expired link keeps its payer's e-mail")
			}
		}
	})
}

func TestLinksAreListedAndSearched(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		for i, d := range []string{"Kitchen repair", "Club fee", "100% discount_code", "Küche"} {
			p := newLink(fmt.Sprintf("list%010d", i), fmt.Sprintf("REF-%d", i), ledger.LinkSingle, 0)
			p.Description, p.Created = d, time.Now().Add(time.Duration(i)*time.Second)
			made(t, l, p)
		}
		search := func(q string) []string {
			list, err := l.ListLinks(ctx, ledger.LinkFilter{Merchant: "shop1", Query: q}, ledger.Cursor{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			var refs []string
			for _, p := range list {
				refs = append(refs, p.Reference)
			}
			return refs
		}
		for q, want := range map[string]string{"kitchen": "[REF-0]", "ref-1": "[REF-1]", "100%": "[REF-2]", "_": "[REF-2]", "KÜCHE": "[REF-3]", "%": "[REF-2]"} {
			if got := fmt.Sprint(search(q)); got != want {
				t.Errorf("search %q: %s, want %s", q, got, want)
			}
		}
		page, err := l.ListLinks(ctx, ledger.LinkFilter{Merchant: "shop1"}, ledger.Cursor{}, 2)
		if err != nil || len(page) != 2 || page[0].Reference != "REF-3" {
			t.Fatalf("first page %+v, %v", page, err)
		}
		last := page[1]
		rest, err := l.ListLinks(ctx, ledger.LinkFilter{Merchant: "shop1"}, ledger.Cursor{At: last.Created, ID: last.ID}, 10)
		if err != nil || len(rest) != 2 || rest[0].Reference != "REF-1" {
			t.Errorf("after the cursor: %+v, %v", rest, err)
		}
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestAReusableLinksPayerKeepsTheirOrder: the same browser submitting
// again pays the order it was given, another browser gets the next; a
// link's opening counts are added in the background, each into the link
// and its merchant's funnel.
func TestAReusableLinksPayerKeepsTheirOrder(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		l := ledgertest.Open(t, databaseURL)
		p := newLink("kkkkkkkkkkkkkk", "CLUB", ledger.LinkReusable, 0)
		made(t, l, p)
		if _, _, err := l.PayerOrder(ctx, p.ID, "payer-a"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("a payer before their first submit: %v, want ErrNotFound", err)
		}
		_, a1, err := l.LinkOrder(ctx, p.ID, "payer-a")
		if err != nil {
			t.Fatal(err)
		}
		_, b, err := l.LinkOrder(ctx, p.ID, "payer-b")
		if err != nil {
			t.Fatal(err)
		}
		_, a2, err := l.LinkOrder(ctx, p.ID, "payer-a")
		if err != nil {
			t.Fatal(err)
		}
		if a1.OrderID != "CLUB-1" || b.OrderID != "CLUB-2" || a2.OrderID != a1.OrderID {
			t.Errorf("payer a got %s then %s, payer b %s; want CLUB-1 twice and CLUB-2", a1.OrderID, a2.OrderID, b.OrderID)
		}
		hour := ledger.HourOf(time.Now())
		if err := l.AddLinkOpens(ctx, []ledger.LinkOpens{{Link: p.ID, Merchant: "shop1", Hour: hour, Count: 5}}); err != nil {
			t.Fatal(err)
		}
		if f, err := l.Funnel(ctx, "shop1", p.ID); err != nil || f.Opened != 5 {
			t.Errorf("funnel after 5 opens: %+v, %v", f, err)
		}
	})
}
