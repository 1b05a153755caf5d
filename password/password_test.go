package password_test

import (
	"strings"
	"testing"

	"github.com/paybybank/checkout/password"
)

// cheap keeps the tests quick; the costs are read back from the string.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1}

func TestAHashChecksItsPasswordOnly(t *testing.T) {
	phc, err := password.Hash("correct horse battery", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash %q is not an argon2id PHC string with its costs", phc)
	}
	h, err := password.Parse(phc)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Matches("correct horse battery") {
		t.Error("the password does not match its own hash")
	}
	for _, wrong := range []string{"correct horse batterY", "", "correct horse battery "} {
		if h.Matches(wrong) {
			t.Errorf("%q matches the hash of another password", wrong)
		}
	}
	if h.Decoy().Matches("correct horse battery") {
		t.Error("the decoy of a hash matches its password")
	}
	again, _ := password.Hash("correct horse battery", cheap)
	if again == phc {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
}

func TestShortPasswordsAreRefused(t *testing.T) {
	if _, err := password.Hash("elevenchars", cheap); err == nil || !strings.Contains(err.Error(), "at least 12 characters") {
		t.Errorf("an 11-character password: err = %v", err)
	}
	// Characters, not bytes: twelve letters with accents pass.
	if _, err := password.Hash("ééééééééééé", cheap); err == nil {
		t.Error("11 two-byte characters were taken as 22")
	}
	if _, err := password.Hash(strings.Repeat("x", 2000), cheap); err == nil {
		t.Error("a 2000-byte password was hashed")
	}
}

func TestParseSaysWhatIsWrong(t *testing.T) {
	good, _ := password.Hash("correct horse battery", cheap)
	parts := strings.Split(good, "$")
	tests := map[string]string{
		"plain text":    "not a PHC string",
		"$2b$10$abcdef": "not a PHC string",
		"$argon2i$v=19$" + parts[3] + "$" + parts[4] + "$" + parts[5]:  "only argon2id",
		"$argon2id$v=16$" + parts[3] + "$" + parts[4] + "$" + parts[5]: "only v=19",
		"$argon2id$v=19$m=64,t=1$" + parts[4] + "$" + parts[5]:         "are not m=…,t=…,p=…",
		"$argon2id$v=19$m=1,t=1,p=1$" + parts[4] + "$" + parts[5]:      "memory cost",
		"$argon2id$v=19$m=64,t=0,p=1$" + parts[4] + "$" + parts[5]:     "time cost",
		"$argon2id$v=19$" + parts[3] + "$!!$" + parts[5]:               "salt",
		"$argon2id$v=19$" + parts[3] + "$" + parts[4] + "$short":       "hash",
	}
	for phc, want := range tests {
		if _, err := password.Parse(phc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", phc, err, want)
		}
	}
}

func TestTheMostCommonPasswordsAreRefused(t *testing.T) {
	for _, pw := range []string{"qwerty123456", "QWERTY123456", "1qaz2wsx3edc", "leavemealone"} {
		if err := password.CheckNew(pw); err == nil || !strings.Contains(err.Error(), "100,000 most used") {
			t.Errorf("CheckNew(%q) = %v, want it refused as common", pw, err)
		}
	}
	if err := password.CheckNew("correct horse battery staple"); err != nil {
		t.Errorf("an uncommon long password is refused: %v", err)
	}
}
