package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/pisclient"
)

func TestSignedOutPeopleAreSentToSignIn(t *testing.T) {
	e := setup(t)
	b := e.browser()
	for path, want := range map[string]string{
		"/console":                "/console/login",
		"/console/payments?q=A-1": "/console/login?next=%2Fconsole%2Fpayments%3Fq%3DA-1",
		"/console/payments.csv":   "/console/login?next=%2Fconsole%2Fpayments.csv",
		"/console/payments/A-1":   "/console/login?next=%2Fconsole%2Fpayments%2FA-1",
		"/console/webhooks":       "/console/login?next=%2Fconsole%2Fwebhooks",
	} {
		res := b.get(path)
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("GET %s signed out: %d to %q, want 303 to %q", path, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
	e.seed("shop1", "A-1", "ing", pisclient.StatusInProgress)
	for _, path := range []string{"/console/payments/A-1/check", "/console/webhooks/test"} {
		doc := page(t, b.post(path, url.Values{"csrf": {"guess"}}), http.StatusForbidden)
		if doc.Find(`[data-testid="console-error"]`).Length() == 0 {
			t.Errorf("POST %s signed out: no error page", path)
		}
	}
	if e.provider.reads != 0 || len(e.hook.received()) != 0 {
		t.Error("a signed-out POST reached the provider or the webhook endpoint")
	}
	// After signing in, the page first asked for opens.
	form := page(t, b.get("/console/login?next=%2Fconsole%2Fpayments%3Fq%3DA-1"), http.StatusOK)
	res := b.post("/console/login", url.Values{"email": {shop1User}, "password": {secret}, "csrf": {csrfOf(form)},
		"next": {form.Find(`input[name="next"]`).AttrOr("value", "")}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/payments?q=A-1" {
		t.Errorf("sign-in leads to %q, want the page asked for", res.Header.Get("Location"))
	}
	// Never to another site.
	for _, next := range []string{"https://evil.example/", "//evil.example/console", "/console\\@evil.example"} {
		other := e.browser()
		form := page(t, other.get("/console/login"), http.StatusOK)
		res := other.post("/console/login", url.Values{"email": {shop2User}, "password": {secret}, "csrf": {csrfOf(form)}, "next": {next}})
		if res.Header.Get("Location") != "/console" {
			t.Errorf("next=%s: sign-in leads to %q", next, res.Header.Get("Location"))
		}
	}
}

func TestSignInSaysTheSameForUnknownEmailAndWrongPassword(t *testing.T) {
	e := setup(t)
	b := e.browser()
	answers := map[string]string{}
	for name, creds := range map[string][2]string{
		"wrong password": {shop1User, "not the password at all"},
		"unknown e-mail": {"nobody@shop1.example", secret},
	} {
		form := page(t, b.get("/console/login"), http.StatusOK)
		doc := page(t, b.post("/console/login", url.Values{"email": {creds[0]}, "password": {creds[1]}, "csrf": {csrfOf(form)}}), http.StatusUnauthorized)
		answers[name] = doc.Find(`[data-testid="login-error"]`).Text()
		if got := doc.Find(`input[name="email"]`).AttrOr("value", ""); got != creds[0] {
			t.Errorf("%s: the e-mail typed came back as %q", name, got)
		}
		if doc.Find(`input[name="password"]`).AttrOr("value", "") != "" {
			t.Errorf("%s: the password was sent back", name)
		}
	}
	if answers["wrong password"] == "" || answers["wrong password"] != answers["unknown e-mail"] {
		t.Errorf("the answers differ or are empty: %q", answers)
	}
	logs := e.logs.String()
	if strings.Contains(logs, "not the password at all") || strings.Contains(logs, secret) || strings.Contains(logs, shop1User) {
		t.Errorf("the log holds a password or a whole e-mail:\n%s", logs)
	}
	if !strings.Contains(logs, "console sign-in refused") {
		t.Error("refusals are not logged")
	}
}

func TestTooManyTriesAreRefusedUncheckedForAMinute(t *testing.T) {
	e := setup(t)
	b := e.browser()
	try := func(address, email, pw string, want int) string {
		t.Helper()
		form := page(t, b.get("/console/login"), http.StatusOK)
		doc := page(t, b.postFrom(address, "/console/login", url.Values{"email": {email}, "password": {pw}, "csrf": {csrfOf(form)}}), want)
		return doc.Find(`[data-testid="login-error"]`).Text()
	}
	// Five wrong tries at one e-mail, each from another address.
	for i := range 5 {
		try("192.0.2."+string(rune('1'+i)), shop1User, "wrong password number", http.StatusUnauthorized)
	}
	// The sixth is refused even with the right password, from a new address.
	if msg := try("192.0.2.99", shop1User, secret, http.StatusTooManyRequests); !strings.Contains(msg, "Too many tries") {
		t.Errorf("the sixth try says %q", msg)
	}
	// Another e-mail from a fresh address is not held up.
	fresh := e.browser()
	if res := fresh.postFrom("198.51.100.7", "/console/login", url.Values{"email": {shop2User}, "password": {secret},
		"csrf": {csrfOf(page(t, fresh.get("/console/login"), http.StatusOK))}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("another e-mail from another address: %d", res.StatusCode)
	}
	// Five wrong tries from one address at several e-mails hold up that address.
	c := e.browser()
	for i := range 5 {
		form := page(t, c.get("/console/login"), http.StatusOK)
		c.postFrom("203.0.113.5", "/console/login", url.Values{"email": {"guess" + string(rune('a'+i)) + "@shop.example"},
			"password": {"wrong password number"}, "csrf": {csrfOf(form)}}).Body.Close()
	}
	form := page(t, c.get("/console/login"), http.StatusOK)
	res := c.postFrom("203.0.113.5", "/console/login", url.Values{"email": {operator}, "password": {secret}, "csrf": {csrfOf(form)}})
	if res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a sixth try from an address that failed five times: %d, want 429", res.StatusCode)
	}
	// A minute later the e-mail may sign in again.
	e.skew.Store(int64(61 * time.Second))
	if msg := try("192.0.2.99", shop1User, secret, http.StatusSeeOther); msg != "" {
		t.Errorf("a minute later: %q", msg)
	}
}

func TestTheSessionCookieIsStrictAndEnds(t *testing.T) {
	e := setup(t)
	b := e.browser()
	form := page(t, b.get("/console/login"), http.StatusOK)
	res := b.post("/console/login", url.Values{"email": {shop1User}, "password": {secret}, "csrf": {csrfOf(form)}})
	res.Body.Close()
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "console" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Path != "/console" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("session cookie %+v: want path /console, HttpOnly, SameSite=Lax, not Secure over http", cookie)
	}
	page(t, b.get("/console"), http.StatusOK)

	// 31 minutes idle ends it.
	e.skew.Store(int64(31 * time.Minute))
	res = b.get("/console/payments")
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "ended=1") {
		t.Errorf("after 31 idle minutes: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}

	// Used every 20 minutes, it still ends 12 hours after sign-in.
	e.skew.Store(0)
	b = e.browser()
	b.signIn(shop1User)
	for m := 20; m < 12*60; m += 20 {
		e.skew.Store(int64(time.Duration(m) * time.Minute))
		if res := b.get("/console"); res.StatusCode != http.StatusOK {
			t.Fatalf("used at minute %d: %d", m, res.StatusCode)
		}
	}
	e.skew.Store(int64(12*time.Hour + time.Minute))
	if res := b.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("12 hours after sign-in: %d, want a redirect to sign in", res.StatusCode)
	}
}

func TestSigningOutEndsEveryCopyOfTheSession(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(operator)
	u, _ := url.Parse(e.url + "/console")
	copied := b.client.Jar.Cookies(u)

	// Without the token, signing out is refused: another site cannot.
	page(t, b.post("/console/logout", url.Values{}), http.StatusForbidden)
	page(t, b.get("/console"), http.StatusOK)

	res := b.post("/console/logout", url.Values{"csrf": {csrf}})
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login?out=1" {
		t.Fatalf("sign-out: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if doc := page(t, b.get("/console/login?out=1"), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "signed out") {
		t.Error("the sign-in page does not say you are signed out")
	}
	// The cookie as it was before, replayed, opens nothing.
	replay := e.browser()
	replay.client.Jar.SetCookies(u, copied)
	if res := replay.get("/console"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a copy of the signed-out cookie: %d, want a redirect to sign in", res.StatusCode)
	}
}

func TestAPostNeedsItsOwnSessionsToken(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusInProgress)
	mine, other := e.browser(), e.browser()
	mine.signIn(shop1User)
	theirs := other.signIn(shop1User)
	for name, form := range map[string]url.Values{
		"no token":              {},
		"another session's one": {"csrf": {theirs}},
	} {
		doc := page(t, mine.post("/console/payments/A-1/check", form), http.StatusForbidden)
		if !strings.Contains(doc.Text(), "not sent from your console session") {
			t.Errorf("%s: the page does not say why", name)
		}
	}
	if e.provider.reads != 0 {
		t.Errorf("a refused POST asked the provider %d times", e.provider.reads)
	}
}

func TestASignInNeedsTheFormsToken(t *testing.T) {
	e := setup(t)
	b := e.browser()
	page(t, b.get("/console/login"), http.StatusOK)
	doc := page(t, b.post("/console/login", url.Values{"email": {shop1User}, "password": {secret}, "csrf": {"forged"}}), http.StatusForbidden)
	if msg := doc.Find(`[data-testid="login-error"]`).Text(); !strings.Contains(msg, "form had expired") {
		t.Errorf("a sign-in without the form's token says %q", msg)
	}
	if doc.Find(`input[name="email"]`).AttrOr("value", "") != shop1User {
		t.Error("the e-mail typed was lost")
	}
	// The form it sends back works.
	res := b.post("/console/login", url.Values{"email": {shop1User}, "password": {secret}, "csrf": {csrfOf(doc)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("signing in again from the form sent back: %d", res.StatusCode)
	}
}

func TestAPersonsPostsAreLimitedToTenASecond(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	other := e.browser()
	theirs := other.signIn(shop2User)
	start := time.Now()
	e.frozen.Store(start.UnixMilli())
	check := func(b *browser, csrf string) *http.Response {
		t.Helper()
		res := b.post("/console/payments/NO-SUCH-ORDER/check", url.Values{"csrf": {csrf}})
		res.Body.Close()
		return res
	}
	for i := range console.PersonBurst {
		if res := check(b, csrf); res.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("POST %d of a burst of %d refused", i+1, console.PersonBurst)
		}
	}
	res := check(b, csrf)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("POST past the burst: %d (Retry-After %q), want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// Another person is not slowed by the first.
	if res := check(other, theirs); res.StatusCode == http.StatusTooManyRequests {
		t.Error("another person's POST refused after the first one's burst")
	}
	// A second later, ten more.
	e.frozen.Store(start.Add(time.Second).UnixMilli())
	passed := 0
	for range 20 {
		if check(b, csrf).StatusCode != http.StatusTooManyRequests {
			passed++
		}
	}
	if passed != console.PersonRate {
		t.Errorf("%d POSTs passed a second after the burst, want %d", passed, console.PersonRate)
	}
}

func TestWhileTheLedgerIsDownTheConsoleSaysSo(t *testing.T) {
	gated, g := ledgertest.Gated(t, ledgertest.PostgresURL(t))
	e := setupOn(t, gated)
	b := e.browser()
	b.signIn(shop1User)

	g.Refuse()
	for range 3 {
		res := b.get("/console/payments")
		doc := page(t, res, http.StatusServiceUnavailable)
		if got := doc.Find("h1").Text(); got != "The payments database does not answer" || res.Header.Get("Retry-After") == "" {
			t.Fatalf("the console's page says %q (Retry-After %q), want that the database does not answer, with Retry-After", got, res.Header.Get("Retry-After"))
		}
	}
	if n := strings.Count(e.logText(), "the payments ledger does not answer"); n != 1 || strings.Contains(e.logText(), "console request failed") {
		t.Errorf("the outage was logged %d times, or each request was:\n%s", n, e.logText())
	}

	g.Open()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		res := b.get("/console/payments")
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the database came back the console still answers %d", res.StatusCode)
		}
	}
}
