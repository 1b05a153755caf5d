package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/mailer/mailertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/sepa/sepatest"
)

// TestARefundFromTheConsoleToTheBankStatement is a returned parcel: a
// shopper paid 49.90 €; support refunds half from the order's page; the
// payer opens the page e-mailed to them, in German, on a 390 px phone and
// types a wrong IBAN, then the right one; the owner downloads the transfer file (valid against the official
// pain.001.001.09 schema, from the shop's own account to the payer's) and
// later uploads the bank's statement, which books the refund and shows
// the payment received. Every page is checked by axe-core and kept as a
// screenshot; the console's refund page also in German.
func TestARefundFromTheConsoleToTheBankStatement(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	const pw = "a long console password"
	const owner, support = "owner@demo.example", "support@demo.example"
	const shopIBAN, payerIBAN = "DE02120300000000202051", "DE89370400440532013000"
	hash, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	merchants := fmt.Sprintf(`{"merchants":[{"id":%q,"name":"Kowalski Plumbing","link_keys":{%q:%q},
		"api_token":"demo-api-token-of-the-refunds-browser-test","return_origins":["https://shop.example"],
		"account_name":"Kowalski Plumbing GmbH","account_iban":%q,
		"console_users":[{"email":%q,"password_hash":%q},{"email":%q,"password_hash":%q,"role":"support"}]}]}`,
		merchant.DemoID, merchant.DemoKID, merchant.DemoSecret, shopIBAN, owner, hash, support, hash)
	if err := os.WriteFile(file, []byte(merchants), 0o600); err != nil {
		t.Fatal(err)
	}
	sink, smtpURL := mailertest.Start(t, "pay@kowalski.example")
	s := start(t, map[string]string{"MERCHANTS_FILE": file, "SANDBOX_SETTLE_DELAY": "1s", "SMTP_URL": smtpURL})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	read := func(what, css string) string {
		t.Helper()
		return strings.Join(strings.Fields(value(t, ctx, what, chromedp.Text(chromedp.CSS(css)))), " ")
	}

	// The shopper pays 49.90 € at the sandbox bank, from the shop's German
	// page, which gave their e-mail address with the link.
	m := &merchant.Merchant{ID: merchant.DemoID, LinkKeys: map[string]string{merchant.DemoKID: merchant.DemoSecret}}
	link, err := order.Link{Order: order.Order{ID: "R-1001", Amount: "49.90", Currency: "EUR", ReturnURL: "https://shop.example/done",
		Email: "anna@example.com", Lang: "de", KID: merchant.DemoKID}, TTL: time.Hour}.URL(s.base, m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do("a desktop", chromedp.EmulateViewport(1280, 900))
	do("pay", chromedp.Navigate(link), visible(`[data-code="DE"]`), click(`[data-code="DE"]`), visible(`[data-id="deutsche-bank"]`),
		click(`[data-id="deutsche-bank"]`), visible(`[data-testid="continue"]`), click(`[data-testid="continue"]`), visible(`button.approve`),
		click(`button.approve`), visible(`[data-testid="status"][data-kind="paid"]`))

	// Support refunds half of it from the order's page.
	do("sign in as support", chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), support), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(`[data-testid="funnel"]`))
	do("the order", chromedp.Navigate(s.base+"/console/payments/R-1001"), visible(`[data-testid="refund-button"]`))
	do("Refund", click(`[data-testid="refund-button"]`), visible(`[data-testid="refund-form"]`))
	if got := value(t, ctx, "the amount offered", chromedp.Value(chromedp.ID("amount"))); got != "49.90" {
		t.Errorf("the form offers %q, want what remains, 49.90", got)
	}
	checkConsolePage(t, ctx, axe, "refund-form")
	do("half, with a reason", chromedp.EmulateViewport(1280, 900), chromedp.SetValue(chromedp.ID("amount"), "24.95"),
		chromedp.SendKeys(chromedp.ID("reason"), "Returned: one tap of two"), click(`[data-testid="refund-submit"]`),
		visible(`[data-testid="refund-payer-page"]`))
	if st := value(t, ctx, "the state", chromedp.Evaluate[string](`document.querySelector('[data-testid="refund-state"]').dataset.state`)); st != "awaiting_account" {
		t.Errorf("a refund with no account is %q", st)
	}
	if got := read("the notice", `[data-testid="notice"]`); !strings.Contains(got, "was e‑mailed") {
		t.Errorf("after making the refund the page says %q", got)
	}
	payerPage := read("the payer's page", `[data-testid="refund-payer-page"]`)
	if !strings.HasPrefix(payerPage, s.base+"/r/") {
		t.Fatalf("the payer's page is %q", payerPage)
	}
	sent := sink.Sent()
	if len(sent) != 1 || len(sent[0].To) != 1 || sent[0].To[0] != "anna@example.com" {
		t.Fatalf("the e-mails sent: %d", len(sent))
	}
	letter := string(sent[0].Data)
	if !strings.Contains(letter, "erstattet") || !strings.Contains(letter, payerPage) {
		t.Errorf("the payer's e-mail is not in German or does not hold their page %s:\n%.1200s", payerPage, letter)
	}
	refund := value(t, ctx, "the refund's id", chromedp.Evaluate[string](`location.pathname.split('/').pop()`))
	checkConsolePage(t, ctx, axe, "refund-awaiting")

	// The payer, on a phone, in German.
	phone, cancel := chromedp.NewContext(ctx)
	defer cancel()
	pay := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, phone, what, actions...)
	}
	check := func(name string) {
		t.Helper()
		if found := audit(t, phone, axe); len(found) > 0 {
			t.Errorf("%s: axe-core finds %+v", name, found)
		}
		if overflow := value(t, phone, "how far the page scrolls sideways", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); overflow > 0 {
			t.Errorf("%s scrolls sideways by %d px on a phone", name, overflow)
		}
		artifact(t, "refund-"+name+"-390.png", value(t, phone, "a screenshot", chromedp.FullScreenshot(100)))
	}
	pay("a phone", chromedp.EmulateViewport(390, 844))
	pay("open the e-mailed page", chromedp.Navigate(payerPage), visible(`html[lang="de"] [data-testid="refund-form"]`))
	if got := strings.Join(strings.Fields(value(t, phone, "the reason", chromedp.Text(chromedp.CSS(`[data-testid="refund-reason"]`)))), " "); got != "Returned: one tap of two" {
		t.Errorf("the payer reads the reason %q", got)
	}
	check("form-de")
	pay("a mistyped IBAN", chromedp.SendKeys(chromedp.ID("name"), "Anna Schmidt"), chromedp.SendKeys(chromedp.ID("iban"), "DE89 3704 0044 0532 0130 01"),
		click(`[data-testid="refund-send"]`), visible(`[data-testid="error-summary"]`))
	if got := value(t, phone, "the name kept", chromedp.Value(chromedp.ID("name"))); got != "Anna Schmidt" {
		t.Errorf("after a refusal the name holds %q", got)
	}
	if got := value(t, phone, "the IBAN kept", chromedp.Value(chromedp.ID("iban"))); got != "DE89 3704 0044 0532 0130 01" {
		t.Errorf("after a refusal the IBAN holds %q", got)
	}
	if got := value(t, phone, "the summary", chromedp.Text(chromedp.CSS(`[data-testid="error-summary"]`))); !strings.Contains(got, "Prüfziffern") {
		t.Errorf("the refusal does not say, in German, that the check digits do not match: %q", got)
	}
	check("error-de")
	pay("the right IBAN", chromedp.SetValue(chromedp.ID("iban"), "DE89 3704 0044 0532 0130 00"), click(`[data-testid="refund-send"]`),
		visible(`[data-testid="refund-account"]`))
	if got := strings.TrimSpace(value(t, phone, "the account shown", chromedp.Text(chromedp.CSS(`[data-testid="refund-account"]`)))); got != "DE89 **** **** **** 3000" {
		t.Errorf("the payer's account is shown as %q, want masked", got)
	}
	check("given-de")

	// The owner pays it: the transfer file, from the shop's own account.
	downloads := t.TempDir()
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	do("sign in as the owner", chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), owner), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(`[data-testid="funnel"]`))
	do("the refunds", chromedp.Navigate(s.base+"/console/refunds"), visible(`[data-testid="refunds"]`))
	checkConsolePage(t, ctx, axe, "refunds")
	if _, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}
	do("tick it and download", chromedp.EmulateViewport(1280, 900), click(`#choose-`+refund), click(`[data-testid="transfer-download"]`))
	transfer := waitForFile(t, downloads)
	sepatest.ValidateXSD(t, sepatest.Schema("pain.001.001.09"), transfer)
	for _, want := range []string{"<IBAN>" + shopIBAN + "</IBAN>", "<IBAN>" + payerIBAN + "</IBAN>", ">24.95</InstdAmt>", "Anna Schmidt", "<EndToEndId>" + sepa.Reference(refund) + "</EndToEndId>"} {
		if !strings.Contains(string(transfer), want) {
			t.Errorf("the transfer file lacks %s", want)
		}
	}
	do("the refund sent", chromedp.Navigate(s.base+"/console/refunds/"+refund), visible(`[data-testid="refund-timeline"]`))
	if st := value(t, ctx, "the state", chromedp.Evaluate[string](`document.querySelector('[data-testid="refund-state"]').dataset.state`)); st != "sent" {
		t.Errorf("after its transfer file the refund is %q", st)
	}

	// The bank's statement, a few days later, books it.
	day := time.Now().UTC()
	statement := filepath.Join(t.TempDir(), "camt053.xml")
	if err := os.WriteFile(statement, sepatest.Statement("08", shopIBAN, day, day, []sepatest.Entry{
		{Ref: "B1", Booked: day, Amount: decimal.RequireFromString("49.90"), Credit: true, Remittance: "R-1001", Counterparty: "Anna Schmidt"},
		{Ref: "B2", Booked: day, Amount: decimal.RequireFromString("24.95"), EndToEndID: sepa.Reference(refund), Counterparty: "Anna Schmidt", CounterIBAN: payerIBAN},
		{Ref: "B3", Booked: day, Amount: decimal.RequireFromString("12.00"), Credit: true, Remittance: "Invoice 77", Counterparty: "Dora Weiss"},
	}), 0o600); err != nil {
		t.Fatal(err)
	}
	do("the statements", menu(), click(`a[href="/console/statements"]`), visible(`[data-testid="statement-upload"]`))
	do("upload", chromedp.SetUploadFiles(`#file`, []string{statement}), click(`[data-testid="statement-submit"]`), visible(`[data-testid="statement-notice"]`))
	if got := read("the notice", `[data-testid="statement-notice"]`); !strings.Contains(got, "entries 3, matched 2, left for you 1") {
		t.Errorf("the upload says %q", got)
	}
	if got := read("what is left", `[data-testid="statement-unmatched"]`); !strings.Contains(got, "Dora Weiss") || !strings.Contains(got, "Invoice 77") {
		t.Errorf("the entry left for a person reads %q", got)
	}
	checkConsolePage(t, ctx, axe, "statements")
	do("the refund booked", chromedp.Navigate(s.base+"/console/refunds/"+refund), visible(`[data-testid="refund-timeline"]`))
	if st := value(t, ctx, "the state", chromedp.Evaluate[string](`document.querySelector('[data-testid="refund-state"]').dataset.state`)); st != "booked" {
		t.Errorf("after the statement the refund is %q", st)
	}
	checkConsolePage(t, ctx, axe, "refund-booked")
	do("the order received", chromedp.Navigate(s.base+"/console/payments/R-1001"), visible(`[data-testid="order-received"]`))
	if got := read("the order's money", `[data-testid="order-received"]`); !strings.Contains(got, day.Format(time.DateOnly)) {
		t.Errorf("the order's page says %q of its money", got)
	}
	checkConsolePage(t, ctx, axe, "order-refunded")

	// The refund's page in German.
	do("choose German", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.base+"/console/refunds/"+refund), visible(`[data-testid="refund-timeline"]`),
		chromedp.SetValue(chromedp.ID("console-language"), "de"), chromedp.Submit(chromedp.CSS(`[data-testid="language-switch"]`)),
		visible(`html[lang="de"] [data-testid="refund-timeline"]`))
	checkConsolePage(t, ctx, axe, "refund-booked-de")
	do("the statements in German", chromedp.Navigate(s.base+"/console/statements"), visible(`html[lang="de"] [data-testid="statement-upload"]`))
	checkConsolePage(t, ctx, axe, "statements-de")
}

// waitForFile waits for the one file a download writes into dir, and
// reads it.
func waitForFile(t *testing.T, dir string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".crdownload") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && len(data) > 0 && strings.Contains(string(data), "</Document>") {
				return data
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no download in %s", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
