package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paybybank/checkout/pisclient"
)

// ReturnedFromBank records that the shopper of an order came back through
// its return URL, which the provider sends them to from the bank: they
// opened the bank's page, whatever status the follower read or will read.
// The order's newest payment handed out counts as begun at the bank from
// now on: in the console's funnel (Began), and, should it end unpaid, as
// cancelled at the bank instead of abandoned, in the console and in bank
// health, even when it had ended before the shopper's return was seen.
// It reports whether anything changed: a second return changes nothing,
// and neither does a return through the address of another checkout than
// the one whose payment it is (payer, the checkout's payer digest).
func (l *Ledger) ReturnedFromBank(ctx context.Context, merchantID, orderID, payer string) (bool, error) {
	ctx, span := l.span(ctx, "ReturnedFromBank")
	defer span.End()
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var upstreamID, state, status, country, bankID, madeBy string
	var created, began int64
	err = tx.QueryRowContext(ctx, `SELECT upstream_id, state, status, country, bank_id, created_at, began_at, payer FROM attempts
		WHERE merchant_id = $1 AND order_id = $2 AND state IN ('open', 'final') ORDER BY seq DESC LIMIT 1`+l.forUpdate(), merchantID, orderID).
		Scan(&upstreamID, &state, &status, &country, &bankID, &created, &began, &madeBy)
	if errors.Is(err, sql.ErrNoRows) || err == nil && (began != 0 || madeBy != "" && madeBy != payer) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now := l.now().UnixMilli()
	res, err := tx.ExecContext(ctx, `UPDATE attempts SET began_at = $1 WHERE upstream_id = $2 AND began_at = 0`, now, upstreamID)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	c := countChange{merchantID: merchantID, attemptHour: hourOf(time.UnixMilli(created)), country: country, bankID: bankID, bucket: -1}
	if State(state) == Final && status != string(pisclient.StatusCompleted) {
		// Counted as abandoned when it ended; it was cancelled at the bank.
		c.canceled, c.abandoned = 1, -1
	}
	var opened, orderBegan int64
	if err := tx.QueryRowContext(ctx, `SELECT opened_at, began_at FROM orders WHERE merchant_id = $1 AND order_id = $2`,
		merchantID, orderID).Scan(&opened, &orderBegan); err != nil {
		return false, err
	}
	c.funnelHour = hourOf(time.UnixMilli(opened))
	if orderBegan == 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET began_at = $1 WHERE merchant_id = $2 AND order_id = $3`,
			now, merchantID, orderID); err != nil {
			return false, err
		}
		c.began = 1
	}
	if c.began != 0 || c.canceled != 0 {
		if err := c.add(ctx, l.on(tx)); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}
