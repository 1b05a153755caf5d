package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/pquerna/otp/totp"

	"github.com/paybybank/checkout/handlers/console"
)

// at freezes the console's clock at step seconds into a 30-second time step
// of a code, and returns that time.
func (e *env) at(t time.Time) time.Time {
	e.frozen.Store(t.UnixMilli())
	return t
}

// failuresForgotten is how long after the last wrong code it no longer
// counts.
const failuresForgotten = console.FailureWindow + time.Second

func codeAt(t *testing.T, secret string, when time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, when)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// twoStepOn joins shop3 as ann and turns her two-step sign-in on at now;
// it returns her browser, her secret and her recovery codes.
func (e *env) twoStepOn(t *testing.T, now time.Time) (*browser, string, []string) {
	t.Helper()
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/account"), http.StatusOK))
	// A session alone sets up no authenticator: her password first.
	doc := page(t, ann.post("/console/account/totp", url.Values{"csrf": {csrf}}), http.StatusUnauthorized)
	if doc.Find(`#twostep_password-error`).Length() != 1 || doc.Find(`[data-testid="totp-secret"]`).Length() != 0 {
		t.Errorf("setting up two-step sign-in without the password: %q", doc.Find(`[data-testid="two-step"]`).Text())
	}
	doc = page(t, ann.post("/console/account/totp", url.Values{"csrf": {csrf}, "twostep_password": {newPassword}}), http.StatusOK)
	secret := doc.Find(`[data-testid="totp-secret"]`).Text()
	if !regexp.MustCompile(`^[A-Z2-7]{32}$`).MatchString(secret) || doc.Find(`[data-testid="two-step"] svg`).Length() != 1 {
		t.Fatalf("the setup shows secret %q and %d QR codes", secret, doc.Find(`[data-testid="two-step"] svg`).Length())
	}
	// A wrong code: said, and the same secret shown again.
	doc = page(t, ann.post("/console/account/totp/confirm", url.Values{"csrf": {csrf}, "secret": {secret}, "code": {"000000"}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="totp-secret"]`).Text() != secret || !strings.Contains(doc.Find(`#code-error`).Text(), "not right") {
		t.Errorf("a wrong first code: %q", doc.Find(`[data-testid="two-step"]`).Text())
	}
	doc = page(t, ann.post("/console/account/totp/confirm", url.Values{"csrf": {csrf}, "secret": {secret}, "code": {codeAt(t, secret, now)}}), http.StatusOK)
	var codes []string
	doc.Find(`[data-testid="recovery-codes"] li`).Each(func(_ int, li *goquery.Selection) { codes = append(codes, li.Text()) })
	if len(codes) != 10 {
		t.Fatalf("turning two-step sign-in on shows %d recovery codes, want 10", len(codes))
	}
	return ann, secret, codes
}

// passwordStep signs in with ann's password and returns the browser at the
// code step with its form's token.
func (e *env) passwordStep(t *testing.T) (*browser, string) {
	t.Helper()
	b := e.browser()
	form := page(t, b.get("/console/login"), http.StatusOK)
	res := b.post("/console/login", url.Values{"email": {"ann@shop3.example"}, "password": {newPassword}, "csrf": {csrfOf(form)}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login/code" {
		t.Fatalf("the password step: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	// Nothing of the console opens before the code.
	if res := b.get("/console"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Errorf("between the password and the code the console answers %d", res.StatusCode)
	}
	return b, csrfOf(page(t, b.get("/console/login/code"), http.StatusOK))
}

func TestTwoStepSignInTakesEachCodeOnce(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	now := e.at(step)
	_, secret, codes := e.twoStepOn(t, now)

	b, csrf := e.passwordStep(t)
	send := func(code string) *http.Response {
		return b.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {code}})
	}
	if doc := page(t, send("123456"), http.StatusUnauthorized); !strings.Contains(doc.Find(`[data-testid="code-error"]`).Text(), "not right") {
		t.Errorf("a wrong code: %q", doc.Find("main").Text())
	}
	// The code that turned two-step on was taken: within its 30 s it is a
	// replay.
	if doc := page(t, send(codeAt(t, secret, now)), http.StatusUnauthorized); !strings.Contains(doc.Find(`[data-testid="code-error"]`).Text(), "used already") {
		t.Errorf("a replayed code: %q", doc.Find("main").Text())
	}
	// The next code, typed as authenticator apps show it: in two halves.
	now = e.at(step.Add(30 * time.Second))
	next := codeAt(t, secret, now)
	res := send(next[:3] + " " + next[3:])
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console" {
		t.Fatalf("the next code, %q: %d to %q", next[:3]+" "+next[3:], res.StatusCode, res.Header.Get("Location"))
	}
	page(t, b.get("/console"), http.StatusOK)

	// A recovery code signs in once, pasted in capitals with the dashes a
	// word processor makes and a tab after it.
	b2, csrf2 := e.passwordStep(t)
	pasted := strings.ToUpper(strings.ReplaceAll(codes[3], "-", "\u2013")) + "\t"
	res = b2.post("/console/login/code", url.Values{"csrf": {csrf2}, "code": {pasted}})
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "done=recovery") {
		t.Fatalf("a recovery code: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if doc := page(t, b2.get("/console/account?done=recovery"), http.StatusOK); !strings.Contains(doc.Find(`[data-testid="two-step-state"]`).Text(), "Recovery codes left: 9") {
		t.Errorf("after a recovery code the account says %q", doc.Find(`[data-testid="two-step-state"]`).Text())
	}
	b3, csrf3 := e.passwordStep(t)
	page(t, b3.post("/console/login/code", url.Values{"csrf": {csrf3}, "code": {codes[3]}}), http.StatusUnauthorized)
}

func TestWrongCodesPauseTheSignInUntilThePasswordIsGivenAgain(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	_, secret, _ := e.twoStepOn(t, step)
	b, csrf := e.passwordStep(t)
	// The wrong code she typed while setting it up counts too: one
	// count of codes, wherever they are typed.
	for range console.MaxWrongCodes - 2 {
		page(t, b.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {"999999"}}), http.StatusUnauthorized)
	}
	// The last wrong code of the minute locks her codes and ends the code
	// step: the sign-in starts again from the password, after the lock.
	res := b.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {"999999"}})
	if res.Header.Get("Retry-After") == "" {
		t.Error("the lock does not say when to try again (Retry-After)")
	}
	if doc := page(t, res, http.StatusTooManyRequests); !strings.Contains(doc.Text(), "paused until") || doc.Find(`[data-testid="sign-in"]`).Length() != 1 {
		t.Errorf("the last wrong code: %q", doc.Find("main").Text())
	}
	e.mail.mu.Lock()
	mails := strings.Join(e.mail.sent, "\n")
	e.mail.mu.Unlock()
	if !strings.Contains(mails, "To: ann@shop3.example") || !strings.Contains(mails, "/console/account") || strings.Contains(mails, "%!") || strings.Contains(mails, secret) {
		t.Errorf("ann is not told of the lock by e-mail: %q", mails)
	}
	// Even the right code, from the browser that had the code step, is
	// refused: the step is over.
	next := e.at(step.Add(30 * time.Second))
	if res := b.post("/console/login/code", url.Values{"csrf": {csrf}, "code": {codeAt(t, secret, next)}}); res.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(res.Header.Get("Location"), "/console/login") {
		t.Errorf("a right code after the lock: %d to %q, want back to the sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	// The password again, during the lock: the code is refused unchecked.
	b2, csrf2 := e.passwordStep(t)
	if res := b2.post("/console/login/code", url.Values{"csrf": {csrf2}, "code": {codeAt(t, secret, next)}}); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a right code during the lock: %d, want 429", res.StatusCode)
	}
	// After the lock (a minute, the first time), the password and a right
	// code sign in.
	later := e.at(time.Now().Add(2*failuresForgotten + 30*time.Second))
	b3, csrf3 := e.passwordStep(t)
	if res := b3.post("/console/login/code", url.Values{"csrf": {csrf3}, "code": {codeAt(t, secret, later)}}); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/console" {
		t.Errorf("a right code after the lock: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestAnOwnerRequiresTwoStepSignInAndItIsTurnedOffWithACode(t *testing.T) {
	e := setup(t)
	step := time.Now().Truncate(30 * time.Second).Add(10 * time.Second)
	e.at(step)
	ann, secret, _ := e.twoStepOn(t, step)
	csrf := csrfOf(page(t, ann.get("/console/team"), http.StatusOK))
	_, res := e.join(invite(t, ann, csrf, "", "bob@shop3.example", "viewer"), newPassword, newPassword)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob joining: %d", res.StatusCode)
	}
	if res := ann.post("/console/team/require-two-step", url.Values{"csrf": {csrf}, "require": {"on"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("requiring two-step sign-in: %d", res.StatusCode)
	}
	// Bob, without it, is taken to set it up before anything else.
	bob := e.browser()
	form := page(t, bob.get("/console/login"), http.StatusOK)
	bob.post("/console/login", url.Values{"email": {"bob@shop3.example"}, "password": {newPassword}, "csrf": {csrfOf(form)}})
	for _, path := range []string{"/console", "/console/payments"} {
		if res := bob.get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/account" {
			t.Errorf("bob without two-step asks for %s: %d to %q", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if doc := page(t, bob.get("/console/account"), http.StatusOK); doc.Find(`[data-testid="must-set-up"]`).Length() != 1 {
		t.Error("bob's account page does not say his team requires two-step sign-in")
	}

	// Ann turns hers off: it takes her password and a right code.
	csrf = csrfOf(page(t, ann.get("/console/account"), http.StatusOK))
	// A new secret cannot replace hers without turning it off first.
	if res := ann.post("/console/account/totp", url.Values{"csrf": {csrf}, "twostep_password": {newPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("setting up two-step sign-in again while it is on: %d, want 303 back to the account", res.StatusCode)
	}
	next := e.at(step.Add(30 * time.Second))
	// A code alone, as a stolen session would send it, changes nothing.
	page(t, ann.post("/console/account/totp/off", url.Values{"csrf": {csrf}, "code": {codeAt(t, secret, next)}}), http.StatusUnauthorized)
	page(t, ann.post("/console/account/totp/off", url.Values{"csrf": {csrf}, "twostep_password": {newPassword}, "code": {"111111"}}), http.StatusUnprocessableEntity)
	if res := ann.post("/console/account/totp/off", url.Values{"csrf": {csrf}, "twostep_password": {newPassword}, "code": {codeAt(t, secret, next)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("turning two-step off: %d", res.StatusCode)
	}
	// Her team still requires it: she is taken to set it up again.
	if res := ann.get("/console/payments"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/account" {
		t.Errorf("ann without two-step on a team that requires it: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
}
