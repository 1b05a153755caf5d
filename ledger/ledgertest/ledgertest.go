// Package ledgertest gives tests a fresh payments ledger: a SQLite file in a
// temporary folder, or a PostgreSQL database of its own created on the server
// that DATABASE_URL_TEST names and dropped when the test ends.
package ledgertest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/paybybank/checkout/ledger"
)

// EnvPostgres names the PostgreSQL server tests create their databases on,
// e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvPostgres = "DATABASE_URL_TEST"

// EnvRequirePostgres, when set, turns the skip of a PostgreSQL test into a
// failure (CI sets it).
const EnvRequirePostgres = "REQUIRE_POSTGRES"

// SQLiteURL is a DATABASE_URL for a new SQLite file.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
}

// PostgresURL is a DATABASE_URL for a new, empty PostgreSQL database; the
// test is skipped (or fails under REQUIRE_POSTGRES) without a server.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		if os.Getenv(EnvRequirePostgres) != "" {
			t.Fatalf("%s is set but %s is not: the PostgreSQL tests must run", EnvRequirePostgres, EnvPostgres)
		}
		t.Skipf("PostgreSQL tests skipped: set %s=postgres://user@host:5432/db?sslmode=disable to a server where databases may be created", EnvPostgres)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	name := "checkout_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("%s: creating a test database: %v", EnvPostgres, err)
	}
	// A test's database need not outlive a crash of the server: commits
	// that do not wait for the disk keep tests that write a lot quick.
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET synchronous_commit = off"); err != nil {
		t.Fatalf("%s: setting up a test database: %v", EnvPostgres, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Backends are the DATABASE_URLs of each back end, to run a test on both.
func Backends() map[string]func(testing.TB) string {
	return map[string]func(testing.TB) string{"sqlite": SQLiteURL, "postgres": PostgresURL}
}

// OnBoth runs a test once per back end, each on a fresh database.
func OnBoth(t *testing.T, test func(t *testing.T, databaseURL string)) {
	for name, newURL := range Backends() {
		t.Run(name, func(t *testing.T) { test(t, newURL(t)) })
	}
}

// Open connects a ledger to databaseURL and closes it when the test ends.
func Open(t testing.TB, databaseURL string) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Connect(context.Background(), databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
