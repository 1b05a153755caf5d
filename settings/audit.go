package settings

import (
	"reflect"
	"strings"

	"github.com/paybybank/checkout/ledger"
)

// The audit log's events: what a line says was done, each a sentence
// "audit.<event>" of the console's catalog whose first value is the actor
// and whose others are the line's arguments, in the order given here.
const (
	// EventSettingsChanged: the fields changed (ledger.Fields).
	EventSettingsChanged = "settingsChanged"
	// EventRestartAddress: the fields the sandbox's start changed to its
	// own address.
	EventRestartAddress = "restartAddress"
	// EventTwoStepRequired and EventTwoStepNotRequired: the team's rule.
	EventTwoStepRequired    = "twoStepRequired"
	EventTwoStepNotRequired = "twoStepNotRequired"
	// EventLinkKeyMade: the key's id.
	EventLinkKeyMade = "linkKeyMade"
	// EventLinkKeyRetired: the key's id, when its links stop working.
	EventLinkKeyRetired = "linkKeyRetired"
	// EventWebhookSet and EventWebhookSetWithSecret: the endpoint.
	EventWebhookSet           = "webhookSet"
	EventWebhookSetWithSecret = "webhookSetWithSecret"
	// EventWebhookRolled: how long the old secret signs beside the new.
	EventWebhookRolled       = "webhookRolled"
	EventWebhookRolledAtOnce = "webhookRolledAtOnce"
	EventWebhookOverlapEnded = "webhookOverlapEnded"
	// EventBrandDraftSaved: the look's fields that differ from the live look.
	EventBrandDraftSaved = "brandDraftSaved"
	// EventBrandPublished: the version, the fields it changed.
	EventBrandPublished = "brandPublished"
	// EventBrandReverted: the version, the version made live again.
	EventBrandReverted = "brandReverted"
	// EventLogoUploaded: its name, type, width, height and size in bytes.
	EventLogoUploaded = "logoUploaded"
	// EventMerchantAdded: the merchant's id (the console's).
	EventMerchantAdded = "merchantAdded"
	// EventDemoAdded: the demo shop of sandbox mode.
	EventDemoAdded = "demoAdded"
	// EventMerchantFileAdded and EventMerchantFileChanged: the fields
	// the merchants file set.
	EventMerchantFileAdded   = "merchantFileAdded"
	EventMerchantFileChanged = "merchantFileChanged"
	// EventMerchantFileBack: back in the merchants file, the fields.
	EventMerchantFileBack = "merchantFileBack"
	// EventMerchantLeftFile: disabled, having left the merchants file.
	EventMerchantLeftFile = "merchantLeftFile"
	EventMerchantDisabled = "merchantDisabled"
	EventMerchantEnabled  = "merchantEnabled"
	// EventDisabledAtStart: why its settings do not open (ledger.Reason:
	// merchant.UnopenedKey, UnopenedFile or UnopenedDamaged).
	EventDisabledAtStart = "disabledAtStart"
	// EventMerchantImported: moved from the merchants file to the console.
	EventMerchantImported = "merchantImported"
	// EventPersonImported: the person's e-mail.
	EventPersonImported = "personImported"
	// EventOperatorAdded and EventOperatorPassword: the operator's
	// e-mail (the command line's operator add, or the merchants file).
	EventOperatorAdded    = "operatorAdded"
	EventOperatorPassword = "operatorPassword"
	// EventDemoPassword: the demo operator's e-mail.
	EventDemoPassword = "demoPassword"
	// EventTokenMade: the token's name and prefix; EventTokenMadeExpiring
	// adds when it expires.
	EventTokenMade         = "tokenMade"
	EventTokenMadeExpiring = "tokenMadeExpiring"
	// EventTokenRevoked: the token's name and prefix.
	EventTokenRevoked = "tokenRevoked"
	// EventFileTokenAdded and EventFileTokenRevoked: the merchants file's
	// token's prefix.
	EventFileTokenAdded   = "fileTokenAdded"
	EventFileTokenRevoked = "fileTokenRevoked"
	// EventPersonAdded, EventPersonRemoved: the person's e-mail;
	// EventPersonChanged adds the fields.
	EventPersonAdded   = "personAdded"
	EventPersonChanged = "personChanged"
	EventPersonRemoved = "personRemoved"
	// EventInvited and EventInvitedAgain (an earlier invitation withdrawn):
	// the e-mail and the role.
	EventInvited      = "invited"
	EventInvitedAgain = "invitedAgain"
	// EventInvitationRevoked: the e-mail.
	EventInvitationRevoked = "invitationRevoked"
	// EventJoined and EventJoinedNew (a new person, their password
	// chosen): the role.
	EventJoined    = "joined"
	EventJoinedNew = "joinedNew"
	// EventRoleChanged: the e-mail and the role.
	EventRoleChanged = "roleChanged"
	// EventMemberRemoved: the e-mail.
	EventMemberRemoved = "memberRemoved"
	// EventPasswordChanged: the person changed their own password.
	EventPasswordChanged = "passwordChanged"
	// EventLanguageChosen: the language.
	EventLanguageChosen = "languageChosen"
	// EventTwoStepOn and EventTwoStepOff: the person's own.
	EventTwoStepOn  = "twoStepOn"
	EventTwoStepOff = "twoStepOff"
	// EventTwoStepReset: whose, by an operator.
	EventTwoStepReset = "twoStepReset"
	// EventTwoStepResetPasskeys: whose, and the names of the passkeys
	// removed with it.
	EventTwoStepResetPasskeys = "twoStepResetPasskeys"
	// EventOperatorPasswordPasskeys: the operator's e-mail, and the names
	// of the passkeys removed with their old password.
	EventOperatorPasswordPasskeys = "operatorPasswordPasskeys"
	// EventPasskeyAdded: the passkey's name, the device it was made on
	// (ledger.Device).
	EventPasskeyAdded = "passkeyAdded"
	// EventPasskeyRemoved: the passkey's name.
	EventPasskeyRemoved = "passkeyRemoved"
	// EventPasskeyNewDevice: the passkey's name, the device it signed in
	// from for the first time.
	EventPasskeyNewDevice = "passkeyNewDevice"
	// EventPasskeySuspended: the passkey's name, the device; its counter
	// went backwards, and the sessions it started were ended.
	EventPasskeySuspended = "passkeySuspended"
	// EventOperatorsPasskeys and EventOperatorsPasskeysNot: the
	// deployment's rule that operators sign in with a passkey.
	EventOperatorsPasskeys    = "operatorsPasskeys"
	EventOperatorsPasskeysNot = "operatorsPasskeysNot"
	// EventPaymentLinkMade and EventReusableLinkMade: the link's
	// reference, its amount with its currency, when it expires (never the
	// payer's e-mail; package links writes them).
	EventPaymentLinkMade  = "paymentLinkMade"
	EventReusableLinkMade = "reusableLinkMade"
	// EventPaymentLinkCancelled: the link's reference.
	EventPaymentLinkCancelled = "paymentLinkCancelled"
	// EventPaymentLinkEmailed: the link's reference, the language of the
	// e-mail (never the address).
	EventPaymentLinkEmailed = "paymentLinkEmailed"
	// EventMailRefused: what the e-mail was for (a link's reference), and
	// the bound it reached (ledger.Reason: links.MailBoundReason); never
	// the address.
	EventMailRefused = "mailRefused"
	// EventRefundMade: the refund's id, its order, its amount with its
	// currency.
	EventRefundMade = "refundMade"
	// EventRefundAccount: the refund's id, the payer's IBAN masked, who
	// gave it (ledger.Reason "refund-by-payer", "-console" or "-api").
	EventRefundAccount = "refundAccount"
	// EventRefundApproved, EventRefundCancelled, EventRefundSent (paid by
	// hand or QR code) and EventRefundBooked (seen leaving by a person):
	// the refund's id.
	EventRefundApproved  = "refundApproved"
	EventRefundCancelled = "refundCancelled"
	EventRefundSent      = "refundSent"
	EventRefundBooked    = "refundBooked"
	// EventRefundEmailed: the refund's id, the language of the e-mail of
	// its page (never the address).
	EventRefundEmailed = "refundEmailed"
	// EventStatementImported: the file's name, its account masked, its
	// entries, those that matched, those left for a person.
	EventStatementImported = "statementImported"
	// EventTransferMade: the transfer file's id, its refunds, its total
	// with its currency.
	EventTransferMade = "transferMade"
)

// Events are every event the settings write, for the tests that hold the
// catalog to them.
var Events = []string{
	EventSettingsChanged, EventRestartAddress, EventTwoStepRequired, EventTwoStepNotRequired,
	EventLinkKeyMade, EventLinkKeyRetired, EventWebhookSet, EventWebhookSetWithSecret,
	EventWebhookRolled, EventWebhookRolledAtOnce, EventWebhookOverlapEnded,
	EventBrandDraftSaved, EventBrandPublished, EventBrandReverted, EventLogoUploaded,
	EventMerchantAdded, EventDemoAdded, EventMerchantFileAdded, EventMerchantFileChanged,
	EventMerchantFileBack, EventMerchantLeftFile, EventMerchantDisabled, EventMerchantEnabled,
	EventDisabledAtStart, EventMerchantImported, EventPersonImported, EventOperatorAdded,
	EventOperatorPassword, EventDemoPassword, EventTokenMade, EventTokenMadeExpiring,
	EventTokenRevoked, EventFileTokenAdded, EventFileTokenRevoked, EventPersonAdded,
	EventPersonChanged, EventPersonRemoved, EventInvited, EventInvitedAgain,
	EventInvitationRevoked, EventJoined, EventJoinedNew, EventRoleChanged, EventMemberRemoved,
	EventPasswordChanged, EventLanguageChosen, EventTwoStepOn, EventTwoStepOff, EventTwoStepReset,
	EventTwoStepResetPasskeys, EventOperatorPasswordPasskeys, EventPasskeyAdded, EventPasskeyRemoved,
	EventPasskeyNewDevice, EventPasskeySuspended, EventOperatorsPasskeys, EventOperatorsPasskeysNot,
	EventPaymentLinkMade, EventReusableLinkMade, EventPaymentLinkCancelled, EventPaymentLinkEmailed, EventMailRefused,
	EventRefundMade, EventRefundAccount, EventRefundApproved, EventRefundCancelled, EventRefundSent, EventRefundBooked,
	EventRefundEmailed, EventTransferMade, EventStatementImported,
}

// Actors that are not people, said from the catalog's "audit.actor.<name>";
// a person is said by their e-mail.
var Actors = map[string]string{ByFile: "file", ByCommand: "command", BySandbox: "sandbox", ByStart: "start"}

// said is an audit line's event and its values.
type said struct {
	event string
	args  []ledger.AuditArg
}

func say(event string, args ...ledger.AuditArg) said { return said{event, args} }

// line is the audit line of s, by actor on merchantID.
func (s said) line(by Actor, merchantID string) ledger.AuditEntry {
	return ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: merchantID, Event: s.event, Args: s.args}
}

// FieldNames are every field name an audit line's ledger.Fields may hold:
// the settings' (as changed names them), the look's and a person's.
func FieldNames() []string {
	names := []string{"name", "operator", "password"}
	t := reflect.TypeFor[doc]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return append(names, LookFields...)
}
