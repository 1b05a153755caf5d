package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/links"
)

// refund asks the API for a refund of order with body (JSON), with an
// Idempotency-Key when key is set.
func (a *app) refund(order, body, key string) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/api/v1/payments/"+url.PathEscape(order)+"/refunds", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+shop1Token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		a.t.Fatalf("refund of %s: the answer is not JSON: %v", order, err)
	}
	return res.StatusCode, out
}

// TestAShopRefundsThroughTheAPI: a refund of part of a paid order waits
// for the payer's account with the payer's page to pass on; the same
// Idempotency-Key gives it again; more than remains is 409 with what
// remains; an order not paid is 422; a cancel gives the amount back; the
// order shows what was refunded.
func TestAShopRefundsThroughTheAPI(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	a.payWith("R/7", "DE", "deutsche-bank", nil)
	code, body := a.refund("R/7", `{"amount":"20.00","reason":"One mug arrived broken"}`, "shop-ref-1")
	if code != http.StatusCreated || body["state"] != ledger.RefundAwaitingAccount || body["amount"] != "20.00" || body["account"] != nil ||
		!strings.HasPrefix(fmt.Sprint(body["payer_url"]), a.url+"/r/") || body["merchant_order_id"] != "R/7" {
		t.Fatalf("refund: %d %v", code, body)
	}
	id := body["id"].(string)
	if code, again := a.refund("R/7", `{"amount":"20.00","reason":"One mug arrived broken"}`, "shop-ref-1"); code != http.StatusCreated || again["id"] != id {
		t.Errorf("the same Idempotency-Key again: %d %v, want refund %s", code, again, id)
	}
	code, body = a.refund("R/7", `{"amount":"30.00","reason":"All of it"}`, "")
	if e, _ := body["error"].(map[string]any); code != http.StatusConflict || e["code"] != "refund_exceeds_paid" || e["remaining"] != "29.90" {
		t.Errorf("more than remains: %d %v", code, body)
	}
	code, body = a.refund("R/7", `{"amount":"0","reason":"x"}`, "")
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(fieldNames(body)), "amount") {
		t.Errorf("a refund of 0: %d %v", code, body)
	}
	code, body = a.refund("R/7", `{"amount":"1.005","reason":"`+strings.Repeat("r", 141)+`","account":{"name":"Anna","iban":"DE89370400440532013001"}}`, "")
	if got := fmt.Sprint(fieldNames(body)); code != http.StatusBadRequest || !strings.Contains(got, "amount") || !strings.Contains(got, "reason") ||
		!strings.Contains(got, "account.iban") {
		t.Errorf("three decimals, a long reason, a mistyped IBAN: %d %v", code, got)
	}
	if _, err := a.ledger.RecordOrder(context.Background(), ledger.Order{MerchantID: "shop1", OrderID: "U-1", Amount: "10.00", Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	if code, body := a.refund("U-1", `{"amount":"1.00","reason":"x"}`, ""); code != http.StatusUnprocessableEntity || errorCode(body) != "order_not_paid" {
		t.Errorf("an order not paid: %d %v", code, body)
	}
	if code, body := a.refund("NOPE", `{"amount":"1.00","reason":"x"}`, ""); code != http.StatusNotFound {
		t.Errorf("an unknown order: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", "/api/v1/payments/R%2F7", shop1Token, "")
	if code != http.StatusOK || body["refunded_amount"] != "20.00" {
		t.Errorf("the order after a refund: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", "/api/v1/refunds?order=R%2F7", shop1Token, "")
	if list, _ := body["refunds"].([]any); code != http.StatusOK || len(list) != 1 {
		t.Errorf("the order's refunds: %d %v", code, body)
	}
	if code, body, _ := a.apiCall("GET", "/api/v1/refunds/"+id, shop2Token, ""); code != http.StatusNotFound {
		t.Errorf("another shop's refund: %d %v", code, body)
	}
	code, body, _ = a.apiCall("POST", "/api/v1/refunds/"+id+"/cancel", shop1Token, "")
	if code != http.StatusOK || body["state"] != ledger.RefundCancelled || body["payer_url"] != nil {
		t.Errorf("cancel: %d %v", code, body)
	}
	if code, body := a.refund("R/7", `{"amount":"49.90","reason":"All of it after all"}`, ""); code != http.StatusCreated {
		t.Errorf("the whole amount after the cancel: %d %v", code, body)
	}
	code, body, _ = a.apiCall("GET", "/api/v1/events", shop1Token, "")
	events := fmt.Sprint(body["events"])
	if code != http.StatusOK || strings.Count(events, "refund.created") != 2 || !strings.Contains(events, "refund.state_changed") {
		t.Errorf("events: %s", events)
	}
}

// TestRefundsOfTheRemainderAtOnceOnThreeInstancesMakeOne: twenty
// programs refund the whole of a paid order at the same moment through
// three instances: one refund is made, the others are told nothing
// remains.
func TestRefundsOfTheRemainderAtOnceOnThreeInstancesMakeOne(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one := setup(t, options{knobs: settleNow, ledger: ledgertest.Open(t, databaseURL)})
		two := setup(t, options{upstream: one.sandbox, ledger: ledgertest.Open(t, databaseURL)})
		three := setup(t, options{upstream: one.sandbox, ledger: ledgertest.Open(t, databaseURL)})
		one.payWith("ALL-1", "DE", "deutsche-bank", nil)
		codes := make([]int, 20)
		remaining := make([]any, 20)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				var body map[string]any
				codes[i], body = []*app{one, two, three}[i%3].refund("ALL-1", `{"amount":"49.90","reason":"Order cancelled"}`, "")
				if e, ok := body["error"].(map[string]any); ok {
					remaining[i] = e["remaining"]
				}
			})
		}
		wg.Wait()
		made, refused := 0, 0
		for i, code := range codes {
			switch {
			case code == http.StatusCreated:
				made++
			case code == http.StatusConflict && remaining[i] == "0.00":
				refused++
			}
		}
		if made != 1 || refused != 19 {
			t.Errorf("%d made, %d refused with nothing remaining; want 1 and 19 (codes %v)", made, refused, codes)
		}
		list, err := one.ledger.ListRefunds(context.Background(), ledger.RefundFilter{Merchant: "shop1", Order: "ALL-1"}, ledger.Cursor{}, 50)
		if err != nil || len(list) != 1 {
			t.Errorf("%d refunds kept, %v", len(list), err)
		}
	})
}

// TestThePayerGivesTheirAccountOnTheRefundsPage: the payer opens the page
// in their browser's German, types a wrong IBAN (refused beside it, what
// they typed kept), then a right one: the refund is ready, the page says
// where the money goes with the IBAN masked, and a second form changes
// nothing. The IBAN is nowhere in the clear: not in the ledger, the log,
// the events or the API.
func TestThePayerGivesTheirAccountOnTheRefundsPage(t *testing.T) {
	log := &lockedBuffer{}
	a := setup(t, options{knobs: settleNow, logTo: log})
	p := a.paymentLink(links.Draft{Amount: "80", Description: "Bike repair", Reference: "BIKE-9"})
	checkout := a.openLink(p.ID)
	res := a.post(checkout+"/pay", atTheBank)
	res = a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}})
	a.get(res.Header.Get("Location"))
	_, body := a.refund("BIKE-9", `{"amount":"40.00","reason":"<b>Half</b> of the work was not needed"}`, "")
	page := fmt.Sprint(body["payer_url"])
	de := http.Header{"Accept-Language": {"de-DE,de;q=0.9"}}
	doc, raw := read(t, a.do(http.MethodGet, page, nil, de), http.StatusOK)
	if doc.Find("html").AttrOr("lang", "") != "de" || doc.Find(testid("refund")).AttrOr("data-state", "") != ledger.RefundAwaitingAccount ||
		text(doc, testid("amount")) != "40,00 €" || text(doc, testid("order-id")) != "BIKE-9" || doc.Find(`form[data-testid="refund-form"]`).Length() != 1 {
		t.Fatalf("the payer's page: lang %q, amount %q", doc.Find("html").AttrOr("lang", ""), text(doc, testid("amount")))
	}
	if strings.Contains(raw, "<b>Half</b>") || text(doc, testid("refund-reason")) != "<b>Half</b> of the work was not needed" {
		t.Error("the reason is not shown as text")
	}
	if doc.Find("#bic").Length() != 0 {
		t.Error("a BIC is asked before any IBAN needs one")
	}
	const right = "DE89 3704 0044 0532 0130 00"
	typed := url.Values{"name": {"Anna Schmidt"}, "iban": {"DE89 3704 0044 0532 0130 01"}}
	doc, _ = read(t, a.do(http.MethodPost, page, typed, de), http.StatusUnprocessableEntity)
	if got := doc.Find("#iban-error").Text(); !strings.Contains(got, "Prüfziffern") || doc.Find("#iban").AttrOr("value", "") != typed.Get("iban") ||
		doc.Find("#name").AttrOr("value", "") != "Anna Schmidt" {
		t.Errorf("a mistyped IBAN: %q", got)
	}
	doc, _ = read(t, a.do(http.MethodPost, page, url.Values{"name": {"Anna Schmidt"}, "iban": {"CH93 0076 2011 6238 5295 7"}}, de), http.StatusUnprocessableEntity)
	if doc.Find("#bic").Length() != 1 || doc.Find("#bic-error").Text() == "" {
		t.Error("a Swiss IBAN without its BIC is not asked for it")
	}
	if res := a.do(http.MethodPost, page, url.Values{"name": {"Anna Schmidt"}, "iban": {right}}, de); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the right IBAN: %d", res.StatusCode)
	}
	doc, _ = read(t, a.do(http.MethodGet, page, nil, de), http.StatusOK)
	if doc.Find(testid("refund")).AttrOr("data-state", "") != ledger.RefundReady || text(doc, testid("refund-account")) != "DE89 **** **** **** 3000" ||
		doc.Find(testid("refund-form")).Length() != 0 {
		t.Errorf("after the account: state %q, account %q", doc.Find(testid("refund")).AttrOr("data-state", ""), text(doc, testid("refund-account")))
	}
	doc, _ = read(t, a.do(http.MethodPost, page, url.Values{"name": {"Mallory"}, "iban": {"FR1420041010050500013M02606"}}, de), http.StatusConflict)
	if text(doc, testid("refund-account")) != "DE89 **** **** **** 3000" || text(doc, testid("refund-note")) == "" {
		t.Error("a second account changed the refund, or the page does not say nothing changed")
	}
	code, body, _ := a.apiCall("GET", "/api/v1/refunds/"+fmt.Sprint(body["id"]), shop1Token, "")
	account, _ := body["account"].(map[string]any)
	if code != http.StatusOK || body["state"] != ledger.RefundReady || account["name"] != "Anna Schmidt" || account["iban_masked"] != "DE89 **** **** **** 3000" {
		t.Errorf("the refund in the API: %d %v", code, body)
	}
	tables, err := a.ledger.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for table, values := range tables {
		for _, v := range values {
			if strings.Contains(v, "DE89370400440532013000") || strings.Contains(v, "Anna Schmidt") {
				t.Errorf("the payer's account is in the clear in %s", table)
			}
		}
	}
	if strings.Contains(log.String(), "DE89370400440532013000") || strings.Contains(log.String(), "3704 0044") {
		t.Error("the IBAN is in the log")
	}
	if res := a.get(a.url + "/r/" + strings.Repeat("a", 16)); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown refund's page: %d", res.StatusCode)
	}
}

// TestTheRefundsPageKeepsThePayersLanguageAndSaysNoFalseNote: a payer who
// chose French on their refund page keeps it through the form and after
// it, with no cookie; a payer who sends an account to a cancelled refund
// is told it was cancelled, not that an account was given.
func TestTheRefundsPageKeepsThePayersLanguageAndSaysNoFalseNote(t *testing.T) {
	a := setup(t, options{knobs: settleNow})
	p := a.paymentLink(links.Draft{Amount: "80", Description: "Bike repair", Reference: "BIKE-10"})
	checkout := a.openLink(p.ID)
	res := a.post(checkout+"/pay", atTheBank)
	res = a.post(res.Header.Get("Location"), url.Values{"action": {"approve"}})
	a.get(res.Header.Get("Location"))
	_, body := a.refund("BIKE-10", `{"amount":"10.00","reason":"Too long"}`, "")
	french := fmt.Sprint(body["payer_url"]) + "?lang=fr"
	doc, _ := read(t, a.do(http.MethodGet, french, nil, nil), http.StatusOK)
	action := doc.Find(`form[data-testid="refund-form"]`).AttrOr("action", "")
	if !strings.HasSuffix(action, "?lang=fr") {
		t.Fatalf("the form posts to %q, losing the payer's French", action)
	}
	doc, _ = read(t, a.do(http.MethodPost, a.url+action, url.Values{"name": {"Anne"}, "iban": {"DE89"}}, nil), http.StatusUnprocessableEntity)
	if doc.Find("html").AttrOr("lang", "") != "fr" {
		t.Errorf("the refused form answers in %q", doc.Find("html").AttrOr("lang", ""))
	}
	res = a.do(http.MethodPost, a.url+action, url.Values{"name": {"Anne"}, "iban": {"DE89 3704 0044 0532 0130 00"}}, nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "?lang=fr") {
		t.Errorf("the account taken leads to %q", res.Header.Get("Location"))
	}

	_, other := a.refund("BIKE-10", `{"amount":"5.00","reason":"Cancelled later"}`, "")
	if code, _, _ := a.apiCall("POST", "/api/v1/refunds/"+fmt.Sprint(other["id"])+"/cancel", shop1Token, ""); code != http.StatusOK {
		t.Fatalf("cancelling: %d", code)
	}
	doc, _ = read(t, a.do(http.MethodPost, fmt.Sprint(other["payer_url"]), url.Values{"name": {"Anne"}, "iban": {"DE89 3704 0044 0532 0130 00"}}, nil), http.StatusConflict)
	if doc.Find(testid("refund")).AttrOr("data-state", "") != ledger.RefundCancelled || text(doc, testid("refund-note")) != "" {
		t.Errorf("an account sent to a cancelled refund: state %q, note %q", doc.Find(testid("refund")).AttrOr("data-state", ""), text(doc, testid("refund-note")))
	}
}
