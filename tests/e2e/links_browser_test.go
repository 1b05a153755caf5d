package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
)

// TestAPaymentLinkFromTheConsoleIsPaidOnAPhone is a plumber's invoice: a
// support person makes a payment link in the console, the payer opens it
// on a 390 px phone in German, pays at the sandbox bank and keeps the
// receipt; the console then shows the link paid, with its funnel. Every
// new page is checked by axe-core, in English and in German, and kept as
// a screenshot.
func TestAPaymentLinkFromTheConsoleIsPaidOnAPhone(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	const email, pw = "support@demo.example", "a long console password"
	hash, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	merchants := fmt.Sprintf(`{"merchants":[{"id":%q,"name":"Kowalski Plumbing","link_keys":{%q:%q},
		"api_token":"demo-api-token-of-the-links-browser-test","return_origins":["https://shop.example"],
		"console_users":[{"email":%q,"password_hash":%q,"role":"support"}]}]}`,
		merchant.DemoID, merchant.DemoKID, merchant.DemoSecret, email, hash)
	if err := os.WriteFile(file, []byte(merchants), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, map[string]string{"MERCHANTS_FILE": file, "SANDBOX_SETTLE_DELAY": "1s"})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	read := func(what, css string) string {
		t.Helper()
		return strings.TrimSpace(value(t, ctx, what, chromedp.Text(chromedp.CSS(css))))
	}

	// The support person makes the link, on a desktop.
	do("a desktop", chromedp.EmulateViewport(1280, 900))
	do("sign in", chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(`[data-testid="funnel"]`))
	do("open Payment links", menu(), click(`a[href="/console/links"]`), visible(`[data-testid="link-form"]`))
	checkConsolePage(t, ctx, axe, "links")
	do("a wrong amount first", chromedp.EmulateViewport(1280, 900),
		chromedp.SendKeys(chromedp.ID("amount"), "120,50"), chromedp.SendKeys(chromedp.ID("description"), "Invoice 2026-117, kitchen repair"),
		chromedp.SendKeys(chromedp.ID("reference"), "INV-2026-117"), chromedp.SetValue(chromedp.ID("lang"), "de"),
		click(`[data-testid="make-link"]`), visible(`[data-testid="link-errors"]`))
	if got := value(t, ctx, "the description kept", chromedp.Value(chromedp.ID("description"))); got != "Invoice 2026-117, kitchen repair" {
		t.Errorf("after a refusal the description holds %q", got)
	}
	checkConsolePage(t, ctx, axe, "links-error")
	do("fix the amount", chromedp.EmulateViewport(1280, 900), chromedp.SetValue(chromedp.ID("amount"), "120.50"),
		click(`[data-testid="make-link"]`), visible(`[data-testid="payment-link-url"]`))
	address := read("the link's address", `[data-testid="payment-link-url"]`)
	if !strings.HasPrefix(address, s.base+"/l/") {
		t.Fatalf("the link's address is %q", address)
	}
	if st := value(t, ctx, "the state", chromedp.Evaluate[string](`document.querySelector('[data-testid="link-state"]').dataset.state`)); st != "open" {
		t.Errorf("a new link is %q", st)
	}
	checkConsolePage(t, ctx, axe, "link-open")

	// The payer, on a phone, in the link's German.
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
		artifact(t, "link-"+name+"-390.png", value(t, phone, "a screenshot", chromedp.FullScreenshot(100)))
	}
	pay("a phone", chromedp.EmulateViewport(390, 844))
	pay("open the link", chromedp.Navigate(address), visible(`[data-code="DE"]`))
	if lang := value(t, phone, "the language", chromedp.Evaluate[string](`document.documentElement.lang`)); lang != "de" {
		t.Errorf("the payer's page speaks %q, want the link's de", lang)
	}
	pay("choose Germany", click(`[data-code="DE"]`), visible(`[data-id="deutsche-bank"]`))
	pay("choose the bank", click(`[data-id="deutsche-bank"]`), visible(`[data-testid="continue"]`))
	if got := strings.TrimSpace(value(t, phone, "the description", chromedp.Text(chromedp.CSS(`[data-testid="description"]`)))); got != "Invoice 2026-117, kitchen repair" {
		t.Errorf("the payer reads the description %q", got)
	}
	check("pay-de")
	pay("to the bank", click(`[data-testid="continue"]`), visible(`button.approve`))
	pay("approve and see it paid", click(`button.approve`), visible(`[data-testid="status"][data-kind="paid"]`))
	pay("to the receipt", click(`[data-testid="way-back"]`), visible(`[data-testid="receipt"][data-kind="paid"]`))
	for what, want := range map[string]string{"receipt-status": "Bezahlt", "order-id": "INV-2026-117", "payee": "Kowalski Plumbing", "amount": "120,50\u00a0€"} {
		if got := strings.TrimSpace(value(t, phone, what, chromedp.Text(chromedp.CSS(`[data-testid="receipt"] [data-testid="`+what+`"]`)))); got != want {
			t.Errorf("the receipt's %s reads %q, want %q", what, got, want)
		}
	}
	check("receipt-de")
	receipt := value(t, phone, "the receipt's address", chromedp.Location())
	pay("the receipt in English", chromedp.Navigate(receipt+"&lang=en"), visible(`html[lang="en"] [data-testid="receipt"]`))
	check("receipt-en")
	// The link itself now shows the receipt too, and starts nothing.
	pay("the link again", chromedp.Navigate(address), visible(`[data-testid="receipt"][data-kind="paid"]`))

	// The console shows it paid, with its funnel.
	do("the link's page again", chromedp.Reload(), visible(`[data-testid="link-funnel"]`))
	if st := value(t, ctx, "the state", chromedp.Evaluate[string](`document.querySelector('[data-testid="link-state"]').dataset.state`)); st != "paid" {
		t.Errorf("after paying, the console says %q", st)
	}
	funnel := value(t, ctx, "the funnel", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="funnel-count"]')].map(e => e.textContent.trim())`))
	if strings.Join(funnel, " ") != "1 1 1 1" {
		t.Errorf("the funnel reads %v, want one payer at every step", funnel)
	}
	checkConsolePage(t, ctx, axe, "link-paid")

	// The console in German.
	do("choose German", chromedp.EmulateViewport(1280, 900), chromedp.SetValue(chromedp.ID("console-language"), "de"),
		chromedp.Submit(chromedp.CSS(`[data-testid="language-switch"]`)), visible(`html[lang="de"] [data-testid="link-state"]`))
	checkConsolePage(t, ctx, axe, "link-paid-de")
	do("the list in German", chromedp.Navigate(s.base+"/console/links"), visible(`html[lang="de"] [data-testid="links"]`))
	checkConsolePage(t, ctx, axe, "links-de")
}
