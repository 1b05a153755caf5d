package command_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/paybybank/checkout/command"
)

// TestHelpPrintsTheCommandsAndExitsWell: a newcomer's `help`, `-h` or
// `--help` prints every command and the main variables and succeeds, even
// with a configuration that would stop the app.
func TestHelpPrintsTheCommandsAndExitsWell(t *testing.T) {
	broken := func(name string) string {
		if name == "ADDR" {
			return "not an address"
		}
		return ""
	}
	for _, arg := range []string{"help", "-h", "--help"} {
		var out, errs bytes.Buffer
		if err := command.Run(context.Background(), []string{arg}, broken, strings.NewReader(""), &out, &errs); err != nil {
			t.Errorf("%s: %v", arg, err)
		}
		for _, want := range []string{"go run . link", "console-password", "operator add", "merchants import", "backup", "DATABASE_URL", "PIS_BASE_URL", "/console"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s does not name %s", arg, want)
			}
		}
	}
	var out bytes.Buffer
	err := command.Run(context.Background(), []string{"lnik"}, broken, strings.NewReader(""), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "help") {
		t.Errorf("a mistyped command: %v, want a pointer to help", err)
	}
}
