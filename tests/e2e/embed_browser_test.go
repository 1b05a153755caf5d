package e2e

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

const embedSecret = "a-long-random-secret-for-the-embed-shop"

// merchantSite is a shop on its own site that embeds the picker: its home
// page frames a signed link, /done is its return page, checking the way back.
func merchantSite(t *testing.T, link func() string, picker func() string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Shop</title></head><body>
<h1>Checkout</h1>
<div id="basket" style="height:300px">Your basket</div>
<iframe id="paybybank" src="%s" title="Pay by bank" style="width:100%%;border:0"></iframe>
<script src="%s/static/embed.js" data-frame="paybybank"></script>
</body></html>`, html.EscapeString(link()), html.EscapeString(picker()))
	})
	mux.HandleFunc("GET /done", func(w http.ResponseWriter, r *http.Request) {
		verdict := "forged"
		if order.VerifyWayBack(embedSecret, r.URL.Query()) {
			verdict = "verified"
		}
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Done</title></head><body><p id="verdict">%s</p><p id="status">%s</p></body></html>`,
			verdict, html.EscapeString(r.URL.Query().Get("status")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestEmbeddedCheckoutWithThirdPartyCookiesBlocked: a shop on
// http://127.0.0.1:A frames the picker served from http://localhost:B (another
// site). The shopper pays inside the frame with third-party cookies blocked,
// the bank step and the way back happen at top level, and the shop verifies
// the result. A page of an origin not on the shop's list cannot frame it.
func TestEmbeddedCheckoutWithThirdPartyCookiesBlocked(t *testing.T) {
	ctx := browser(t)
	s, shop, evil, newLink := embedding(t)
	newLink("E-1")
	do := func(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	read := func(ctx context.Context, action chromedp.Action[string]) string {
		t.Helper()
		v := value(t, ctx, "the page", action)
		return strings.TrimSpace(v)
	}

	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCookieControls, network.SetCookieControlsParams{EnableThirdPartyCookieRestriction: true}); err != nil {
		t.Fatal(err)
	}
	do(ctx, "open the shop", chromedp.Navigate(shop.URL+"/"), chromedp.WaitVisible(chromedp.ID("paybybank")))
	frame := frameOf(t, ctx, s.base)

	// Third-party cookies are really blocked in the frame: an unpartitioned
	// SameSite=None cookie does not stick.
	do(frame, "wait for the country page", chromedp.WaitVisible(chromedp.CSS(`[data-code="FR"]`)))
	stuck, err := chromedp.Run(frame, chromedp.Evaluate[bool](`document.cookie = "probe=1; SameSite=None; Secure; Path=/"; document.cookie.includes("probe=1")`))
	if err != nil || stuck {
		t.Fatalf("third-party cookies are not blocked in the frame (stuck=%v, %v)", stuck, err)
	}
	// embed.js sized the frame to the picker's content.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`parseInt(document.getElementById("paybybank").style.height) > 300`, chromedp.WithPollingTimeout(stepLimit))); err != nil {
		t.Errorf("embed.js did not size the iframe: %v", err)
	}

	do(frame, "pick France", chromedp.Click(chromedp.CSS(`[data-code="FR"]`)), chromedp.WaitVisible(chromedp.ID("q")))
	// Filled and sent, not typed: see TestEmbeddedOnAPhone.
	do(frame, "search", chromedp.SetValue(chromedp.ID("q"), "credit agri"), chromedp.Submit(chromedp.ID("q")),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-id="bnp-paribas"]`)))
	do(frame, "pick the bank", chromedp.Click(chromedp.CSS(`[data-id="credit-agricole"]`)), chromedp.WaitVisible(chromedp.ID("iban")))
	// Filled, not typed: see TestEmbeddedOnAPhone.
	do(frame, "fill in and continue",
		chromedp.SetValue(chromedp.ID("name"), "Jean Dupont"),
		chromedp.SetValue(chromedp.ID("iban"), "FR76 3000 6000 0112 3456 7890 189"),
		chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)))

	// The bank step is at top level: banks refuse to be framed.
	do(ctx, "reach the bank at top level", chromedp.WaitVisible(chromedp.CSS(`button.approve`)))
	if loc := read(ctx, chromedp.Location()); !strings.HasPrefix(loc, s.base+"/sandbox/checkout/") {
		t.Errorf("the bank page is at %s, want the top window at the provider", loc)
	}
	do(ctx, "approve and see paid",
		chromedp.Click(chromedp.CSS(`button.approve`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"][data-kind="paid"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="way-back"]`)),
		chromedp.WaitVisible(chromedp.ID("verdict")))
	loc, _ := url.Parse(read(ctx, chromedp.Location()))
	if loc.Scheme+"://"+loc.Host != shop.URL || loc.Path != "/done" {
		t.Errorf("the shopper ended at %s, want the shop's return page at top level", loc)
	}
	if v := read(ctx, chromedp.Text(chromedp.ID("verdict"))); v != "verified" || !order.VerifyWayBack(embedSecret, loc.Query()) {
		t.Errorf("the shop's verdict is %q for %s", v, loc)
	}
	if st := read(ctx, chromedp.Text(chromedp.ID("status"))); st != "COMPLETED" {
		t.Errorf("the shop got status %q", st)
	}

	// Another origin, not on the shop's list, cannot frame the picker.
	do(ctx, "open a page of another origin", chromedp.Navigate(evil.URL+"/"), chromedp.WaitVisible(chromedp.ID("paybybank")))
	// The browser refuses to show the picker there: the frame holds the
	// browser's error page, never the country list the shop's frame showed.
	blocked := frameOf(t, ctx, s.base)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		shown, err := chromedp.Run(blocked, chromedp.Evaluate[bool](`document.querySelector('[data-testid="countries"]') !== null`))
		if err == nil && shown {
			t.Fatalf("the picker shows its country list in a frame of %s", evil.URL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if loc, err := chromedp.Run(blocked, chromedp.Location()); err != nil || !strings.HasPrefix(loc, "chrome-error:") {
		t.Errorf("the refused frame is at %q (%v), want the browser's error page", loc, err)
	}
}

// embedding starts the picker with one merchant, a shop on another site
// that frames it, and a page of yet another origin that tries to; newLink
// signs a link of the shop for an order.
func embedding(t *testing.T) (s server, shop, evil *httptest.Server, newLink func(id string) string) {
	t.Helper()
	var base, link string
	shop = merchantSite(t, func() string { return link }, func() string { return base })
	evil = merchantSite(t, func() string { return link }, func() string { return base })

	file := filepath.Join(t.TempDir(), "merchants.json")
	merchants := fmt.Sprintf(`{"merchants":[{"id":"shop","name":"Embedding Shop",
		"link_keys":{"2026-11":%q},"api_token":"shop-api-token-00000000000000000000",
		"return_origins":[%q],"frame_ancestors":[%q]}]}`, embedSecret, shop.URL, shop.URL)
	if err := os.WriteFile(file, []byte(merchants), 0o600); err != nil {
		t.Fatal(err)
	}
	s = start(t, map[string]string{"MERCHANTS_FILE": file, "SANDBOX_SETTLE_DELAY": "1s"})
	base = s.base
	dir, err := merchant.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := dir.Get("shop")
	if u, _ := url.Parse(shop.URL); !strings.HasPrefix(u.Host, "127.0.0.1:") || !strings.HasPrefix(s.base, "http://localhost:") {
		t.Fatalf("the shop (%s) and the picker (%s) must be on different sites", shop.URL, s.base)
	}
	return s, shop, evil, func(id string) string {
		l := order.Link{Order: order.Order{ID: id, Amount: "12.50", Currency: "EUR", ReturnURL: shop.URL + "/done", KID: "2026-11"}, TTL: time.Hour}
		u, err := l.URL(s.base, m, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// The shop's page frames the newest link.
		link = u
		return u
	}
}

// frameOf attaches to the cross-site iframe whose document is on base.
func frameOf(t *testing.T, ctx context.Context, base string) context.Context {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, base) {
				frame, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return frame
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no iframe on %s appeared", base)
	return nil
}

// TestEmbeddedOnAPhone: on a 390 px phone, the frame takes its content's
// height at every step (shrinking too), choosing a country after scrolling
// down the list brings the next step's top into view, and a typo in the
// details is answered inside the frame, the shop's page staying in place.
func TestEmbeddedOnAPhone(t *testing.T) {
	ctx := browser(t)
	s, shop, _, newLink := embedding(t)
	newLink("P-1")
	do := func(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	do(ctx, "open the shop on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(shop.URL+"/"), chromedp.WaitVisible(chromedp.ID("paybybank")))
	frame := frameOf(t, ctx, s.base)
	fits := func(step string) {
		t.Helper()
		var content, framed float64
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			content, _ = chromedp.Run(frame, chromedp.Evaluate[float64](`document.body.getBoundingClientRect().height`))
			framed, _ = chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("paybybank").getBoundingClientRect().height`))
			if content > 0 && framed-content <= 50 && content-framed <= 50 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("%s: the frame is %.0f px tall for %.0f px of content", step, framed, content)
	}
	topInView := func(step string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const r = document.getElementById("paybybank").getBoundingClientRect(); return r.top > -2 && r.top < innerHeight / 2; })()`,
			chromedp.WithPollingTimeout(stepLimit))); err != nil {
			top, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById("paybybank").getBoundingClientRect().top`))
			t.Errorf("%s: the frame's top is at %.0f px, out of view", step, top)
		}
	}

	do(frame, "the country list", chromedp.WaitVisible(chromedp.CSS(`[data-code="FR"]`)))
	fits("countries")
	// The shopper scrolls down the long list and picks a country there.
	js := func(ctx context.Context, step, script string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script+"; true")); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	js(ctx, "scroll to the list's end", `window.scrollTo(0, document.body.scrollHeight)`)
	js(frame, "pick France", `document.querySelector('[data-code="FR"]').click()`)
	do(frame, "the bank list", chromedp.WaitVisible(chromedp.ID("q")))
	topInView("after choosing a country")
	fits("banks")

	js(ctx, "scroll to the list's end", `window.scrollTo(0, document.body.scrollHeight)`)
	js(frame, "pick a bank", `document.querySelector('[data-id="credit-agricole"]').click()`)
	do(frame, "the details form", chromedp.WaitVisible(chromedp.ID("iban")))
	topInView("after choosing a bank")
	fits("details")
	// The fields are filled, not typed key by key: keystrokes sent into a
	// frame of another origin were once seen to stop after the first one
	// on a loaded machine (1 run in 5 under -race), while what is tested
	// here is the answer to what was sent.
	do(frame, "a typo in the IBAN",
		chromedp.SetValue(chromedp.ID("name"), "Jean Dupont"),
		chromedp.SetValue(chromedp.ID("iban"), "FR76 3000 6000 0112 3456 7890 188"),
		chromedp.Click(chromedp.CSS(`[data-testid="continue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`)))
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != shop.URL+"/" {
		t.Errorf("after a typo the window shows %q (%v), want the shop's page", loc, err)
	}
	if v, _ := chromedp.Run(frame, chromedp.Value(chromedp.ID("name"))); v != "Jean Dupont" {
		t.Errorf("the name typed is now %q", v)
	}
	fits("details with errors")
}
