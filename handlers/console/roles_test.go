package console_test

import (
	"github.com/PuerkitoBio/goquery"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
)

// TestEachRoleMayDoWhatTheTableSays walks the permission table of
// docs/console.md cell by cell: each role of shop1's team on each action of the console,
// allowed (the page or the action's answer) or refused with 403 naming
// the roles that may.
func TestEachRoleMayDoWhatTheTableSays(t *testing.T) {
	e := setup(t)
	e.seed("shop1", "A-1", "ing", pisclient.StatusCompleted)
	events, err := e.ledger.OrderEvents(ctx, "shop1", "A-1")
	if err != nil || len(events) == 0 {
		t.Fatalf("seeded order has no event: %v", err)
	}
	eventID := events[0].ID
	// A refund waiting for its payer's account, which no role's call
	// below moves.
	r, _, err := e.refunds.Make(ctx, settings.Actor{Name: shop1User}, e.merchant("shop1"), "A-1", refunds.Ask{Amount: "1", Reason: "x"})
	if err != nil {
		t.Fatal(err)
	}
	refundID := r.ID
	type call struct {
		name   string
		action merchant.Action
		do     func(b *browser, csrf string) *http.Response
	}
	get := func(path string) func(*browser, string) *http.Response {
		return func(b *browser, _ string) *http.Response { return b.get(path) }
	}
	post := func(path string, form url.Values) func(*browser, string) *http.Response {
		return func(b *browser, csrf string) *http.Response {
			f := url.Values{"csrf": {csrf}}
			for k, v := range form {
				f[k] = v
			}
			return b.post(path, f)
		}
	}
	calls := []call{
		{"overview", merchant.Read, get("/console")},
		{"payments", merchant.Read, get("/console/payments")},
		{"payments CSV", merchant.Read, get("/console/payments.csv")},
		{"an order", merchant.Read, get("/console/payments/A-1")},
		{"webhooks", merchant.Read, get("/console/webhooks")},
		{"check status now", merchant.Operate, post("/console/payments/A-1", url.Values{})},
		{"redeliver", merchant.Operate, post("/console/events/"+eventID+"/redeliver", url.Values{})},
		{"send test event", merchant.Operate, post("/console/webhooks/test", url.Values{})},
		{"shop settings", merchant.Read, get("/console/settings")},
		{"save shop settings", merchant.Manage, post("/console/settings", url.Values{"version": {"0"}, "name": {"x"}})},
		{"developers", merchant.Develop, get("/console/developers")},
		{"make a token", merchant.Develop, post("/console/developers/tokens", url.Values{"name": {""}})},
		{"branding", merchant.Brand, get("/console/branding")},
		{"a page in the draft look", merchant.Brand, get("/console/branding/preview/banks")},
		{"branding history", merchant.Brand, get("/console/branding/history")},
		// shop1 is the merchants file's: allowed, a save is refused 409.
		{"save a draft", merchant.Brand, post("/console/branding", url.Values{"primaryColor": {"#AA0000"}})},
		{"audit log", merchant.Audit, get("/console/audit")},
		{"audit CSV", merchant.Audit, get("/console/audit.csv")},
		{"refunds", merchant.Read, get("/console/refunds")},
		{"a refund", merchant.Read, get("/console/refunds/" + refundID)},
		// Refused for its amount when allowed: 422.
		{"make a refund", merchant.Refund, post("/console/payments/A-1/refunds", url.Values{"amount": {"0"}})},
		{"type a payer's account", merchant.Refund, post("/console/refunds/"+refundID+"/account", url.Values{"iban": {"x"}})},
		{"the payer's page as a QR code", merchant.Refund, get("/console/refunds/" + refundID + "/page-qr.svg")},
		// A file of nothing is refused when allowed: 422.
		{"make a transfer file", merchant.PayRefunds, post("/console/refunds/transfers", url.Values{})},
		// Not ready, so refused when allowed: 409.
		{"a refund's EPC QR code", merchant.PayRefunds, get("/console/refunds/" + refundID + "/qr.png")},
		{"mark a refund sent", merchant.PayRefunds, post("/console/refunds/"+refundID+"/sent", url.Values{})},
		{"bank statements", merchant.Read, get("/console/statements")},
		{"upload a statement", merchant.Reconcile, post("/console/statements", url.Values{})},
	}
	// The table of docs/console.md, written out here rather than read from
	// the code it checks.
	table := map[merchant.Action][]merchant.Role{
		merchant.Read:    {merchant.Owner, merchant.Developer, merchant.Designer, merchant.Support, merchant.Viewer},
		merchant.Operate: {merchant.Owner, merchant.Developer, merchant.Support},
		merchant.Develop: {merchant.Owner, merchant.Developer},
		merchant.Manage:  {merchant.Owner},
		merchant.Audit:   {merchant.Owner, merchant.Developer},
		merchant.Brand:   {merchant.Owner, merchant.Designer},
		merchant.Refund:  {merchant.Owner, merchant.Support},
		// Money leaves the shop on an owner's word.
		merchant.PayRefunds: {merchant.Owner},
		merchant.Reconcile:  {merchant.Owner, merchant.Support},
	}
	may := func(role merchant.Role, action merchant.Action) bool { return slices.Contains(table[action], role) }
	for _, role := range merchant.Roles {
		b := e.browser()
		csrf := b.signIn(roleUser(role))
		for _, c := range calls {
			res := c.do(b, csrf)
			body := readAll(t, res)
			allowed := may(role, c.action)
			switch {
			case allowed && res.StatusCode == http.StatusForbidden:
				t.Errorf("%s: %s refused (403), the table allows it", role, c.name)
			case !allowed && res.StatusCode != http.StatusForbidden:
				t.Errorf("%s: %s answered %d, the table refuses it", role, c.name, res.StatusCode)
			case !allowed && !strings.Contains(body, "Your role does not allow this"):
				t.Errorf("%s: %s refused without saying which role may", role, c.name)
			}
		}
		// The menu shows only what the role may use.
		doc := page(t, b.get("/console"), http.StatusOK)
		for path, action := range map[string]merchant.Action{"/console/settings": merchant.Read, "/console/team": merchant.Manage, "/console/audit": merchant.Audit,
			"/console/developers": merchant.Develop, "/console/branding": merchant.Brand, "/console/refunds": merchant.Read} {
			if shown := doc.Find(`nav a[href="`+path+`"]`).Length() > 0; shown != may(role, action) {
				t.Errorf("%s: the menu shows %s: %v", role, path, shown)
			}
		}
		if doc.Find(`nav a[href="/console/merchants"]`).Length() > 0 {
			t.Errorf("%s: the menu shows Merchants, an operators' page", role)
		}
	}
	// The refusal names the roles that may.
	b := e.browser()
	b.signIn(roleUser(merchant.Viewer))
	doc := page(t, b.get("/console/audit"), http.StatusForbidden)
	if text := doc.Find(`[data-testid="console-error"]`).Text(); !strings.Contains(text, "owner, developer") || !strings.Contains(text, "You are viewer here") {
		t.Errorf("a viewer asking for the audit log reads %q", text)
	}
}

func TestAPersonOnTwoTeamsChoosesWhichToActFor(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(twoTeams)
	doc := page(t, b.get("/console"), http.StatusOK)
	if n := doc.Find(`[data-testid="act-for"] option`).Length(); n != 2 {
		t.Fatalf("the header offers %d merchants to act for, want 2", n)
	}
	if got := doc.Find(`[data-testid="console-user"]`).Text(); !strings.Contains(got, "Shop shop1, viewer") {
		t.Errorf("after sign-in the header says %q; want shop1's viewer", got)
	}
	page(t, b.get("/console/audit"), http.StatusForbidden)

	res := b.post("/console/act", url.Values{"csrf": {csrf}, "merchant": {"shop2"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("act for shop2: %d", res.StatusCode)
	}
	doc = page(t, b.get("/console/audit"), http.StatusOK)
	if got := doc.Find(`[data-testid="console-user"]`).Text(); !strings.Contains(got, "Shop shop2, owner") {
		t.Errorf("acting for shop2 the header says %q", got)
	}
	doc.Find(`[data-testid="audit-row"]`).Each(func(_ int, row *goquery.Selection) {
		if strings.Contains(row.Text(), "shop1") {
			t.Errorf("acting for shop2, the audit log shows %q", row.Text())
		}
	})
	// Not a merchant of theirs: nothing to act for.
	page(t, b.post("/console/act", url.Values{"csrf": {csrf}, "merchant": {"shop3"}}), http.StatusNotFound)
}
