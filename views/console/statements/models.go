// Package statements is the console's page of bank statements: the
// upload of a camt file, the statements uploaded with what they matched,
// and the entries that matched nothing, for a person to act on. Its
// component takes the plain view model of this file, over the console's
// layout.
package statements

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
)

// Statement is one uploaded statement, as the list shows it.
type Statement struct {
	Uploaded, By, File, Kind, Account, Period string
	// Entries, Matched, Open and Repeated are counts, written out.
	Entries, Matched, Open, Repeated string
	// New marks the statements of the upload that led to the page.
	New bool
}

// Entry is a statement's entry a person must act on: it matched nothing,
// or named an order or a refund for another amount.
type Entry struct {
	Booked       string
	Amount       string
	Credit       bool
	Counterparty string
	CounterIBAN  string
	Remittance   string
	Reference    string
	// Why says what the entry is: matched nothing, or what it named and
	// why it was not taken.
	Why string
	// Target is the order or refund named, with its page.
	Target    string
	TargetURL templ.SafeURL
}

// Page is /console/statements.
type Page struct {
	console.ConsolePage
	Merchants []console.ConsoleOption
	Merchant  string
	// MayUpload shows the upload form (owners and support).
	MayUpload bool
	// MaxSize is the largest file taken, written out ("20 MB").
	MaxSize string
	// Notice says what the upload did; Problem why it was refused; Held,
	// that entries naming refunds wait for an owner's upload.
	Notice, Problem, Held string
	// OtherAccount, when set, says the file is of another account than
	// the shop's own and asks the person to confirm.
	OtherAccount string
	// NoShopAccount says the shop's own account is not set, with the way
	// to Settings: statements are then taken of any account.
	NoShopAccount bool
	Settings      templ.SafeURL
	Statements    []Statement
	Open          []Entry
}
