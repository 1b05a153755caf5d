package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/theme"
)

// TestADesignerRebrandsTheCheckoutInABrowser is a designer's afternoon:
// invited by the demo shop's owner, they open Branding, type a new primary
// colour and watch the shopper's pages take it at phone and desktop widths
// without a reload, publish it, and a shopper's checkout wears it. The
// editor and the history are checked by axe-core and screenshot at 390
// and 1280 px.
func TestADesignerRebrandsTheCheckoutInABrowser(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	s := start(t, nil) // sandbox mode: the demo shop is managed in the console
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	signIn := func(email, pw string) {
		t.Helper()
		do("sign in as "+email, chromedp.Navigate(s.base+"/console/login"), visible(`[data-testid="sign-in"]`),
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"))
	}

	signIn(s.consoleEmail, s.consolePassword)
	do("the overview", visible(`[data-testid="funnel"]`))
	do("invite a designer", chromedp.Navigate(s.base+"/console/team?merchant=demo"), visible(`[data-testid="invite-form"]`),
		chromedp.SendKeys(chromedp.ID("email"), "dana@demo.example"), chromedp.SetValue(chromedp.ID("role"), "designer"),
		click(`[data-testid="send-invite"]`), visible(`[data-testid="invite-link"]`))
	link := value(t, ctx, "the invitation link", chromedp.Text(chromedp.CSS(`[data-testid="invite-link"]`)))
	do("the owner signs out", menu(), click(`[data-testid="sign-out"]`), visible(`[data-testid="sign-in"]`))
	const pw = "dana's long design password"
	do("join as the designer", chromedp.Navigate(link), visible(`[data-testid="join"]`),
		chromedp.SendKeys(chromedp.ID("password"), pw), chromedp.SendKeys(chromedp.ID("password_again"), pw),
		click(`[data-testid="join"]`), visible(`[data-testid="funnel"]`))

	do("open Branding from the menu", menu(), click(`nav a[href="/console/branding"]`), visible(`[data-testid="branding-form"]`))
	editor := value(t, ctx, "the editor's address", chromedp.Location())
	// Each preview is the bank list, in the live look to begin with.
	primaryIn := func(frame string) string {
		return `(() => { const d = document.querySelector('[data-testid="` + frame + `"]').contentDocument;
			return d && d.querySelector('[data-testid="bank"]') ? getComputedStyle(d.documentElement).getPropertyValue('--color-primary').trim() : '' })()`
	}
	for _, frame := range []string{"preview-phone", "preview-desktop"} {
		until(t, ctx, "the "+frame+" shows the bank list", primaryIn(frame)+` === "#0B5FFF"`)
	}
	checkConsolePage(t, ctx, axe, "branding")

	do("type a new primary colour", chromedp.Clear(chromedp.ID("primaryColor")), chromedp.SendKeys(chromedp.ID("primaryColor"), "#AA0000"))
	for _, frame := range []string{"preview-phone", "preview-desktop"} {
		until(t, ctx, "the "+frame+" takes the colour typed", primaryIn(frame)+` === "#AA0000"`)
	}
	if now := value(t, ctx, "the address", chromedp.Location()); now != editor {
		t.Errorf("the editor was reloaded or submitted: %s", now)
	}
	want := fmt.Sprintf("%.2f:1", theme.Contrast("#AA0000", theme.White))
	until(t, ctx, "the contrast check follows", `document.querySelector('[data-testid="check-primary-on-card"] [data-role="ratio"]').textContent === "`+want+`"`)
	do("publish", click(`[data-testid="publish"]`), visible(`[data-testid="live-by"]`))
	if notice := value(t, ctx, "the notice", chromedp.Text(chromedp.CSS(`[data-testid="notice"]`))); !strings.Contains(notice, "Version 1 is live") {
		t.Errorf("after publishing the page says %q", notice)
	}

	do("a shopper opens the shop's link", chromedp.Navigate(s.demoLink), visible(`[data-testid="countries"], [data-testid="results"]`))
	until(t, ctx, "the shopper's page wears the published colour",
		`getComputedStyle(document.documentElement).getPropertyValue('--color-primary').trim() === "#AA0000"`)

	do("the history", chromedp.Navigate(s.base+"/console/branding/history"), visible(`[data-testid="version"]`))
	if changed := value(t, ctx, "what version 1 changed", chromedp.Text(chromedp.CSS(`[data-testid="changed"]`))); strings.Join(strings.Fields(changed), " ") != "Primary colour #AA0000" {
		t.Errorf("version 1 says it changed %q", changed)
	}
	checkConsolePage(t, ctx, axe, "branding-history")
}
