package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/rules"
)

// operatorAdd is `operator add EMAIL`: it reads a password from standard
// input and writes an operator, who sees every merchant in the console,
// into the ledger. An operator who exists gets the new password, and their
// sessions end. This is how a deployment without a merchants file gets its
// first person.
func operatorAdd(ctx context.Context, args []string, cfg app.Config, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "add" {
		return errors.New("usage: operator add EMAIL (the password on standard input)")
	}
	email := strings.TrimSpace(args[1])
	if rules.CheckEmail("email", email) != nil {
		return fmt.Errorf("operator add: %q is not a plain e-mail address like ops@pay.example", email)
	}
	pw, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	phc, err := password.Hash(pw, password.Default)
	if err != nil {
		return fmt.Errorf("operator add: %w", err)
	}
	s, err := app.OpenSettings(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.Ledger.Close()
	existed, err := s.AddOperator(ctx, email, phc)
	if err != nil {
		return fmt.Errorf("operator add: %w", err)
	}
	if existed {
		fmt.Fprintf(stdout, "Operator %s has a new password; their sessions have ended. Every instance knows within a second.\n", strings.ToLower(email))
	} else {
		fmt.Fprintf(stdout, "Operator %s added: they sign in at /console and see every merchant. Every instance knows within a second.\n", strings.ToLower(email))
	}
	return nil
}
