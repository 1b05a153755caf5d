package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/password"
)

// checkConsolePage holds the console page shown to what every page keeps:
// axe-core finds nothing, nothing scrolls sideways at 390 and 1280 px; and
// keeps a screenshot at each width, named after the page.
func checkConsolePage(t *testing.T, ctx context.Context, axe, name string) {
	t.Helper()
	if found := audit(t, ctx, axe); len(found) > 0 {
		t.Errorf("%s: axe-core finds %+v", name, found)
	}
	for _, width := range []int64{390, 1280} {
		step(t, ctx, "resize", chromedp.EmulateViewport(width, 900))
		overflow := value(t, ctx, "how far the page scrolls sideways", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
		if overflow > 0 {
			wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(-3).map(e => e.tagName + '.' + e.className).join(' | ')`))
			t.Errorf("%s scrolls sideways by %d px at %d px: %s", name, overflow, width, wide)
		}
		if broken := value(t, ctx, "the words broken across lines", chromedp.Evaluate[[]string](brokenWords)); len(broken) > 0 {
			t.Errorf("%s at %d px breaks words inside themselves: %q", name, width, broken)
		}
		shot := value(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
		artifact(t, fmt.Sprintf("console-%s-%d.png", name, width), shot)
	}
	step(t, ctx, "back to a phone", chromedp.EmulateViewport(390, 844))
}

// brokenWords lists the words of the page's main content that the browser
// laid out over more than one line: a name, a time, a role or a code cut
// in two ("design|er", "16:2|5:49"). Words longer than 40 characters
// (tokens, addresses, secrets) may break: they fit no phone otherwise.
const brokenWords = `(() => {
	const broken = [];
	const main = document.querySelector('main');
	if (!main) return broken;
	const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
	while (walker.nextNode()) {
		const node = walker.currentNode;
		// A chart's labels are laid out glyph by glyph, turned; what is
		// hidden (a closed disclosure) is laid out nowhere.
		if (node.parentElement.closest('svg') || !node.parentElement.checkVisibility()) continue;
		const words = /\S+/g;
		let m;
		while ((m = words.exec(node.data))) {
			if (m[0].length > 40) continue;
			const range = document.createRange();
			range.setStart(node, m.index);
			range.setEnd(node, m.index + m[0].length);
			const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
			if (lines.size > 1) broken.push(m[0]);
		}
	}
	return broken;
})()`

// TestTheConsoleInABrowser is a support agent's morning: a shopper paid;
// the agent signs in, finds the order by its id, redelivers its event and
// sends the endpoint a test event, with the keyboard and the mouse. Every
// console page is screenshot at 390 and 1280 px and checked by axe-core.
func TestTheConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	var received atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	const email, pw = "support@demo.example", "a long console password"
	hash, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	merchants := fmt.Sprintf(`{"merchants":[{"id":%q,"name":"Demo Shop","link_keys":{%q:%q},
		"api_token":"demo-api-token-of-the-console-browser-test","return_origins":["https://shop.example"],
		"webhook_url":%q,"webhook_secret":"a-long-random-webhook-secret-for-the-test",
		"console_users":[{"email":%q,"password_hash":%q}]}]}`,
		merchant.DemoID, merchant.DemoKID, merchant.DemoSecret, hook.URL, email, hash)
	if err := os.WriteFile(file, []byte(merchants), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, map[string]string{"MERCHANTS_FILE": file, "SANDBOX_SETTLE_DELAY": "1h"})

	// A shopper pays order C-1 at the sandbox's Deutsche Bank.
	orderID := fmt.Sprintf("C-%d", time.Now().UnixNano()%100000)
	link := demoOrderLink(t, s.base, orderID, "en", func(l *order.Link) {
		l.Country, l.Bank, l.ReturnURL = "DE", "deutsche-bank", "https://shop.example/done"
	})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	do("pay", chromedp.Navigate(link), visible(`[data-testid="continue"]`), click(`[data-testid="continue"]`),
		visible(`button.approve`), click(`button.leave`), visible(`[data-testid="status"]`))

	check := func(name string) {
		t.Helper()
		checkConsolePage(t, ctx, axe, name)
	}

	// Sign in, with a wrong password first.
	do("open the console", chromedp.Navigate(s.base+"/console"), chromedp.WaitVisible(chromedp.ID("email")))
	check("login")
	do("a wrong password", chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), "wrong password!"),
		click(`[data-testid="sign-in"]`), visible(`[data-testid="login-error"]`))
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("email"))); got != email {
		t.Errorf("after a refusal the e-mail field holds %q", got)
	}
	do("sign in with the keyboard", chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(`[data-testid="funnel"]`))
	check("overview")

	// Find the order by the start of its id.
	do("search", chromedp.Navigate(s.base+"/console/payments"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.SendKeys(chromedp.ID("q"), orderID[:4]), click(`[data-testid="apply"]`))
	// The list shows before the filter too: wait for the filtered page.
	until(t, ctx, "the filtered list", `location.search.includes("q=") && document.readyState === "complete"`)
	do("see the filtered list", visible(`[data-testid="payments"]`))
	check("payments")
	do("open the order", click(`[data-testid="order-link"]`), visible(`[data-testid="order-heading"]`))
	if h, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="order-heading"]`))); h != "Order "+orderID {
		t.Errorf("the order page is %q", h)
	}
	check("order")

	// Redeliver its first event: a new try, shown on the page after.
	before := received.Load()
	do("redeliver", click(`[data-testid="redeliver"]`), visible(`[data-testid="notice"]`))
	if notice, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="notice"]`))); !strings.Contains(notice, "HTTP 204") {
		t.Errorf("after Redeliver the page says %q", notice)
	}
	if received.Load() <= before {
		t.Error("the endpoint received nothing on Redeliver")
	}

	// Send a test event.
	do("webhooks", menu(), click(`a[href="/console/webhooks"]`), visible(`[data-testid="send-test"]`))
	do("send a test event", click(`[data-testid="send-test"]`), visible(`[data-testid="test-result"]`))
	if result, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="test-result"]`))); !strings.Contains(result, "took the test event: HTTP 204") {
		t.Errorf("the test event's result reads %q", result)
	}
	check("webhooks")

	// Sign out.
	do("sign out", menu(), click(`[data-testid="sign-out"]`), chromedp.WaitVisible(chromedp.ID("email")))
	do("the console is closed", chromedp.Navigate(s.base+"/console/payments"), chromedp.WaitVisible(chromedp.ID("email")))
}

// TestTheSettingsPagesInABrowser is an operator's first day on a
// deployment whose merchants file holds one shop: they make a second shop
// in the console, correct a mistyped origin, copy its secrets, disable it
// and read the audit log. Each page is checked by axe-core and kept as a
// screenshot at 390 and 1280 px.
func TestTheSettingsPagesInABrowser(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	const email, pw = "root@psp.example", "a long operator password"
	hash, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	merchants := fmt.Sprintf(`{"merchants":[{"id":%q,"name":"Demo Shop","link_keys":{%q:%q},
		"api_token":"demo-api-token-of-the-settings-browser-test","return_origins":["https://shop.example"]}],
		"operators":[{"email":%q,"password_hash":%q}]}`, merchant.DemoID, merchant.DemoKID, merchant.DemoSecret, email, hash)
	if err := os.WriteFile(file, []byte(merchants), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, map[string]string{"MERCHANTS_FILE": file})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	text := func(what, css string) string {
		t.Helper()
		return value(t, ctx, what, chromedp.Text(chromedp.CSS(css)))
	}
	check := func(name string) {
		t.Helper()
		checkConsolePage(t, ctx, axe, name)
	}

	do("sign in", chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"), visible(`[data-testid="funnel"]`))
	do("open Merchants", menu(), click(`a[href="/console/merchants"]`), visible(`[data-testid="merchants"]`))
	if got := text("the demo shop's manager", `[data-merchant="demo"] [data-testid="merchant-managed"]`); got != "managed by the merchants file" {
		t.Errorf("the file's merchant shows as %q", got)
	}
	do("type a new shop with a mistyped origin", chromedp.SendKeys(chromedp.ID("id"), "shop2"), chromedp.SendKeys(chromedp.ID("name"), "Second Shop"),
		chromedp.SendKeys(chromedp.ID("return_origins"), "https://second.example/checkout"), click(`[data-testid="create-merchant"]`),
		visible(`#return_origins-error`))
	if got := value(t, ctx, "the name kept", chromedp.Value(chromedp.ID("name"))); got != "Second Shop" {
		t.Errorf("after a refusal the name holds %q", got)
	}
	check("merchants-error")
	do("correct the origin", chromedp.Clear(chromedp.ID("return_origins")), chromedp.SendKeys(chromedp.ID("return_origins"), "https://second.example"),
		click(`[data-testid="create-merchant"]`), visible(`[data-testid="new-token"]`))
	if token := text("the new token", `[data-testid="new-token"]`); !strings.HasPrefix(token, "pbb_test_") {
		t.Errorf("the new token reads %q", token)
	}
	check("merchants-created")
	do("disable it", click(`[data-merchant="shop2"] [data-testid="disable"]`), visible(`[data-testid="confirm"]`))
	check("confirm-disable")
	do("say yes", click(`[data-testid="confirm-yes"]`), visible(`[data-merchant="shop2"] [data-testid="enable"]`))
	do("its settings", click(`[data-merchant="shop2"] a`), visible(`[data-testid="settings-form"]`))
	check("settings")
	do("the audit log", menu(), click(`a[href="/console/audit"]`), visible(`[data-testid="audit"]`))
	if got := text("the newest change", `[data-testid="audit-row"] [data-testid="audit-action"]`); got != email+" disabled the merchant." {
		t.Errorf("the audit log's newest line is %q", got)
	}
	check("audit")
}

// TestATeamInABrowser is an owner's new colleague: the owner invites a
// designer, who accepts, sets up two-step sign-in with a code this test
// computes as an authenticator would, signs out and signs in again with
// a code. Every new page is checked by axe-core and kept as a screenshot
// at 390 and 1280 px.
func TestATeamInABrowser(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	s := start(t, nil) // sandbox mode: the demo sign-in is the demo shop's owner
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	text := func(what, css string) string {
		t.Helper()
		return value(t, ctx, what, chromedp.Text(chromedp.CSS(css)))
	}
	check := func(name string) {
		t.Helper()
		checkConsolePage(t, ctx, axe, name)
	}
	signIn := func(email, pw string) {
		t.Helper()
		do("sign in as "+email, chromedp.Navigate(s.base+"/console/login"), visible(`[data-testid="sign-in"]`),
			chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pw+"\r"))
	}

	// What an action made and is shown once is in sight: in the first
	// screenful of the page that follows, with the focus on it, saying how
	// it is kept; its Copy button copies it.
	inSight := func(what, kept string) {
		t.Helper()
		top := value(t, ctx, "where the one-time panel is", chromedp.Evaluate[float64](`document.querySelector('[data-testid="one-time"]').getBoundingClientRect().top`))
		screen := value(t, ctx, "the screen's height", chromedp.Evaluate[float64](`window.innerHeight`))
		focused := value(t, ctx, "what has the focus", chromedp.Evaluate[string](`document.activeElement.dataset.testid || document.activeElement.tagName`))
		if top < 0 || top > screen-80 || focused != "one-time" {
			t.Errorf("%s: the one-time panel starts %.0f px down a %.0f px screen, the focus on %q", what, top, screen, focused)
		}
		if said := text("the panel's words", `[data-testid="one-time"]`); !strings.Contains(said, kept) {
			t.Errorf("%s: the panel says %q, want it kept %q", what, said, kept)
		}
		do("copy it", visible(`[data-testid="one-time"] button[data-copy]`), click(`[data-testid="one-time"] button[data-copy]`))
		// Where the browser grants the clipboard it says Copied; where not
		// (a headless browser may refuse), the value is selected for the
		// keyboard's copy.
		copied := value(t, ctx, "what the Copy button did", chromedp.Evaluate[bool](`(() => {
			const b = document.querySelector('[data-testid="one-time"] button[data-copy]');
			const v = document.getElementById(b.dataset.copy);
			const said = document.getElementById(b.dataset.copy + '-copied').textContent;
			return said === b.dataset.copied || getSelection().toString().trim() === v.innerText.trim();
		})()`))
		if !copied {
			t.Errorf("%s: the Copy button neither copied nor selected the value", what)
		}
	}

	signIn(s.consoleEmail, s.consolePassword)
	do("the overview", visible(`[data-testid="funnel"]`))
	do("open the team", chromedp.Navigate(s.base+"/console/team?merchant=demo"), visible(`[data-testid="invite-form"]`))
	do("invite a designer", chromedp.SendKeys(chromedp.ID("email"), "dana@demo.example"),
		chromedp.SetValue(chromedp.ID("role"), "designer"), click(`[data-testid="send-invite"]`), visible(`[data-testid="invite-link"]`))
	link := text("the invitation link", `[data-testid="invite-link"]`)
	if !strings.HasPrefix(link, s.base+"/console/invite/") {
		t.Fatalf("the invitation link is %q", link)
	}
	inSight("the invitation", "only a hash")
	check("team")
	do("the developers page", chromedp.Navigate(s.base+"/console/developers?merchant=demo"), visible(`[data-testid="webhook-form"]`),
		click(`[data-testid="make-token"]`), visible(`#name-error`))
	do("make a token", chromedp.SendKeys(chromedp.ID("name"), "shop server"), click(`[data-testid="make-token"]`), visible(`[data-testid="new-token"]`))
	inSight("the token", "only a hash")
	if token := text("the new token", `[data-testid="new-token"]`); !strings.HasPrefix(token, "pbb_test_") {
		t.Errorf("the new token reads %q", token)
	}
	check("developers")
	// Pages here have an e-mail field too: wait for the sign-in button.
	do("the owner signs out", menu(), click(`[data-testid="sign-out"]`), visible(`[data-testid="sign-in"]`))

	const pw = "dana's long design password"
	do("open the invitation", chromedp.Navigate(link), visible(`[data-testid="join"]`))
	check("invitation")
	do("join", chromedp.SendKeys(chromedp.ID("password"), pw), chromedp.SendKeys(chromedp.ID("password_again"), pw),
		click(`[data-testid="join"]`), visible(`[data-testid="funnel"]`))
	do("open the menu", menu(), visible(`[data-testid="console-user"]`))
	if who := text("who is signed in", `[data-testid="console-user"]`); !strings.Contains(who, "designer") {
		t.Errorf("after joining the header says %q", who)
	}
	if n := value(t, ctx, "the team in the menu", chromedp.Evaluate[int](`document.querySelectorAll('nav a[href="/console/team"]').length`)); n != 0 {
		t.Error("a designer is shown the Team section")
	}

	// A session alone sets up no authenticator: Dana's password first.
	do("set up two-step sign-in", menu(), click(`[data-testid="account-link"]`), visible(`[data-testid="begin-two-step"]`),
		chromedp.SendKeys(chromedp.ID("twostep_password"), pw), click(`[data-testid="begin-two-step"]`), visible(`[data-testid="totp-secret"]`))
	check("two-step-setup")
	secret := text("the secret", `[data-testid="totp-secret"]`)
	first := time.Now()
	code, err := totp.GenerateCode(secret, first)
	if err != nil {
		t.Fatal(err)
	}
	do("confirm with a code", chromedp.SendKeys(chromedp.ID("code"), code), click(`[data-testid="confirm-two-step"]`), visible(`[data-testid="recovery-codes"]`))
	if n := value(t, ctx, "the recovery codes", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="recovery-codes"] li').length`)); n != 10 {
		t.Errorf("%d recovery codes shown, want 10", n)
	}
	check("recovery-codes")
	do("sign out", menu(), click(`[data-testid="sign-out"]`), visible(`[data-testid="sign-in"]`))

	signIn("dana@demo.example", pw)
	do("the code step", visible(`[data-testid="check-code"]`))
	check("code-step")
	// The code that confirmed was taken: an authenticator shows the next
	// one when its 30 seconds begin.
	for time.Now().Unix()/30 <= first.Unix()/30 {
		time.Sleep(100 * time.Millisecond)
	}
	code, err = totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do("sign in with the code", chromedp.SendKeys(chromedp.ID("code"), code), click(`[data-testid="check-code"]`), visible(`[data-testid="funnel"]`))
}
