package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/links"
)

// browser is one person's browser: its own cookies, redirects not
// followed.
type browser struct {
	t      testing.TB
	client *http.Client
	agent  string
}

func newBrowser(t testing.TB, agent string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, agent: agent, client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, u string, form url.Values) *http.Response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", b.agent)
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { res.Body.Close() })
	return res
}

// open opens a payment link (or a shop's signed link) and returns the
// checkout it leads to.
func (b *browser) open(base, u string) string {
	b.t.Helper()
	res := b.do(http.MethodGet, u, nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/c/") {
		b.t.Fatalf("opening %s: %d to %q, want 303 to a checkout", u, res.StatusCode, res.Header.Get("Location"))
	}
	return base + res.Header.Get("Location")
}

// read reads a page's whole text, its status checked.
func read(t *testing.T, res *http.Response, status int) (*goquery.Document, string) {
	t.Helper()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d\n%.600s", res.Request.Method, res.Request.URL, res.StatusCode, status, raw)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return doc, string(raw)
}

// TestAPaymentUnderWayBelongsToTheBrowserThatBeganIt: Alice and Bob open
// one single-use link on two instances. Alice goes to her bank; Bob's
// submit and his opening of the link are told the link is being paid, and
// see nothing of Alice's (her bank, her bank page, her login). Alice finds
// her way back from her browser, with and without its cookie. When Alice
// rejects the payment at her bank, Bob pays; anyone then opening the link
// sees the receipt without Bob's bank. A shop's signed link keeps the
// same rule.
func TestAPaymentUnderWayBelongsToTheBrowserThatBeganIt(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		one := setup(t, options{knobs: settleNow, ledger: ledgertest.Open(t, databaseURL)})
		two := setup(t, options{upstream: one.sandbox, ledger: ledgertest.Open(t, databaseURL)})
		p := one.paymentLink(links.Draft{Amount: "123.45", Description: "Invoice 2026-117, kitchen repair", Reference: "INV-117"})
		address := links.Route + p.ID
		alice, bob := newBrowser(t, "Alice's browser"), newBrowser(t, "Bob's browser")
		bobs := bob.open(two.url, two.url+address)
		alices := alice.open(one.url, one.url+address)
		const login = "alice-login-4711"
		res := alice.do(http.MethodPost, alices+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}, "psuId": {login}})
		bankPage := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || bankPage == "" {
			t.Fatalf("Alice's submit: %d", res.StatusCode)
		}
		seesNothingOfAlices := func(who, raw string) {
			t.Helper()
			for _, hers := range []string{bankPage, "Deutsche Bank", login} {
				if strings.Contains(raw, hers) {
					t.Errorf("%s is shown %q of Alice's payment", who, hers)
				}
			}
		}
		doc, raw := read(t, bob.do(http.MethodPost, bobs+"/pay", url.Values{"country": {"DE"}, "bank": {"commerzbank"}}), http.StatusConflict)
		if doc.Find(testid("link-ended")).AttrOr("data-state", "") != "in-progress" {
			t.Errorf("Bob's submit while Alice pays says %q", text(doc, "h1"))
		}
		seesNothingOfAlices("Bob's submit", raw)
		doc, raw = read(t, bob.do(http.MethodGet, two.url+address, nil), http.StatusConflict)
		if doc.Find(testid("link-ended")).AttrOr("data-state", "") != "in-progress" || doc.Find(testid("look-again")).AttrOr("href", "") != address {
			t.Errorf("Bob opening the link while Alice pays: %q", text(doc, "h1"))
		}
		seesNothingOfAlices("Bob opening the link", raw)
		if st := one.sandbox.Stats(); st.CreateCalls != 1 {
			t.Fatalf("%d payments made, want Alice's alone", st.CreateCalls)
		}
		// Alice's way back: the link again in her browser, on the other
		// instance, and her checkout's own address without any cookie.
		again := alice.open(two.url, two.url+address)
		if res := alice.do(http.MethodPost, again+"/pay", atTheBank); res.Header.Get("Location") != bankPage {
			t.Errorf("Alice opening the link again goes to %d %q, want her bank page", res.StatusCode, res.Header.Get("Location"))
		}
		if res := two.post(alices+"/pay", atTheBank); res.Header.Get("Location") != bankPage {
			t.Errorf("Alice's checkout without its cookie goes to %d %q, want her bank page", res.StatusCode, res.Header.Get("Location"))
		}
		// Alice rejects at her bank: the link opens for Bob.
		if res := one.post(bankPage, url.Values{"action": {"reject"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("reject: %d", res.StatusCode)
		}
		res = bob.do(http.MethodPost, bobs+"/pay", url.Values{"country": {"DE"}, "bank": {"commerzbank"}})
		bobsBank := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || bobsBank == "" || bobsBank == bankPage {
			t.Fatalf("Bob after Alice's rejection: %d to %q", res.StatusCode, bobsBank)
		}
		if res := one.post(bobsBank, url.Values{"action": {"approve"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", res.StatusCode)
		}
		bob.do(http.MethodGet, bobs+"/return", nil)
		carol := newBrowser(t, "Carol's browser")
		doc, _ = read(t, carol.do(http.MethodGet, one.url+address, nil), http.StatusOK)
		if doc.Find(testid("receipt")).AttrOr("data-kind", "") != "paid" || doc.Find(testid("receipt-bank")).Length() != 0 ||
			strings.Contains(doc.Text(), "Commerzbank") {
			t.Errorf("the paid link shows Carol %q, bank %q", text(doc, testid("receipt-status")), text(doc, testid("receipt-bank")))
		}
		// A shop's signed link: the same rule.
		link := one.link("ORD-9", nil)
		alicesOrder, bobsOrder := alice.open(one.url, link), bob.open(two.url, strings.Replace(link, one.url, two.url, 1))
		res = alice.do(http.MethodPost, alicesOrder+"/pay", atTheBank)
		orderBank := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || orderBank == "" {
			t.Fatalf("Alice pays the shop's order: %d", res.StatusCode)
		}
		doc, raw = read(t, bob.do(http.MethodPost, bobsOrder+"/pay", atTheBank), http.StatusConflict)
		if strings.Contains(raw, orderBank) || text(doc, testid("error-heading")) != "This order is being paid right now" ||
			doc.Find(testid("way-back")).Length() != 1 {
			t.Errorf("Bob's submit of the shop's order while Alice pays: %q", text(doc, testid("error-heading")))
		}
		if res := alice.do(http.MethodPost, alice.open(two.url, strings.Replace(link, one.url, two.url, 1))+"/pay", atTheBank); res.Header.Get("Location") != orderBank {
			t.Errorf("Alice opening the shop's link again goes to %q, want her bank page", res.Header.Get("Location"))
		}
		if st := one.sandbox.Stats(); st.CreateCalls != 3 {
			t.Errorf("%d payments made; want Alice's, Bob's and Alice's order's", st.CreateCalls)
		}
	})
}

// TestOpeningALinkWritesNothing: sixty openings of a reusable link by a
// script make no order; a browser counts once in the link's funnel however
// often it opens it, and a HEAD, a prefetch or a chat's link preview count
// nothing. The payer's order is made when they submit.
func TestOpeningALinkWritesNothing(t *testing.T) {
	a := setup(t, options{})
	p := a.paymentLink(links.Draft{Amount: "15", Description: "Club fee", Reference: "CLUB", Kind: ledger.LinkReusable})
	for range 60 {
		a.openLink(p.ID)
	}
	for _, h := range []http.Header{{"Sec-Purpose": {"prefetch"}}, {"User-Agent": {"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"}},
		{"User-Agent": {"WhatsApp/2.23.20.0"}}, {"User-Agent": {"facebookexternalhit/1.1"}}} {
		a.do(http.MethodGet, a.url+links.Route+p.ID, nil, h)
	}
	if res := a.do(http.MethodHead, a.url+links.Route+p.ID, nil, nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("HEAD: %d", res.StatusCode)
	}
	payer := newBrowser(t, "A payer's browser")
	var checkout string
	for range 5 {
		checkout = payer.open(a.url, a.url+links.Route+p.ID)
	}
	made, err := a.ledger.LinkOrders(context.Background(), "shop1", p.ID, 100)
	if err != nil || len(made) != 0 {
		t.Fatalf("after 66 openings: %d orders, %v; want none", len(made), err)
	}
	a.opens.Flush(context.Background())
	f, err := a.ledger.Funnel(context.Background(), "shop1", p.ID)
	if err != nil || f.Opened != 2 {
		t.Errorf("opened %d (%v): want the script and the payer's browser, once each", f.Opened, err)
	}
	if res := payer.do(http.MethodPost, checkout+"/pay", atTheBank); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %d", res.StatusCode)
	}
	made, _ = a.ledger.LinkOrders(context.Background(), "shop1", p.ID, 100)
	if len(made) != 1 || made[0].OrderID != "CLUB-1" {
		t.Errorf("after the payer's submit: %+v, want CLUB-1", made)
	}
	if f, _ := a.ledger.Funnel(context.Background(), "shop1", p.ID); f.Opened != 2 || f.BankChosen != 1 {
		t.Errorf("funnel %+v", f)
	}
}

// countingMail counts the e-mails sent, by address.
type countingMail struct {
	mu   sync.Mutex
	sent []string
}

func (m *countingMail) SendAlternative(_ context.Context, to, _, _, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, to)
	return nil
}

func (m *countingMail) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// TestTheAPISendsNoOnesMailForThem: twenty links asked at once for one
// address, through two instances, send it five e-mails: the others are
// refused with 429, Retry-After and a reason, make no link, and are in
// the audit log without the address. Past the shop's hourly budget,
// other addresses are refused too.
func TestTheAPISendsNoOnesMailForThem(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, databaseURL string) {
		mail := &countingMail{}
		one := setup(t, options{mail: mail, ledger: ledgertest.Open(t, databaseURL)})
		two := setup(t, options{mail: mail, ledger: ledgertest.Open(t, databaseURL)})
		const victim = "victim@example.org"
		codes := make([]int, 20)
		headers := make([]http.Header, 20)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				at := []*app{one, two}[i%2]
				codes[i], _, headers[i] = at.apiCall("POST", "/api/v1/payment-links", shop1Token,
					fmt.Sprintf(`{"amount":"10","description":"Pay now or lose your account %d","email":%q}`, i, victim))
			})
		}
		wg.Wait()
		made, refused := 0, 0
		for i, code := range codes {
			switch code {
			case http.StatusCreated:
				made++
			case http.StatusTooManyRequests:
				refused++
				if headers[i].Get("Retry-After") == "" {
					t.Errorf("a refusal without Retry-After")
				}
			default:
				t.Errorf("request %d: %d", i, code)
			}
		}
		if made != 5 || refused != 15 || mail.count() != 5 {
			t.Fatalf("%d links made, %d refused, %d e-mails sent; want 5, 15, 5", made, refused, mail.count())
		}
		if list, _ := one.ledger.ListLinks(context.Background(), ledger.LinkFilter{Merchant: "shop1"}, ledger.Cursor{}, 100); len(list) != 5 {
			t.Errorf("%d links kept, want the 5 sent", len(list))
		}
		code, body, _ := one.apiCall("POST", "/api/v1/payment-links", shop1Token, `{"amount":"10","description":"Again","email":"victim@example.org"}`)
		if e, _ := body["error"].(map[string]any); code != http.StatusTooManyRequests || e["code"] != "mail_limit" ||
			!strings.Contains(fmt.Sprint(e["message"]), "this address was e-mailed 5 times today") {
			t.Errorf("the sixth: %d %v", code, body)
		}
		// Without an e-mail the link is made.
		if code, _, _ := one.apiCall("POST", "/api/v1/payment-links", shop1Token, `{"amount":"10","description":"No mail"}`); code != http.StatusCreated {
			t.Errorf("a link without e-mail: %d", code)
		}
		one.links.Bounds.PerMerchant, two.links.Bounds.PerMerchant = 8, 8
		for i := range 4 {
			code, body, _ := two.apiCall("POST", "/api/v1/payment-links", shop1Token, fmt.Sprintf(`{"amount":"10","description":"Invoice","email":"payer%d@example.org"}`, i))
			if want := []int{201, 201, 201, 429}[i]; code != want {
				t.Errorf("payer %d past the shop's budget of 8: %d %v, want %d", i, code, body, want)
			}
		}
		lines, err := one.ledger.Audit(context.Background(), ledger.AuditQuery{MerchantID: "shop1", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		refusals := 0
		for _, l := range lines {
			if l.Event == "mailRefused" {
				refusals++
			}
			if strings.Contains(fmt.Sprint(l.Args), "example.org") {
				t.Errorf("an e-mail address in the audit log: %v", l.Args)
			}
		}
		if refusals != 17 {
			t.Errorf("%d refusals in the audit log, want 17", refusals)
		}
	})
}

// TestSmallerEdgesAreRefused: two Authorization headers, a link's text
// holding a right-to-left override or a zero-width space.
func TestSmallerEdgesAreRefused(t *testing.T) {
	a := setup(t, options{})
	res := a.do(http.MethodGet, a.url+"/api/v1/payments", nil, http.Header{"Authorization": {"Bearer " + shop1Token, "Bearer " + shop2Token}})
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("two Authorization headers: %d, want 400", res.StatusCode)
	}
	for field, body := range map[string]string{
		"description": `{"amount":"10","description":"Invoice \u202egnp.exe"}`,
		"reference":   `{"amount":"10","description":"Invoice","reference":"INV\u200b-7"}`,
	} {
		code, answer, _ := a.apiCall("POST", "/api/v1/payment-links", shop1Token, body)
		if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(fieldNames(answer)), field) {
			t.Errorf("%s with a hidden character: %d %v", field, code, answer)
		}
	}
	if code, _, _ := a.apiCall("POST", "/api/v1/payment-links", shop1Token, `{"amount":"10","description":"Invoice","expires_in":5124097000000}`); code != http.StatusBadRequest {
		t.Errorf("a huge expires_in: %d", code)
	}
	// A signed link's order id likewise.
	link := a.link("ORD\u202e-1", nil)
	if res := a.get(link); res.StatusCode != http.StatusBadRequest {
		t.Errorf("an order id with a right-to-left override: %d", res.StatusCode)
	}
}
