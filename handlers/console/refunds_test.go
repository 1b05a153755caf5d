package console_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"image"
	_ "image/png" // the QR code's PNG
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/sepa"
)

// Payers' accounts of the tests: a right one, the same with its last
// digit mistyped, and another.
const (
	payerIBAN  = "DE89370400440532013000"
	typoIBAN   = "DE89370400440532013001"
	otherIBAN  = "FR1420041010050500013M02606"
	payerShown = "DE89 **** **** **** 3000"
)

// shopAccount is shop1's own account, in the merchants file.
const shopAccount = `"account_name":"Shop One GmbH","account_iban":"DE02120300000000202051","account_bic":"BYLADEM1001",`

// paid makes a paid order of 49.90 EUR of merchantID.
func (e *env) paid(merchantID, orderID string) {
	e.t.Helper()
	e.seed(merchantID, orderID, "ing", pisclient.StatusCompleted)
}

// makeRefund posts the refund form of an order and returns the refund's
// page.
func (b *browser) makeRefund(csrf, orderID string, form url.Values) string {
	b.e.t.Helper()
	form.Set("csrf", csrf)
	res := b.post("/console/payments/"+url.PathEscape(orderID)+"/refunds", form)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/refunds/rf_") {
		body, _ := io.ReadAll(res.Body)
		b.e.t.Fatalf("making a refund of %s: %d to %q\n%.800s", orderID, res.StatusCode, res.Header.Get("Location"), body)
	}
	res.Body.Close()
	return res.Header.Get("Location")
}

func refundIDOf(page string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(page, "/console/refunds/"), "?")
	return id
}

func stateOf(t *testing.T, doc *goquery.Document) string {
	t.Helper()
	return doc.Find(`main [data-testid="refund-state"]`).First().AttrOr("data-state", "")
}

func TestSupportRefundsHalfAnOrderAndTypesThePayersAccount(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupOn(t, databaseURL)
		e.paid("shop1", "A-1")
		b := e.browser()
		csrf := b.signIn(roleUser(merchant.Support))

		order := page(t, b.get("/console/payments/A-1"), http.StatusOK)
		button := order.Find(`[data-testid="refund-button"]`)
		if button.Length() != 1 {
			t.Fatal("a paid order's page has no Refund button")
		}
		form := page(t, b.get(button.AttrOr("href", "")), http.StatusOK)
		if got := form.Find(`#amount`).AttrOr("value", ""); got != "49.90" {
			t.Errorf("the form's amount is %q, want what remains, 49.90", got)
		}
		at := b.makeRefund(csrf, "A-1", url.Values{"amount": {"24.95"}, "reason": {"Parcel arrived damaged"}})
		id := refundIDOf(at)

		doc := page(t, b.get(at), http.StatusOK)
		if s := stateOf(t, doc); s != ledger.RefundAwaitingAccount {
			t.Errorf("the new refund is %q, want awaiting_account", s)
		}
		r, err := e.ledger.Refund(ctx, "shop1", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Find(`[data-testid="refund-payer-page"]`).Text(); got != "http://127.0.0.1/r/"+r.PageID {
			t.Errorf("the payer's page reads %q, want http://127.0.0.1/r/%s", got, r.PageID)
		}
		if notice := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(notice, "It was not e‑mailed") {
			t.Errorf("without SMTP_URL the notice reads %q", notice)
		}
		qr := b.get(at[:strings.Index(at, "?")] + "/page-qr.svg")
		if body := readAll(t, qr); qr.StatusCode != http.StatusOK || !strings.HasPrefix(body, "<svg") {
			t.Errorf("the payer's page QR code: %d", qr.StatusCode)
		}

		order = page(t, b.get("/console/payments/A-1"), http.StatusOK)
		if got := order.Find(`[data-testid="refunded"]`).Text(); got != "Refunded €24.95 of €49.90" {
			t.Errorf("the order's page says %q", got)
		}
		if row := order.Find(`[data-testid="refund-row"]`); row.Length() != 1 || row.AttrOr("data-id", "") != id {
			t.Errorf("the order's page lists %d refunds", row.Length())
		}

		// A mistyped IBAN is refused beside its field, everything typed kept.
		typed := url.Values{"csrf": {csrf}, "name": {"Zoë Müller"}, "iban": {typoIBAN}}
		doc = page(t, b.post("/console/refunds/"+id+"/account", typed), http.StatusUnprocessableEntity)
		if got := doc.Find(`#iban-error`).Text(); !strings.Contains(got, "check digits do not match") {
			t.Errorf("a mistyped IBAN is refused with %q", got)
		}
		if doc.Find(`#iban[aria-invalid="true"]`).AttrOr("value", "") != typoIBAN || doc.Find(`#name`).AttrOr("value", "") != "Zoë Müller" {
			t.Error("the account typed did not come back as typed")
		}
		if doc.Find(`[data-testid="error-summary"] a[href="#iban"]`).Length() != 1 {
			t.Error("the refusal is not summed up at the top of the page")
		}
		typed.Set("iban", "de89 3704 0044 0532 0130 00")
		if res := b.post("/console/refunds/"+id+"/account", typed); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("giving the right account: %d", res.StatusCode)
		}
		doc = page(t, b.get("/console/refunds/"+id), http.StatusOK)
		if s := stateOf(t, doc); s != ledger.RefundReady {
			t.Errorf("with its account the refund is %q, want ready", s)
		}
		facts := doc.Find(`[data-testid="refund-facts"]`).Text()
		if !strings.Contains(facts, "Zoë Müller · "+payerShown) {
			t.Errorf("support reads the account as %q", facts)
		}
		if doc.Find(`[data-testid="refund-payer-page"]`).Length() != 0 || doc.Find(`[data-testid="refund-qr"]`).Length() != 0 {
			t.Error("a ready refund still shows the payer's page, or support sees the owner's QR code")
		}
		steps := doc.Find(`[data-testid="refund-step"]`).Text()
		for _, want := range []string{"Made by " + roleUser(merchant.Support), roleUser(merchant.Support) + " typed the payer's account in the console"} {
			if !strings.Contains(steps, want) {
				t.Errorf("the timeline lacks %q:\n%s", want, steps)
			}
		}
		// Paying is the owner's.
		page(t, b.get("/console/refunds/"+id+"/qr.png"), http.StatusForbidden)
		page(t, b.post("/console/refunds/"+id+"/sent", url.Values{"csrf": {csrf}}), http.StatusForbidden)

		audit := e.auditText("shop1")
		for _, want := range []string{"refundMade " + id + " A-1 24.95 EUR", "refundAccount " + id + " " + payerShown + " refund-by-console"} {
			if !strings.Contains(audit, want) {
				t.Errorf("the audit log lacks %q:\n%s", want, audit)
			}
		}
		for where, text := range map[string]string{"the audit log": audit, "the log": e.logText(), "the page": doc.Text()} {
			if strings.Contains(text, payerIBAN) || strings.Contains(strings.ReplaceAll(text, " ", ""), payerIBAN) {
				t.Errorf("%s holds the payer's IBAN in full", where)
			}
		}
	})
}

func TestAViewerReadsRefundsButMakesNone(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	support := e.browser()
	at := support.makeRefund(support.signIn(roleUser(merchant.Support)), "A-1",
		url.Values{"amount": {"10"}, "reason": {"Late"}, "account_name": {"Zoë Müller"}, "account_iban": {payerIBAN}})
	id := refundIDOf(at)
	page(t, support.get(at), http.StatusOK)
	other := support.makeRefund(csrfOf(page(t, support.get("/console/payments/A-1"), http.StatusOK)), "A-1",
		url.Values{"amount": {"5"}, "reason": {"Waiting"}})

	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Viewer))
	order := page(t, b.get("/console/payments/A-1"), http.StatusOK)
	if order.Find(`[data-testid="refund-button"]`).Length() != 0 {
		t.Error("a viewer is offered the Refund button")
	}
	if got := order.Find(`[data-testid="refunded"]`).Text(); got != "Refunded €15.00 of €49.90" {
		t.Errorf("a viewer reads %q", got)
	}
	res := b.post("/console/payments/A-1/refunds", url.Values{"csrf": {csrf}, "amount": {"1"}, "reason": {"x"}})
	if body := readAll(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "owner, support") {
		t.Errorf("a viewer's refund: %d", res.StatusCode)
	}
	list := page(t, b.get("/console/refunds"), http.StatusOK)
	if n := list.Find(`[data-testid="refunds"] [data-testid="refund-row"]`).Length(); n != 2 {
		t.Errorf("a viewer's list shows %d refunds, want 2", n)
	}
	if list.Find(`[data-testid="refund-choose"]`).Length() != 0 || list.Find(`[data-testid="transfer-download"]`).Length() != 0 {
		t.Error("a viewer is offered the transfer file")
	}
	doc := page(t, b.get("/console/refunds/"+id), http.StatusOK)
	text := doc.Text()
	if !strings.Contains(text, payerShown) || strings.Contains(text, "Zoë") || strings.Contains(text, payerIBAN) {
		t.Errorf("a viewer reads the payer's account as %q", doc.Find(`[data-testid="refund-facts"]`).Text())
	}
	// The payer's page decides where the money goes: not a viewer's.
	doc = page(t, b.get(other), http.StatusOK)
	if doc.Find(`[data-testid="refund-payer-page"]`).Length() != 0 || doc.Find(`[data-testid="account-form"]`).Length() != 0 {
		t.Error("a viewer sees the payer's page, or the form of the payer's account")
	}
	for _, path := range []string{"/account", "/cancel", "/send", "/approve", "/sent", "/booked"} {
		if res := b.post("/console/refunds/"+id+path, url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's POST %s: %d", path, res.StatusCode)
		}
	}
	page(t, b.get("/console/refunds/"+refundIDOf(other)+"/page-qr.svg"), http.StatusForbidden)
	// Another merchant's refund is nobody's business here.
	page(t, e.browserOf(shop2User).get("/console/refunds/"+id), http.StatusNotFound)
}

// browserOf is a browser signed in as email.
func (e *env) browserOf(email string) *browser {
	b := e.browser()
	b.signIn(email)
	return b
}

func TestARefusedRefundSaysWhyBesideEachFieldAndKeepsWhatWasTyped(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	e.seed("shop1", "OPEN-1", "ing", pisclient.StatusInProgress)
	b := e.browser()
	csrf := b.signIn(shop1User)

	typed := url.Values{"csrf": {csrf}, "amount": {"12,50"}, "reason": {strings.Repeat("r", 141)}, "account_name": {"Ann"},
		"account_iban": {"CH9300762011623852957"}}
	doc := page(t, b.post("/console/payments/A-1/refunds", typed), http.StatusUnprocessableEntity)
	for field, want := range map[string]string{
		"amount": "An amount in euros with a decimal point", "reason": "at most 140 characters; this one has 141",
		"account_bic": "Required for a bank in CH",
	} {
		if got := doc.Find("#" + field + "-error").Text(); !strings.Contains(got, want) {
			t.Errorf("%s: refused with %q, want it to say %q", field, got, want)
		}
		if doc.Find(`[data-testid="error-summary"] a[href="#`+field+`"]`).Length() != 1 {
			t.Errorf("%s: not in the summary", field)
		}
	}
	for field, want := range map[string]string{"amount": "12,50", "account_iban": "CH9300762011623852957", "account_name": "Ann"} {
		if got := doc.Find("#"+field).AttrOr("value", ""); got != want {
			t.Errorf("%s came back as %q, want %q", field, got, want)
		}
	}
	if doc.Find(`[data-testid="refund-form"]`).Length() != 1 {
		t.Fatal("the refused form is not shown again")
	}

	b.makeRefund(csrf, "A-1", url.Values{"amount": {"30"}, "reason": {"First half"}})
	typed = url.Values{"csrf": {csrf}, "amount": {"30"}, "reason": {"Second half"}}
	doc = page(t, b.post("/console/payments/A-1/refunds", typed), http.StatusConflict)
	if got := doc.Find("#amount-error").Text(); !strings.Contains(got, "at most €19.90") {
		t.Errorf("more than remains is refused with %q", got)
	}
	if doc.Find("#amount").AttrOr("value", "") != "30" || doc.Find("#reason").AttrOr("value", "") != "Second half" {
		t.Error("the form refused for its amount lost what was typed")
	}

	doc = page(t, b.post("/console/payments/OPEN-1/refunds", url.Values{"csrf": {csrf}, "amount": {"1"}, "reason": {"x"}}), http.StatusUnprocessableEntity)
	if got := doc.Find(`[data-testid="refund-problem"]`).Text(); !strings.Contains(got, "not paid") {
		t.Errorf("an order not paid is refused with %q", got)
	}
	if open := page(t, b.get("/console/payments/OPEN-1"), http.StatusOK); open.Find(`[data-testid="refund-button"]`).Length() != 0 {
		t.Error("an order not paid offers a refund")
	}
	page(t, b.post("/console/payments/NO-SUCH/refunds", url.Values{"csrf": {csrf}, "amount": {"1"}}), http.StatusNotFound)
}

func TestACancelledRefundGivesItsAmountBack(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Support))
	at := b.makeRefund(csrf, "A-1", url.Values{"amount": {"49.90"}, "reason": {"Returned goods"}})
	id := refundIDOf(at)
	if order := page(t, b.get("/console/payments/A-1"), http.StatusOK); order.Find(`[data-testid="refund-button"]`).Length() != 0 {
		t.Error("an order refunded in full still offers a refund")
	}
	confirm := page(t, b.post("/console/refunds/"+id+"/cancel", url.Values{"csrf": {csrf}}), http.StatusOK)
	if q := confirm.Find(`[data-testid="confirm"]`).Text(); !strings.Contains(q, "may be refunded again") {
		t.Fatalf("cancelling does not ask first, saying what stays: %q", q)
	}
	if res := b.post("/console/refunds/"+id+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	doc := page(t, b.get("/console/refunds/"+id), http.StatusOK)
	if s := stateOf(t, doc); s != ledger.RefundCancelled || doc.Find(`[data-testid="cancel-refund"]`).Length() != 0 {
		t.Errorf("after cancelling: %q, with a Cancel button: %v", s, doc.Find(`[data-testid="cancel-refund"]`).Length() != 0)
	}
	order := page(t, b.get("/console/payments/A-1"), http.StatusOK)
	if got := order.Find(`[data-testid="refunded"]`).Text(); got != "Refunded €0.00 of €49.90" || order.Find(`[data-testid="refund-button"]`).Length() != 1 {
		t.Errorf("after cancelling the order says %q", got)
	}
	if res := b.post("/console/refunds/"+id+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.StatusCode != http.StatusConflict {
		t.Errorf("cancelling twice: %d, want 409", res.StatusCode)
	}
	if !strings.Contains(e.auditText("shop1"), "refundCancelled "+id) {
		t.Error("the audit log lacks the cancel")
	}
}

// scan reads a QR code back from a PNG as a banking app's camera would.
func scan(t *testing.T, png []byte) string {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("no QR code read from the PNG: %v", err)
	}
	return res.GetText()
}

func TestTheOwnerPaysAReadyRefundByItsQRCodeThenMarksIt(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	at := b.makeRefund(csrf, "A-1", url.Values{"amount": {"12.30"}, "reason": {"Late delivery"}, "account_name": {"Zoë Müller"},
		"account_iban": {payerIBAN}})
	id := refundIDOf(at)
	doc := page(t, b.get(at), http.StatusOK)
	if stateOf(t, doc) != ledger.RefundReady || doc.Find(`[data-testid="refund-qr"]`).Length() != 1 {
		t.Fatalf("a refund made with its account is %q, its QR code shown: %v", stateOf(t, doc), doc.Find(`[data-testid="refund-qr"]`).Length())
	}
	res := b.get("/console/refunds/" + id + "/qr.png")
	png, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("qr.png: %d, Cache-Control %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	r, err := e.ledger.Refund(ctx, "shop1", id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.refunds.QRPayload(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := scan(t, png); got != want {
		t.Errorf("the QR code reads\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(want, payerIBAN) || !strings.Contains(want, "EUR12.30") {
		t.Errorf("the payload %q is not the refund's", want)
	}
	svg := b.get("/console/refunds/" + id + "/qr.svg")
	if body := readAll(t, svg); svg.StatusCode != http.StatusOK || svg.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body, "<svg") {
		t.Errorf("qr.svg: %d %q", svg.StatusCode, svg.Header.Get("Content-Type"))
	}

	if res := b.post("/console/refunds/"+id+"/sent", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("mark as sent: %d", res.StatusCode)
	}
	doc = page(t, b.get("/console/refunds/"+id), http.StatusOK)
	if stateOf(t, doc) != ledger.RefundSent || doc.Find(`[data-testid="refund-qr"]`).Length() != 0 || doc.Find(`[data-testid="cancel-refund"]`).Length() != 0 {
		t.Errorf("a sent refund is %q, and still shows its QR code or Cancel", stateOf(t, doc))
	}
	page(t, b.get("/console/refunds/"+id+"/qr.png"), http.StatusConflict)
	if res := b.post("/console/refunds/"+id+"/booked", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("mark as booked: %d", res.StatusCode)
	}
	doc = page(t, b.get("/console/refunds/"+id), http.StatusOK)
	if stateOf(t, doc) != ledger.RefundBooked {
		t.Errorf("a booked refund is %q", stateOf(t, doc))
	}
	steps := doc.Find(`[data-testid="refund-step"]`).Text()
	for _, want := range []string{"Marked as sent by " + shop1User, "Booked: seen leaving the shop's account (" + shop1User + ")"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, steps)
		}
	}
	if res := b.post("/console/refunds/"+id+"/sent", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusConflict {
		t.Errorf("marking a booked refund sent: %d, want 409", res.StatusCode)
	}
}

func TestTransferFilesNeedTheShopsOwnAccount(t *testing.T) {
	e := setup(t)
	if _, ok := e.merchant("shop1").ShopAccount(); ok {
		t.Fatal("shop1 has its own account in the plain setup")
	}
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	id := refundIDOf(b.makeRefund(csrf, "A-1", url.Values{"amount": {"10"}, "reason": {"x"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}}))
	list := page(t, b.get("/console/refunds"), http.StatusOK)
	if list.Find(`[data-testid="no-shop-account"] a[href="/console/settings"]`).Length() != 1 {
		t.Error("the list does not say the shop's account is missing, with the way to Settings")
	}
	doc := page(t, b.post("/console/refunds/transfers", url.Values{"csrf": {csrf}, "id": {id}}), http.StatusConflict)
	if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "not set yet") {
		t.Errorf("a transfer without the shop's account is refused with %q", got)
	}
	if doc := page(t, b.get("/console/refunds/"+id), http.StatusOK); stateOf(t, doc) != ledger.RefundReady {
		t.Errorf("the refused file moved the refund to %q", stateOf(t, doc))
	}
	doc = page(t, b.post("/console/refunds/transfers", url.Values{"csrf": {csrf}}), http.StatusUnprocessableEntity)
	if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "Tick at least one") {
		t.Errorf("a file of nothing is refused with %q", got)
	}
}

// merchant is a merchant of the running set.
func (e *env) merchant(id string) *merchant.Merchant {
	e.t.Helper()
	m, ok := e.settings.Dir.Get(id)
	if !ok {
		e.t.Fatalf("no merchant %s", id)
	}
	return m
}

func TestTheOwnerDownloadsATransferFileOfReadyRefunds(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		e := setupShop1(t, databaseURL, shopAccount)
		if _, ok := e.merchant("shop1").ShopAccount(); !ok {
			t.Fatal("shop1's own account is not read from the merchants file")
		}
		e.paid("shop1", "A-1")
		e.paid("shop1", "A-2")
		support := e.browser()
		scsrf := support.signIn(roleUser(merchant.Support))
		first := refundIDOf(support.makeRefund(scsrf, "A-1", url.Values{"amount": {"10"}, "reason": {"Scratched"},
			"account_name": {"Zoë Müller"}, "account_iban": {payerIBAN}}))
		second := refundIDOf(support.makeRefund(scsrf, "A-2", url.Values{"amount": {"49.90"}, "reason": {"Returned"},
			"account_name": {"Jean Dupont"}, "account_iban": {otherIBAN}}))
		waiting := refundIDOf(support.makeRefund(scsrf, "A-1", url.Values{"amount": {"5"}, "reason": {"Later"}}))

		b := e.browser()
		csrf := b.signIn(shop1User)
		list := page(t, b.get("/console/refunds"), http.StatusOK)
		if n := list.Find(`[data-testid="refund-choose"]`).Length(); n != 2 {
			t.Errorf("the list offers %d refunds for the file, want the 2 ready ones", n)
		}
		if list.Find(`#choose-`+waiting).Length() != 0 || list.Find(`[data-testid="no-shop-account"]`).Length() != 0 {
			t.Error("a refund awaiting its account can be chosen, or the shop's account is said missing")
		}
		res := b.post("/console/refunds/transfers", url.Values{"csrf": {csrf}, "id": {first, second}})
		loc := res.Header.Get("Location")
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || !regexp.MustCompile(`^/console/refunds/transfers/tr_[a-z2-7]{16}\.xml$`).MatchString(loc) {
			t.Fatalf("making the file: %d to %q", res.StatusCode, loc)
		}
		res = b.get(loc)
		file, _ := io.ReadAll(res.Body)
		res.Body.Close()
		fileID := strings.TrimSuffix(strings.TrimPrefix(loc, "/console/refunds/transfers/"), ".xml")
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/xml" ||
			res.Header.Get("Content-Disposition") != `attachment; filename="pay-by-bank-refunds-`+fileID+`.xml"` {
			t.Fatalf("the file: %d, %q, %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
		}
		for _, want := range []string{"pain.001.001.09", "<EndToEndId>" + sepa.Reference(first) + "</EndToEndId>",
			"<EndToEndId>" + sepa.Reference(second) + "</EndToEndId>",
			"DE02120300000000202051", payerIBAN, otherIBAN} {
			if !bytes.Contains(file, []byte(want)) {
				t.Errorf("the file lacks %q", want)
			}
		}
		for _, id := range []string{first, second} {
			doc := page(t, b.get("/console/refunds/"+id), http.StatusOK)
			if stateOf(t, doc) != ledger.RefundSent {
				t.Errorf("%s is %q after its file, want sent", id, stateOf(t, doc))
			}
			if !strings.Contains(doc.Find(`[data-testid="refund-step"]`).Text(), "Sent in the transfer file "+fileID+".xml") {
				t.Errorf("%s's timeline does not name its file", id)
			}
		}
		again := b.get(loc)
		same, _ := io.ReadAll(again.Body)
		again.Body.Close()
		if !bytes.Equal(same, file) {
			t.Error("the file downloaded again differs")
		}
		list = page(t, b.get("/console/refunds"), http.StatusOK)
		if got := list.Find(`[data-testid="transfer-file"] a`).AttrOr("href", ""); got != loc {
			t.Errorf("the list's files lead to %q, want %q", got, loc)
		}
		// A refund is never in two files.
		doc := page(t, b.post("/console/refunds/transfers", url.Values{"csrf": {csrf}, "id": {first}}), http.StatusConflict)
		if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "no longer ready") {
			t.Errorf("a second file of a sent refund is refused with %q", got)
		}
		if files, _ := e.ledger.Transfers(ctx, "shop1", 10); len(files) != 1 {
			t.Errorf("%d files kept, want 1", len(files))
		}
		// Support reads the refunds but pays none.
		page(t, support.get(loc), http.StatusForbidden)
		page(t, support.post("/console/refunds/transfers", url.Values{"csrf": {scsrf}, "id": {waiting}}), http.StatusForbidden)
		if !strings.Contains(e.auditText("shop1"), "transferMade "+fileID+" 2 59.90 EUR") {
			t.Errorf("the audit log lacks the file:\n%s", e.auditText("shop1"))
		}
	})
}

func TestARefundAboveTheShopsLimitWaitsForAnotherOwner(t *testing.T) {
	e := setupShop1(t, ledgertest.SQLiteURL(t), `"refund_approval_over":"20.00",`)
	if _, ok := e.merchant("shop1").ApprovalOver(); !ok {
		t.Fatal("refund_approval_over is not read from the merchants file")
	}
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	small := refundIDOf(b.makeRefund(csrf, "A-1", url.Values{"amount": {"20"}, "reason": {"Small"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}}))
	big := refundIDOf(b.makeRefund(csrf, "A-1", url.Values{"amount": {"24.95"}, "reason": {"Big"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}}))
	if doc := page(t, b.get("/console/refunds/"+small), http.StatusOK); stateOf(t, doc) != ledger.RefundReady {
		t.Errorf("a refund at the limit is %q, want ready", stateOf(t, doc))
	}
	// Split in small refunds, the order's refunds still go past the limit.
	split := refundIDOf(b.makeRefund(csrf, "A-1", url.Values{"amount": {"1.00"}, "reason": {"Split"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}}))
	if doc := page(t, b.get("/console/refunds/"+split), http.StatusOK); stateOf(t, doc) != ledger.RefundAwaitingApproval {
		t.Errorf("a small refund that takes the order's refunds past the limit is %q, want awaiting approval", stateOf(t, doc))
	}
	doc := page(t, b.get("/console/refunds/"+big), http.StatusOK)
	if stateOf(t, doc) != ledger.RefundAwaitingApproval || doc.Find(`[data-testid="approve"]`).Length() != 0 {
		t.Errorf("above the limit: %q; its maker is offered Approve: %v", stateOf(t, doc), doc.Find(`[data-testid="approve"]`).Length() != 0)
	}
	doc = page(t, b.post("/console/refunds/"+big+"/approve", url.Values{"csrf": {csrf}}), http.StatusForbidden)
	if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "another owner approves it") {
		t.Errorf("its maker's approval is refused with %q", got)
	}
	ops := e.browser()
	ocsrf := ops.signIn(operator)
	doc = page(t, ops.get("/console/refunds/"+big), http.StatusOK)
	if doc.Find(`[data-testid="approve"]`).Length() != 1 {
		t.Fatal("another person who may approve is not offered Approve")
	}
	if res := ops.post("/console/refunds/"+big+"/approve", url.Values{"csrf": {ocsrf}, "merchant": {"shop1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}
	if doc := page(t, b.get("/console/refunds/"+big), http.StatusOK); stateOf(t, doc) != ledger.RefundReady ||
		!strings.Contains(doc.Find(`[data-testid="refund-facts"]`).Text(), "Given by "+operator) {
		t.Errorf("approved, the refund is %q", stateOf(t, doc))
	}
}

// altMail keeps the e-mails sent with an HTML alternative.
type altMail struct {
	mu   sync.Mutex
	sent []string
}

func (m *altMail) SendAlternative(_ context.Context, to, subject, text, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, "To: "+to+"\nSubject: "+subject+"\n\n"+text)
	return nil
}

func TestARefundsPayerIsEMailedTheirPage(t *testing.T) {
	e := setup(t)
	mail := &altMail{}
	e.refunds.Mail = mail
	e.paid("shop1", "A-1")
	e.paid("shop1", "A-2")
	// The payer checked out in French.
	if err := e.refunds.KeepOrderEmail(ctx, "shop1", "A-1", "payer@example.com", "fr"); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Support))
	at := b.makeRefund(csrf, "A-1", url.Values{"amount": {"10"}, "reason": {"Late"}})
	id := refundIDOf(at)
	r, err := e.ledger.Refund(ctx, "shop1", id)
	if err != nil {
		t.Fatal(err)
	}
	doc := page(t, b.get(at), http.StatusOK)
	if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "was e‑mailed") {
		t.Errorf("the notice reads %q", got)
	}
	if len(mail.sent) != 1 || !strings.HasPrefix(mail.sent[0], "To: payer@example.com") || !strings.Contains(mail.sent[0], "http://127.0.0.1/r/"+r.PageID) {
		t.Fatalf("the e-mails sent: %q", mail.sent)
	}
	if !strings.Contains(mail.sent[0], "Subject: Shop shop1 vous rembourse") {
		t.Errorf("the e-mail is not in the French the payer checked out in: %.200q", mail.sent[0])
	}
	if got := doc.Find(`[data-testid="send-form"]`).Text(); !strings.Contains(got, "p…@example.com") || strings.Contains(got, "payer@example.com") {
		t.Errorf("Send by e-mail names the address as %q", got)
	}
	if res := b.post("/console/refunds/"+id+"/send", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send again: %d", res.StatusCode)
	}
	if len(mail.sent) != 2 || !strings.Contains(e.auditText("shop1"), "refundEmailed "+id+" fr") {
		t.Errorf("sent again: %d e-mails; audit:\n%s", len(mail.sent), e.auditText("shop1"))
	}
	// An order without the payer's address: the console says so.
	other := b.makeRefund(csrf, "A-2", url.Values{"amount": {"10"}, "reason": {"Late"}})
	doc = page(t, b.get(other), http.StatusOK)
	if got := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(got, "no e‑mail address of the payer") {
		t.Errorf("without an address the notice reads %q", got)
	}
	if doc.Find(`[data-testid="send"]`).Length() != 0 || doc.Find(`[data-testid="refund-payer-page"]`).Length() != 1 {
		t.Error("without an address: Send is offered, or the page's address is not shown")
	}
	if strings.Contains(e.logText(), "payer@example.com") || strings.Contains(e.auditText("shop1"), "payer@example.com") {
		t.Error("the payer's address is in the log or the audit log")
	}
}

func TestARefundsReasonIsShownAsTextNeverAsHTML(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	reason := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	at := b.makeRefund(csrf, "A-1", url.Values{"amount": {"1"}, "reason": {reason}})
	for _, path := range []string{at, "/console/payments/A-1"} {
		res := b.get(path)
		body := readAll(t, res)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s writes the reason as HTML", path)
		}
	}
	doc := page(t, b.get(at), http.StatusOK)
	if got := doc.Find(`[data-testid="refund-facts"]`).Text(); !strings.Contains(got, reason) {
		t.Errorf("the reason does not read as typed: %q", got)
	}
	// Refused, the reason comes back as typed, as text.
	res := b.post("/console/payments/A-1/refunds", url.Values{"csrf": {csrf}, "amount": {"0"}, "reason": {reason}})
	if body := readAll(t, res); res.StatusCode != http.StatusUnprocessableEntity || strings.Contains(body, "<script>alert") {
		t.Errorf("a refused form writes the reason as HTML (%d)", res.StatusCode)
	}
}

func TestThePaymentsListAndCSVSayWhatWasRefunded(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	e.paid("shop1", "A-2")
	b := e.browser()
	csrf := b.signIn(shop1User)
	b.makeRefund(csrf, "A-1", url.Values{"amount": {"24.95"}, "reason": {"Half"}, "account_name": {"Ann"}, "account_iban": {payerIBAN}})
	doc := page(t, b.get("/console/payments"), http.StatusOK)
	cells := map[string]string{}
	doc.Find(`[data-testid="payment-row"]`).Each(func(_ int, row *goquery.Selection) {
		cells[row.Find(`[data-testid="order-link"]`).Text()] = row.Find(`[data-testid="refunded-cell"]`).Text()
	})
	if cells["A-1"] != "€24.95" || cells["A-2"] != "" {
		t.Errorf("the list's refunded cells: %q", cells)
	}
	res := b.get("/console/payments.csv")
	body := readAll(t, res)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("the CSV: %v, %d rows", err, len(rows))
	}
	col := -1
	for i, h := range rows[0] {
		if h == "refunded_amount" {
			col = i
		}
	}
	if col < 0 || rows[0][0] != "order_id" {
		t.Fatalf("the CSV's header: %q", rows[0])
	}
	got := map[string]string{rows[1][0]: rows[1][col], rows[2][0]: rows[2][col]}
	if got["A-1"] != "24.95" || got["A-2"] != "0.00" {
		t.Errorf("the CSV's refunded amounts: %q", got)
	}
	if strings.Contains(body, payerIBAN) || strings.Contains(body, "DE89") {
		t.Error("the CSV holds the payer's account")
	}
}

// TestARefundFormSentTwiceMakesOneRefund: a double click, or the form sent
// again from the browser's history, makes one refund and shows it.
func TestARefundFormSentTwiceMakesOneRefund(t *testing.T) {
	e := setup(t)
	e.paid("shop1", "A-1")
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/payments/A-1?refund=1"), http.StatusOK)
	key := doc.Find(`#refund-form input[name="key"]`).AttrOr("value", "")
	if key == "" {
		t.Fatal("the refund form has no key of its own")
	}
	form := url.Values{"amount": {"10.00"}, "reason": {"Once"}, "key": {key}}
	first := b.makeRefund(csrf, "A-1", form)
	res := b.post("/console/payments/A-1/refunds", form)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || refundIDOf(res.Header.Get("Location")) != refundIDOf(first) {
		t.Errorf("the form sent again: %d to %q, want the first refund %q", res.StatusCode, res.Header.Get("Location"), first)
	}
	if list, _ := e.ledger.ListRefunds(ctx, ledger.RefundFilter{Merchant: "shop1", Order: "A-1"}, ledger.Cursor{}, 10); len(list) != 1 {
		t.Errorf("%d refunds made, want 1", len(list))
	}
}
