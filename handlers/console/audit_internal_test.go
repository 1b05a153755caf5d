package console

import (
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
)

// sampleLines are a line of every event the settings write, with values
// of the kinds each is written with.
var sampleLines = map[string][]ledger.AuditArg{
	settings.EventSettingsChanged:      {ledger.Fields("name", "return_origins", "webhook_secret:rolled")},
	settings.EventRestartAddress:       {ledger.Fields("return_origins", "webhook_url")},
	settings.EventTwoStepRequired:      nil,
	settings.EventTwoStepNotRequired:   nil,
	settings.EventLinkKeyMade:          {ledger.Text("2026-11-26")},
	settings.EventLinkKeyRetired:       {ledger.Text("2026-11-26"), ledger.Moment(time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC))},
	settings.EventWebhookSet:           {ledger.Text("https://shop.example/hooks")},
	settings.EventWebhookSetWithSecret: {ledger.Text("https://shop.example/hooks")},
	settings.EventWebhookRolled:        {ledger.Duration(24 * time.Hour)},
	settings.EventWebhookRolledAtOnce:  nil,
	settings.EventWebhookOverlapEnded:  nil,
	settings.EventBrandDraftSaved:      {ledger.Fields("primaryColor", "radius")},
	settings.EventBrandPublished:       {ledger.Count(2), ledger.Fields("primaryColor")},
	settings.EventBrandReverted:        {ledger.Count(3), ledger.Count(1)},
	settings.EventLogoUploaded: {ledger.Text("ab12.png"), ledger.Text("image/png"), ledger.Count(400), ledger.Count(120),
		ledger.Count(23456)},
	settings.EventMerchantAdded:       {ledger.Text("shop9"), ledger.Text("pbb_live_Ab3d")},
	settings.EventDemoAdded:           nil,
	settings.EventMerchantFileAdded:   {ledger.Fields("name", "link_keys:set")},
	settings.EventMerchantFileChanged: {ledger.Fields("name")},
	settings.EventMerchantFileBack:    {ledger.Fields()},
	settings.EventMerchantLeftFile:    nil,
	settings.EventMerchantDisabled:    nil,
	settings.EventMerchantEnabled:     nil,
	settings.EventDisabledAtStart:     {ledger.Reason(merchant.UnopenedKey)},
	settings.EventMerchantImported:    nil,
	settings.EventPersonImported:      {ledger.Text("bob@shop.example")},
	settings.EventOperatorAdded:       {ledger.Text("ops@psp.example")},
	settings.EventOperatorPassword:    {ledger.Text("ops@psp.example")},
	settings.EventDemoPassword:        {ledger.Text(merchant.DemoConsoleEmail)},
	settings.EventTokenMade:           {ledger.Text("shop server"), ledger.Text("pbb_live_Ab3d")},
	settings.EventTokenMadeExpiring: {ledger.Text("shop server"), ledger.Text("pbb_live_Ab3d"),
		ledger.Moment(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))},
	settings.EventTokenRevoked:             {ledger.Text("shop server"), ledger.Text("pbb_live_Ab3d")},
	settings.EventFileTokenAdded:           {ledger.Text("a-ne")},
	settings.EventFileTokenRevoked:         {ledger.Text("a-ne")},
	settings.EventPersonAdded:              {ledger.Text("bob@shop.example")},
	settings.EventPersonChanged:            {ledger.Text("bob@shop.example"), ledger.Fields("operator", "password:set")},
	settings.EventPersonRemoved:            {ledger.Text("bob@shop.example")},
	settings.EventInvited:                  {ledger.Text("bob@shop.example"), ledger.Role("developer")},
	settings.EventInvitedAgain:             {ledger.Text("bob@shop.example"), ledger.Role("viewer")},
	settings.EventInvitationRevoked:        {ledger.Text("bob@shop.example")},
	settings.EventJoined:                   {ledger.Role("support")},
	settings.EventJoinedNew:                {ledger.Role("designer")},
	settings.EventRoleChanged:              {ledger.Text("bob@shop.example"), ledger.Role("owner")},
	settings.EventMemberRemoved:            {ledger.Text("bob@shop.example")},
	settings.EventPasswordChanged:          nil,
	settings.EventLanguageChosen:           {ledger.Language("pl")},
	settings.EventTwoStepOn:                nil,
	settings.EventTwoStepOff:               nil,
	settings.EventTwoStepReset:             {ledger.Text("bob@shop.example")},
	settings.EventTwoStepResetPasskeys:     {ledger.Text("bob@shop.example"), ledger.Text("Laptop, YubiKey")},
	settings.EventOperatorPasswordPasskeys: {ledger.Text("ops@psp.example"), ledger.Text("Laptop")},
	settings.EventPasskeyAdded:             {ledger.Text("MacBook Touch ID"), ledger.Device("Safari/macOS")},
	settings.EventPasskeyRemoved:           {ledger.Text("MacBook Touch ID")},
	settings.EventPasskeyNewDevice:         {ledger.Text("MacBook Touch ID"), ledger.Device("Safari/iPhone")},
	settings.EventPasskeySuspended:         {ledger.Text("YubiKey"), ledger.Device("/")},
	settings.EventOperatorsPasskeys:        nil,
	settings.EventOperatorsPasskeysNot:     nil,
	settings.EventPaymentLinkMade:          {ledger.Text("INV-2026-117"), ledger.Text("120.50 EUR"), ledger.Moment(time.Date(2026, 12, 26, 16, 0, 0, 0, time.UTC))},
	settings.EventReusableLinkMade:         {ledger.Text("FEE-2026"), ledger.Text("25.00 EUR"), ledger.Moment(time.Date(2026, 12, 26, 16, 0, 0, 0, time.UTC))},
	settings.EventPaymentLinkCancelled:     {ledger.Text("INV-2026-117")},
	settings.EventPaymentLinkEmailed:       {ledger.Text("INV-2026-117"), ledger.Language("de")},
	settings.EventMailRefused:              {ledger.Text("INV-2026-117"), ledger.Reason("mail-address")},
	settings.EventRefundMade:               {ledger.Text("rf_abcdefghijklmnop"), ledger.Text("A-1"), ledger.Text("24.95 EUR")},
	settings.EventRefundAccount:            {ledger.Text("rf_abcdefghijklmnop"), ledger.Text("DE89 **** **** **** 3000"), ledger.Reason("refund-by-console")},
	settings.EventRefundApproved:           {ledger.Text("rf_abcdefghijklmnop")},
	settings.EventRefundCancelled:          {ledger.Text("rf_abcdefghijklmnop")},
	settings.EventRefundSent:               {ledger.Text("rf_abcdefghijklmnop")},
	settings.EventRefundBooked:             {ledger.Text("rf_abcdefghijklmnop")},
	settings.EventRefundEmailed:            {ledger.Text("rf_abcdefghijklmnop"), ledger.Language("fr")},
	settings.EventTransferMade:             {ledger.Text("tr_abcdefghijklmnop"), ledger.Count(3), ledger.Text("74.85 EUR")},
	settings.EventStatementImported:        {ledger.Text("camt053-2026-12-01.xml"), ledger.Text("DE89 **** **** **** 3000"), ledger.Count(12), ledger.Count(9), ledger.Count(3)},
}

// TestEveryAuditLineReadsInEveryLanguage: every event the settings write,
// said by each of its actors with every field a change can name, reads as
// a whole sentence in each of the console's languages: no sentence or word
// missing from a catalog, no value left over or lacking.
func TestEveryAuditLineReadsInEveryLanguage(t *testing.T) {
	for _, event := range settings.Events {
		if _, ok := sampleLines[event]; !ok {
			t.Errorf("event %q has no sample line here: add one", event)
		}
	}
	every := []ledger.AuditArg{ledger.Fields(settings.FieldNames()...),
		ledger.Reason(merchant.UnopenedKey), ledger.Reason(merchant.UnopenedFile), ledger.Reason(merchant.UnopenedDamaged),
		ledger.Reason(links.MailBoundReason(mailer.BoundThing)), ledger.Reason(links.MailBoundReason(mailer.BoundAddress)),
		ledger.Reason(links.MailBoundReason(mailer.BoundMerchant)),
		ledger.Duration(time.Hour), ledger.Duration(90 * time.Minute)}
	for _, by := range []string{refunds.ByPayer, refunds.ByConsole, refunds.ByAPI} {
		every = append(every, ledger.Reason("refund-by-"+by))
	}
	for _, secret := range []string{"set", "rolled", "removed"} {
		every = append(every, ledger.Fields("webhook_secret:"+secret))
	}
	actors := []string{"ann@shop.example", refunds.ByPayer}
	for actor := range settings.Actors {
		actors = append(actors, actor)
	}
	for _, choice := range i18n.StaffChoices() {
		l := i18n.Staff(choice.Code)
		for event, args := range sampleLines {
			for _, actor := range actors {
				said := sayAudit(l, ledger.AuditEntry{Event: event, Actor: actor, Args: args})
				if strings.Contains(said, i18n.Missing) || strings.Contains(said, "%!") || strings.Contains(said, "%s") {
					t.Errorf("%s: %s by %s reads %q", choice.Code, event, actor, said)
				}
			}
		}
		for _, a := range every {
			if said := sayArg(l, a); strings.Contains(said, i18n.Missing) || strings.Contains(said, "%!") {
				t.Errorf("%s: %s %q reads %q", choice.Code, a.Kind, a.Value, said)
			}
		}
	}
}

// TestAnAuditLinesValuesStayWhole: on the audit page a value that is one
// word (a token's prefix, which may hold a hyphen; an order's id) is set
// apart to be kept on one line, and the parts read as the whole sentence.
func TestAnAuditLinesValuesStayWhole(t *testing.T) {
	e := ledger.AuditEntry{Actor: "anna@shop.example", Event: settings.EventTokenMade, Args: []ledger.AuditArg{ledger.Text("CI"), ledger.Text("pbb_test_n-pn")}}
	l := i18n.Staff("en")
	var whole strings.Builder
	kept := false
	for _, p := range auditParts(l, e) {
		whole.WriteString(p.Text)
		kept = kept || p.Keep && p.Text == "pbb_test_n-pn"
	}
	if whole.String() != sayAudit(l, e) || !kept {
		t.Errorf("the parts %+v read %q, want %q with the prefix kept whole", auditParts(l, e), whole.String(), sayAudit(l, e))
	}
}
