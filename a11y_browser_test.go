package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/order"
)

// axeSource is axe-core from npm (package.json); `npm ci` installs it.
const axeSource = "node_modules/axe-core/axe.min.js"

// loadAxe reads axe-core, or skips the test where it is not installed.
func loadAxe(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(axeSource)
	if err != nil {
		if os.Getenv("REQUIRE_CHROMIUM") != "" {
			t.Fatalf("axe-core is missing (%v); CI runs npm ci", err)
		}
		t.Skipf("accessibility test skipped: %s not found; run `npm ci`", axeSource)
	}
	return string(src)
}

type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// audit runs axe-core on the page the browser shows and returns what it
// finds against WCAG 2.2 A and AA and axe's best practices.
func audit(t *testing.T, ctx context.Context, axe string) []violation {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axe+";true")); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}})
		.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + " :: " + n.failureSummary)}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running axe-core: %v", err)
	}
	var found []violation
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatal(err)
	}
	return found
}

// TestShopperPagesHaveNoAccessibilityViolations runs axe-core on every
// shopper page, in English, German, Bulgarian, Polish and Irish.
func TestShopperPagesHaveNoAccessibilityViolations(t *testing.T) {
	axe := loadAxe(t)
	ctx := browser(t)
	s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms"})

	// English, German, and three scripts and lengths apart: Cyrillic
	// (Bulgarian), Polish and Irish.
	for _, lang := range []string{"en", "de", "bg", "pl", "ga"} {
		t.Run(lang, func(t *testing.T) {
			link := func(id string, change func(*order.Link)) string {
				return demoOrderLink(t, s.base, id+"-"+lang, lang, change)
			}
			check := func(name string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(ctx, actions...); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, v := range audit(t, ctx, axe) {
					t.Errorf("%s: %s (%s): %s\n\t%s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
				}
			}
			visible := func(css string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(css)) }

			check("country", chromedp.Navigate(link("A", nil)), visible(`[data-code="FR"]`))
			check("banks", chromedp.Click(chromedp.CSS(`[data-code="FR"]`)), visible(`#q`))
			check("banks, no match", chromedp.SendKeys(chromedp.ID("q"), "zzzz\r"), chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="bank"]`)))
			check("details", chromedp.Navigate(link("B", func(l *order.Link) { l.Country, l.Bank = "FR", "caisse-d-epargne" })), visible(`#iban`))
			check("details with errors",
				chromedp.SendKeys(chromedp.ID("iban"), "FR76 0000"),
				chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)), visible(`[data-testid="error-summary"]`))
			check("business login", chromedp.Navigate(link("C", func(l *order.Link) { l.Country, l.Bank = "DE", "hypovereinsbank" })), visible(`#psu_id`))
			check("summary", chromedp.Navigate(link("D", func(l *order.Link) { l.Country, l.Bank = "DE", "deutsche-bank" })), visible(`[data-testid="continue"]`))
			check("status, pending", chromedp.Navigate(strings.Replace(s.base+"/c/x", "x", tokenOf(t, ctx), 1)+"/return"), visible(`[data-testid="status"]`))
			check("status, final",
				chromedp.Navigate(link("E", func(l *order.Link) { l.Country, l.Bank = "DE", "deutsche-bank" })), visible(`[data-testid="continue"]`),
				chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)), visible(`button.approve`),
				chromedp.Click(chromedp.CSS(`button.approve`)), visible(`[data-testid="status"][data-kind="paid"]`))
			check("invalid link", chromedp.Navigate(strings.Replace(link("F", nil), "amount=1249.90", "amount=1.00", 1)), visible(`[data-testid="error-heading"]`))
			check("expired link", chromedp.Navigate(link("G", func(l *order.Link) { l.TTL = -time.Minute })), visible(`[data-testid="error-heading"]`))
			check("not found", chromedp.Navigate(s.base+"/c/forged"), visible(`[data-testid="error-heading"]`))
		})
	}
}

// tokenOf is the checkout token of the page the browser shows.
func tokenOf(t *testing.T, ctx context.Context) string {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(loc, "/c/")
	if !ok {
		t.Fatalf("not a checkout page: %s", loc)
	}
	token, _, _ := strings.Cut(rest, "/")
	token, _, _ = strings.Cut(token, "?")
	return token
}
