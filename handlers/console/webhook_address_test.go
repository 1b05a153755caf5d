package console_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestAWebhookAtAnAddressThatIsNotPublicIsRefusedEvenSavedAnyway: outside
// sandbox mode, a webhook endpoint whose host is an address behind the app
// (a carrier's NAT, a benchmark network, NAT64 to a private one) is refused
// with its reason beside the URL, though the person ticked "save anyway";
// a name that does not resolve yet is still saved anyway, which is what
// the box is for. Every try is saved anyway: nothing is pinged, so no
// packet leaves this machine whatever the check does.
func TestAWebhookAtAnAddressThatIsNotPublicIsRefusedEvenSavedAnyway(t *testing.T) {
	e := setup(t)
	e.shop3()
	// The deployment is not in sandbox mode, as far as the rules of
	// settings go (the harness's console otherwise is).
	e.settings.Sandbox = false
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "developer"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/developers"), http.StatusOK))
	saveAnyway := func(u string) *http.Response {
		return ann.post("/console/developers/webhook", url.Values{"csrf": {csrf}, "url": {u}, "save_anyway": {"on"}})
	}
	for _, u := range []string{"https://100.64.0.1/hooks", "https://198.18.0.1/hooks", "https://[64:ff9b::a00:1]/hooks",
		"https://10.0.0.7/hooks", "https://[fd00::7]:8443/hooks", "http://127.0.0.1:9/hooks"} {
		doc := page(t, saveAnyway(u), http.StatusUnprocessableEntity)
		if reason := doc.Find("#url-error").Text(); reason == "" {
			t.Errorf("%s: refused without a reason beside the URL", u)
		}
		if got, _ := doc.Find("#url").Attr("value"); got != u {
			t.Errorf("%s: the URL typed came back as %q", u, got)
		}
		if m, _ := e.settings.Dir.Get("shop3"); m.WebhookURL != "" {
			t.Fatalf("%s: saved as %q", u, m.WebhookURL)
		}
	}
	const notYet = "https://hooks.shop3.example/pay-by-bank"
	page(t, saveAnyway(notYet), http.StatusOK)
	if m, _ := e.settings.Dir.Get("shop3"); m.WebhookURL != notYet {
		t.Errorf("a name saved anyway: the endpoint is %q", m.WebhookURL)
	}
}
