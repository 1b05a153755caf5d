// Command ping exits 0 once the PostgreSQL server of DATABASE_URL_TEST
// answers; CI waits for it before the ledger tests.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paybybank/checkout/ledger/ledgertest"
)

func main() {
	db, err := sql.Open("pgx", os.Getenv(ledgertest.EnvPostgres))
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		err = db.PingContext(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, ledgertest.EnvPostgres+":", err)
		os.Exit(1)
	}
}
