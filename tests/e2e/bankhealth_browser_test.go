package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/order"
)

// A shopper meets a failing bank and a vanished one in a browser at 390 px:
// each is said in words, neither blocks the way on, and axe finds nothing
// on the pages that say them.
func TestBankHealthInABrowser(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	s := start(t, map[string]string{
		"SANDBOX_FAILING_BANKS": "DE:commerzbank:1", "SANDBOX_UNLISTED_BANKS": "DE:dkb",
		"BANK_HEALTH_MIN_FINISHED": "1", "BANK_HEALTH_REFRESH": "1s", "SANDBOX_SETTLE_DELAY": "1ms",
	})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	clean := func(page string) {
		t.Helper()
		for _, v := range audit(t, ctx, axe) {
			t.Errorf("%s: %s (%s): %s %v", page, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}

	// A shopper approves at a bank that cancels every payment.
	do("pay at the failing bank",
		chromedp.Navigate(demoOrderLink(t, s.base, "H-1", "en", func(l *order.Link) { l.Country = "DE" })),
		chromedp.WaitVisible(chromedp.CSS(`[data-id="commerzbank"]`)),
		chromedp.Click(chromedp.CSS(`[data-id="commerzbank"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="continue"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)), chromedp.WaitVisible(chromedp.CSS(`button.approve`)),
		chromedp.Click(chromedp.CSS(`button.approve`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"][data-kind="canceled"]`)))

	// The next shopper's link names DKB, which the provider no longer
	// lists; within a reading of bank health, Commerzbank is marked.
	link := demoOrderLink(t, s.base, "H-2", "en", func(l *order.Link) { l.Country, l.Bank = "DE", "dkb" })
	marked := false
	for deadline := time.Now().Add(20 * time.Second); !marked && time.Now().Before(deadline); {
		do("open the bank list", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="unavailable"]`)))
		var err error
		if marked, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-id="commerzbank"] [data-testid="degraded"]') !== null`)); err != nil {
			t.Fatal(err)
		}
		if !marked {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if !marked {
		t.Fatal("Commerzbank is not marked as failing 20 s after its failure")
	}
	for sel, want := range map[string]string{
		`[data-testid="unavailable"]`:                      "temporarily unavailable. Choose another bank below.",
		`[data-id="commerzbank"] [data-testid="degraded"]`: "Payments with Commerzbank are failing more often than usual right now.",
	} {
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil || !strings.Contains(got, want) {
			t.Errorf("%s says %q (%v), want %q", sel, got, err, want)
		}
	}
	clean("bank list with a failing and a vanished bank")
	shot := value(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
	artifact(t, "banks-degraded-390.png", shot)

	// The failing bank can still be chosen; its details step says it too.
	do("choose the failing bank anyway",
		chromedp.Click(chromedp.CSS(`[data-testid="banks"] [data-id="commerzbank"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="degraded"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="continue"]`)))
	clean("details step of a failing bank")
	shot = value(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
	artifact(t, "details-degraded-390.png", shot)
}
