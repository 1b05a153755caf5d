package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/settings"
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

// TestTheConsoleInPolishForAnOwnerADesignerAndAnOperator walks every page
// that changes things in Polish, on a phone and a desktop: the demo
// person, an operator and the demo shop's owner, invites a designer, makes
// a token and a link key, rolls the webhook secret, gets a refusal and
// reads the audit log; the designer joins and publishes a look. What is
// shown once is in the first screenful with the focus; a refusal is summed
// up at the top; the audit log holds no English; axe-core finds nothing,
// nothing scrolls sideways and no word breaks inside itself.
func TestTheConsoleInPolishForAnOwnerADesignerAndAnOperator(t *testing.T) {
	ctx := browser(t)
	axe := loadAxe(t)
	s := start(t, nil)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		step(t, ctx, what, actions...)
	}
	check := func(name string) {
		t.Helper()
		checkConsolePage(t, ctx, axe, name)
	}
	polish := func() {
		t.Helper()
		do("choose Polish", menu(), chromedp.SetValue(chromedp.ID("console-language"), "pl"), click(`[data-testid="language-switch"] button`))
		until(t, ctx, "the console in Polish", `document.documentElement.lang === "pl" && document.readyState === "complete"`)
	}
	// inSight holds the element css names to the first screenful, with
	// the focus.
	inSight := func(what, css string) {
		t.Helper()
		top := value(t, ctx, "where "+what+" is", chromedp.Evaluate[float64](`document.querySelector('`+css+`').getBoundingClientRect().top`))
		screen := value(t, ctx, "the screen's height", chromedp.Evaluate[float64](`window.innerHeight`))
		focused := value(t, ctx, "whether it has the focus", chromedp.Evaluate[bool](`document.activeElement === document.querySelector('`+css+`')`))
		if top < 0 || top > screen-80 || !focused {
			t.Errorf("%s starts %.0f px down a %.0f px screen, focused %v", what, top, screen, focused)
		}
	}

	do("sign in on a phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.base+"/console/login"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), s.consoleEmail), chromedp.SendKeys(chromedp.ID("password"), s.consolePassword+"\r"),
		visible(`[data-testid="funnel"]`))
	polish()

	do("invite a designer", chromedp.Navigate(s.base+"/console/team?merchant=demo"), visible(`[data-testid="invite-form"]`),
		chromedp.SendKeys(chromedp.ID("email"), "dana@demo.example"), chromedp.SetValue(chromedp.ID("role"), "designer"),
		click(`[data-testid="send-invite"]`), visible(`[data-testid="invite-link"]`))
	inSight("the invitation link", `[data-testid="one-time"]`)
	link := value(t, ctx, "the invitation link", chromedp.Text(chromedp.CSS(`[data-testid="invite-link"]`)))
	check("team-pl")

	do("make a token", chromedp.Navigate(s.base+"/console/developers?merchant=demo"), visible(`[data-testid="webhook-form"]`),
		chromedp.SendKeys(chromedp.ID("name"), "serwer sklepu"), click(`[data-testid="make-token"]`), visible(`[data-testid="new-token"]`))
	inSight("the new token", `[data-testid="one-time"]`)
	do("make a link key", click(`[data-testid="make-link-key"]`), visible(`[data-testid="new-link-key-secret"]`))
	inSight("the new link key", `[data-testid="one-time"]`)
	do("roll the webhook secret", chromedp.Navigate(s.base+"/console/developers?merchant=demo"), visible(`[data-testid="webhook-form"]`),
		chromedp.Submit(chromedp.ID("overlap")), visible(`[data-testid="new-webhook-secret"]`))
	inSight("the new webhook secret", `[data-testid="one-time"]`)
	check("developers-pl")

	do("a refused setting", chromedp.Navigate(s.base+"/console/settings?merchant=demo"), visible(`[data-testid="settings-form"]`),
		chromedp.SetValue(chromedp.ID("return_origins"), "https://shop.example\nhttps://a.shop.example\nhttps://b.shop.example\nto nie jest adres"),
		click(`[data-testid="save-settings"]`), visible(`[data-testid="error-summary"]`))
	inSight("the refusal's summary", `[data-testid="error-summary"]`)
	check("settings-error-pl")
	do("the summary leads to the field", click(`[data-testid="error-summary"] a`))
	if id := value(t, ctx, "where the link led", chromedp.Evaluate[string](`location.hash`)); id != "#return_origins" {
		t.Errorf("the summary's link leads to %q", id)
	}

	for _, p := range []struct{ name, path, ready string }{
		{"merchants-pl", "/console/merchants", `[data-testid="merchants"]`},
		{"account-pl", "/console/account", `[data-testid="begin-two-step"]`},
		{"branding-pl", "/console/branding?merchant=demo", `[data-testid="branding-form"]`},
	} {
		do("open "+p.path, chromedp.Navigate(s.base+p.path), visible(p.ready))
		check(p.name)
	}

	do("the audit log", chromedp.Navigate(s.base+"/console/audit"), visible(`[data-testid="audit"]`))
	check("audit-pl")
	lines := value(t, ctx, "the audit log's lines", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="audit-action"]')].map(e => e.innerText)`))
	if len(lines) < 6 {
		t.Fatalf("the audit log shows %d lines: %q", len(lines), lines)
	}
	for _, line := range lines {
		if english := englishIn(line); english != "" {
			t.Errorf("the Polish audit log says %q in English: %q", english, line)
		}
	}

	// The designer joins, reads Polish and publishes a look.
	do("the owner signs out", menu(), click(`[data-testid="sign-out"]`), visible(`[data-testid="sign-in"]`))
	const pw = "dana's long design password"
	do("open the invitation", chromedp.Navigate(link), visible(`[data-testid="join"]`),
		chromedp.SendKeys(chromedp.ID("password"), pw), chromedp.SendKeys(chromedp.ID("password_again"), pw),
		click(`[data-testid="join"]`), visible(`[data-testid="funnel"]`))
	polish()
	do("publish a look", chromedp.Navigate(s.base+"/console/branding"), visible(`[data-testid="branding-form"]`),
		chromedp.SetValue(chromedp.ID("primaryColor"), "#AA0000"), click(`[data-testid="publish"]`), visible(`[data-testid="notice"]`))
	check("branding-designer-pl")
	do("the history", click(`[data-testid="history-link"]`), visible(`[data-testid="versions"]`))
	if fill := value(t, ctx, "the swatch", chromedp.Evaluate[string](`document.querySelector('[data-testid="version"] [data-testid="swatch"] rect').getAttribute('fill')`)); fill != "#AA0000" {
		t.Errorf("the newest version's swatch is %q", fill)
	}
	check("branding-history-pl")
}

// englishIn finds in a line of the console a piece of an English audit
// sentence (the words between its placeholders, of two words or more):
// what a reader of another language should never meet.
func englishIn(line string) string {
	en := i18n.Staff("en")
	for _, event := range settings.Events {
		for _, piece := range strings.Split(en.T("audit."+event), "%s") {
			piece = strings.Trim(piece, " .:;,…“”()")
			if len(strings.Fields(piece)) >= 2 && strings.Contains(line, piece) {
				return piece
			}
		}
	}
	return ""
}
