// Package passkeys shows a console person's passkeys: the account page's
// list, the form that adds one (run by static/passkeys.js, since a passkey
// is made by the browser's WebAuthn) and the page that asks before one is
// removed.
package passkeys

import (
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/console"
)

// Account is the passkeys of the account page.
type Account struct {
	// CSRF is the session's token, sent by the script with each step.
	CSRF string
	// MustAdd says operators of this deployment sign in with a passkey,
	// and the person has none yet.
	MustAdd bool
	// Off says why this deployment cannot use passkeys; empty when it can.
	Off  string
	List []Key
	// Full is set when the person has the most passkeys they may (Max).
	Full bool
	Max  int
	// Events are the latest of what happened to the person's passkeys.
	Events []Event
}

// Key is one of the person's passkeys.
type Key struct {
	// When says when it was added and last used.
	Name, When string
	// Remove is the address of its removal.
	Remove templ.SafeURL
	// Suspended says since when it signs in nowhere (its counter went
	// backwards, as a copy's would); empty while it is in use.
	Suspended string
}

// Event is a line of the person's passkey events.
type Event struct {
	When, Text string
	// Warning marks a refusal the person should look into.
	Warning bool
}

// Removal asks for the person's password (or another of their passkeys)
// before one of their passkeys is removed.
type Removal struct {
	console.ConsolePage
	// Ref names the passkey in addresses (never its credential id); Name
	// is the name its person gave it.
	Ref    string
	Name   string
	Action templ.SafeURL
	Error  string
	// Others is set when another passkey of theirs may prove it is them.
	Others bool
}
