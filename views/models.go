// Package views renders the shopper's pages. Components take the plain view
// models of this file; they never see provider types and call nothing but
// the translations of package i18n, which the context carries.
package views

import "github.com/a-h/templ"

// Page is what every page's layout needs.
type Page struct {
	// Title is the document title, without the merchant's name.
	Title string
	// Merchant is the shop's name, shown in the header.
	Merchant string
	// Assets maps a static file to its versioned URL.
	Assets Assets
	// Scripts are extra static scripts the page loads (already versioned).
	Scripts []string
	Theme   Theme
	// Wide lays the page out for a desktop tool (the studio) rather than a
	// phone-sized checkout.
	Wide bool
	// Switch is the language switcher: a GET form to this page.
	Switch LanguageSwitch
}

// LanguageSwitch lets the shopper choose their language. It is a GET form
// back to the page, keeping the page's own query values.
type LanguageSwitch struct {
	Action    templ.SafeURL
	Keep      []Hidden
	Languages []Option
}

// Theme is the merchant's look: the header's title and logo, and the CSS
// custom properties the layout sets once.
type Theme struct {
	Title      string
	LogoURL    string
	LogoHeight string
	// CSS sets the custom properties; built by package theme from checked
	// values only.
	CSS string
}

// Assets are the versioned URLs of the static files every page uses.
type Assets struct {
	CSS string
	// ConsoleCSS styles the console's pages, apart from the shopper's.
	ConsoleCSS string
	BanksJS    string
	// FrameJS tells a merchant's page around an iframe how tall we are.
	FrameJS string
	// StudioJS updates the studio's preview as a designer types.
	StudioJS string
	// StatusJS checks a pending payment again without reloading.
	StatusJS string
	// FormJS takes the focus from the error summary to a field.
	FormJS string
	// Favicon is the tab's icon: a bank front.
	Favicon string
	// HandoffJS follows the order while the shopper pays on their phone.
	HandoffJS string
}

// Summary is the order beside every step: who is paid and how much.
type Summary struct {
	Merchant string
	Amount   string
	OrderID  string
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
	Page
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
	Page
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

// Option is one choice of a select or a radio group.
type Option struct {
	Value    string
	Label    string
	Selected bool
}

// Field kinds.
const (
	KindText   = "text"
	KindSelect = "select"
	KindRadio  = "radio"
)

// Field is one input of the details form.
type Field struct {
	Kind         string
	Name         string
	ID           string
	Label        string
	Hint         string
	Value        string
	Autocomplete string
	InputMode    string
	MaxLength    int
	Required     bool
	// Uppercase asks phones for capital letters (IBAN, BIC).
	Uppercase bool
	Options   []Option
	// EmptyOption labels a select's empty choice; "Choose…" when unset.
	EmptyOption string
	Error       string
}

// Hidden is a value the form carries back unseen.
type Hidden struct {
	Name  string
	Value string
}

// FieldError is one line of the error summary, linking to its field.
type FieldError struct {
	ID      string
	Message string
}

// PayPage is the details form, or the one-click summary when the bank needs
// no details.
type PayPage struct {
	Page
	Summary  Summary
	BankName string
	// BankLogo is the app's address of the bank's logo; without one its
	// initials (BankInitials on BankTone) stand in.
	BankLogo     string
	BankInitials string
	BankTone     int
	Action       templ.SafeURL
	Hidden       []Hidden
	Fields       []Field
	Errors       []FieldError
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
	Page
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
	Page
	Status   int
	Heading  string
	Message  string
	RetryURL templ.SafeURL
	// WayBackURL leads back to the shop (ShopName), signed with the order's
	// status; empty outside a checkout.
	WayBackURL templ.SafeURL
	ShopName   string
}

// DemoShopPage is the demo merchant's return page in sandbox mode.
type DemoShopPage struct {
	Page
	OrderID  string
	Status   string
	Verified bool
	// Hooks are the webhooks the demo shop received for the order.
	Hooks []DemoHook
}

// DemoHook is one webhook the demo shop received.
type DemoHook struct {
	EventID  string
	Status   string
	Verified bool
}

// Ratio is one WCAG contrast check of the studio.
type Ratio struct {
	ID    string
	Label string
	Text  string
	// Warn is set below 4.5:1.
	Warn bool
}

// StudioPage is the designers' studio: a form for every field of the
// customization, a preview of three shopper pages in the draft's look, the
// contrast checks and the JSON to paste into MERCHANTS_FILE.
type StudioPage struct {
	Page
	Action    templ.SafeURL
	Merchants []Option
	Fields    []Field
	Errors    []FieldError
	Ratios    []Ratio
	JSON      string
	// PreviewLink is a signed checkout link in the draft's look (sandbox
	// mode only).
	PreviewLink templ.SafeURL
	// Sample content of the preview.
	Summary    Summary
	Banks      []BankRow
	Form       []Field
	StatusHead string
	StatusText string
}

// ToBankPage leads from a merchant's frame to the bank's page.
type ToBankPage struct {
	Page
	Summary  Summary
	BankName string
	Link     templ.SafeURL
}

// HandoffPage moves a checkout to the shopper's phone.
type HandoffPage struct {
	Page
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
