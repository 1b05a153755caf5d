package command

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/paybybank/checkout/password"
)

// consolePassword is the `console-password` command: it reads one password
// from standard input (without echo when that is a terminal) and prints its
// argon2id PHC string, for console_users and operators in MERCHANTS_FILE.
func consolePassword(in io.Reader, stdout, stderr io.Writer) error {
	pw, err := readPassword(in, stderr)
	if err != nil {
		return err
	}
	hash, err := password.Hash(pw, password.Default)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, hash)
	return nil
}

// readPassword reads one password from in: without echo when it is a
// terminal, else its first line.
func readPassword(in io.Reader, stderr io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password (at least 12 characters, not shown): ")
		raw, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		return string(raw), nil
	}
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
