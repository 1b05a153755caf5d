package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestArrowsPointDown checks the layering docs/architecture.md draws: each package may
// use those below it, never one above it.
func TestArrowsPointDown(t *testing.T) {
	const module = "github.com/paybybank/checkout/"
	allowed := map[string][]string{
		"rules":             {},
		"i18n":              {},
		"pisclient/sandbox": {},
		"views":             {"i18n"},
		"theme":             {"rules"},
		"merchant":          {"rules", "password"},
		"password":          {},
		"pisclient":         {"rules"},
		"order":             {"rules", "merchant", "password"},
		"banks":             {"rules", "pisclient"},
		"ledger":            {"rules", "pisclient"},
		"payment":           {"rules", "pisclient", "ledger", "merchant", "password"},
		"webhook":           {"rules", "pisclient", "ledger", "merchant", "password"},
		"settings":          {"rules", "pisclient", "ledger", "merchant", "password"},
		"mailer":            {},
		// The audiences' shared kit and the logos every page shows sit
		// below every audience, and import none of them.
		"handlers/web":   {"i18n", "password", "rules", "merchant", "theme", "views"},
		"handlers/logos": {"rules", "pisclient", "banks", "i18n", "views"},
	}
	for pkg, below := range allowed {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			name, ours := strings.CutPrefix(dep, module)
			if !ours || name == pkg {
				continue
			}
			ok := false
			for _, b := range below {
				ok = ok || name == b
			}
			if !ok {
				t.Errorf("%s imports %s, which is not below it", pkg, name)
			}
		}
	}
}
