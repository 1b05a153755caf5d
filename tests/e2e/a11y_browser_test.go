package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/i18n"
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
	value(t, ctx, "axe-core injected", chromedp.Evaluate[bool](axe+";true"))
	raw := value(t, ctx, "what axe-core finds", chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}})
		.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + " :: " + n.failureSummary)}))))`, chromedp.EvalAwaitPromise))
	var found []violation
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatal(err)
	}
	return found
}

// TestShopperPagesHaveNoAccessibilityViolations runs axe-core on every
// shopper page in every language, and in English in the looks of the theme
// tests' merchants.
func TestShopperPagesHaveNoAccessibilityViolations(t *testing.T) {
	axe := loadAxe(t)
	// 26 languages of 17 pages: about six seconds a language.
	ctx := browser(t)
	// Germany lists 2,000 banks, in ranges by name.
	s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms", "SANDBOX_COUNTRY_BANKS": "DE:2000"})
	for _, choice := range i18n.Choices {
		lang := choice.Code
		t.Run(lang, func(t *testing.T) {
			auditShopperPages(t, ctx, axe, s.base, func(id string, change func(*order.Link)) string {
				return demoOrderLink(t, s.base, id+"-"+lang, lang, change)
			})
		})
	}
}

// TestThemedPagesHaveNoAccessibilityViolations runs axe-core on every
// shopper page in the looks of the theme tests' merchants (a dark page, a
// yellow primary colour, square corners).
func TestThemedPagesHaveNoAccessibilityViolations(t *testing.T) {
	axe := loadAxe(t)
	ctx := browser(t)
	s, dir := startThemed(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms", "SANDBOX_COUNTRY_BANKS": "DE:2000"})
	for _, th := range testThemes {
		t.Run(th.id, func(t *testing.T) {
			m, _ := dir.Get(th.id)
			auditShopperPages(t, ctx, axe, s.base, func(id string, change func(*order.Link)) string {
				l := order.Link{Order: order.Order{ID: id + "-" + th.id, Amount: "1249.90", Currency: "EUR",
					ReturnURL: "https://shop.example/done", KID: "k"}, TTL: time.Hour}
				if change != nil {
					change(&l)
				}
				u, err := l.URL(s.base, m, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				return u
			})
		})
	}
}

// auditShopperPages walks every shopper page of checkouts made by link and
// runs axe-core on each.
func auditShopperPages(t *testing.T, ctx context.Context, axe, base string, link func(id string, change func(*order.Link)) string) {
	t.Helper()
	check := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, name, actions...)
		for _, v := range audit(t, ctx, axe) {
			t.Errorf("%s: %s (%s): %s\n\t%s", name, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
		}
	}
	bank := func(id, country, bank string) string {
		return link(id, func(l *order.Link) { l.Country, l.Bank = country, bank })
	}

	check("country", chromedp.Navigate(link("A", nil)), visible(`[data-code="FR"]`))
	check("banks", click(`[data-code="FR"]`), visible(`#q`))
	check("banks, no match", chromedp.SendKeys(chromedp.ID("q"), "zzzz\r"), chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="bank"]`)))
	check("banks, listed elsewhere", chromedp.Navigate(link("A2", func(l *order.Link) { l.Country = "DE" })), visible(`#q`),
		chromedp.SendKeys(chromedp.ID("q"), "Société Générale"), visible(`[data-testid="elsewhere"]`))
	check("details", chromedp.Navigate(bank("B", "FR", "caisse-d-epargne")), chromedp.WaitVisible(chromedp.ID("iban")))
	check("details with errors",
		chromedp.SendKeys(chromedp.ID("iban"), "FR76 0000"),
		click(`[data-testid="continue"]`), visible(`[data-testid="error-summary"]`))
	check("business login", chromedp.Navigate(bank("C", "DE", "hypovereinsbank")), chromedp.WaitVisible(chromedp.ID("psu_id")))
	check("summary", chromedp.Navigate(bank("D", "DE", "deutsche-bank")), visible(`[data-testid="continue"]`))
	check("status, pending", chromedp.Navigate(base+"/c/"+tokenOf(t, ctx)+"/return"), visible(`[data-testid="status"]`))
	check("status, paid, counting down",
		chromedp.Navigate(bank("E", "DE", "deutsche-bank")), visible(`[data-testid="continue"]`),
		click(`[data-testid="continue"]`), visible(`button.approve`),
		click(`button.approve`), visible(`[data-testid="status"][data-kind="paid"]`), visible(`[data-testid="countdown"]`))
	check("status, cancelled",
		chromedp.Navigate(bank("E2", "DE", "deutsche-bank")), visible(`[data-testid="continue"]`),
		click(`[data-testid="continue"]`), visible(`button.reject`),
		click(`button.reject`), visible(`[data-testid="status"][data-kind="canceled"]`))
	// The way to the bank from a merchant's frame, shown here at top level.
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Checkout-Frame": "1"}}); err != nil {
		t.Fatal(err)
	}
	check("to the bank",
		chromedp.Navigate(bank("E3", "DE", "deutsche-bank")), visible(`[data-testid="continue"]`),
		click(`[data-testid="continue"]`), visible(`[data-testid="to-bank"]`))
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{}}); err != nil {
		t.Fatal(err)
	}
	check("banks, 2,000 in ranges", chromedp.Navigate(link("H", func(l *order.Link) { l.Country = "DE" })), visible(`[data-testid="ranges"]`))
	check("banks, a later range", click(`[data-testid="ranges"] li:nth-child(5) a`), visible(`[data-testid="ranges"] [aria-current="page"]`))
	check("pay on a phone", chromedp.Navigate(base+"/c/"+tokenOf(t, ctx)+"/phone?country=DE"), visible(`[data-testid="qr"]`))
	check("invalid link", chromedp.Navigate(strings.Replace(link("F", nil), "amount=1249.90", "amount=1.00", 1)), visible(`[data-testid="error-heading"]`))
	check("expired link", chromedp.Navigate(link("G", func(l *order.Link) { l.TTL = -time.Minute })), visible(`[data-testid="error-heading"]`))
	check("not found", chromedp.Navigate(base+"/c/forged"), visible(`[data-testid="error-heading"]`))
	check("phone code expired", chromedp.Navigate(base+"/p/AAAAAAAAAAAA"), visible(`[data-testid="error-heading"]`))
}

// tokenOf is the checkout token of the page the browser shows.
func tokenOf(t *testing.T, ctx context.Context) string {
	t.Helper()
	loc := value(t, ctx, "the address", chromedp.Location())
	_, rest, ok := strings.Cut(loc, "/c/")
	if !ok {
		t.Fatalf("not a checkout page: %s", loc)
	}
	token, _, _ := strings.Cut(rest, "/")
	token, _, _ = strings.Cut(token, "?")
	return token
}
