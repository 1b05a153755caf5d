package ledger

import (
	"context"
	"database/sql"
	"math"
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

// beganAt reports whether a status shows the shopper opened the bank's page:
// anything past NOT_FOUND but a cancellation, which may come without it.
func beganAt(status string) bool {
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

// tally keeps the console's counts (schema 5) as attempt a moves to after,
// inside Move's transaction: the order's stages and bank, and the hourly
// rollups the overview sums.
func (l *Ledger) tally(ctx context.Context, tx *sql.Tx, a, after Attempt, now time.Time) error {
	var o struct {
		opened, sent, began, paid int64
		amount, currency          string
	}
	if err := tx.QueryRowContext(ctx, `SELECT opened_at, sent_at, began_at, paid_at, amount, currency FROM orders
		WHERE merchant_id = $1 AND order_id = $2`, a.MerchantID, a.OrderID).Scan(&o.opened, &o.sent, &o.began, &o.paid, &o.amount, &o.currency); err != nil {
		return err
	}
	if !counted(after.State) {
		return nil
	}
	ms := now.UnixMilli()
	var funnel struct{ opened, sent, began, paid int64 }
	var bank struct{ started, completed, canceled, abandoned int64 }
	if !counted(a.State) {
		bank.started = 1
		if o.opened == 0 {
			// An order recorded before its link was used (or before the
			// ledger counted openings) opens with its first payment.
			o.opened, funnel.opened = ms, 1
		}
		if o.sent == 0 {
			o.sent, funnel.sent = ms, 1
		}
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET opened_at = $1, sent_at = $2, bank_id = $3, country = $4
			WHERE merchant_id = $5 AND order_id = $6`, o.opened, o.sent, a.BankID, a.Country, a.MerchantID, a.OrderID); err != nil {
			return err
		}
	}
	var attemptBegan int64
	if err := tx.QueryRowContext(ctx, `SELECT began_at FROM attempts WHERE upstream_id = $1`, a.UpstreamID).Scan(&attemptBegan); err != nil {
		return err
	}
	paid := after.Status == string(pisclient.StatusCompleted)
	if attemptBegan == 0 && (beganAt(after.Status) || paid) {
		attemptBegan = ms
		if _, err := tx.ExecContext(ctx, `UPDATE attempts SET began_at = $1 WHERE upstream_id = $2`, ms, a.UpstreamID); err != nil {
			return err
		}
		if o.began == 0 {
			funnel.began = 1
			if _, err := tx.ExecContext(ctx, `UPDATE orders SET began_at = $1 WHERE merchant_id = $2 AND order_id = $3`,
				ms, a.MerchantID, a.OrderID); err != nil {
				return err
			}
		}
	}
	if after.State == Final && a.State != Final {
		switch {
		case paid:
			bank.completed = 1
			if _, err := tx.ExecContext(ctx, `INSERT INTO paid_times (merchant_id, hour, bucket, n) VALUES ($1, $2, $3, 1)
				ON CONFLICT (merchant_id, hour, bucket) DO UPDATE SET n = paid_times.n + 1`,
				a.MerchantID, hourOf(a.Created), PaidBucket(now.Sub(a.Created))); err != nil {
				return err
			}
			if o.paid == 0 && a.Amount == o.amount && a.Currency == o.currency {
				funnel.paid = 1
				if _, err := tx.ExecContext(ctx, `UPDATE orders SET paid_at = $1 WHERE merchant_id = $2 AND order_id = $3`,
					ms, a.MerchantID, a.OrderID); err != nil {
					return err
				}
			}
		case attemptBegan > 0:
			bank.canceled = 1
		default:
			bank.abandoned = 1
		}
	}
	if bank != (struct{ started, completed, canceled, abandoned int64 }{}) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO bank_hourly (merchant_id, hour, country, bank_id, started, completed, canceled, abandoned)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (merchant_id, hour, country, bank_id) DO UPDATE SET started = bank_hourly.started + excluded.started,
				completed = bank_hourly.completed + excluded.completed, canceled = bank_hourly.canceled + excluded.canceled,
				abandoned = bank_hourly.abandoned + excluded.abandoned`,
			a.MerchantID, hourOf(a.Created), a.Country, a.BankID, bank.started, bank.completed, bank.canceled, bank.abandoned); err != nil {
			return err
		}
	}
	if funnel != (struct{ opened, sent, began, paid int64 }{}) {
		return addFunnel(ctx, tx, a.MerchantID, hourOf(time.UnixMilli(o.opened)), funnel.opened, funnel.sent, funnel.began, funnel.paid)
	}
	return nil
}

// addFunnel adds to the funnel of the orders opened in one hour.
func addFunnel(ctx context.Context, tx *sql.Tx, merchantID string, hour, opened, sent, began, paid int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO funnel_hourly (merchant_id, hour, opened, sent, began, paid) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (merchant_id, hour) DO UPDATE SET opened = funnel_hourly.opened + excluded.opened, sent = funnel_hourly.sent + excluded.sent,
			began = funnel_hourly.began + excluded.began, paid = funnel_hourly.paid + excluded.paid`,
		merchantID, hour, opened, sent, began, paid)
	return err
}
