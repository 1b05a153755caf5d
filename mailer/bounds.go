package mailer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/paybybank/checkout/ledger"
)

// Bounds keep the e-mails the app sends for merchants (payment links and
// refund pages to payers) within limits, counted on every instance through
// the ledger: a stolen session or token can never make the app a relay
// that mails anyone, as often as it likes, in a shop's name.
type Bounds struct {
	Ledger *ledger.Ledger
	// PerThing is how many e-mails of one thing (a payment link, a
	// refund) go out in a day (MAIL_PER_LINK_DAY).
	PerThing int
	// PerAddress is how many e-mails one address receives in a day, from
	// every shop of the deployment (MAIL_PER_ADDRESS_DAY).
	PerAddress int
	// PerMerchant is how many e-mails one shop sends in an hour
	// (MAIL_PER_MERCHANT_HOUR).
	PerMerchant int
	// Now tells the time; time.Now when nil.
	Now func() time.Time
}

// The default bounds: a link sent, then sent again twice; a payer reached
// a few times a day; a shop's busy hour of invoices.
const (
	DefaultPerThing    = 3
	DefaultPerAddress  = 5
	DefaultPerMerchant = 50
)

// The bounds' names, said in a refusal: which one was reached.
const (
	BoundThing    = "thing"
	BoundAddress  = "address"
	BoundMerchant = "merchant"
)

// LimitError is a refused e-mail: Bound was reached, and the next may go
// out after RetryAfter.
type LimitError struct {
	Bound      string
	Limit      int
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return "mailer: the " + e.Bound + " bound of e-mails is reached; try again in " + e.RetryAfter.Round(time.Minute).String()
}

// ErrLimit is what every *LimitError is (errors.Is).
var ErrLimit = errors.New("mailer: an e-mail bound is reached")

func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Reservation is an e-mail counted against every bound before it is sent;
// given back when it could not be sent.
type Reservation struct {
	b     *Bounds
	taken []taken
}

type taken struct {
	key    string
	window time.Time
}

// Reserve counts one e-mail of thing (say "link 3k…") from merchantID to
// address to against each bound, or none: past any bound it gives a
// *LimitError saying which, and when to try again.
func (b *Bounds) Reserve(ctx context.Context, merchantID, thing, to string) (*Reservation, error) {
	now := time.Now()
	if b.Now != nil {
		now = b.Now()
	}
	r := &Reservation{b: b}
	for _, bound := range []struct {
		name, key string
		limit     int
		window    time.Duration
	}{
		{BoundThing, "mail-thing:" + digest(merchantID+" "+thing), orDefault(b.PerThing, DefaultPerThing), 24 * time.Hour},
		{BoundAddress, "mail-to:" + digest(strings.ToLower(strings.TrimSpace(to))), orDefault(b.PerAddress, DefaultPerAddress), 24 * time.Hour},
		{BoundMerchant, "mail-shop:" + digest(merchantID), orDefault(b.PerMerchant, DefaultPerMerchant), time.Hour},
	} {
		ok, state, err := b.Ledger.ReserveTry(ctx, bound.key, bound.limit, bound.window, now)
		if err != nil {
			return nil, errors.Join(err, r.GiveBack(ctx))
		}
		if !ok {
			wait := max(state.Start.Add(bound.window).Sub(now), time.Minute)
			limit := &LimitError{Bound: bound.name, Limit: bound.limit, RetryAfter: wait}
			if err := r.GiveBack(ctx); err != nil {
				return nil, errors.Join(limit, err)
			}
			return nil, limit
		}
		r.taken = append(r.taken, taken{key: bound.key, window: state.Start})
	}
	return r, nil
}

// GiveBack returns the e-mail to every bound: it was not sent.
func (r *Reservation) GiveBack(ctx context.Context) error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, t := range r.taken {
		errs = append(errs, r.b.Ledger.GiveBackTry(context.WithoutCancel(ctx), t.key, t.window))
	}
	r.taken = nil
	return errors.Join(errs...)
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
