package console_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/pisclient"
)

// seedOrders is how many orders the benchmark's shop has seen.
const seedOrders = 2_000_000

// BenchmarkConsoleAtTwoMillionOrders times the console's pages, whole
// HTTP answers, on PostgreSQL holding 2 million orders of two merchants
// (seeded by SQL with their hourly rollups, as the ledger keeps them) and
// reports each page's median and 99th percentile.
//
//	DATABASE_URL_TEST=postgres://postgres@127.0.0.1:5432/test go test -run '^$' -bench ConsoleAtTwoMillion -benchtime 300x ./handlers/console
func BenchmarkConsoleAtTwoMillionOrders(b *testing.B) {
	url := ledgertest.PostgresURL(b)
	e := setupOn(b, url)
	// A real order with payments and events, among the seeded ones.
	e.seed("shop1", "ORD-real", "ing", pisclient.StatusInProgress, pisclient.StatusCompleted)
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	now := time.Now().UnixMilli()
	const hour = int64(time.Hour / time.Millisecond)
	for _, stmt := range []string{
		// One order a second going back 23 days, paid, cancelled or open.
		fmt.Sprintf(`INSERT INTO orders (merchant_id, order_id, amount, currency, return_url, created_at, updated_at,
			status, opened_at, sent_at, began_at, paid_at, bank_id, country)
			SELECT CASE WHEN i %% 4 = 0 THEN 'shop2' ELSE 'shop1' END, 'ORD-' || lpad(i::text, 8, '0'), '49.90', 'EUR',
				'https://shop.example/done', %[1]d - i * 1000, %[1]d - i * 1000 + 60000,
				(ARRAY['COMPLETED', 'CANCELED', 'IN_PROGRESS', 'NOT_FOUND', 'COMPLETED'])[i %% 5 + 1],
				%[1]d - i * 1000, %[1]d - i * 1000, %[1]d - i * 1000, CASE WHEN i %% 5 IN (0, 4) THEN %[1]d - i * 1000 + 60000 ELSE 0 END,
				(ARRAY['ing', 'dkb', 'commerzbank', 'sparkasse', 'n26', 'postbank', 'targo', 'hypo', 'volksbank', 'comdirect', 'consors', 'santander'])[i %% 12 + 1],
				'DE'
			FROM generate_series(1, %[2]d) AS i`, now, seedOrders),
		fmt.Sprintf(`INSERT INTO funnel_hourly (merchant_id, hour, opened, sent, began, paid)
			SELECT merchant_id, opened_at / %[1]d * %[1]d, COUNT(*), COUNT(*), COUNT(*), SUM(CASE WHEN paid_at > 0 THEN 1 ELSE 0 END)
			FROM orders WHERE order_id LIKE 'ORD-0%%' GROUP BY 1, 2
			ON CONFLICT (merchant_id, hour) DO UPDATE SET opened = funnel_hourly.opened + excluded.opened`, hour),
		fmt.Sprintf(`INSERT INTO bank_hourly (merchant_id, hour, country, bank_id, started, completed, canceled, abandoned)
			SELECT merchant_id, created_at / %[1]d * %[1]d, country, bank_id, COUNT(*), SUM(CASE WHEN status = 'COMPLETED' THEN 1 ELSE 0 END),
				SUM(CASE WHEN status = 'CANCELED' THEN 1 ELSE 0 END), 0
			FROM orders WHERE order_id LIKE 'ORD-0%%' GROUP BY 1, 2, 3, 4
			ON CONFLICT (merchant_id, hour, country, bank_id) DO UPDATE SET started = bank_hourly.started + excluded.started`, hour),
		`ANALYZE`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d orders in %s", seedOrders, time.Since(start).Round(time.Second))

	br := e.browser()
	br.signIn(shop1User)
	for _, p := range []struct{ name, path string }{
		{"payments", "/console/payments"},
		{"payments-filtered", "/console/payments?status=CANCELED&bank=dkb"},
		{"search-prefix", "/console/payments?q=ORD-0012"},
		{"search-exact", "/console/payments?q=ORD-01234567"},
		{"order", "/console/payments/ORD-real"},
		{"overview-24h", "/console"},
		{"overview-30d", "/console?range=30d"},
		{"webhooks", "/console/webhooks"},
	} {
		b.Run(p.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				res := br.get(p.path)
				page(b, res, http.StatusOK)
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
			b.ReportMetric(at(0.5), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
		})
	}
}
