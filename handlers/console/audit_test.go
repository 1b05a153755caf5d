package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
)

// TestTheAuditLogIsReadInThePersonsLanguage: an owner who reads the
// console in Polish reads the lines of their own changes in Polish, with
// the fields as the pages name them and times with their zone; a reader in
// English reads the same lines in English; a line kept before events were
// reads as it was written; the CSV stays English, with the event for
// programs.
func TestTheAuditLogIsReadInThePersonsLanguage(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	opsCSRF := ops.signIn(operator)
	ann, _ := e.join(invite(t, ops, opsCSRF, "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/account"), http.StatusOK))
	ann.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"pl"}}).Body.Close()

	// Ann's changes: the shop's name, a link key, the webhook and its
	// secret, an invitation.
	doc := page(t, ann.get("/console/settings"), http.StatusOK)
	res := ann.post("/console/settings", url.Values{"csrf": {csrf}, "version": {doc.Find(`input[name="version"]`).AttrOr("value", "")},
		"name": {"Sklep 3"}, "return_origins": {"https://shop3.example"}})
	res.Body.Close()
	page(t, ann.post("/console/developers/link-keys", url.Values{"csrf": {csrf}}), http.StatusOK)
	invite(t, ann, csrf, "shop3", "bob@shop3.example", "developer")
	// A line kept as English text, as every line was before.
	if _, err := e.ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		return tx.Audit(ctx, ledger.AuditEntry{Actor: operator, MerchantID: "shop3", Action: "webhook endpoint set", Fields: "webhook_url"})
	}); err != nil {
		t.Fatal(err)
	}

	lines := func(b *browser) []string {
		t.Helper()
		var out []string
		page(t, b.get("/console/audit?merchant=shop3"), http.StatusOK).Find(`[data-testid="audit-action"]`).Each(func(_ int, s *goquery.Selection) {
			out = append(out, strings.TrimSpace(s.Text()))
		})
		return out
	}
	polish := lines(ann)
	pl, en := i18n.Staff("pl"), i18n.Staff("en")
	audit, err := e.ledger.Audit(ctx, ledger.AuditQuery{MerchantID: "shop3", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var ours []ledger.AuditEntry
	for _, a := range audit {
		if a.Actor == "ann@shop3.example" || a.Event == "" {
			ours = append(ours, a)
		}
	}
	if len(ours) < 4 {
		t.Fatalf("the audit log holds %d of ann's lines and the old one: %+v", len(ours), audit)
	}
	for _, a := range ours {
		english := console.SayAudit(en, a)
		if a.Event == "" {
			if !slices.Contains(polish, "webhook endpoint set") {
				t.Errorf("the line kept as text is not read as it was written: %q", polish)
			}
			continue
		}
		if !slices.Contains(polish, console.SayAudit(pl, a)) {
			t.Errorf("the Polish page lacks %q: %q", console.SayAudit(pl, a), polish)
		}
		if slices.Contains(polish, english) {
			t.Errorf("the Polish page holds the English line %q", english)
		}
	}
	joined := strings.Join(polish, "\n")
	for _, english := range []string{"changed the shop's settings", "made the link key", "invited", "Shop name"} {
		if strings.Contains(joined, english) {
			t.Errorf("the Polish audit log holds %q: %s", english, joined)
		}
	}
	for _, polishWord := range []string{pl.T("console.settings.name"), pl.T("console.role.developer")} {
		if !strings.Contains(joined, polishWord) {
			t.Errorf("the Polish audit log does not name %q as the pages do: %s", polishWord, joined)
		}
	}
	// An operator reading in English reads the same lines in English.
	english := strings.Join(lines(ops), "\n")
	for _, want := range []string{"ann@shop3.example changed the shop's settings: Shop name.", "ann@shop3.example made the link key ",
		"ann@shop3.example invited bob@shop3.example to the team as developer."} {
		if !strings.Contains(english, want) {
			t.Errorf("the English audit log lacks %q: %s", want, english)
		}
	}
	// Times say their zone.
	if at := page(t, ann.get("/console/audit"), http.StatusOK).Find(`[data-testid="audit-row"] time`).First().Text(); !strings.HasSuffix(at, " UTC") {
		t.Errorf("a line's time reads %q, without its zone", at)
	}
	// The CSV is English whoever reads it, with the event and its values.
	res = ann.get("/console/audit.csv")
	body := readAll(t, res)
	if !strings.Contains(body, "ann@shop3.example invited bob@shop3.example to the team as developer.,,") ||
		!strings.Contains(body, `invited,"[""bob@shop3.example"",""developer""]"`) {
		t.Errorf("the audit CSV read in Polish:\n%s", body)
	}
}
