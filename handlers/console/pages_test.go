package console_test

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/pisclient"
)

// texts are the trimmed texts of the elements sel finds.
func texts(doc *goquery.Document, sel string) []string {
	var out []string
	doc.Find(sel).Each(func(_ int, s *goquery.Selection) { out = append(out, strings.Join(strings.Fields(s.Text()), " ")) })
	return out
}

func TestTheOverviewCountsTheMerchantsOwnCheckouts(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusInProgress, pisclient.StatusCompleted)
	e.seed("shop1", "A-2", "ing", pisclient.StatusNotFound, pisclient.StatusCanceled)
	e.seed("shop1", "A-3", "dkb", pisclient.StatusInProgress, pisclient.StatusCanceled)
	e.seed("shop1", "A-4", "")
	e.seed("shop2", "B-1", "dkb", pisclient.StatusInProgress, pisclient.StatusCompleted)

	b := e.browser()
	b.signIn(shop1User)
	doc := page(t, b.get("/console"), http.StatusOK)
	if got := texts(doc, `[data-testid="stage-count"]`); fmt.Sprint(got) != "[4 3 2 1]" {
		t.Errorf("funnel opened, sent, began, paid = %v, want [4 3 2 1]", got)
	}
	for id, want := range map[string]string{"conversion": "25.0%", "canceled": "1", "abandoned": "1"} {
		if got := texts(doc, `[data-testid="`+id+`"]`); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %s", id, got, want)
		}
	}
	if got := texts(doc, `[data-testid="median"]`); len(got) != 1 || got[0] == "–" {
		t.Errorf("median time to pay %v, want a time", got)
	}
	// Conversion per bank, named as the banks list names them.
	if got := texts(doc, `[data-testid="bank-row"] th`); fmt.Sprint(got) != "[ING Deutschland DKB]" {
		t.Errorf("banks %v", got)
	}
	if got := texts(doc, `[data-testid="bank-conversion"]`); fmt.Sprint(got) != "[50.0% 0.0%]" {
		t.Errorf("conversion per bank %v", got)
	}
	if src := doc.Find(`[data-testid="bank-row"] img`).AttrOr("src", ""); !strings.HasPrefix(src, "/logos/") {
		t.Errorf("ING's logo is %q, want the app's own /logos/ address", src)
	}
	// The chart has its table: 24 hours, one row each, the paid one counted.
	rows := doc.Find(`[data-testid="chart-table"] tbody tr`)
	if rows.Length() < 24 || rows.Length() > 25 || doc.Find(`[data-testid="chart"] rect`).Length() == 0 {
		t.Errorf("the 24-hour chart has %d table rows and %d bars", rows.Length(), doc.Find(`[data-testid="chart"] rect`).Length())
	}
	last := texts(doc, `[data-testid="chart-table"] tbody tr:last-child td`)
	if fmt.Sprint(last) != "[1 2 0]" {
		t.Errorf("this hour's row: paid, cancelled or abandoned, open = %v, want [1 2 0]", last)
	}
	// Another window, another chart.
	week := page(t, b.get("/console?range=7d"), http.StatusOK)
	if n := week.Find(`[data-testid="chart-table"] tbody tr`).Length(); n < 7 || n > 8 {
		t.Errorf("7 days: %d rows", n)
	}
	if week.Find(`[data-testid="ranges"] [aria-current="page"]`).Text() != "7 days" {
		t.Error("the 7-day view is not marked current")
	}
	// shop2's user sees shop2's only; an operator sees both, or one.
	other := e.browser()
	other.signIn(shop2User)
	if got := texts(page(t, other.get("/console?merchant=shop1"), http.StatusOK), `[data-testid="stage-count"]`); fmt.Sprint(got) != "[1 1 1 1]" {
		t.Errorf("shop2's funnel, even when asking for shop1's: %v", got)
	}
	op := e.browser()
	op.signIn(operator)
	if got := texts(page(t, op.get("/console"), http.StatusOK), `[data-testid="stage-count"]`); fmt.Sprint(got) != "[5 4 3 2]" {
		t.Errorf("the operator's funnel of every merchant: %v", got)
	}
	if got := texts(page(t, op.get("/console?merchant=shop2"), http.StatusOK), `[data-testid="stage-count"]`); fmt.Sprint(got) != "[1 1 1 1]" {
		t.Errorf("the operator's funnel of shop2: %v", got)
	}
	page(t, op.get("/console?merchant=nobody"), http.StatusNotFound)
}

func TestThePaymentsListFiltersAndPages(t *testing.T) {
	e := setup(t)
	for i := range 55 {
		e.seed("shop1", fmt.Sprintf("P-%02d", i), "ing", pisclient.StatusInProgress)
	}
	// The ledger keeps times to the millisecond: the last two changes come
	// after the others, not in the same millisecond.
	time.Sleep(2 * time.Millisecond)
	e.seed("shop1", "PAID-1", "dkb", pisclient.StatusCompleted)
	e.seed("shop1", "NEW-1", "")
	e.seed("shop2", "P-00-of-shop2", "dkb", pisclient.StatusCompleted)
	b := e.browser()
	b.signIn(shop1User)

	doc := page(t, b.get("/console/payments"), http.StatusOK)
	ids := texts(doc, `[data-testid="order-link"]`)
	// NEW-1 and PAID-1 changed last (in the same millisecond, maybe).
	if len(ids) != 50 || ids[0]+ids[1] != "NEW-1PAID-1" && ids[0]+ids[1] != "PAID-1NEW-1" {
		t.Fatalf("first page: %d orders starting %v, want 50, newest change first", len(ids), ids[:min(3, len(ids))])
	}
	if doc.Find(`[data-testid="merchant-cell"]`).Length() != 0 {
		t.Error("a merchant's user sees a merchant column")
	}
	first := doc.Find(`[data-testid="payment-row"]`).Eq(1)
	if ids[0] == "PAID-1" {
		first = doc.Find(`[data-testid="payment-row"]`).Eq(0)
	}
	if got := first.Find(`[data-testid="status"]`).Text(); got != "Paid" ||
		!strings.Contains(first.Text(), "€49.90") || !strings.Contains(first.Text(), "DKB") {
		t.Errorf("the paid row reads %q", strings.Join(strings.Fields(first.Text()), " "))
	}
	next, ok := doc.Find(`[data-testid="next"]`).Attr("href")
	if !ok {
		t.Fatal("no next page link")
	}
	second := texts(page(t, b.get(next), http.StatusOK), `[data-testid="order-link"]`)
	if len(second) != 7 {
		t.Errorf("second page: %d orders, want the 7 left", len(second))
	}
	seen := map[string]bool{}
	for _, id := range append(ids, second...) {
		if seen[id] || strings.HasSuffix(id, "shop2") {
			t.Errorf("%s listed twice or from another merchant", id)
		}
		seen[id] = true
	}

	for query, want := range map[string]int{
		"status=COMPLETED":              1,
		"status=IN_PROGRESS&bank=ing":   50, // of 55: one page
		"bank=dkb":                      1,
		"country=DE":                    50, // of 56: one page
		"q=P-0":                         10,
		"q=PAID-1":                      1,
		"q=P-00-of-shop2":               0,
		"from=2000-01-01&to=2000-12-31": 0,
		"from=2000-01-01":               50,
	} {
		doc := page(t, b.get("/console/payments?"+query), http.StatusOK)
		if got := doc.Find(`[data-testid="payment-row"]`).Length(); got != want {
			t.Errorf("%s: %d rows, want %d", query, got, want)
		}
		if want == 0 && !strings.Contains(doc.Find(`[data-testid="no-payments"]`).Text(), "No payment matches") {
			t.Errorf("%s: an empty result does not say nothing matched", query)
		}
	}
	// A bad filter says what is wrong and keeps what was typed.
	bad := page(t, b.get("/console/payments?from=24.11.2026&q=P-1&status=PAID"), http.StatusUnprocessableEntity)
	if msg := bad.Find(`[data-testid="filter-errors"]`).Text(); !strings.Contains(msg, "like 2026-11-24") || !strings.Contains(msg, "Choose a status") {
		t.Errorf("errors say %q", msg)
	}
	if bad.Find(`#from`).AttrOr("value", "") != "24.11.2026" || bad.Find(`#q`).AttrOr("value", "") != "P-1" {
		t.Error("the filters typed were lost")
	}
	if bad.Find(`#from`).AttrOr("aria-invalid", "") != "true" {
		t.Error("the bad date is not marked invalid")
	}
	page(t, b.get("/console/payments?after=garbage"), http.StatusUnprocessableEntity)
}

func TestAnOperatorSeesEveryMerchantWithItsColumn(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusInProgress)
	e.seed("shop2", "A-1", "dkb", pisclient.StatusCompleted)
	b := e.browser()
	b.signIn(operator)
	doc := page(t, b.get("/console/payments"), http.StatusOK)
	if got := texts(doc, `[data-testid="merchant-cell"]`); len(got) != 2 {
		t.Errorf("merchant column %v, want both merchants' orders", got)
	}
	if got := texts(page(t, b.get("/console/payments?merchant=shop2"), http.StatusOK), `[data-testid="merchant-cell"]`); fmt.Sprint(got) != "[shop2]" {
		t.Errorf("narrowed to shop2: %v", got)
	}
	// Same id at two merchants: each row leads to its own.
	var links []string
	doc.Find(`[data-testid="order-link"]`).Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("href", "")) })
	for _, link := range links {
		d := page(t, b.get(link), http.StatusOK)
		merchant := strings.Split(link, "merchant=")[1]
		if !strings.Contains(d.Find(`[data-testid="order-summary"]`).Text(), "("+merchant+")") {
			t.Errorf("%s shows another merchant's order", link)
		}
	}
	// Without the merchant, an id one merchant has opens its order, however
	// many newer orders start the same way.
	e.seed("shop2", "B-1", "dkb", pisclient.StatusCompleted)
	for i := range 25 {
		e.seed("shop1", fmt.Sprintf("B-1%02d", i), "")
	}
	if d := page(t, b.get("/console/payments/B-1"), http.StatusOK); !strings.Contains(d.Find(`[data-testid="order-summary"]`).Text(), "(shop2)") {
		t.Error("an operator's link without a merchant does not open the one order with that id")
	}
	// Without the merchant, an id two merchants share goes to the list.
	res := b.get("/console/payments/A-1")
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "q=A-1") {
		t.Errorf("an id two merchants share: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestTheCSVExportIsSafeInASpreadsheet(t *testing.T) {
	e := setup(t)
	for _, id := range []string{"=HYPERLINK(\"http://evil.example\")", "+1", "-2", "@SUM(A1)", "plain, \"quoted\"\nline"} {
		e.seed("shop1", id, "ing", pisclient.StatusCompleted)
	}
	e.seed("shop2", "not-mine", "ing", pisclient.StatusCompleted)
	b := e.browser()
	csrf := b.signIn(shop1User)
	// A person who reads the console in Polish still gets a file for
	// programs: English headers, Yes and No, times as ISO writes them.
	chosen := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}})
	chosen.Body.Close()
	if lang := page(t, b.get("/console/payments"), http.StatusOK).Find("html").AttrOr("lang", ""); lang != "pl" {
		t.Fatalf("after choosing Polish the console is in %q", lang)
	}
	res := b.get("/console/payments.csv?bank=ing")
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("CSV: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
	raw, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(raw), "\r\n") {
		t.Error("rows do not end in CRLF (RFC 4180)")
	}
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		t.Fatalf("not RFC 4180 CSV: %v\n%s", err, raw)
	}
	if len(rows) != 6 || rows[0][0] != "order_id" {
		t.Fatalf("%d rows, header %v; want a header and shop1's 5 orders", len(rows), rows[0])
	}
	got := map[string]bool{}
	for _, r := range rows[1:] {
		got[r[0]] = true
		if r[4] != "Yes" || r[7] != "ING Deutschland" {
			t.Errorf("row %v: want paid at ING Deutschland", r)
		}
		if _, err := time.Parse("2006-01-02 15:04:05", r[9]); err != nil {
			t.Errorf("row %v: created_at %q is not written as 2006-01-02 15:04:05", r, r[9])
		}
	}
	for _, want := range []string{"'=HYPERLINK(\"http://evil.example\")", "'+1", "'-2", "'@SUM(A1)", "plain, \"quoted\"\nline"} {
		if !got[want] {
			t.Errorf("cell %q missing; got %v", want, got)
		}
	}
}

func TestAnOrderPageTellsItsWholeStory(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A/1 é", "ing", pisclient.StatusNotFound, pisclient.StatusInProgress)
	b := e.browser()
	csrf := b.signIn(shop1User)
	path := "/console/payments/" + url.PathEscape("A/1 é")
	doc := page(t, b.get(path), http.StatusOK)
	if h := doc.Find(`[data-testid="order-heading"]`).Text(); h != "Order A/1 é" {
		t.Errorf("heading %q", h)
	}
	// Made (creating), handed out (open), then the provider's statuses.
	if got := texts(doc, `[data-testid="history"] tbody td:nth-child(2)`); fmt.Sprint(got) != "[creating open open open]" {
		t.Errorf("states %v", got)
	}
	if got := texts(doc, `[data-testid="history"] tbody td:nth-child(3)`); fmt.Sprint(got) != "[  NOT_FOUND IN_PROGRESS]" {
		t.Errorf("status history %v", got)
	}
	events := doc.Find(`[data-testid="event"]`).Length()
	if events == 0 {
		t.Error("no event shown")
	}
	// Another merchant's user gets 404, as the API answers.
	other := e.browser()
	other.signIn(shop2User)
	page(t, other.get(path), http.StatusNotFound)
	page(t, other.post(path+"/check", url.Values{"csrf": {csrfOf(page(t, other.get("/console"), http.StatusOK))}}), http.StatusNotFound)
	page(t, b.get("/console/payments/nope"), http.StatusNotFound)

	// Check status now: one read, the change recorded and notified.
	e.provider.status = pisclient.StatusCompleted
	res := b.post(path+"/check", url.Values{"csrf": {csrf}})
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("check: %d", res.StatusCode)
	}
	after := page(t, b.get(res.Header.Get("Location")), http.StatusOK)
	if e.provider.reads != 1 {
		t.Errorf("the provider was read %d times, want once", e.provider.reads)
	}
	if n := after.Find(`[data-testid="notice"]`).Text(); !strings.Contains(n, "Paid") {
		t.Errorf("after checking, the notice says %q", n)
	}
	if got := texts(after, `[data-testid="order-summary"] [data-testid="status"]`); fmt.Sprint(got) != "[Paid]" {
		t.Errorf("status %v after the provider said COMPLETED", got)
	}
	if n := after.Find(`[data-testid="event"]`).Length(); n != events+1 {
		t.Errorf("%d events after the change, want one more than the %d before", n, events)
	}
}

func TestRedeliverSendsAnEventNowAndShowsTheTry(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusCompleted)
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/payments/A-1"), http.StatusOK)
	action, _ := doc.Find(`[data-testid="event"] form`).First().Attr("action")
	e.hook.code = http.StatusInternalServerError
	res := b.post(action, url.Values{"csrf": {csrf}})
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("redeliver: %d", res.StatusCode)
	}
	after := page(t, b.get(res.Header.Get("Location")), http.StatusOK)
	if len(e.hook.received()) != 1 {
		t.Fatalf("the endpoint got %d events, want 1", len(e.hook.received()))
	}
	if n := after.Find(`[data-testid="notice"]`).Text(); !strings.Contains(n, "did not take it") {
		t.Errorf("notice %q after a 500", n)
	}
	if got := texts(after, `[data-testid="try"] td:nth-child(3)`); len(got) != 1 || got[0] != "500" {
		t.Errorf("tries %v, want the 500 recorded", got)
	}
	// Another merchant cannot redeliver shop1's event.
	other := e.browser()
	theirs := other.signIn(shop2User)
	page(t, other.post(action, url.Values{"csrf": {theirs}}), http.StatusNotFound)
	if len(e.hook.received()) != 1 {
		t.Error("another merchant's user redelivered shop1's event")
	}
}

func TestTheWebhooksPageShowsHealthAndSendsAPing(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusCompleted)
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/webhooks"), http.StatusOK)
	if doc.Find(`[data-testid="endpoint"]`).Text() == "" || texts(doc, `[data-testid="pending"]`)[0] != "1" {
		t.Errorf("endpoint %q, pending %v; want the URL and the order's event", doc.Find(`[data-testid="endpoint"]`).Text(), texts(doc, `[data-testid="pending"]`))
	}
	if doc.Find(`[data-testid="no-failure"]`).Length() != 1 {
		t.Error("no failure yet, but the page does not say so")
	}
	e.hook.code = http.StatusOK
	res := b.post("/console/webhooks/test", url.Values{"csrf": {csrf}})
	tested := page(t, res, http.StatusOK)
	if r := tested.Find(`[data-testid="test-result"]`).Text(); !strings.Contains(r, "took the test event: HTTP 200") {
		t.Errorf("result %q", r)
	}
	got := e.hook.received()
	if len(got) != 1 || !strings.Contains(got[0], `"type":"ping"`) {
		t.Errorf("the endpoint received %v, want one ping", got)
	}
	e.hook.code = http.StatusServiceUnavailable
	if r := page(t, b.post("/console/webhooks/test", url.Values{"csrf": {csrf}}), http.StatusOK).Find(`[data-testid="test-result"]`).Text(); !strings.Contains(r, "refused the test event: HTTP 503") {
		t.Errorf("result after a 503: %q", r)
	}
	// shop2 has no endpoint: the page says how to set one, and sends nothing.
	other := e.browser()
	theirs := other.signIn(shop2User)
	if page(t, other.get("/console/webhooks"), http.StatusOK).Find(`[data-testid="no-endpoint"]`).Length() != 1 {
		t.Error("shop2's page does not say it has no endpoint")
	}
	page(t, other.post("/console/webhooks/test", url.Values{"csrf": {theirs}}), http.StatusOK)
	if len(e.hook.received()) != 2 {
		t.Error("shop2's test event reached shop1's endpoint")
	}
	// An operator picks the merchant.
	op := e.browser()
	op.signIn(operator)
	if d := page(t, op.get("/console/webhooks?merchant=shop2"), http.StatusOK); d.Find(`[data-testid="no-endpoint"]`).Length() != 1 || d.Find(`#merchant option[selected]`).AttrOr("value", "") != "shop2" {
		t.Error("the operator's view of shop2's webhooks")
	}
}

func TestPagesEscapeWhatShoppersAndMerchantsTyped(t *testing.T) {
	e := setup(t)
	e.seed("shop1", `<script>alert(1)</script>`, "ing", pisclient.StatusInProgress)
	b := e.browser()
	b.signIn(shop1User)
	for _, path := range []string{"/console/payments", "/console/payments/" + url.PathEscape(`<script>alert(1)</script>`), "/console/payments?q=%3Cb%3E"} {
		res := b.get(path)
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(raw), "<script>alert") || strings.Contains(string(raw), "<b>") {
			t.Errorf("%s renders typed markup as markup", path)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action 'self'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s may be cached", path)
		}
	}
}

// The overview's bank health table counts every shop's payments, names no
// order, and marks a degraded bank with a word.
func TestTheOverviewShowsEveryBanksHealth(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(shop1User)
	doc := page(t, b.get("/console"), http.StatusOK)
	if got := texts(doc, `[data-testid="health-empty"]`); len(got) != 1 || !strings.Contains(got[0], "not been read yet") {
		t.Errorf("before the first reading: %v", got)
	}
	e.seed("shop1", "A-1", "ing", pisclient.StatusInProgress, pisclient.StatusCompleted)
	e.seed("shop2", "B-1", "ing", pisclient.StatusInProgress, pisclient.StatusCompleted)
	e.seed("shop1", "A-2", "dkb", pisclient.StatusInProgress, pisclient.StatusCanceled)
	e.seed("shop2", "B-2", "dkb", pisclient.StatusNotFound, pisclient.StatusCanceled)
	e.seed("shop2", "B-3", "dkb", pisclient.StatusInProgress)
	if err := e.health.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, window := range []string{"", "?health=24h", "?health=7d"} {
		doc = page(t, b.get("/console"+window), http.StatusOK)
		rows := doc.Find(`[data-testid="health-row"]`)
		if got := texts(doc, `[data-testid="health-row"] th`); fmt.Sprint(got) != "[DKB ING Deutschland]" {
			t.Fatalf("%q: banks %v, want the busiest first", window, got)
		}
		if got := texts(doc, `[data-testid="health-success"]`); fmt.Sprint(got) != "[0.0% 100.0%]" {
			t.Errorf("%q: success rates %v", window, got)
		}
		if got := texts(doc, `[data-testid="health-row"]:first-child td`); fmt.Sprint(got[:7]) != "[DE Degraded 3 0 1 1 1]" {
			t.Errorf("%q: DKB's row %v, want 3 payments, 1 cancelled, 1 abandoned, 1 open, degraded", window, got)
		}
		if rows.Eq(1).Find(`[data-testid="health-degraded"]`).Length() != 0 {
			t.Errorf("%q: ING marked degraded", window)
		}
		if strings.Contains(doc.Find(`[data-testid="health"]`).Text(), "B-1") {
			t.Errorf("%q: another shop's order named", window)
		}
	}
	if cur := doc.Find(`[data-testid="health-windows"] [aria-current="page"]`).Text(); cur != "7 days" {
		t.Errorf("the 7-day table's current window link says %q", cur)
	}
}
