package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/paybybank/checkout/pisclient"
)

// hourOf is the start of t's hour (UTC), in unix milliseconds: the key of
// the hourly rollups.
func hourOf(t time.Time) int64 {
	const hour = int64(time.Hour / time.Millisecond)
	return t.UnixMilli() / hour * hour
}

// counted reports whether an attempt in state s reached a shopper: its link
// was handed out. Only those count as payments sent to a bank.
func counted(s State) bool { return s == Open || s == Final }

// opensBank reports whether a status shows the shopper opened the bank's
// page: anything past NOT_FOUND but a cancellation, which may come without
// it.
func opensBank(status string) bool {
	return status != "" && status != string(pisclient.StatusNotFound) && status != string(pisclient.StatusCanceled)
}

// PaidBucketBase is the ratio between the bounds of two neighbouring
// buckets of the time from submit to paid: bucket b holds times from
// PaidBucketBase^b to PaidBucketBase^(b+1) seconds, so a median read from
// them is within about 12 % of the true one.
const PaidBucketBase = 1.25

// PaidBucket is the bucket of a time from submit to paid.
func PaidBucket(d time.Duration) int {
	s := max(d.Seconds(), 1)
	return int(math.Floor(math.Log(s) / math.Log(PaidBucketBase)))
}

// orderRow is what Move reads of an attempt's order.
type orderRow struct {
	status, amount, currency string
	paymentLink              string
	stages
}

// stages are when an order was opened, sent to a bank, begun at the bank
// and paid; 0 for not yet.
type stages struct{ opened, sent, began, paid int64 }

// tally works out, as attempt a (begun at the bank at began, 0 for not)
// moves to after, the order's new stages and the change of the console's
// counts (schema 5). Move writes both in its transaction.
func tally(a, after Attempt, began int64, o orderRow, now time.Time) (countChange, stages) {
	st := o.stages
	if !counted(after.State) {
		return countChange{}, st
	}
	ms := now.UnixMilli()
	c := countChange{merchantID: a.MerchantID, attemptHour: hourOf(a.Created), country: a.Country, bankID: a.BankID, bucket: -1}
	if !counted(a.State) {
		c.started = 1
		if st.opened == 0 {
			// An order recorded before its link was used (or before the
			// ledger counted openings) opens with its first payment.
			st.opened, c.opened = ms, 1
		}
		if st.sent == 0 {
			st.sent, c.sent = ms, 1
		}
	}
	paid := after.Status == string(pisclient.StatusCompleted)
	if began == 0 && opensBank(after.Status) {
		began = ms
		if st.began == 0 {
			st.began, c.began = ms, 1
		}
	}
	if after.State == Final && a.State != Final {
		switch {
		case paid:
			c.completed, c.bucket, c.paidTimes = 1, PaidBucket(now.Sub(a.Created)), 1
			if st.paid == 0 && a.Amount == o.amount && a.Currency == o.currency {
				st.paid, c.paid = ms, 1
			}
		case began > 0:
			c.canceled = 1
		default:
			c.abandoned = 1
		}
	}
	c.funnelHour = hourOf(time.UnixMilli(st.opened))
	if c.opened+c.sent+c.began+c.paid+c.started+c.completed+c.canceled+c.abandoned == 0 {
		return countChange{}, st
	}
	return c, st
}

// countChange is one change of the console's counts, written as a row of
// its own into count_changes in the transaction of the change: were it to
// add to the shared row of its merchant's hour, payments changing at once
// would queue for that row's lock. FoldCounts adds the changes into the
// hourly rollups in the background; reads count both.
type countChange struct {
	merchantID string
	// funnelHour is the hour the order was opened; attemptHour the hour
	// the payment was made, with its bank.
	funnelHour, attemptHour   int64
	country, bankID           string
	opened, sent, began, paid int64
	started, completed        int64
	canceled, abandoned       int64
	// bucket is the PaidBucket of a payment's time to pay, counted by
	// paidTimes; -1 when none.
	bucket    int
	paidTimes int64
}

func (c countChange) add(ctx context.Context, e execer) error {
	_, err := e.ExecContext(ctx, insertCountChange, c.args()...)
	return err
}

const insertCountChange = `INSERT INTO count_changes (merchant_id, funnel_hour, attempt_hour, country, bank_id,
		opened, sent, began, paid, started, completed, canceled, abandoned, bucket, paid_times)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`

// args are the change's values, in insertCountChange's order.
func (c countChange) args() []any {
	return []any{c.merchantID, c.funnelHour, c.attemptHour, c.country, c.bankID, c.opened, c.sent, c.began, c.paid,
		c.started, c.completed, c.canceled, c.abandoned, c.bucket, c.paidTimes}
}

// rollup is one of the console's hourly count tables, and how its rows
// are made of count_changes.
type rollup struct {
	table        string
	keys, counts []string
	// fromChanges are the changes' columns under the table's names.
	fromChanges string
	// some keeps the changes that count here.
	some string
}

var (
	funnelCounts = rollup{"funnel_hourly", []string{"merchant_id", "hour"}, []string{"opened", "sent", "began", "paid"},
		"merchant_id, funnel_hour AS hour, opened, sent, began, paid", "opened + sent + began + paid > 0"}
	bankCounts = rollup{"bank_hourly", []string{"merchant_id", "hour", "country", "bank_id"}, []string{"started", "completed", "canceled", "abandoned"},
		"merchant_id, attempt_hour AS hour, country, bank_id, started, completed, canceled, abandoned",
		// A payment found cancelled at the bank after it was counted as
		// abandoned moves one count to another: a change summing to 0.
		"(started <> 0 OR completed <> 0 OR canceled <> 0 OR abandoned <> 0)"}
	paidCounts = rollup{"paid_times", []string{"merchant_id", "hour", "bucket"}, []string{"n"},
		"merchant_id, attempt_hour AS hour, bucket, paid_times AS n", "paid_times > 0"}
	bankPaidCounts = rollup{"bank_paid_times", []string{"hour", "country", "bank_id", "bucket"}, []string{"n"},
		"attempt_hour AS hour, country, bank_id, bucket, paid_times AS n", "paid_times > 0"}
	rollups = []rollup{funnelCounts, bankCounts, paidCounts, bankPaidCounts}
)

func (r rollup) columns() string {
	return strings.Join(append(slices.Clone(r.keys), r.counts...), ", ")
}

// source is the rollup with the changes not yet folded in, as one table to
// read, of rows matching cond (over the rollup's columns) only.
func (r rollup) source(cond string) string {
	return `(SELECT ` + r.columns() + ` FROM ` + r.table + ` WHERE ` + cond +
		` UNION ALL SELECT ` + r.columns() + ` FROM (SELECT ` + r.fromChanges + ` FROM count_changes WHERE ` + r.some + `) AS changes WHERE ` + cond + `) AS counted`
}

// upsert adds the changes of from into the rollup.
func (r rollup) upsert(from string) string {
	keys := strings.Join(r.keys, ", ")
	var sums, adds []string
	for _, c := range r.counts {
		sums = append(sums, "SUM("+c+")")
		adds = append(adds, c+" = "+r.table+"."+c+" + excluded."+c)
	}
	return `INSERT INTO ` + r.table + ` (` + r.columns() + `) SELECT ` + keys + `, ` + strings.Join(sums, ", ") +
		` FROM (SELECT ` + r.fromChanges + ` FROM ` + from + ` WHERE ` + r.some + `) AS changes WHERE true GROUP BY ` + keys +
		` ON CONFLICT (` + keys + `) DO UPDATE SET ` + strings.Join(adds, ", ")
}

// FoldCounts adds the changes of the console's counts into their hourly
// rollups and removes them. Reads count the changes not yet folded, so
// folding only keeps them few.
func (l *Ledger) FoldCounts(ctx context.Context) error {
	ctx, span := l.span(ctx, "FoldCounts")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if l.dialect == postgres {
		// The rows deleted are exactly those added in: a change inserted
		// meanwhile waits for the next fold, and of two instances folding
		// at once only one takes each change.
		stmt := `WITH moved AS (DELETE FROM count_changes RETURNING *)`
		for i, r := range rollups[:len(rollups)-1] {
			stmt += fmt.Sprintf(`, fold%d AS (%s)`, i, r.upsert("moved"))
		}
		if _, err := tx.ExecContext(ctx, stmt+` `+rollups[len(rollups)-1].upsert("moved")); err != nil {
			return fmt.Errorf("folding the console's counts: %w", err)
		}
		return tx.Commit()
	}
	// SQLite: the first write locks every other writer out until commit,
	// so the changes added are exactly those deleted.
	for _, r := range rollups {
		if _, err := tx.ExecContext(ctx, r.upsert("count_changes")); err != nil {
			return fmt.Errorf("folding the console's counts into %s: %w", r.table, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM count_changes`); err != nil {
		return err
	}
	return tx.Commit()
}

// FoldEvery is how often KeepCounts folds.
const FoldEvery = 5 * time.Second

// KeepCounts folds the console's counts every FoldEvery until ctx ends.
func (l *Ledger) KeepCounts(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(FoldEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := l.FoldCounts(ctx); err != nil && ctx.Err() == nil {
				log.Warn("ledger: folding the console's counts", "err", err)
			}
		}
	}
}
