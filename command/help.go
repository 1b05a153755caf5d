package command

import (
	"fmt"
	"io"
)

// helpText is what `help`, `-h` and `--help` print: the commands, and the
// variables a first run may want; docs/operate.md has every variable.
const helpText = `Pay by bank checkout: a bank picker in front of a payment initiation provider.

Usage:
  go run .                                serve (the built-in sandbox provider and demo merchant,
                                          the embedded SQLite ledger in data/), on ADDR
  go run . link -order ID -amount 49.90 [-return-url URL] [-merchant demo] [-country DE] [-bank ID]
                                          print a signed checkout link of a merchant's order
                                          (-return-url may be left out for the demo merchant)
  go run . console-password < FILE        print the hash of a console password read from FILE
  go run . operator add EMAIL < FILE      make a console operator (the password on stdin)
  go run . merchants import FILE          move a merchants file's merchants into the console's settings
  go run . backup FILE                    write a consistent copy of the SQLite ledger
  go run . help                           print this (also -h, --help)
  go run ./devtools/load -h               the load generator (a developer's tool)

Main variables (all of them: docs/operate.md):
  ADDR            where to listen (default :8080)
  BASE_URL        the app's public address (default http://localhost:8080)
  PIS_BASE_URL    the provider's API; empty: the built-in sandbox
  PIS_API_KEY     the provider's key
  DATABASE_URL    the ledger: sqlite:PATH (default data/checkout.db) or postgres://...
  MERCHANTS_FILE  merchants to serve from a file; empty: the console's settings (and the demo in sandbox mode)
  SETTINGS_KEYS   secrets that seal merchants' keys in the ledger (32+ characters each)
  SESSION_KEYS    secrets that seal checkout tokens and cookies
  SMTP_URL        the mail server for invitations, payment links and refunds

The console is at BASE_URL/console; in sandbox mode the first start prints the demo's sign-in.
`

// help prints the commands and the main variables.
func help(stdout io.Writer) error {
	_, err := fmt.Fprint(stdout, helpText)
	return err
}
