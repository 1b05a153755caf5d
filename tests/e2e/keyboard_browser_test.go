package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestKeyboardOnly pays the demo link with Tab, Shift+Tab, Enter and Space
// alone (and typing into the fields): every step is reachable, visibly
// focused, and operable without a pointer.
func TestKeyboardOnly(t *testing.T) {
	ctx := browser(t)
	s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms"})

	active := func() string {
		t.Helper()
		return value(t, ctx, "the focused element", chromedp.Evaluate[string](`(function(e){return (e.dataset.testid||"")+"|"+(e.dataset.code||e.dataset.id||e.id||"")+"|"+e.tagName})(document.activeElement || document.body)`))
	}
	press := func(keys string, opts ...chromedp.KeyOption) {
		t.Helper()
		step(t, ctx, "press "+keys, chromedp.KeyEvent(keys, opts...))
	}
	// tabTo presses Tab until the focused element's description contains
	// want, and checks that the focus is visible there.
	tabTo := func(want string) {
		t.Helper()
		for range 80 {
			if strings.Contains(active(), want) {
				outline, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))
				if outline == "none" || outline == "" {
					t.Errorf("focus on %s is not visible (outline %q)", want, outline)
				}
				return
			}
			press(kb.Tab)
		}
		t.Fatalf("Tab never reached %q (focus is on %s)", want, active())
	}
	wait := func(css string) {
		t.Helper()
		step(t, ctx, "wait for "+css, chromedp.WaitVisible(chromedp.CSS(css)))
	}
	typeText := func(text string) {
		t.Helper()
		step(t, ctx, "type "+text, chromedp.KeyEvent(text))
	}

	step(t, ctx, "open the demo link", chromedp.Navigate(s.demoLink))
	wait(`[data-code="FR"]`)

	// The skip link comes first and leads to the content.
	press(kb.Tab)
	if a := active(); !strings.HasSuffix(a, "|A") || !strings.Contains(a, "||") {
		t.Errorf("the first Tab lands on %s, want the skip link", a)
	}
	tabTo(`country|FR`)
	// Shift+Tab goes back, Tab forward again.
	press(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))
	if strings.Contains(active(), "FR") {
		t.Error("Shift+Tab did not move the focus back")
	}
	tabTo(`country|FR`)
	press(kb.Enter)
	wait(`#q`)

	tabTo(`query|q`)
	typeText("credit agri")
	press(kb.Enter)
	wait(`[data-id="credit-agricole"]`)
	tabTo(`bank|credit-agricole`)
	press(kb.Enter)
	wait(`#iban`)

	tabTo(`|name|`)
	typeText("Jean Dupont")
	tabTo(`|iban|`)
	typeText("FR76 3000 6000 0112 3456 7890 188")
	tabTo(`continue`)
	press(" ") // Space presses a button
	wait(`[data-testid="error-summary"]`)
	if a := active(); !strings.Contains(a, "error-summary") {
		t.Errorf("after a failed submit the focus is on %s, want the error summary", a)
	}
	// From the summary, Tab goes to its link to the field, then on into the form.
	press(kb.Tab)
	if href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("href")`)); href != "#iban" {
		t.Errorf("the summary's first link goes to %q, want #iban", href)
	}
	tabTo(`|iban|`)
	// Select what was typed (as Ctrl+A would) so the new IBAN replaces it.
	value(t, ctx, "the IBAN selected", chromedp.Evaluate[bool](`document.activeElement.select(), true`))
	typeText("FR76 3000 6000 0112 3456 7890 189")
	if v, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("iban"))); v != "FR76 3000 6000 0112 3456 7890 189" {
		t.Errorf("the IBAN field holds %q after retyping (focus on %s)", v, active())
	}
	tabTo(`continue`)
	press(kb.Enter)
	wait(`button.approve`)

	tabTo(`|BUTTON`)
	press(kb.Enter) // the first button approves
	wait(`[data-testid="status"][data-kind="paid"]`)
	tabTo(`way-back`)
	press(kb.Enter)
	wait(`[data-testid="shop-signature"]`)
	if sig, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="shop-signature"]`))); sig != "verified" {
		t.Errorf("the shop says %q", sig)
	}
}
