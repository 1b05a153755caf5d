package e2e

import (
	"context"
	"io"
	"strings"

	"github.com/paybybank/checkout/app"
	"github.com/paybybank/checkout/command"
)

// run starts the program exactly as `go run .` does, with args, the
// environment getenv and nothing on standard input.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return command.Run(ctx, args, getenv, strings.NewReader(""), stdout, stderr)
}

// loadConfig reads an environment as the program does.
func loadConfig(getenv func(string) string) (app.Config, error) { return app.LoadConfig(getenv) }

// operatorAdd runs `operator add EMAIL`, the password on stdin.
func operatorAdd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return command.Run(ctx, append([]string{"operator"}, args...), getenv, stdin, stdout, stderr)
}

// merchantsImport runs `merchants import FILE`.
func merchantsImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return command.Run(ctx, append([]string{"merchants"}, args...), getenv, strings.NewReader(""), stdout, stderr)
}

// consolePassword runs `console-password`, the password on stdin.
func consolePassword(stdin io.Reader, stdout, stderr io.Writer) error {
	return command.Run(context.Background(), []string{"console-password"}, func(string) string { return "" }, stdin, stdout, stderr)
}
