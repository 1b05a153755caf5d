package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/i18n"
)

// TestTheConsoleInPolishAndGreek is the owner of a Polish shop, then of a
// Greek one: they choose their language in the console's header and read
// the overview and the payments on a phone. The pages are in that language
// with its numbers, nothing scrolls sideways however long the words, and
// axe-core finds nothing. Screenshots at 390 and 1280 px.
func TestTheConsoleInPolishAndGreek(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	s := start(t, nil)

	// A shopper pays an order of 1249.90 €, so the pages have figures.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(demoOrderLink(t, s.base, "PL-1249", "pl", nil))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	payAtSandboxBank(t, client, s.base+res.Header.Get("Location"), nil)

	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	text := func(what, css string) string {
		t.Helper()
		return value(t, ctx, what, chromedp.Text(chromedp.CSS(css)))
	}
	lang := func() string {
		t.Helper()
		return value(t, ctx, "the page's language", chromedp.Evaluate[string](`document.documentElement.lang`))
	}

	do("sign in on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), s.consoleEmail), chromedp.SendKeys(chromedp.ID("password"), s.consolePassword+"\r"),
		visible(`[data-testid="funnel"]`))
	if got := lang(); got != "en" {
		t.Fatalf("a browser without a language preference reads the console in %q", got)
	}

	for _, tt := range []struct {
		lang, overview, payments, amount string
	}{
		{"pl", "Przegląd", "Płatności", "1\u00a0249,90\u00a0€"},
		{"el", "Επισκόπηση", "Πληρωμές", "1.249,90\u00a0€"},
	} {
		// The header's switcher takes them back to the page they were on.
		do("choose "+tt.lang, menu(), chromedp.SetValue(chromedp.ID("console-language"), tt.lang),
			chromedp.Click(chromedp.CSS(`[data-testid="language-switch"] button`)))
		until(t, ctx, "the overview in "+tt.lang, `document.documentElement.lang === "`+tt.lang+`" && document.readyState === "complete"`)
		do("see the overview", visible(`[data-testid="funnel"]`))
		if got := text("the overview's heading", "h1"); !strings.Contains(got, tt.overview) {
			t.Errorf("%s: the overview's heading reads %q", tt.lang, got)
		}
		checkConsolePage(t, ctx, axe, "overview-"+tt.lang)

		do("open the payments", chromedp.Navigate(s.base+"/console/payments"), visible(`[data-testid="payments"]`))
		if got := lang(); got != tt.lang {
			t.Errorf("the payments page after choosing %s is in %q", tt.lang, got)
		}
		if got := text("the payments' heading", "h1"); !strings.Contains(got, tt.payments) {
			t.Errorf("%s: the payments' heading reads %q", tt.lang, got)
		}
		if got := text("the payments", `[data-testid="payments"]`); !strings.Contains(got, tt.amount) {
			t.Errorf("%s: the payments do not write the amount as %q: %q", tt.lang, tt.amount, got)
		}
		checkConsolePage(t, ctx, axe, "payments-"+tt.lang)
		do("back to the overview", chromedp.Navigate(s.base+"/console"), visible(`[data-testid="funnel"]`))
	}
}

// TestTheConsolesHeaderFitsAPhoneInEveryLanguage: on a phone the header is
// the console's name and a Menu, at most 120 px high in every one of the
// 26 languages (the pages and the person's tools fold into the Menu, a
// disclosure that needs no script); at 1280 px it shows everything and
// keeps one height from page to page.
func TestTheConsolesHeaderFitsAPhoneInEveryLanguage(t *testing.T) {
	ctx := browser(t)
	s := start(t, nil)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	height := func() float64 {
		t.Helper()
		return value(t, ctx, "the header's height", chromedp.Evaluate[float64](`document.querySelector('[data-testid="console-header"]').getBoundingClientRect().height`))
	}
	do("sign in on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), s.consoleEmail), chromedp.SendKeys(chromedp.ID("password"), s.consolePassword+"\r"),
		visible(`[data-testid="funnel"]`))
	for _, choice := range i18n.StaffChoices() {
		if choice.Code != "en" {
			do("read the console in "+choice.Code, menu(), chromedp.SetValue(chromedp.ID("console-language"), choice.Code),
				click(`[data-testid="language-switch"] button`))
			until(t, ctx, "the overview in "+choice.Code, `document.documentElement.lang === "`+choice.Code+`" && document.readyState === "complete"`)
		}
		if h := height(); h > 120 {
			t.Errorf("%s: the header is %.0f px high on a 390 px phone, want at most 120", choice.Code, h)
		}
		// The Menu opens without a script: the pages and the sign-out.
		do("open the menu in "+choice.Code, menu(), visible(`[data-testid="sign-out"]`), visible(`nav a[href="/console/payments"]`))
	}
	do("back to English", menu(), chromedp.SetValue(chromedp.ID("console-language"), "en"), click(`[data-testid="language-switch"] button`))
	until(t, ctx, "the overview in English", `document.documentElement.lang === "en" && document.readyState === "complete"`)

	do("a desktop", chromedp.EmulateViewport(1280, 900))
	heights := map[string]float64{}
	for _, path := range []string{"/console", "/console/payments", "/console/webhooks", "/console/team?merchant=demo", "/console/settings?merchant=demo",
		"/console/branding?merchant=demo", "/console/developers?merchant=demo", "/console/audit", "/console/merchants", "/console/account"} {
		do("open "+path, chromedp.Navigate(s.base+path), visible(`[data-testid="sign-out"]`))
		heights[path] = height()
	}
	first := heights["/console"]
	for path, h := range heights {
		if h != first {
			t.Errorf("at 1280 px the header is %.0f px on %s and %.0f px on the overview: %v", h, path, first, heights)
			break
		}
	}
}
