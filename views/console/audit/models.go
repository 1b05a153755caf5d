// Package audit is the console's audit log page: every change to a
// merchant's settings, team and money, newest first, each a sentence in
// the reader's language. Its component takes the plain view models of this
// file, over the console's layout.
package audit

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
)

// Log is a page of the audit log.
type Log struct {
	console.ConsolePage
	Merchants  []console.ConsoleOption
	MerchantID string
	Rows       []Row
	// Older and Newest page through the log; empty at its ends.
	Older, Newest templ.SafeURL
	CSV           templ.SafeURL
}

// Row is one change.
type Row struct {
	At, Actor, Merchant, Fields, RequestID string
	// Parts are the change as a sentence, its values (an id, a token's
	// prefix) apart, each kept on one line.
	Parts []Part
	// Said is a line whose sentence names its actor; the lines kept
	// before name the actor beside.
	Said bool
}

// Part is a piece of a sentence; Keep holds it on one line.
type Part struct {
	Text string
	Keep bool
}
