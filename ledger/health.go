package ledger

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"time"
)

// BankFigures are how the payments made at one bank in a window ended,
// over every merchant: the figures of bank health (package bankhealth).
type BankFigures struct {
	Country string
	BankID  string
	AttemptCounts
	// MedianToPaid is the median time from submit to COMPLETED of the
	// payments paid; 0 when none was.
	MedianToPaid time.Duration
}

// UseClock makes the ledger tell the time by now: tests make payments in
// the past with it.
func (l *Ledger) UseClock(now func() time.Time) { l.now = now }

// Now is the ledger's time: what a link's expiry is judged by wherever
// it is read.
func (l *Ledger) Now() time.Time { return l.now() }

// RecentBankHealth counts exactly, from the attempts themselves, the
// payments made since the given time at each bank: what the last hour's
// health is judged on. Attempts that never reached a shopper do not count.
func (l *Ledger) RecentBankHealth(ctx context.Context, since time.Time) ([]BankFigures, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT country, bank_id, COUNT(*),
			SUM(CASE WHEN state = 'final' AND status = 'COMPLETED' THEN 1 ELSE 0 END),
			SUM(CASE WHEN state = 'final' AND status <> 'COMPLETED' AND began_at > 0 THEN 1 ELSE 0 END),
			SUM(CASE WHEN state = 'final' AND status <> 'COMPLETED' AND began_at = 0 THEN 1 ELSE 0 END)
		FROM attempts WHERE created_at >= $1 AND state IN ('open', 'final') GROUP BY country, bank_id`, since.UnixMilli())
	if err != nil {
		return nil, err
	}
	figures, err := scanBankFigures(rows)
	if err != nil {
		return nil, err
	}
	// The times to pay of the hour are few enough to take the median of
	// exactly.
	times := map[[2]string][]int64{}
	rows, err = l.db.QueryContext(ctx, `SELECT country, bank_id, updated_at - created_at FROM attempts
		WHERE created_at >= $1 AND state = 'final' AND status = 'COMPLETED'`, since.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var country, bank string
		var ms int64
		if err := rows.Scan(&country, &bank, &ms); err != nil {
			return nil, err
		}
		times[[2]string{country, bank}] = append(times[[2]string{country, bank}], ms)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, f := range figures {
		if ms := times[[2]string{f.Country, f.BankID}]; len(ms) > 0 {
			slices.Sort(ms)
			mid := ms[len(ms)/2]
			if len(ms)%2 == 0 {
				mid = (ms[len(ms)/2-1] + mid) / 2
			}
			figures[i].MedianToPaid = time.Duration(mid) * time.Millisecond
		}
	}
	return figures, nil
}

// BankHealth counts, from the hourly rollups and the changes not yet
// folded in, the payments made at each bank from since's hour on, over
// every merchant: the 24-hour and 7-day figures. The median time to pay
// comes from the rollup's buckets (see MedianPaid).
func (l *Ledger) BankHealth(ctx context.Context, since time.Time) ([]BankFigures, error) {
	cond, args := "hour >= $1", []any{hourOf(since)}
	rows, err := l.db.QueryContext(ctx, `SELECT country, bank_id, SUM(started), SUM(completed), SUM(canceled), SUM(abandoned)
		FROM `+bankCounts.source(cond)+` GROUP BY country, bank_id`, args...)
	if err != nil {
		return nil, err
	}
	figures, err := scanBankFigures(rows)
	if err != nil {
		return nil, err
	}
	buckets := map[[2]string]map[int]int64{}
	rows, err = l.db.QueryContext(ctx, `SELECT country, bank_id, bucket, SUM(n) FROM `+bankPaidCounts.source(cond)+
		` GROUP BY country, bank_id, bucket`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var country, bank string
		var b int
		var n int64
		if err := rows.Scan(&country, &bank, &b, &n); err != nil {
			return nil, err
		}
		k := [2]string{country, bank}
		if buckets[k] == nil {
			buckets[k] = map[int]int64{}
		}
		buckets[k][b] += n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, f := range figures {
		figures[i].MedianToPaid, _ = MedianPaid(buckets[[2]string{f.Country, f.BankID}])
	}
	return figures, nil
}

// MostPaid returns, per country, the banks with the most completed
// payments made from since's hour on, over every merchant, most first and
// at most limit each: counts that tell nothing of any one shopper, read
// off the hourly rollups for the bank page's popular banks.
func (l *Ledger) MostPaid(ctx context.Context, since time.Time, limit int) (map[string][]string, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT country, bank_id, SUM(completed) AS paid FROM `+bankCounts.source("hour >= $1")+`
		GROUP BY country, bank_id HAVING SUM(completed) > 0 ORDER BY country, paid DESC, bank_id`, hourOf(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var country, bank string
		var paid int64
		if err := rows.Scan(&country, &bank, &paid); err != nil {
			return nil, err
		}
		if len(out[country]) < limit {
			out[country] = append(out[country], bank)
		}
	}
	return out, rows.Err()
}

// scanBankFigures reads rows of country, bank and the four counts, and
// closes them.
func scanBankFigures(rows *sql.Rows) ([]BankFigures, error) {
	defer rows.Close()
	var out []BankFigures
	for rows.Next() {
		var f BankFigures
		if err := rows.Scan(&f.Country, &f.BankID, &f.Started, &f.Completed, &f.Canceled, &f.Abandoned); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// MedianPaid reads the median time from submit to paid off buckets of
// PaidBucket: the middle of the bucket that holds the middle payment,
// within about 12 % of the true median. It reports false when the buckets
// hold no payment.
func MedianPaid(buckets map[int]int64) (time.Duration, bool) {
	var total int64
	lo, hi := math.MaxInt, math.MinInt
	for b, n := range buckets {
		total += n
		lo, hi = min(lo, b), max(hi, b)
	}
	if total == 0 {
		return 0, false
	}
	var seen int64
	for b := lo; b <= hi; b++ {
		seen += buckets[b]
		if 2*seen >= total {
			secs := math.Pow(PaidBucketBase, float64(b)+0.5)
			return time.Duration(secs * float64(time.Second)), true
		}
	}
	return 0, false
}
