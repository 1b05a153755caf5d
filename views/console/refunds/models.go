// Package refunds is the console's pages of refunds: what an order's page
// shows of its refunds with the form that makes one, the list of refunds
// with the transfer files, and one refund with its timeline, the payer's
// page, the payer's account and what can be done next. Its components take
// the plain view models of this file, over the console's layout.
package refunds

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
)

// State is a refund's state as a badge: its English name (for programs and
// tests), its word in the person's language, and its colour.
type State struct {
	Name, Word string
	// Tone picks the badge's colour among the console's status colours.
	Tone string
}

// Row is one refund in a list.
type Row struct {
	ID       string
	URL      templ.SafeURL
	Created  string
	Order    string
	OrderURL templ.SafeURL
	Amount   string
	State    State
	// Account is the payer's IBAN masked; empty before it is given.
	Account string
	// Choosable refunds (ready ones, for a person who may pay them) get a
	// box to put them in a transfer file.
	Choosable bool
}

// Form is the form that makes a refund of an order, as typed.
type Form struct {
	Amount, Reason, AccountName, AccountIBAN, AccountBIC string
	// Key is the form's own: sent twice (a double click, a reload), it
	// makes one refund.
	Key string
	// Errors are the refusals by field name (the inputs' ids).
	Errors map[string]string
}

// Order is what an order's page shows of its refunds.
type Order struct {
	// Refunded says what was refunded of what was paid.
	Refunded string
	Rows     []Row
	// MayRefund shows the Refund button (a paid order with something
	// left, for a person who may make refunds); Open shows the form.
	MayRefund bool
	Open      bool
	// OpenURL is the order's page with the form shown, CloseURL without.
	OpenURL, CloseURL templ.SafeURL
	// Action is where the form posts; Merchant, for an operator, goes
	// with it.
	Action   templ.SafeURL
	Merchant string
	CSRF     string
	Form     Form
	// Remaining is what may still be refunded, as the form's hint says it.
	Remaining string
	// Problem says why the order cannot be refunded as asked (not paid).
	Problem string
}

// Transfer is one transfer file made, to download again.
type Transfer struct {
	ID      string
	URL     templ.SafeURL
	Created string
	By      string
	Count   string
	Total   string
}

// List is the refunds page: the merchant's refunds filtered by state and
// searched, the transfer file of those chosen, and the files made.
type List struct {
	console.ConsolePage
	Merchants []console.ConsoleOption
	Merchant  string
	Query     string
	States    []console.ConsoleOption
	// StateError says the state filter could not be read.
	StateError string
	Searched   bool
	Rows       []Row
	Next       templ.SafeURL
	First      templ.SafeURL
	// MayPay shows the boxes and the files made; Choosable, Download
	// transfer file (a ready refund is listed).
	MayPay    bool
	Choosable bool
	Transfers []Transfer
	// NoShopAccount says transfer files need the shop's own account, with
	// the way to Settings.
	NoShopAccount bool
	Settings      templ.SafeURL
}

// Step is one step of a refund's timeline.
type Step struct {
	At   string
	What string
}

// Term is one fact of a refund.
type Term struct {
	Label, Value string
	// URL makes the value a link.
	URL templ.SafeURL
}

// AccountForm is the form that types the payer's account, as typed.
type AccountForm struct {
	Name, IBAN, BIC string
	Errors          map[string]string
}

// Refund is one refund's page.
type Refund struct {
	console.ConsolePage
	ID       string
	Amount   string
	State    State
	Terms    []Term
	Timeline []Step
	// Merchant, for an operator, goes with every form.
	Merchant string
	Back     templ.SafeURL

	// PayerPage is the payer's page while the refund awaits the account
	// (for those who may make refunds), with its QR code.
	PayerPage string
	PageQR    templ.SafeURL
	// Account is the form that types the payer's account; nil when it is
	// not asked.
	Account       *AccountForm
	AccountAction templ.SafeURL
	// Send offers Send by e-mail (mail set up, the order has an address);
	// SendTo and SendToAfter are the sentence around the address masked
	// (SendToAddress), SendNote says why it is not offered.
	Send                               templ.SafeURL
	SendTo, SendToAddress, SendToAfter string
	SendNote                           string
	SendError                          string
	MayApprove                         bool
	// ApproveNote says who may approve, or why this person may not.
	ApproveNote string
	Approve     templ.SafeURL
	// Cancel, MarkSent and MarkBooked are shown when they can be done by
	// this person.
	Cancel     templ.SafeURL
	MarkSent   templ.SafeURL
	MarkBooked templ.SafeURL
	// QRSVG and QRPNG are a ready refund's EPC QR code, for an owner.
	QRSVG, QRPNG templ.SafeURL
	QRAlt        string
}
