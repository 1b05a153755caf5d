// Command checkout is the pay-by-bank bank picker: it serves the shopper's
// pages in front of a payment initiation provider, or in front of the
// built-in sandbox when PIS_BASE_URL is empty.
//
//	go run .                 serve (sandbox provider, demo merchant)
//	go run . link -order A-1 -amount 49.90 -return-url https://shop.example/done
//	go run . console-password < file   print the hash of a console password
//	go run . operator add EMAIL < file  make an operator (the password on stdin)
//	go run . merchants import FILE      move a merchants file's merchants to the console
//	go run . backup FILE                a consistent copy of the SQLite ledger
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/paybybank/checkout/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := command.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "checkout:", err)
		stop()
		os.Exit(1)
	}
}
