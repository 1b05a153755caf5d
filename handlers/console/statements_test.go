package console_test

import (
	"bytes"
	"encoding/csv"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/sepa/sepatest"
)

// shop1IBAN is the account of shopAccount.
const shop1IBAN = "DE02120300000000202051"

// uploadStatement posts a statement file as the statements page's form
// does; extra adds form fields.
func (b *browser) uploadStatement(csrf, name string, data []byte, extra url.Values) *http.Response {
	b.e.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("csrf", csrf)
	for k, v := range extra {
		w.WriteField(k, v[0])
	}
	part, _ := w.CreateFormFile("file", name)
	part.Write(data)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, b.e.url+"/console/statements", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return res
}

// follow reads the page an answer redirects to, failing unless it is a
// 303.
func (b *browser) follow(res *http.Response) *goquery.Document {
	b.e.t.Helper()
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		b.e.t.Fatalf("answered %d, want 303", res.StatusCode)
	}
	return page(b.e.t, b.get(res.Header.Get("Location")), http.StatusOK)
}

var bookingDay = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)

func text(doc *goquery.Document, testID string) string {
	return strings.Join(strings.Fields(doc.Find(`[data-testid="`+testID+`"]`).Text()), " ")
}

// TestAStatementBooksARefundAndReceivesAPayment: a support person uploads
// the shop's camt.053; the payment it shows coming in is received (on the
// order's page, in the list, its filter and the CSV), what matched nothing
// or named an order for another amount is left for a person with who paid
// and why, and the sent refund it shows leaving waits for an owner, whose
// upload of the same file books it. The same statement again changes
// nothing.
func TestAStatementBooksARefundAndReceivesAPayment(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupShop1(t, databaseURL, shopAccount)
		e.paid("shop1", "A-1")
		e.paid("shop1", "A-2")
		owner := e.browser()
		ocsrf := owner.signIn(shop1User)
		refund := refundIDOf(owner.makeRefund(ocsrf, "A-1", url.Values{"amount": {"10.00"}, "reason": {"Scratched"},
			"account_name": {"Ann Weber"}, "account_iban": {payerIBAN}}))
		if res := owner.post("/console/refunds/"+refund+"/sent", url.Values{"csrf": {ocsrf}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("marking the refund sent: %d", res.StatusCode)
		}

		support := e.browser()
		csrf := support.signIn(roleUser(merchant.Support))
		doc := page(t, support.get("/console/statements"), http.StatusOK)
		if doc.Find(`form[data-testid="statement-upload"] input[type="file"][name="file"]`).Length() != 1 {
			t.Fatal("support is not offered the upload")
		}
		statement := sepatest.Statement("08", shop1IBAN, bookingDay, bookingDay, []sepatest.Entry{
			{Ref: "E1", Booked: bookingDay, Amount: decimal.RequireFromString("49.90"), Credit: true, Remittance: "Order A-1", Counterparty: "Anna Schmidt"},
			{Ref: "E2", Booked: bookingDay, Amount: decimal.RequireFromString("10.00"), EndToEndID: sepa.Reference(refund), Counterparty: "Ann Weber", CounterIBAN: payerIBAN},
			{Ref: "E3", Booked: bookingDay, Amount: decimal.RequireFromString("12.34"), Credit: true, Remittance: "Invoice 2026-9", Counterparty: "Dora Weiss", CounterIBAN: "NL91ABNA0417164300"},
			{Ref: "E4", Booked: bookingDay, Amount: decimal.RequireFromString("20.00"), Credit: true, Remittance: "A-2", Counterparty: "Carla"},
		})
		doc = support.follow(support.uploadStatement(csrf, "2026-12-07.xml", statement, nil))
		if got := text(doc, "statement-notice"); !strings.Contains(got, "statements 1, entries 3, matched 1, left for you 2, seen before 0") {
			t.Errorf("the notice after the upload: %q", got)
		}
		// Money leaving the shop's account is an owner's to say: the
		// refund waits for an owner's upload of the same file.
		if got := text(doc, "statement-held"); !strings.Contains(got, "Entries naming refunds: 1") {
			t.Errorf("support's upload does not say the refund waits for an owner's: %q", got)
		}
		if doc := page(t, support.get("/console/refunds/"+refund), http.StatusOK); stateOf(t, doc) != ledger.RefundSent {
			t.Errorf("support's upload moved the refund to %q", stateOf(t, doc))
		}
		doc = owner.follow(owner.uploadStatement(ocsrf, "2026-12-07.xml", statement, nil))
		if got := text(doc, "statement-notice"); !strings.Contains(got, "entries 4, matched 1, left for you 0, seen before 3") || text(doc, "statement-held") != "" {
			t.Errorf("the notice after the owner's upload: %q", got)
		}
		if got := doc.Find(`[data-testid="statement-row"][data-new="true"]`).Text(); !strings.Contains(got, "2026-12-07.xml") || !strings.Contains(got, "DE02 **** **** **** 2051") {
			t.Errorf("the new statement's row: %q", got)
		}
		open := doc.Find(`[data-testid="statement-unmatched"] [data-testid="open-entry"]`)
		if open.Length() != 2 {
			t.Fatalf("%d entries left for a person, want 2: %q", open.Length(), text(doc, "statement-unmatched"))
		}
		left := text(doc, "statement-unmatched")
		for _, want := range []string{"Dora Weiss", "NL91 **** **** 4300", "Invoice 2026-9", "+€12.34", "Matches no payment or refund",
			"Another amount than the order's (€49.90): A-2", "+€20.00"} {
			if !strings.Contains(left, want) {
				t.Errorf("what is left for a person lacks %q: %q", want, left)
			}
		}
		if strings.Contains(doc.Text(), "NL91ABNA0417164300") || strings.Contains(doc.Text(), payerIBAN) {
			t.Error("a full IBAN is on the page")
		}

		if doc := page(t, support.get("/console/refunds/"+refund), http.StatusOK); stateOf(t, doc) != ledger.RefundBooked {
			t.Errorf("the refund the statement shows leaving is %q", stateOf(t, doc))
		}
		if got := text(page(t, support.get("/console/payments/A-1"), http.StatusOK), "order-received"); !strings.Contains(got, "booked 2026-12-07") {
			t.Errorf("A-1's page says %q of its money on the account", got)
		}
		if got := text(page(t, support.get("/console/payments/A-2"), http.StatusOK), "order-received"); !strings.Contains(got, "Not seen") {
			t.Errorf("A-2's page says %q of its money on the account", got)
		}
		cells := map[string]string{}
		page(t, support.get("/console/payments"), http.StatusOK).Find(`[data-testid="payment-row"]`).Each(func(_ int, row *goquery.Selection) {
			cells[row.Find(`[data-testid="order-link"]`).Text()] = row.Find(`[data-testid="received-cell"]`).Text()
		})
		if cells["A-1"] != "2026-12-07" || cells["A-2"] != "" {
			t.Errorf("the list's received cells: %q", cells)
		}
		if rows := page(t, support.get("/console/payments?received=no"), http.StatusOK).Find(`[data-testid="order-link"]`); rows.Length() != 1 || rows.Text() != "A-2" {
			t.Errorf("the orders paid and not received: %q", rows.Text())
		}
		rows, err := csv.NewReader(strings.NewReader(readAll(t, support.get("/console/payments.csv")))).ReadAll()
		if err != nil || len(rows) != 3 {
			t.Fatalf("the CSV: %v, %d rows", err, len(rows))
		}
		received := map[string]string{}
		for _, row := range rows[1:] {
			received[row[0]] = row[len(row)-1]
		}
		if rows[0][len(rows[0])-1] != "received_at" || received["A-1"] != "2026-12-07" || received["A-2"] != "" {
			t.Errorf("the CSV's received_at: %q, %q", rows[0], received)
		}

		// The same statement again: every entry was seen, nothing moves.
		doc = owner.follow(owner.uploadStatement(ocsrf, "again.xml", statement, nil))
		if got := text(doc, "statement-notice"); !strings.Contains(got, "matched 0, left for you 0, seen before 4") {
			t.Errorf("the notice after the same statement again: %q", got)
		}
		if n := doc.Find(`[data-testid="statement-unmatched"] [data-testid="open-entry"]`).Length(); n != 2 {
			t.Errorf("%d entries left for a person after the same statement again, want the 2", n)
		}
		events, _ := e.ledger.OrderEvents(ctx, "shop1", "A-1")
		received1 := 0
		for _, ev := range events {
			if ev.Type == ledger.EventPaymentReceived {
				received1++
			}
		}
		if received1 != 1 {
			t.Errorf("%d payment.received events for A-1, want 1", received1)
		}
	})
}

// TestTheOverviewSaysWhatIsNotSeenOnTheAccount: paid orders not seen on
// the shop's account after the bank days they take, and refunds sent and
// not seen leaving, are counted on the overview with the way to each.
func TestTheOverviewSaysWhatIsNotSeenOnTheAccount(t *testing.T) {
	e := setupShop1(t, ledgertest.SQLiteURL(t), shopAccount)
	e.paid("shop1", "A-1")
	owner := e.browser()
	csrf := owner.signIn(shop1User)
	refund := refundIDOf(owner.makeRefund(csrf, "A-1", url.Values{"amount": {"5"}, "reason": {"x"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}}))
	owner.post("/console/refunds/"+refund+"/sent", url.Values{"csrf": {csrf}}).Body.Close()
	if page(t, owner.get("/console"), http.StatusOK).Find(`[data-testid="overview-account"]`).Length() != 0 {
		t.Error("the overview speaks of the account before any statement")
	}
	// A statement of the day before, with nothing of A-1's in it.
	yesterday := time.Now().UTC().AddDate(0, 0, -1)
	owner.follow(owner.uploadStatement(csrf, "s.xml", sepatest.Statement("08", shop1IBAN, yesterday, yesterday, []sepatest.Entry{
		{Ref: "X1", Booked: yesterday, Amount: decimal.RequireFromString("1.00"), Credit: true, Remittance: "something else"}}), nil))
	if got := text(page(t, owner.get("/console"), http.StatusOK), "overview-account"); !strings.Contains(got, "Every payment is seen") {
		t.Errorf("today, with nothing late: %q", got)
	}
	// Ten days on (a new sign-in: the first one's session ended).
	e.frozen.Store(time.Now().Add(10 * 24 * time.Hour).UnixMilli())
	later := e.browser()
	later.signIn(shop1User)
	doc := page(t, later.get("/console"), http.StatusOK)
	if got := text(doc, "overview-unreceived"); !strings.HasSuffix(got, "3 bank days after payment: 1") {
		t.Errorf("ten days on, the orders not seen: %q", got)
	}
	if got := text(doc, "overview-unbooked"); !strings.HasSuffix(got, ": 1") {
		t.Errorf("ten days on, the refunds not seen leaving: %q", got)
	}
	list := doc.Find(`[data-testid="overview-unreceived"] a`).AttrOr("href", "")
	if rows := page(t, later.get(list), http.StatusOK).Find(`[data-testid="order-link"]`); rows.Length() != 1 || rows.Text() != "A-1" {
		t.Errorf("the orders not seen lead to %q, which lists %q", list, rows.Text())
	}
	refunds := doc.Find(`[data-testid="overview-unbooked"] a`).AttrOr("href", "")
	if rows := page(t, later.get(refunds), http.StatusOK).Find(`[data-testid="refund-row"]`); rows.Length() != 1 {
		t.Errorf("the refunds not seen leaving lead to %q, which lists %d", refunds, rows.Length())
	}
}

// TestABadStatementFileIsExplainedAndChangesNothing: a file that is not a
// statement, an attack, a file too large, none at all, or a statement of
// another account are each refused with what was wrong; another account's
// is taken once the person says it is theirs too. A viewer reads the page
// and is offered no upload.
func TestABadStatementFileIsExplainedAndChangesNothing(t *testing.T) {
	e := setupShop1(t, ledgertest.SQLiteURL(t), shopAccount)
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	good := func(iban string) []byte {
		return sepatest.Statement("02", iban, bookingDay, bookingDay, []sepatest.Entry{
			{Ref: "E1", Booked: bookingDay, Amount: decimal.RequireFromString("49.90"), Credit: true, Remittance: "A-1"}})
	}
	for _, c := range []struct {
		name   string
		data   []byte
		status int
		says   string
	}{
		{"invoice.pdf", []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj"), http.StatusUnprocessableEntity, "This is not a camt statement but a PDF"},
		{"mt940.sta", []byte(":20:STARTUMSE\r\n:25:37040044/0532013000\r\n:28C:00001/001\r\n"), http.StatusUnprocessableEntity, "but an MT940 statement"},
		{"laughs.xml", []byte(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><Document>&lol;</Document>`), http.StatusUnprocessableEntity, "declares a DOCTYPE"},
		{"cut.xml", good(shop1IBAN)[:400], http.StatusUnprocessableEntity, "stops before its end"},
		{"empty.xml", nil, http.StatusUnprocessableEntity, "The file is empty"},
		{"big.xml", bytes.Repeat([]byte(" "), 25<<20), http.StatusRequestEntityTooLarge, "The file is 25 MB; a statement may be at most 20 MB"},
		{"other.xml", good(payerIBAN), http.StatusConflict, "of the account DE89 **** **** **** 3000, not of the shop's own account DE02 **** **** **** 2051"},
	} {
		doc := page(t, b.uploadStatement(csrf, c.name, c.data, nil), c.status)
		if got := text(doc, "statement-upload"); !strings.Contains(got, c.says) {
			t.Errorf("%s: the page says %q, want %q", c.name, got, c.says)
		}
		if doc.Find(`#file[aria-invalid="true"]`).Length() != 1 {
			t.Errorf("%s: the file field is not marked", c.name)
		}
	}
	if list, err := e.ledger.Statements(ctx, "shop1", 10); err != nil || len(list) != 0 {
		t.Errorf("refused files kept %d statements (%v)", len(list), err)
	}
	if on, err := e.ledger.Received(ctx, "shop1", "A-1"); err != nil || on != "" {
		t.Errorf("a refused file received an order: %q (%v)", on, err)
	}
	doc := page(t, b.uploadStatement(csrf, "other.xml", good(payerIBAN), nil), http.StatusConflict)
	if doc.Find(`[data-testid="statement-other-account"] input[type="checkbox"][name="other_account"]`).Length() != 1 {
		t.Fatal("another account's statement is not offered to be taken anyway")
	}
	doc = b.follow(b.uploadStatement(csrf, "other.xml", good(payerIBAN), url.Values{"other_account": {"1"}}))
	if got := text(doc, "statement-notice"); !strings.Contains(got, "matched 1") {
		t.Errorf("another account's statement, taken: %q", got)
	}
	if res := b.post("/console/statements", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("an upload with no file: %d", res.StatusCode)
	} else if got := text(page(t, res, http.StatusUnprocessableEntity), "statement-problem"); !strings.Contains(got, "Choose the statement file") {
		t.Errorf("an upload with no file says %q", got)
	}

	viewer := e.browser()
	viewer.signIn(roleUser(merchant.Viewer))
	doc = page(t, viewer.get("/console/statements"), http.StatusOK)
	if doc.Find(`[data-testid="statement-upload"]`).Length() != 0 || doc.Find(`[data-testid="statement-row"]`).Length() != 1 {
		t.Error("a viewer is offered the upload, or does not read the statements")
	}
}

// TestEveryReturnReasonIsSaidInEveryLanguage: a refund the payer's bank
// sent back says why in words, whichever code the bank gave, in each of
// the console's languages.
func TestEveryReturnReasonIsSaidInEveryLanguage(t *testing.T) {
	english := i18n.Staff("en")
	for _, lang := range i18n.StaffChoices() {
		l := i18n.Staff(lang.Code)
		for code := range sepa.ReturnReasons {
			key := "console.returnReason." + code
			if got := l.T(key); got == key || got == "" || lang.Code != "en" && got == english.T(key) {
				t.Errorf("%s: no words of its own for return reason %s: %q", lang.Code, code, got)
			}
		}
	}
}
