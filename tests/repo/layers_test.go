package repo

import (
	"os"
	"os/exec"
	"path/filepath"
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
		// The pages of each audience, over the kit.
		"views/checkout":       {"i18n", "views"},
		"views/console":        {"i18n", "views"},
		"views/console/manage": {"i18n", "views", "views/console", "views/console/passkeys"},
		// A person's passkeys, shown on the account page (manage's).
		"views/console/passkeys": {"i18n", "views", "views/console"},
		"views/console/links":    {"i18n", "views", "views/console"},
		"views/console/refunds":  {"i18n", "views", "views/console"},
		"views/demo":             {"i18n", "views"},
		"theme":                  {"rules"},
		"merchant":               {"rules", "password"},
		"password":               {},
		"keyring":                {},
		"pisclient":              {"rules"},
		"order":                  {"rules", "merchant", "password", "keyring"},
		"banks":                  {"rules", "pisclient"},
		"ledger":                 {"rules", "pisclient"},
		"payment":                {"rules", "pisclient", "ledger", "merchant", "password"},
		"webhook":                {"rules", "pisclient", "ledger", "merchant", "password"},
		"settings":               {"rules", "pisclient", "ledger", "merchant", "password", "keyring"},
		"mailer":                 {"rules", "pisclient", "ledger"},
		// SEPA files: the transfer file, the EPC QR code, statements.
		"sepa": {"rules"},
		// Refunds: their rules over the ledger, paid by SEPA files, the
		// payer asked by e-mail in their language (a payment link's
		// address where the order came from one).
		"refunds": {"rules", "pisclient", "ledger", "merchant", "password", "keyring", "settings", "i18n", "mailer", "sepa", "links"},
		// Bank statements: read by sepa, matched to refunds and orders.
		"statements": {"rules", "pisclient", "ledger", "merchant", "password", "keyring", "settings", "sepa"},
		// Payment links: made, cancelled and sent, over the ledger, with
		// the settings' sealing keys and the payer's language.
		"links": {"rules", "pisclient", "ledger", "merchant", "password", "keyring", "settings", "i18n", "mailer"},
		// The audiences' shared kit and the logos every page shows sit
		// below every audience, and import none of them.
		"handlers/web":   {"i18n", "password", "rules", "merchant", "theme", "views"},
		"handlers/logos": {"rules", "pisclient", "banks", "i18n", "views"},
		// Uploaded logos come from the ledger, for every audience's pages.
		"handlers/brand": {"rules", "pisclient", "ledger", "handlers/web", "i18n", "password", "merchant", "theme", "views"},
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

// TestOnlyTheDoorStartsTheApp: the wiring (app) is imported by the
// commands alone, and the commands by main.go alone; nothing of the app
// reaches up to them.
func TestOnlyTheDoorStartsTheApp(t *testing.T) {
	const module = "github.com/paybybank/checkout"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	may := map[string]string{module + "/app": module + "/command", module + "/command": module}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imported := range fields[1:] {
			if want, top := may[imported]; top && fields[0] != want {
				t.Errorf("%s imports %s: only %s may", fields[0], imported, want)
			}
		}
	}
}

// TestNoViewsPackageIsTooBigToRead keeps each package of views at about
// 1,500 hand-written lines (templ files and Go, tests and generated code
// aside), so that a page is found by its audience and read in one sitting.
func TestNoViewsPackageIsTooBigToRead(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "./views/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Fields(string(out)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		lines := 0
		for _, f := range files {
			if !(strings.HasSuffix(f, ".templ") || strings.HasSuffix(f, ".go")) || strings.HasSuffix(f, "_templ.go") || strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(b), "\n")
		}
		if lines > 1600 {
			t.Errorf("%s holds %d hand-written lines: split it by audience or by concern (about 1,500 at most)", dir, lines)
		}
	}
}
