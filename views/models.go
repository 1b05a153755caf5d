// Package views is the kit every audience's pages are built on: the layout
// of the shopper's and the demo shop's pages with its theme and language
// switcher, the form fields and their errors, the versioned static files,
// and a name's initials. The pages live in packages of their own:
// views/checkout (shoppers), views/console (the people who run a shop) and
// views/demo (the sandbox's demo shop). Components take plain view models;
// they never see provider types and call nothing but the translations of
// package i18n, which the context carries.
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
	// BrandingJS updates the Branding page's previews as a designer types.
	BrandingJS string
	// StatusJS checks a pending payment again without reloading.
	StatusJS string
	// FormJS takes the focus from the error summary to a field.
	FormJS string
	// CopyJS shows the console's Copy buttons of one-time secrets.
	CopyJS string
	// Favicon is the tab's icon: a bank front.
	Favicon string
	// HandoffJS follows the order while the shopper pays on their phone.
	HandoffJS string
	// PasskeysJS runs the console's WebAuthn ceremonies: adding a
	// passkey, signing in with one.
	PasskeysJS string
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
