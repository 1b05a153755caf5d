// Package checkout is the shopper's pages: the countries, the banks, the
// details form, the way to the bank, the phone handoff, the status and error
// pages (which the console's Branding page previews in a draft look). Components take the plain view
// models of this file, over the views kit (the layout and the form fields);
// they never see provider types and call nothing but the translations of
// package i18n, which the context carries.
package checkout

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views"
)

// Summary is the order beside every step: who is paid and how much.
type Summary struct {
	Merchant string
	Amount   string
	OrderID  string
	// Linked is set for an order of a payment link: its order id is the
	// link's reference, and Description says what is paid for.
	Linked      bool
	Description string
}

// CountryOption is one country to choose.
type CountryOption struct {
	Code      string
	Name      string
	URL       templ.SafeURL
	Suggested bool
}

// CountryPage lists the countries that have banks.
type CountryPage struct {
	views.Page
	Summary   templ.Component
	Countries []CountryOption
}

// BankRow is one bank in the list.
type BankRow struct {
	ID   string
	Name string
	// LogoURL is the app's own address of the bank's logo; "" when the
	// bank has none, and its initials stand in (Initials on Tone, 0 to 5).
	LogoURL  string
	Initials string
	Tone     int
	URL      templ.SafeURL
	LastUsed bool
	// Degraded: the bank's payments are failing more often than usual
	// right now (bank health).
	Degraded bool
	// KnownAs lists the bank's other names (former names, short forms),
	// shown under its name so that a shopper who knows it by one of them
	// recognises it; "" for most banks.
	KnownAs string
	// Search is the folded text the filter script matches against: the
	// name, the other names and the BIC.
	Search string
}

// BanksPage lists a country's banks with a search box. It is the same for
// every shopper but for Top and LastUsed, so that it can be kept rendered:
// its links are relative to the checkout's address.
type BanksPage struct {
	views.Page
	// Top is the shopper's order and the country line.
	Top templ.Component
	// LastUsed is the shopper's own bank row, or nothing.
	LastUsed    templ.Component
	Country     string
	CountryName string
	Query       string
	Action      templ.SafeURL
	// Popular are the banks most paid with in the country (or the
	// merchant's choice), shown first.
	Popular []BankRow
	// Banks are the banks shown: every match, or one range of them.
	Banks []BankRow
	// Matches is the number of banks matching the search; Total is the
	// number in the country.
	Matches int
	Total   int
	// Ranges split a long list into pages by name, each a plain link.
	Ranges []BankRange
	// Elsewhere are other countries whose banks match the search.
	Elsewhere []Elsewhere
	// ChangeCountryURL leads back to the countries.
	ChangeCountryURL templ.SafeURL
	// Stale is set when the provider is failing and the list may be old.
	Stale bool
}

// Elsewhere is another country where banks match the search.
type Elsewhere struct {
	Country     string
	CountryName string
	Count       int
	URL         templ.SafeURL
}

// BankRange is one page of a long bank list: the names it runs between.
type BankRange struct {
	Label   string
	URL     templ.SafeURL
	Current bool
}

// BanksTop is the shopper's part of the bank page's head.
type BanksTop struct {
	Summary          Summary
	CountryName      string
	ChangeCountryURL templ.SafeURL
}

// PayPage is the details form, or the one-click summary when the bank needs
// no details.
type PayPage struct {
	views.Page
	Summary  Summary
	BankName string
	// BankLogo is the app's address of the bank's logo; without one its
	// initials (BankInitials on BankTone) stand in.
	BankLogo     string
	BankInitials string
	BankTone     int
	Action       templ.SafeURL
	Hidden       []views.Hidden
	Fields       []views.Field
	Errors       []views.FieldError
	// Problem is an error that belongs to no field: the provider failed.
	Problem       string
	ChangeBankURL templ.SafeURL
	// Degraded: the bank's payments are failing more often than usual
	// right now; the shopper may still go on, or change bank.
	Degraded bool
	// WayBackURL, when set, leads back to the shop below the form: when
	// the form cannot be taken for a moment on our side.
	WayBackURL templ.SafeURL
}

// Status kinds a shopper tells apart.
const (
	StatusPending    = "pending"
	StatusAccepted   = "accepted"
	StatusPaid       = "paid"
	StatusCanceled   = "canceled"
	StatusProcessing = "processing"
	StatusChecking   = "checking"
)

// StatusPage shows where the payment stands.
type StatusPage struct {
	// Begun is set once the order has a payment at the provider (the
	// computer's page of a checkout paid on a phone watches for it).
	Begun bool
	views.Page
	Summary Summary
	Kind    string
	Heading string
	Message string
	// Refresh is the seconds until the page reloads itself; 0 when final.
	Refresh    int
	RefreshURL string
	WayBackURL templ.SafeURL
	// TryAgainURL leads back to the banks after a cancelled payment; empty
	// otherwise.
	TryAgainURL templ.SafeURL
}

// ErrorPage tells a shopper what went wrong and what to do.
type ErrorPage struct {
	views.Page
	Status   int
	Heading  string
	Message  string
	RetryURL templ.SafeURL
	// WayBackURL leads back to the shop (ShopName), signed with the order's
	// status; empty outside a checkout.
	WayBackURL templ.SafeURL
	ShopName   string
	// Linked: the checkout came from a payment link, whose way back is
	// the payer's receipt, not the shop.
	Linked bool
}

// ToBankPage leads from a merchant's frame to the bank's page.
type ToBankPage struct {
	views.Page
	Summary  Summary
	BankName string
	Link     templ.SafeURL
}

// HandoffPage moves a checkout to the shopper's phone.
type HandoffPage struct {
	views.Page
	Summary Summary
	// QR is the SVG of PhoneURL's QR code, drawn by the handler.
	QR string
	// PhoneURL opens the same checkout, for a few minutes.
	PhoneURL templ.SafeURL
	// ResultURL is the order's status page here.
	ResultURL templ.SafeURL
	// HereURL goes on with the checkout on this computer.
	HereURL templ.SafeURL
}

// LinkPage is what a payment link's address shows when it starts no
// checkout: Heading and Message say why (empty for a plain receipt), State
// names the link's state in English, and Receipt is its payment's, if any.
type LinkPage struct {
	views.Page
	Heading string
	Message string
	State   string
	Receipt *Receipt
	// Refresh reloads the page after that many seconds (RefreshURL) while
	// the payment is under way; 0 when it is final.
	Refresh    int
	RefreshURL string
	// RetryURL, when set, is a way to look again now.
	RetryURL templ.SafeURL
}

// Receipt is a payment link's payment as the payer keeps it.
type Receipt struct {
	// Kind is one of the status kinds (StatusPaid…), Status its words.
	Kind        string
	Status      string
	Amount      string
	Merchant    string
	Description string
	Reference   string
	Date        string
	Bank        string
}

// RefundPage is a refund's page for its payer: who gives back how much,
// for which order and why, then the form for their account or where the
// refund stands.
type RefundPage struct {
	views.Page
	Shop    string
	Amount  string
	OrderID string
	Reason  string
	// State is the refund's state's English name.
	State   string
	Heading string
	Message string
	// Note, when set, is said above all (an account given already).
	Note string
	// Masked is the account given, masked.
	Masked string
	// Form is set while the refund waits for the payer's account.
	Form   bool
	Action templ.SafeURL
	Fields []views.Field
	Errors []views.FieldError
}

// StartPage is the app's own address: in sandbox mode a newcomer's start
// with a demo checkout, in live mode what the service is; in both, where
// the console is.
type StartPage struct {
	views.Page
	// Sandbox is set when the provider is the built-in sandbox.
	Sandbox bool
	// AppName is the product's name, in the visitor's language.
	AppName string
	// DemoURL is a signed link of a new demo order, and DemoAmount its
	// amount as the language writes it; empty without the demo merchant.
	DemoURL    templ.SafeURL
	DemoAmount string
	// ConsoleURL is the console's address, shown whole.
	ConsoleURL templ.SafeURL
}
