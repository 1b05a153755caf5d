// Package medusa runs the Medusa payment provider of integrations/medusa
// against this app: a real Medusa v2 on PostgreSQL, its carts paid at the
// sandbox bank, the app's webhooks received by Medusa, refunds made from it.
package medusa

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/paybybank/checkout/command"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

// The shop the Medusa tests pay: its token and webhook secret are given to
// the provider's options as a merchant copies them from the console.
const (
	merchantID    = "medusa-shop"
	apiToken      = "medusa-shop-api-token-for-the-medusa-tests"
	webhookSecret = "medusa-shop-webhook-secret-for-the-medusa-tests"
	linkKey       = "medusa-shop-link-key-for-the-medusa-tests"
)

// TestMedusaTakesPayByBank starts the app in sandbox mode with a shop whose
// webhooks go to a Medusa port, then runs `npm test` in integrations/medusa:
// the unit tests, and the integration tests that start Medusa on that port
// with a database of their own on the PostgreSQL server of
// DATABASE_URL_TEST.
func TestMedusaTakesPayByBank(t *testing.T) {
	pkg, err := filepath.Abs("../../integrations/medusa")
	if err != nil {
		t.Fatal(err)
	}
	npm := requireNode(t, pkg)
	db := requirePostgres(t)

	medusaPort, appPort := freePort(t), freePort(t)
	medusa := "http://127.0.0.1:" + medusaPort
	merchants := filepath.Join(t.TempDir(), "merchants.json")
	file := fmt.Sprintf(`{"merchants":[{"id":%q,"name":"Medusa Shop","link_keys":{"k1":%q},"api_token":%q,
		"return_origins":[%q],"webhook_url":%q,"webhook_secret":%q}]}`,
		merchantID, linkKey, apiToken, medusa, medusa+"/hooks/payment/pay-by-bank_pay-by-bank", webhookSecret)
	if err := os.WriteFile(merchants, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startApp(t, map[string]string{
		"ADDR":           "127.0.0.1:" + appPort,
		"BASE_URL":       "http://127.0.0.1:" + appPort,
		"MERCHANTS_FILE": merchants,
		"DATABASE_URL":   "sqlite:" + filepath.Join(t.TempDir(), "ledger.db"),
		// Approved payments are COMPLETED at once, so each test's webhook
		// comes with the follower's first read.
		"SANDBOX_SETTLE_DELAY": "1ms",
	})

	password, _ := db.User.Password()
	// About two minutes on an idle machine; stopped in time to report
	// before go test's own deadline.
	deadline := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "test")
	cmd.Dir = pkg
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"PAY_BY_BANK_BASE_URL="+base,
		"PAY_BY_BANK_API_TOKEN="+apiToken,
		"PAY_BY_BANK_WEBHOOK_SECRET="+webhookSecret,
		"MEDUSA_PORT="+medusaPort,
		"DB_HOST="+db.Hostname(),
		"DB_PORT="+cmp.Or(db.Port(), "5432"),
		"DB_USERNAME="+db.User.Username(),
		"DB_PASSWORD="+password,
		// Medusa's warnings (a refused webhook says why) and errors, not its
		// start-up's hundreds of lines.
		"LOG_LEVEL=warn",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	err = cmd.Run()
	t.Logf("npm test in integrations/medusa took %s; its summary:\n%s", time.Since(started).Round(time.Second), summary(out.String()))
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, tail(out.String(), 30000))
	}
}

// requireNode finds npm and the package's installed dependencies, or skips
// saying how to get them (fails under REQUIRE_NODE, as CI sets).
func requireNode(t *testing.T, pkg string) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("REQUIRE_NODE") != "" {
			t.Fatalf("%s, and REQUIRE_NODE is set", why)
		}
		t.Skipf("the Medusa tests skipped: %s", why)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing("Node 20 with npm is not installed: install it, run npm ci in integrations/medusa, then go test ./tests/medusa/")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not installed: install Node 20, run npm ci in integrations/medusa, then go test ./tests/medusa/")
	}
	if _, err := os.Stat(filepath.Join(pkg, "node_modules", "@medusajs", "test-utils")); err != nil {
		missing("integrations/medusa has no node_modules: run npm ci in integrations/medusa, then go test ./tests/medusa/")
	}
	return npm
}

// requirePostgres is the PostgreSQL server of DATABASE_URL_TEST, answering,
// or skips as the ledger's PostgreSQL tests do (fails under REQUIRE_POSTGRES).
func requirePostgres(t *testing.T) *url.URL {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv(ledgertest.EnvRequirePostgres) != "" {
			t.Fatalf("%s, and %s is set", why, ledgertest.EnvRequirePostgres)
		}
		t.Skipf("the Medusa tests skipped: %s", why)
	}
	raw := os.Getenv(ledgertest.EnvPostgres)
	if raw == "" {
		missing(fmt.Sprintf("Medusa needs PostgreSQL: set %s=postgres://user@host:5432/db?sslmode=disable to a server where databases may be created", ledgertest.EnvPostgres))
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", ledgertest.EnvPostgres, err)
	}
	db, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatalf("%s: %v", ledgertest.EnvPostgres, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		missing(fmt.Sprintf("PostgreSQL at %s does not answer: %v", u.Redacted(), err))
	}
	return u
}

// startApp runs the app in-process as `go run .` does, with vars as its
// whole environment, until the test ends; it returns the app's address.
func startApp(t *testing.T, vars map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- command.Run(ctx, nil, func(k string) string { return vars[k] }, strings.NewReader(""), w, io.Discard)
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the app: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the app did not stop within 30 s")
		}
	})
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "Pay by bank checkout on "); ok {
				base, _, _ := strings.Cut(rest, " ")
				found <- base
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case base := <-found:
		return base
	case err := <-done:
		t.Fatalf("the app stopped at start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the app printed no address within 60 s")
	}
	return ""
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// summary is jest's lines that name each test and its counts.
func summary(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		s := strings.TrimSpace(line)
		if strings.HasPrefix(s, "✓") || strings.HasPrefix(s, "✕") || strings.HasPrefix(s, "○") ||
			strings.HasPrefix(s, "PASS") || strings.HasPrefix(s, "FAIL") || strings.HasPrefix(s, "Tests:") || strings.HasPrefix(s, "Test Suites:") {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, "\n")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
