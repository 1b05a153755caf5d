// Package links is the console's pages of payment links: the list with its
// form, one link with its address, QR code, e-mail, orders and funnel. Its
// components take the plain view models of this file, over the console's
// layout.
package links

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
)

// FieldError is a refused field, as the error summary links to it.
type FieldError struct {
	ID      string
	Message string
}

// Form is the form that makes a link, as typed.
type Form struct {
	Amount, Description, Reference, Email, Lang, ExpiresDays, ExpiresHours, Kind, MaxPayments string
	Languages                                                                                 []console.ConsoleOption
	// Errors are the refusals by field id; Summary lists them in the
	// form's order.
	Errors  map[string]string
	Summary []FieldError
	// Taken leads to the link or order that has the reference typed.
	Taken templ.SafeURL
	// MailReady: e-mail is set up (SMTP_URL), so a payer's address is
	// written to.
	MailReady bool
	// Merchant is the operator's merchant, sent back with the form.
	Merchant string
}

// Row is one link in the list.
type Row struct {
	URL         templ.SafeURL
	Reference   string
	Description string
	Amount      string
	State       string
	StateWord   string
	Kind        string
	Payments    string
	Created     string
	Expires     string
}

// List is the payment links page: the form (for those who may make links)
// and the list, filtered by state and searched.
type List struct {
	console.ConsolePage
	Merchants []console.ConsoleOption
	MayMake   bool
	Form      Form
	// Query and States are the list's filters as given.
	Query    string
	States   []console.ConsoleOption
	Merchant string
	Rows     []Row
	Searched bool
	// StateError says the state filter could not be read.
	StateError  string
	Next, First templ.SafeURL
	CSV         templ.SafeURL
}

// Step is one step of a link's funnel.
type Step struct {
	Label string
	Count string
}

// Order is one of a link's orders.
type Order struct {
	ID      string
	URL     templ.SafeURL
	Amount  string
	Status  console.ConsoleStatus
	Paid    string
	Created string
}

// Term is one fact of a link.
type Term struct {
	Label, Value string
}

// Link is one link's page.
type Link struct {
	console.ConsolePage
	Reference string
	// Address is the payer's address; State its state in English and
	// StateWord in the person's language.
	Address   string
	State     string
	StateWord string
	Terms     []Term
	// Reusable links show their payments' count and sum.
	Reusable bool
	Payments string
	Paid     string
	Funnel   []Step
	Orders   []Order
	// QRSVG and QRPNG are the QR code's files; QRImage the SVG shown.
	QRSVG, QRPNG templ.SafeURL
	// MayAct: the person may send and cancel; Open: the link can still be
	// sent and cancelled.
	MayAct, Open bool
	Cancel, Send templ.SafeURL
	Merchant     string
	MailReady    bool
	// SendTo says where Send again writes without a new address.
	SendTo    string
	SendEmail string
	SendError string
	Back      templ.SafeURL
}
