package e2e

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// chromiumPath is Debian's Chromium, which CI installs.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium for one test, or skips the test where
// Chromium is not installed. Each step waits for what it needs (step,
// value) up to stepLimit, so that a slow machine only takes longer and a
// page that never comes fails by name; testLimit is a net under the whole
// test, far past what any machine needs.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("REQUIRE_CHROMIUM") != "" {
			t.Fatalf("REQUIRE_CHROMIUM is set but %s is missing: %v", chromiumPath, err)
		}
		t.Skipf("browser test skipped: %s not found; install it with `apt-get update && apt-get install -y chromium`", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(390, 844),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTest := context.WithTimeout(ctx, testLimit)
	t.Cleanup(func() { cancelTest(); cancelTab(); cancelAlloc() })
	// The first action starts Chromium, which lives as long as the
	// context of that action: the test's.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// stepLimit bounds one step of a browser test: far more than any page
// takes, so that only a page that never comes reaches it.
const stepLimit = time.Minute

// testLimit bounds a whole browser test, under the test command's own.
const testLimit = 10 * time.Minute

// visible waits until the first element css matches is shown.
func visible(css string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(css))
}

// menu opens the console's Menu where the header folds it away (a phone),
// as a person taps it; from 1024 px on everything is shown and it does
// nothing.
func menu() chromedp.Action[chromedp.Void] {
	tap := chromedp.Evaluate[bool](`(() => {
		const s = document.querySelector('[data-testid="console-menu"]:not([open]) > summary');
		if (s && getComputedStyle(s).display !== 'none') s.click();
		return true;
	})()`)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := tap(ctx, t)
		return chromedp.Void{}, err
	}
}

// click clicks the first element css matches.
func click(css string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(css)) }

// step runs a browser test's actions (navigations, clicks, waits) as one
// step named what. If they fail, or wait past stepLimit, the test fails
// saying which step, the address the browser is at and the text it shows.
func step(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	open(t, ctx)
	sctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, shows(ctx))
	}
}

// open makes sure the tab of ctx (a phone's, a frame's) is open before a
// step runs in it: a tab opened by a step's action would close with the
// step's deadline. Once open, this does nothing.
func open(t testing.TB, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
}

// value reads something of the page (a text, an evaluation) within
// stepLimit; a read that fails fails the test as step does.
func value[T any](t testing.TB, ctx context.Context, what string, action chromedp.Action[T]) T {
	t.Helper()
	open(t, ctx)
	sctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	v, err := chromedp.Run(sctx, action)
	if err != nil {
		t.Fatalf("reading %s: %v\n%s", what, err, shows(ctx))
	}
	return v
}

// until waits for a script's condition to hold on the page, across
// navigations (which end a chromedp.Poll), up to stepLimit.
func until(t testing.TB, ctx context.Context, what, condition string) {
	t.Helper()
	open(t, ctx)
	deadline := time.Now().Add(stepLimit)
	for {
		read, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(read, chromedp.Evaluate[bool](condition))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s (%s; last error %v)\n%s", stepLimit, what, condition, err, shows(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shows says where the browser of ctx is and what its page says, for a
// failure's message; it reads with a deadline of its own, since the
// step's may be over.
func shows(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	at, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "the browser does not say where it is: " + err.Error()
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : "(no body yet)"`))
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 1500 {
		text = text[:1500] + " …"
	}
	return "the browser is at " + at + ", showing: " + text
}

// TestShopperPaysInABrowser walks the whole way of a checkout from
// the demo link a fresh start prints, with JavaScript and without.
func TestShopperPaysInABrowser(t *testing.T) {
	for _, js := range []bool{true, false} {
		name := "with JavaScript"
		if !js {
			name = "without JavaScript"
		}
		t.Run(name, func(t *testing.T) {
			ctx := browser(t)
			s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1s"})
			if !js {
				if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
					t.Fatal(err)
				}
			}
			do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				step(t, ctx, what, actions...)
			}
			read := func(action chromedp.Action[string]) string {
				t.Helper()
				v := value(t, ctx, "the page", action)
				return strings.TrimSpace(v)
			}

			// 1. Pick a country.
			do("open the demo link", chromedp.Navigate(s.demoLink), chromedp.WaitVisible(chromedp.CSS(`[data-code="FR"]`)))
			do("pick France", chromedp.Click(chromedp.CSS(`[data-code="FR"]`)), chromedp.WaitVisible(chromedp.ID("q")))

			// 2. Search "credit agri" and find "Crédit Agricole": as the
			// shopper types with script, on submit without.
			if js {
				do("type a search", chromedp.SendKeys(chromedp.ID("q"), "credit agri"),
					chromedp.WaitNotVisible(chromedp.CSS(`[data-id="bnp-paribas"]`)))
				if path := read(chromedp.Location()); strings.Contains(path, "q=") {
					t.Errorf("the script did not filter in place: the page went to %s", path)
				}
			} else {
				// With script off, typing filters nothing until the form is sent.
				do("type a search", chromedp.SendKeys(chromedp.ID("q"), "credit agri"))
				if n := read(chromedp.Text(chromedp.CSS(`[data-testid="count"]`))); strings.HasPrefix(n, "Matching") {
					t.Fatalf("the list was filtered with script off: %q", n)
				}
				do("send the search", chromedp.SendKeys(chromedp.ID("q"), "\r"),
					chromedp.WaitNotPresent(chromedp.CSS(`[data-id="bnp-paribas"]`)))
				if path := read(chromedp.Location()); !strings.Contains(path, "q=credit+agri") {
					t.Errorf("the search form did not send the query: %s", path)
				}
			}
			if count := read(chromedp.Text(chromedp.CSS(`[data-testid="count"]`))); !strings.HasPrefix(count, "Matching banks: 1 of") {
				t.Errorf("after searching, the count says %q", count)
			}
			if name := read(chromedp.Text(chromedp.CSS(`[data-id="credit-agricole"] [data-testid="bank-name"]`), chromedp.NodeVisible)); name != "Crédit Agricole" {
				t.Errorf("the search shows %q, want Crédit Agricole", name)
			}

			// 3. Pick a bank that has extraFields (name and IBAN).
			do("pick the bank", chromedp.Click(chromedp.CSS(`[data-id="credit-agricole"]`)), chromedp.WaitVisible(chromedp.ID("iban")))

			// 4. A bad IBAN: the error names the field, the name is kept.
			do("submit a bad IBAN",
				chromedp.SendKeys(chromedp.ID("name"), "Jean Dupont"),
				chromedp.SendKeys(chromedp.ID("iban"), "FR76 3000 6000 0112 3456 7890 188"),
				chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`)))
			if summary := read(chromedp.Text(chromedp.CSS(`[data-testid="error-summary"]`))); !strings.Contains(summary, "IBAN") {
				t.Errorf("the error summary says %q, want it to name the IBAN", summary)
			}
			if name := read(chromedp.Value(chromedp.ID("name"))); name != "Jean Dupont" {
				t.Errorf("the name field holds %q after the error, want it kept", name)
			}

			// 5. Fix it and land on the sandbox checkout.
			do("fix the IBAN",
				chromedp.SetValue(chromedp.ID("iban"), "FR76 3000 6000 0112 3456 7890 189"),
				chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)),
				chromedp.WaitVisible(chromedp.CSS(`button.approve`)))
			if location := read(chromedp.Location()); !strings.HasPrefix(location, s.base+"/sandbox/checkout/") {
				t.Errorf("after the details, the browser is at %s", location)
			}

			// 6. Approve, come back and see "paid" (the page refreshes itself).
			do("approve and see paid",
				chromedp.Click(chromedp.CSS(`button.approve`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"][data-kind="paid"]`)))
			if heading := read(chromedp.Text(chromedp.CSS(`[data-testid="status-heading"]`))); heading != "Paid" {
				t.Errorf("status heading %q", heading)
			}

			// 7. Back to the merchant, whose signature verifies: with script
			// after a visible countdown (which the shopper may stop), without
			// by the button.
			if js {
				do("see the countdown", chromedp.WaitVisible(chromedp.CSS(`[data-testid="countdown"]`)))
				do("stay", chromedp.Click(chromedp.CSS(`[data-testid="stay"]`)), chromedp.WaitNotVisible(chromedp.CSS(`[data-testid="countdown"]`)))
				stopped := read(chromedp.Text(chromedp.CSS(`[data-testid="countdown-seconds"]`)))
				time.Sleep(1500 * time.Millisecond)
				if now := read(chromedp.Text(chromedp.CSS(`[data-testid="countdown-seconds"]`))); now != stopped || !strings.HasPrefix(read(chromedp.Location()), s.base+"/c/") {
					t.Errorf("after Stay the countdown went on from %s to %s", stopped, now)
				}
				do("come back to the paid page and wait", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="countdown"]`)),
					chromedp.WaitVisible(chromedp.CSS(`[data-testid="shop-signature"]`)))
			} else {
				if visible := read(chromedp.Evaluate[string](`String(!document.querySelector('[data-testid="countdown"]').hidden)`)); visible != "false" {
					t.Error("a countdown shows without script, which cannot run it")
				}
				do("go back to the shop",
					chromedp.Click(chromedp.CSS(`[data-testid="way-back"]`)),
					chromedp.WaitVisible(chromedp.CSS(`[data-testid="shop-signature"]`)))
			}
			u, err := url.Parse(read(chromedp.Location()))
			if err != nil {
				t.Fatal(err)
			}
			if !order.VerifyWayBack(merchant.DemoSecret, u.Query()) || u.Query().Get("status") != "COMPLETED" {
				t.Errorf("the way back %s does not carry a verified COMPLETED", u)
			}
			status := read(chromedp.Text(chromedp.CSS(`[data-testid="shop-status"]`)))
			signature := read(chromedp.Text(chromedp.CSS(`[data-testid="shop-signature"]`)))
			if status != "COMPLETED" || signature != "verified" {
				t.Errorf("the shop shows status %q, signature %q", status, signature)
			}
		})
	}
}

// TestSearchAsYouTypeInALongList: in a country of 2,000 banks shown in
// ranges, typing finds a bank of any range without leaving the page or
// pressing a button, and a bank of another country says where it is listed.
func TestSearchAsYouTypeInALongList(t *testing.T) {
	ctx := browser(t)
	s := start(t, map[string]string{"SANDBOX_COUNTRY_BANKS": "DE:2000"})
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	do("open Germany", chromedp.Navigate(s.demoLink), chromedp.WaitVisible(chromedp.CSS(`[data-code="DE"]`)),
		chromedp.Click(chromedp.CSS(`[data-code="DE"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="ranges"]`)))
	page, _ := chromedp.Run(ctx, chromedp.Location())
	if shown, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-id="tomorrow-bank"]') !== null`)); shown {
		t.Fatal("Tomorrow Bank is on the first range already; the test needs a bank of a later one")
	}
	if visible, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector('[data-testid="search"] button').hidden`)); visible {
		t.Error("the Search button shows although the list filters as one types")
	}
	do("type a bank of a later range", chromedp.SendKeys(chromedp.ID("q"), "Tomorrow"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="banks"] [data-id="tomorrow-bank"]`)))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != page {
		t.Errorf("typing left the page for %s", loc)
	}
	value(t, ctx, "the search emptied", chromedp.Evaluate[bool](`document.getElementById("q").value = ""; true`))
	do("type a French bank", chromedp.SendKeys(chromedp.ID("q"), "Société Générale"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="elsewhere"] a[data-country="FR"]`)))
	do("follow it to France", chromedp.Click(chromedp.CSS(`[data-testid="elsewhere"] a[data-country="FR"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-id="societe-generale"]`)))
}

// TestFormerNamesFilterAsYouType: a whole list filtered in place finds a
// bank by a former name, written as the shopper would (a Greek final
// sigma, accents), and shows that name under the current one.
func TestFormerNamesFilterAsYouType(t *testing.T) {
	ctx := browser(t)
	s := start(t, nil)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	for _, tt := range []struct{ country, typed, id, other string }{
		{"FR", "Boursorama", "boursobank", "bnp-paribas"},
		{"GR", "Πειραιώς", "piraeus", "alpha-bank"},
	} {
		link := demoOrderLink(t, s.base, "K-"+tt.country, "en", func(l *order.Link) { l.Country = tt.country })
		do(tt.country+": open the list", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("q")))
		page, _ := chromedp.Run(ctx, chromedp.Location())
		do(tt.country+": type "+tt.typed, chromedp.SendKeys(chromedp.ID("q"), tt.typed),
			chromedp.WaitNotVisible(chromedp.CSS(`[data-testid="banks"] [data-id="`+tt.other+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="banks"] [data-id="`+tt.id+`"] [data-testid="known-as"]`)))
		if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != page {
			t.Errorf("%s: typing left the page for %s", tt.country, loc)
		}
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('[data-testid="banks"] li')].filter(li => !li.hidden).length`))
		if shown != 1 {
			t.Errorf("%s: %q leaves %d banks shown, want 1", tt.country, tt.typed, shown)
		}
	}
}

// TestTheFirstBankShowsHighOnAPhone: on a 390 x 844 phone the order's
// summary, the step and the search leave the banks most of the screen: the
// first bank starts in its top 40 %, on the bank page as on the way back to
// it after choosing another country.
func TestTheFirstBankShowsHighOnAPhone(t *testing.T) {
	ctx := browser(t)
	s := start(t, nil)
	for _, country := range []string{"FR", "DE"} {
		link := demoOrderLink(t, s.base, "P-2026-11-000"+country, "en", func(l *order.Link) { l.Country = country })
		step(t, ctx, country+": open the bank list on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(link),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="bank"]`)))
		top := value(t, ctx, "where the first bank starts", chromedp.Evaluate[float64](`document.querySelector('[data-testid="bank"]').getBoundingClientRect().top`))
		if top > 0.40*844 {
			t.Errorf("%s: the first bank starts %.0f px down a 844 px screen (%.0f %%)", country, top, 100*top/844)
		} else {
			t.Logf("%s: the first bank starts %.0f px down a 844 px screen (%.0f %%)", country, top, 100*top/844)
		}
	}
}

// TestPayOnThePhoneFromADesktop: on a desktop the bank page offers to go on
// on the phone; the phone (another browser context) opens the QR code's
// address and pays; the desktop's page shows Paid without a touch.
func TestPayOnThePhoneFromADesktop(t *testing.T) {
	desktop := browser(t)
	s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms"})
	do := func(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	link := demoOrderLink(t, s.base, "Q-1", "en", func(l *order.Link) { l.Country = "DE" })
	do(desktop, "open the bank list on a desktop", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="handoff"]`)))
	do(desktop, "continue on the phone", chromedp.Click(chromedp.CSS(`[data-testid="handoff"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="qr"] svg`)))
	attr, err := chromedp.Run(desktop, chromedp.AttributeValue(chromedp.CSS(`[data-testid="phone-url"]`), "href"))
	address := attr.Value
	if err != nil || address == "" {
		t.Fatalf("no address beside the QR code: %v", err)
	}

	phone, cancel := chromedp.NewContext(desktop, chromedp.WithNewBrowserContext())
	defer cancel()
	do(phone, "open the address on the phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(address),
		chromedp.WaitVisible(chromedp.CSS(`[data-id="deutsche-bank"]`)))
	if shown, _ := chromedp.Run(phone, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector('[data-testid="handoff"]')).display !== "none"`)); shown {
		t.Error("the phone offers to continue on a phone")
	}
	do(phone, "pay on the phone",
		chromedp.Click(chromedp.CSS(`[data-id="deutsche-bank"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="continue"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)), chromedp.WaitVisible(chromedp.CSS(`button.approve`)),
		chromedp.Click(chromedp.CSS(`button.approve`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"][data-kind="paid"]`)))
	do(desktop, "the desktop shows Paid", chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"][data-kind="paid"]`)))
}
