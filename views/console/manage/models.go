// Package manage is the console's pages that change things rather than
// read them: operators' merchants, a shop's settings, the team
// and its invitations, a person's own account and two-step sign-in, the
// Developers page and the Branding page with its history. They wear the
// console's layout.
package manage

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
	"github.com/paybybank/checkout/views/console/passkeys"
)

// ConsoleMerchants is the operators' list of merchants and the form that
// makes one.
type ConsoleMerchants struct {
	console.ConsolePage
	Rows []ConsoleMerchantRow
	New  ConsoleNewMerchant
	// Created is the merchant just made, with its secrets shown once.
	Created *ConsoleCreated
	// OperatorsPasskeys is set when operators sign in with a passkey only;
	// PasskeysOff says why this deployment cannot use passkeys, and then
	// it cannot be required.
	OperatorsPasskeys bool
	PasskeysOff       string
	// PasskeysMismatch says who cannot sign in as their settings say while
	// passkeys are off (people with passkeys, operators under the rule).
	PasskeysMismatch []string
	// OperatorsPasskeysError is why the operator's proof (their password,
	// or a passkey) was refused; ProofByPasskey offers one of their
	// passkeys instead of the password (a script's).
	OperatorsPasskeysError string
	ProofByPasskey         bool
}

// ConsoleMerchantRow is one merchant in the list.
type ConsoleMerchantRow struct {
	ID, Name, State, Managed string
	ReadOnly, Disabled       bool
	Settings                 templ.SafeURL
	// Toggle disables an active merchant, enables a disabled one.
	Toggle templ.SafeURL
	// Unopened says why a merchant was disabled at start: its settings did
	// not open. Enabling it changes nothing until that is fixed.
	Unopened string
}

// ConsoleNewMerchant is the form that makes a merchant, as typed.
type ConsoleNewMerchant struct {
	ID, Name, ReturnOrigins string
	// Errors are the fields' reasons, by field name.
	Errors map[string]string
}

// ConsoleCreated is a new merchant's first secrets, shown once.
type ConsoleCreated struct {
	ID, Token, KID, LinkSecret string
}

// ConsoleSettings is a merchant's shop settings.
type ConsoleSettings struct {
	console.ConsolePage
	Merchants        []console.ConsoleOption
	MerchantID, Name string
	State, Managed   string
	// ReadOnly is a merchant the merchants file manages; MayChange a
	// person whose role changes the settings (an owner, an operator).
	Disabled, ReadOnly, MayChange bool
	Updated, UpdatedBy            string
	Form                          ConsoleShopForm
	// TimeZones are the zones offered, the form's chosen.
	TimeZones []console.ConsoleOption
}

// Locked reports a form shown read-only: the file manages the merchant, or
// the person may only read its settings.
func (m ConsoleSettings) Locked() bool { return m.ReadOnly || !m.MayChange }

// ConsoleShopForm is the shop settings form, as typed or as saved.
type ConsoleShopForm struct {
	MerchantID     string
	Version        string
	Name           string
	ReturnOrigins  string
	FrameAncestors string
	PopularBanks   string
	IPVerification bool
	Errors         map[string]string

	// Who is paid, and the shop's own account: AccountIBAN masked, with
	// IBANHint saying so, for a person who may only read the settings.
	LegalName, ContactEmail, ContactPhone, ContactURL string
	TermsURL, PrivacyURL, TimeZone                    string
	AccountName, AccountIBAN, AccountBIC, IBANHint    string
	RefundApprovalOver                                string

	// Newer are the values someone saved meanwhile, NewerBy who and when.
	Newer   []ConsoleValue
	NewerBy string
}

// ConsoleValue is a field's value, labelled.
type ConsoleValue struct{ Field, Label, Value string }

// ConsoleTeam is a merchant's team: its members, the invitations not yet
// used, and the form that invites someone.
type ConsoleTeam struct {
	console.ConsolePage
	Merchants        []console.ConsoleOption
	MerchantID, Name string
	// RequireTwoStep is on when every member must sign in with a code.
	RequireTwoStep bool
	// ReadOnly is a team the merchants file manages.
	ReadOnly bool
	Members  []ConsoleMember
	Roles    []console.ConsoleOption
	Pending  []ConsolePending
	Invite   ConsoleInviteForm
	// Link is a new invitation's link, shown once; LinkExpires when it
	// ends.
	Link, LinkExpires string
}

// ConsoleMember is one person on the team.
type ConsoleMember struct {
	Email, Role, RoleLabel, TwoStep, LastSignIn string
	// You is the person looking.
	You                bool
	RoleURL, RemoveURL templ.SafeURL
	// ResetURL resets their two-step sign-in: an operator's recovery of a
	// person who lost their authenticator; empty for anyone else.
	ResetURL templ.SafeURL
}

// ConsolePending is an invitation not yet used.
type ConsolePending struct {
	Email, Role, Expires string
}

// ConsoleInviteForm is the invitation form, as typed.
type ConsoleInviteForm struct {
	Email, Role string
	Errors      map[string]string
}

// ConsoleInvitation is the page an invitation's link opens.
type ConsoleInvitation struct {
	console.ConsolePage
	Email, Shop, Role string
	// Existing is a person with an account already: they give their
	// password instead of choosing one.
	Existing bool
	Action   templ.SafeURL
	Error    string
	Errors   map[string]string
}

// ConsoleAccount is a person's own account: their password and sessions.
type ConsoleAccount struct {
	console.ConsolePage
	Email string
	// TwoStep is on when the person signs in with a code too;
	// RecoveryLeft counts their unused recovery codes.
	TwoStep      bool
	RecoveryLeft int
	// MustSetUp says their team requires two-step sign-in.
	MustSetUp bool
	// Setup is a secret being set up; RecoveryCodes the codes shown once
	// when it is turned on.
	Setup         *ConsoleTwoStepSetup
	RecoveryCodes []string
	// FromFile is a person of the merchants file, whose password is
	// changed there.
	FromFile bool
	Errors   map[string]string
	Sessions []ConsoleSession
	// Passkeys are the person's passkeys and the form that adds one.
	Passkeys passkeys.Account
}

// ConsoleSession is one of the person's sessions.
type ConsoleSession struct {
	Device, Address, Seen, Since string
	// Current is the session looking.
	Current bool
}

// ConsoleTwoStepSetup is a two-step secret shown to be entered in an
// authenticator, as text and as a QR code (an SVG drawn by the server).
type ConsoleTwoStepSetup struct {
	Secret, QR string
	Error      string
}

// ConsoleCode is the sign-in's second step.
type ConsoleCode struct {
	console.ConsolePage
	Error string
	// Code asks for a code of the authenticator app (or a recovery code);
	// RecoveryOnly takes a recovery code alone, where a passkey is the
	// way in (operators, when the deployment requires it).
	Code, RecoveryOnly bool
	// Passkey offers the person's passkey; PasskeysOff says why this
	// deployment cannot use the ones they have.
	Passkey     bool
	PasskeysOff string
	// NoWay says the person has nothing here that finishes their sign-in
	// (no app, no passkey that may sign), and what to do.
	NoWay string
}

// ConsoleDevelopers is the Developers page: what a merchant's developer
// needs to call the API, and its tokens.
type ConsoleDevelopers struct {
	console.ConsolePage
	Merchants  []console.ConsoleOption
	MerchantID string
	// Query keeps an operator's merchant in the forms' addresses.
	Query    string
	ReadOnly bool
	// APIBase, Contract and Curl: the API's address, its OpenAPI
	// document's and a first call to copy.
	APIBase, Contract, Curl string
	Tokens                  []ConsoleToken
	Form                    ConsoleTokenForm
	// NewToken is a token just made, shown once.
	NewToken string
	// LinkKeys are the merchant's link keys; NewKID and NewSecret a key
	// just made, shown once; RetireUntil the default end of a retiring
	// key's links (datetime-local, UTC).
	LinkKeys          []ConsoleLinkKey
	NewKID, NewSecret string
	RetireUntil       string
	// Webhook is the endpoint's form; NewWebhookSecret a secret just made,
	// shown once.
	Webhook          ConsoleWebhookForm
	NewWebhookSecret string
	// Embed is the snippet that frames the checkout on the shop's page;
	// Framing says which origins may, or that none may yet.
	Embed, Framing string
	// Recent are the merchant's latest API requests.
	Recent []ConsoleAPIRequest
}

// ConsoleAPIRequest is one API request: never a body or an id.
type ConsoleAPIRequest struct {
	At, Method, Route, Status string
	Failed                    bool
}

// ConsoleWebhookForm is the webhook endpoint's forms, as typed.
type ConsoleWebhookForm struct {
	URL string
	// Secret says the secret's state; Overlapping while the old one signs
	// too.
	Secret      string
	Overlapping bool
	Overlap     string
	// SaveAnyway is ticked; PingFailed offers it.
	SaveAnyway, PingFailed bool
	Errors                 map[string]string
}

// ConsoleLinkKey is one link key, never its secret.
type ConsoleLinkKey struct {
	KID, State string
	// Opened counts orders first opened with the key in the last 24 hours.
	Opened   int64
	Retiring bool
	Retire   templ.SafeURL
}

// ConsoleToken is one API token, never its value.
type ConsoleToken struct {
	// LastUsed and Expires are said whole ("last used …", "never used",
	// "expires …", "no expiry").
	ID, Name, Prefix, Created, LastUsed, Expires string
	Expired, FromFile                            bool
	Revoke                                       templ.SafeURL
}

// ConsoleTokenForm is the form that makes a token, as typed.
type ConsoleTokenForm struct {
	Name, Expires string
	Errors        map[string]string
}

// ConsoleBranding is the Branding page: the editor of the
// merchant's draft look, its contrast checks and the previews of the
// shopper's pages in it.
type ConsoleBranding struct {
	console.ConsolePage
	Merchants  []console.ConsoleOption
	MerchantID string
	// ReadOnly is set for a merchant the merchants file manages.
	ReadOnly bool
	// DraftVersion and LiveVersion are the versions the form was made
	// from: a save or publish from older ones is told what is newer.
	DraftVersion, LiveVersion string
	Fields                    []BrandField
	Checks                    []BrandCheck
	// Page is the shopper's page previewed; Pages are those there are.
	Page  string
	Pages []console.ConsoleOption
	// PreviewQuery is the query every preview's address carries.
	PreviewQuery string
	// PreviewLink walks the sandbox checkout in the saved draft's look;
	// empty outside sandbox mode.
	PreviewLink templ.SafeURL
	// Accept and LogoSize say what a logo may be; LogoError why an upload
	// was refused.
	Accept, LogoSize, LogoError string
	// DraftBy and LiveBy say who saved the draft and published the live
	// look, and when.
	DraftBy, LiveBy string
	// Unpublished is set when the draft is not the live look.
	Unpublished bool
	// Confirm asks once more before publishing a look a check warns of.
	Confirm bool
	// Newer is what someone saved or published meanwhile.
	Newer *BrandNewer
}

// BrandField is one field of the look, as typed.
type BrandField struct {
	Name, Label, Hint, Value, Error string
	// Newer is the field's value someone saved meanwhile, when Conflict.
	Newer    string
	Conflict bool
	// Options make it a choice of the provider's values.
	Options []console.ConsoleOption
}

// BrandCheck is one contrast check of the look.
type BrandCheck struct {
	ID, Label, Ratio string
	Warn             bool
	// Field, Suggestion and Advice offer the nearest colour that passes.
	Field, Suggestion, Advice string
}

// BrandNewer is a look saved or published meanwhile.
type BrandNewer struct {
	Values  map[string]string
	Version string
}

// ConsoleBrandingHistory lists every look the merchant published.
type ConsoleBrandingHistory struct {
	console.ConsolePage
	Merchants   []console.ConsoleOption
	MerchantID  string
	ReadOnly    bool
	LiveVersion string
	Versions    []BrandVersion
}

// BrandVersion is one published look.
type BrandVersion struct {
	Version, At, By string
	// Reverted says which version it made live again, and what that
	// changed; empty for a look published from the editor.
	Reverted string
	// Changes are the fields it changed, with the values it gave them.
	Changes []BrandChange
	Live    bool
	// Thumb is its bank list's preview; Revert makes it live again.
	Thumb, Revert templ.SafeURL
}

// BrandChange is a field a published look changed and the value it gave
// it; Swatch is the colour itself, for a colour.
type BrandChange struct {
	Label, Value, Swatch string
}

// timeMark stands for a time in a translated sentence, so that the page can
// set the time itself apart (sentenceWithTime).
const timeMark = "\x00"

// before and after are the parts of a sentence around its timeMark.
func before(s string) string { b, _, _ := strings.Cut(s, timeMark); return b }
func after(s string) string  { _, a, _ := strings.Cut(s, timeMark); return a }

// ConsoleConfirm is the question asked before an action that cannot be
// taken back: the action's address, the form's values it carries, the
// button that does it, and the page to go back to.
type ConsoleConfirm struct {
	console.ConsolePage
	Question, Consequence, Yes string
	Action, Back               templ.SafeURL
	Carry                      []ConsoleCarried
}

// ConsoleCarried is a value of the form the confirmation passes on.
type ConsoleCarried struct {
	Name, Value string
}

// rowsFor is how many rows a box of one value per line needs to show
// every line of value and one more to type in: at least 3, at most 20
// (beyond, it scrolls), so that the line a refusal names is in sight.
func rowsFor(value string) string {
	n := strings.Count(strings.TrimRight(value, "\n"), "\n") + 2
	return strconv.Itoa(min(max(n, 3), 20))
}
