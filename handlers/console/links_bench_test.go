package console_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
)

// seedLinks is how many payment links the benchmark's shop has made.
const seedLinks = 100_000

// BenchmarkLinksAtOneHundredThousand times the payment links' pages,
// whole HTTP answers, on PostgreSQL holding 100,000 links of one merchant
// (seeded by SQL, in every state, with a tenth of them reusable), and
// reports each page's median and 99th percentile. The CSV is timed to its
// first page of rows (the list's 50, which the export sends first).
//
//	DATABASE_URL_TEST=postgres://postgres@127.0.0.1:5432/test go test -run '^$' -bench LinksAtOneHundredThousand -benchtime 300x ./handlers/console
func BenchmarkLinksAtOneHundredThousand(b *testing.B) {
	url := ledgertest.PostgresURL(b)
	e := setupOn(b, url)
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	now := time.Now().UnixMilli()
	for _, stmt := range []string{
		// One link a minute going back 70 days: open, paid, cancelled or
		// expired; invoices and club fees with a number in each.
		fmt.Sprintf(`INSERT INTO payment_links (id, merchant_id, amount, currency, description, reference, lang, kind, max_payments,
				expires_at, state, created_by, created_at, payments, paid_cents, search)
			SELECT lpad(to_hex(i), 14, '0'), 'shop1', '49.90', 'EUR', d, 'INV-' || lpad(i::text, 6, '0'), 'de',
				CASE WHEN i %% 10 = 0 THEN 'reusable' ELSE 'single' END, 0,
				%[1]d - i * 60000 + (CASE WHEN i %% 4 = 3 THEN -1 ELSE 30 END) * 86400000::bigint,
				(ARRAY['open', 'paid', 'cancelled', 'open'])[i %% 4 + 1], 'support@shop1.example', %[1]d - i * 60000,
				CASE WHEN i %% 4 = 1 THEN 1 ELSE 0 END, CASE WHEN i %% 4 = 1 THEN 4990 ELSE 0 END,
				lower(d || E'\n' || 'INV-' || lpad(i::text, 6, '0'))
			FROM (SELECT i, (ARRAY['Invoice ', 'Kitchen repair, invoice ', 'Club fee ', 'Phone order '])[i %% 4 + 1] || i AS d
				FROM generate_series(1::bigint, %[2]d) AS i) AS s`, now, seedLinks),
		`ANALYZE`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d links in %s", seedLinks, time.Since(start).Round(time.Second))

	br := e.browser()
	br.signIn(shop1User)
	for _, p := range []struct{ name, path string }{
		{"list", "/console/links"},
		{"list-paid", "/console/links?state=paid"},
		{"list-expired", "/console/links?state=expired"},
		{"search-common", "/console/links?q=kitchen"},
		{"search-one", "/console/links?q=inv-012345"},
		{"search-none", "/console/links?q=nothing-matches"},
		{"csv-first-page", "/console/links.csv"},
		{"link", "/console/links/" + fmt.Sprintf("%014x", 1234)},
	} {
		b.Run(p.name, func(b *testing.B) {
			// A few untimed first: the connections and the database's
			// caches warm, as on a deployment that has been up a while.
			for range 5 {
				res := br.get(p.path)
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				res := br.get(p.path)
				if res.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", p.path, res.StatusCode)
				}
				if p.name == "list" && len(times) == 0 {
					body, _ := io.ReadAll(res.Body)
					if n := bytes.Count(body, []byte(`data-testid="link-row"`)); n != 50 {
						b.Fatalf("the list shows %d links, want a page of 50", n)
					}
				}
				if p.name == "csv-first-page" {
					// The header and the first page of rows (50, as the
					// list's), which the export sends first.
					lines := bufio.NewScanner(res.Body)
					for n := 0; n < 51 && lines.Scan(); n++ {
					}
				} else {
					io.Copy(io.Discard, res.Body)
				}
				res.Body.Close()
				times = append(times, time.Since(t0))
				if p.name == "csv-first-page" {
					// The export left behind reads one more batch before it
					// sees the browser gone: a person does not start the
					// next export in the same millisecond, and that work is
					// not this export's.
					b.StopTimer()
					time.Sleep(50 * time.Millisecond)
					b.StartTimer()
				}

			}
			slices.Sort(times)
			at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
			b.ReportMetric(at(0.5), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
		})
	}
}
