package e2e

import (
	"strings"
	"testing"

	"github.com/paybybank/checkout/password"
)

func TestConsolePasswordPrintsAHashOfTheLineRead(t *testing.T) {
	var out, errs strings.Builder
	if err := consolePassword(strings.NewReader("a long console password\n"), &out, &errs); err != nil {
		t.Fatal(err)
	}
	phc := strings.TrimSpace(out.String())
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("printed %q, want an argon2id PHC string", phc)
	}
	h, err := password.Parse(phc)
	if err != nil || !h.Matches("a long console password") {
		t.Errorf("the printed hash does not check the password read (without its newline): %v", err)
	}
	if strings.Contains(out.String()+errs.String(), "console password") {
		t.Error("the password was written back")
	}

	out.Reset()
	err = consolePassword(strings.NewReader("too short\n"), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "at least 12 characters") || out.Len() > 0 {
		t.Errorf("a short password: err = %v, printed %q", err, out.String())
	}
}
