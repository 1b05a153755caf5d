// Package command is the program's command line: serving (the default),
// and the commands run beside a deployment (link, console-password,
// operator add, merchants import, backup). Each is a file of its own;
// Run picks one from the arguments.
package command

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paybybank/checkout/app"
)

// commandTimeout bounds a command's work on the ledger.
const commandTimeout = time.Minute

// Run is the whole program, with its surroundings passed in, so that main
// and the tests start it alike: args without the program's name, the
// environment, and the standard streams.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "console-password":
			return consolePassword(stdin, stdout, stderr)
		case "help", "-h", "-help", "--help":
			// Before the configuration: help works whatever it holds.
			return help(stdout)
		case "link", "operator", "merchants", "backup":
		default:
			// Before the configuration too: a typo is told as one.
			return unknown(args[0])
		}
	}
	cfg, err := app.LoadConfig(getenv)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return serve(ctx, cfg, stdout, stderr)
	}
	cmdCtx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	switch args[0] {
	case "link":
		return makeLink(cmdCtx, args[1:], cfg, stdout, stderr)
	case "operator":
		return operatorAdd(cmdCtx, args[1:], cfg, stdin, stdout, stderr)
	case "merchants":
		return merchantsImport(cmdCtx, args[1:], cfg, stdout, stderr)
	case "backup":
		// A big ledger takes as long as it takes to copy.
		return backupLedger(ctx, args[1:], cfg, stdout)
	}
	return unknown(args[0])
}

// unknown is the answer to a command that is none.
func unknown(name string) error {
	return fmt.Errorf("unknown command %q (commands: link, console-password, operator add, merchants import, backup, help; the load generator is go run ./devtools/load)", name)
}
