// Package payment decides how an order is paid: it records the order, makes
// at most one attempt at the provider that could still be paid, sends every
// submit of the order to that attempt's link, settles creations whose answer
// was lost, and reads where the order stands. The ledger makes it exact
// across instances and restarts; the handlers only show what it decides.
// Its Follower reads open payments until they are final, out of the
// deployment's read budget (Budget).
package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
)

// Provider creates payments and reads their status at the provider.
type Provider interface {
	CreatePayment(ctx context.Context, r pisclient.PaymentRequest) (*pisclient.Payment, error)
	PaymentStatus(ctx context.Context, merchantOrderID string) (*pisclient.PaymentStatus, error)
}

var (
	// ErrOrderChanged means the order id is recorded with another amount or
	// currency: the link is refused, never shown against the earlier payment.
	ErrOrderChanged = ledger.ErrOrderChanged
	// ErrNotFound means the merchant has no such order.
	ErrNotFound = ledger.ErrNotFound
	// ErrChecking means a payment may have been made and it is not yet known
	// whether it was: the shopper is told so, never that nothing was charged,
	// and may try again in a moment.
	ErrChecking = errors.New("payment: checking with the provider whether a payment was made")
	// ErrLinkEnded means the order's payment link is paid, cancelled or
	// expired: no payment starts.
	ErrLinkEnded = ledger.ErrLinkEnded
	// ErrLinkFull means every payment the order's reusable link allows is
	// made or under way.
	ErrLinkFull = ledger.ErrLinkFull
	// ErrInProgress means another checkout's payment of the order is under
	// way: its bank page is that payer's alone, so nothing of it is handed
	// out and nothing new starts until it ends unpaid.
	ErrInProgress = errors.New("payment: another checkout's payment of this order is under way")
)

// RefusedError is the provider's refusal of a create call: nothing was made,
// so the shopper may be told nothing was charged.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string {
	return "payment: the provider refused the payment: " + e.Err.Error()
}
func (e *RefusedError) Unwrap() error { return e.Err }

// Service is the payment logic over a ledger and the provider.
type Service struct {
	Ledger *ledger.Ledger
	// ProviderFor gives the provider client of a merchant.
	ProviderFor func(m *merchant.Merchant) Provider
	Log         *slog.Logger
	// CreateTimeout bounds a create call; it runs on even if the shopper's
	// browser gives up, so that a payment made upstream is not lost to us.
	CreateTimeout time.Duration
	// Now tells the time; time.Now when nil.
	Now func() time.Time
	// Budget, when set, is charged with every status read the service
	// makes for a shopper, a merchant or the console: they come out of
	// the deployment's reads, and move the follower's next read of the
	// attempt instead of coming on top of it.
	Budget *Budget
}

// DefaultCreateTimeout is the CreateTimeout of a Service that sets none.
const DefaultCreateTimeout = 30 * time.Second

func (s *Service) createTimeout() time.Duration {
	if s.CreateTimeout > 0 {
		return s.CreateTimeout
	}
	return DefaultCreateTimeout
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Order is what the service is told of an order: from a signed link.
type Order struct {
	Merchant  *merchant.Merchant
	ID        string
	Amount    string
	Currency  string
	ReturnURL string
	// KID is the link key the order's link was signed with, when it came
	// by a link.
	KID string
	// Link is the payment link the order was made for, if any: a payment
	// starts only while the link may take it.
	Link string
	// Payer is the digest of the payer key of the checkout asking
	// (order.PayerDigest): a payment it begins is its own, and another
	// checkout's payment under way is never handed to it.
	Payer string
}

// Mine reports whether attempt a is the payment of the checkout whose payer
// digest is payer: made by it, or made before payers were told apart.
func Mine(a ledger.Attempt, payer string) bool { return a.Payer == "" || a.Payer == payer }

// InProgressElsewhere reports whether an order's attempts hold a payment
// of another checkout than payer's that could still be paid (or may have
// been made): the order starts nothing for payer until it ends, and a paid
// one ends the order.
func InProgressElsewhere(attempts []ledger.Attempt, payer string) bool {
	if paidAttempt(attempts) != nil {
		return false
	}
	live, _ := liveAttempt(attempts)
	return live != nil && !Mine(*live, payer)
}

// Record records an order the first time it is seen. The same order id with
// another amount or currency gives ErrOrderChanged.
func (s *Service) Record(ctx context.Context, o Order) (ledger.Order, error) {
	lo, err := o.ledger()
	if err != nil {
		return ledger.Order{}, err
	}
	return s.Ledger.RecordOrder(ctx, lo)
}

// Open is Record for a shopper using the order's link: the first use counts
// the order as opened, the top of the console's funnel.
func (s *Service) Open(ctx context.Context, o Order) (ledger.Order, error) {
	lo, err := o.ledger()
	if err != nil {
		return ledger.Order{}, err
	}
	return s.Ledger.OpenOrder(ctx, lo)
}

// ledger is the order as the ledger records it, its amount canonical.
func (o Order) ledger() (ledger.Order, error) {
	amount, err := canonicalAmount(o)
	if err != nil {
		return ledger.Order{}, err
	}
	return ledger.Order{MerchantID: o.Merchant.ID, OrderID: o.ID, Amount: amount, Currency: o.Currency, ReturnURL: o.ReturnURL, KID: o.KID,
		PaymentLink: o.Link}, nil
}

// canonicalAmount is the order's amount as it is recorded and sent: two
// decimals ("49.9" and "0049.90" are "49.90").
func canonicalAmount(o Order) (string, error) {
	amount, fe := rules.ParseAmount(o.Amount)
	if fe != nil {
		return "", &rules.ValidationError{Fields: []rules.FieldError{*fe}}
	}
	return amount.StringFixed(2), nil
}

// Outcome is where a submit sends the shopper: the payment link, or, when
// the order's payment has begun or is done, its status page (Link empty).
type Outcome struct {
	Link    string
	Attempt ledger.Attempt
}

// maxCreates bounds the create calls of one submit: a first one, and one
// more after a first whose answer was lost.
const maxCreates = 2

// Pay finds or makes the order's payment at the chosen bank and says where
// to send the shopper. req is the provider request without its
// merchant_order_id, which Pay gives each attempt.
//
// Concurrent submits of one order, on any instance, make one attempt: the
// insert that starts one can be won by a single caller, and the others of
// the same checkout wait for the winner's link. A submit from another
// checkout (o.Payer) while that attempt could still be paid gets
// ErrInProgress, never its link. A new attempt is made only when every
// earlier one is final and unpaid, or was never handed out
// (ledger.Orphaned).
func (s *Service) Pay(ctx context.Context, o Order, req pisclient.PaymentRequest) (Outcome, error) {
	recorded, err := s.Record(ctx, o)
	if err != nil {
		return Outcome{}, err
	}
	req.Amount, req.Currency = recorded.Amount, recorded.Currency
	provider := s.ProviderFor(o.Merchant)
	deadline := s.now().Add(s.createTimeout() + 5*time.Second)
	creates := 0
	wait := 10 * time.Millisecond
	// The usual submit is an order's first: it tries the first attempt
	// straight away. The insert fails when the order has any attempt
	// already, and only then are they read.
	firstTry := true
	for {
		if s.now().After(deadline) {
			return Outcome{}, ErrChecking
		}
		var attempts []ledger.Attempt
		read := !firstTry
		if read {
			if _, attempts, err = s.Ledger.Order(ctx, o.Merchant.ID, o.ID); err != nil {
				return Outcome{}, err
			}
		}
		firstTry = false
		live, last := liveAttempt(attempts)
		if paid := paidAttempt(attempts); paid != nil {
			return Outcome{Attempt: *paid}, nil
		}
		switch {
		case live == nil:
			if creates >= maxCreates {
				return Outcome{}, ErrChecking
			}
			seq := 1
			if last != nil {
				seq = last.Seq + 1
			}
			if seq > merchant.MaxAttempts {
				return Outcome{}, fmt.Errorf("order %q has had %d attempts", o.ID, merchant.MaxAttempts)
			}
			a := ledger.Attempt{
				UpstreamID: o.Merchant.AttemptID(o.ID, seq), MerchantID: o.Merchant.ID, OrderID: o.ID, Seq: seq,
				Amount: recorded.Amount, Currency: recorded.Currency, BankID: req.InstitutionID, Country: req.InstitutionCountryCode,
				PaymentLink: o.Link, Payer: o.Payer,
			}
			err := s.Ledger.InsertAttempt(ctx, a)
			if errors.Is(err, ledger.ErrAttemptTaken) {
				continue // another submit won: wait for its link
			}
			if !read && (errors.Is(err, ledger.ErrLinkEnded) || errors.Is(err, ledger.ErrLinkFull)) {
				// A payment link that starts nothing more may have this
				// order's payment already, paid or under way: that
				// answers, read as on any later submit.
				continue
			}
			if err != nil {
				return Outcome{}, err
			}
			creates++
			out, err := s.create(ctx, provider, a, req)
			if err != nil || out.Link != "" {
				return out, err
			}
		case !Mine(*live, o.Payer) && live.State != ledger.Unknown:
			// Another checkout's payment, unless it ended at the bank
			// meanwhile: then the order is free for a new one.
			if live.State != ledger.Open || !s.refresh(ctx, provider, live, true) || !pisclient.Status(live.Status).Final() {
				return Outcome{}, ErrInProgress
			}
		case live.State == ledger.Open && live.Link == "":
			// It began without us holding its link: the status page follows it.
			return Outcome{Attempt: *live}, nil
		case live.State == ledger.Open:
			// Still payable unless the shopper cancelled it at the bank.
			if !s.refresh(ctx, provider, live, true) || !pisclient.Status(live.Status).Final() {
				if begunElsewhere(live.Status) {
					return Outcome{Attempt: *live}, nil
				}
				return Outcome{Link: live.Link, Attempt: *live}, nil
			}
		case live.State == ledger.Unknown:
			if err := s.settle(ctx, provider, live, true); err != nil {
				return Outcome{}, err
			}
		case live.State == ledger.Creating:
			if s.now().Sub(live.Created) > s.createTimeout()+5*time.Second {
				// Its instance died mid-call: the answer is lost for good.
				s.Ledger.Move(ctx, live.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Unknown})
				continue
			}
			if err := sleep(ctx, wait); err != nil {
				return Outcome{}, ErrChecking
			}
			wait = min(wait*2, 200*time.Millisecond)
		}
	}
}

// begunElsewhere reports whether the shopper has already approved the
// payment at the bank, so its link leads nowhere new: the status page does.
func begunElsewhere(status string) bool {
	st := pisclient.Status(status)
	return st == pisclient.StatusAccepted || st.Paid()
}

// create asks the provider for attempt a, which this caller won. A link ends
// the submit; an attempt whose outcome is unknown is left Unknown for Pay's
// loop to settle.
func (s *Service) create(ctx context.Context, provider Provider, a ledger.Attempt, req pisclient.PaymentRequest) (Outcome, error) {
	req.MerchantOrderID = a.UpstreamID
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.createTimeout())
	defer cancel()
	p, err := provider.CreatePayment(cctx, req)
	// The ledger is written even when the shopper has gone: what the
	// provider did must not be forgotten.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	var ve *rules.ValidationError
	switch {
	case err == nil:
		a.State, a.Link = ledger.Open, p.Link
		if _, err := s.Ledger.Move(wctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: p.Link}); err != nil {
			return Outcome{}, err
		}
		return Outcome{Link: p.Link, Attempt: a}, nil
	case errors.Is(err, pisclient.ErrDuplicateOrder):
		// A payment under this id exists that the ledger did not make (one
		// made before the ledger, say): somebody may hold its link, so it
		// is followed, never replaced.
		s.log().WarnContext(ctx, "create payment: the provider has a payment under this id already", "attempt", a.UpstreamID, "err", err)
		_, merr := s.Ledger.Move(wctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open})
		return Outcome{}, merr
	case errors.As(err, &ve), refusal(err):
		if _, merr := s.Ledger.Move(wctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Refused}); merr != nil {
			return Outcome{}, merr
		}
		return Outcome{}, &RefusedError{Err: err}
	default:
		// Lost, unreadable, or a server error after which nobody can say
		// what the provider did.
		s.log().WarnContext(ctx, "create payment: outcome unknown", "attempt", a.UpstreamID, "err", err)
		_, merr := s.Ledger.Move(wctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Unknown})
		return Outcome{}, merr
	}
}

// refusal reports an answer that says the provider did nothing: a 4xx (but
// a timeout), or 503, which by HTTP's meaning is a request not handled. A
// 500, 502 or 504 may come after the work was done, so it is not one.
func refusal(err error) bool {
	var ae *pisclient.APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.StatusCode == 503 || ae.StatusCode >= 400 && ae.StatusCode < 500 && ae.StatusCode != 408
}

// settle decides an Unknown attempt by reading its status. Its link reached
// nobody, so when it has not begun (NOT_FOUND, which also means "never
// made") nobody can pay it: it is orphaned and a new attempt is safe. When
// it has begun it is the order's payment and is followed. elsewhere says
// the read is not the follower's (see read). a on return holds what was
// recorded.
func (s *Service) settle(ctx context.Context, provider Provider, a *ledger.Attempt, elsewhere bool) error {
	ps, err := s.read(ctx, provider, a, elsewhere)
	if err != nil {
		s.log().WarnContext(ctx, "payment status unavailable while settling an unknown attempt", "attempt", a.UpstreamID, "err", err)
		return ErrChecking
	}
	ch := ledger.Change{State: ledger.Open, Status: string(ps.Status)}
	switch {
	case ps.Status == pisclient.StatusNotFound:
		ch = ledger.Change{State: ledger.Orphaned, Status: string(ps.Status)}
	case ps.Status.Final():
		ch.State = ledger.Final
	}
	if _, err = s.Ledger.Move(ctx, a.UpstreamID, ledger.Unknown, ch); err != nil {
		return err
	}
	a.State, a.Status, a.Updated = ch.State, ch.Status, s.now()
	return nil
}

// refresh reads an open attempt's status and records it, moving the attempt
// to Final when it can no longer change. It reports whether the read
// succeeded; a on return holds what was recorded. elsewhere says the read
// is not the follower's (see read).
func (s *Service) refresh(ctx context.Context, provider Provider, a *ledger.Attempt, elsewhere bool) bool {
	ps, err := s.read(ctx, provider, a, elsewhere)
	if err != nil {
		s.log().WarnContext(ctx, "payment status unavailable", "attempt", a.UpstreamID, "err", err)
		return false
	}
	ch := ledger.Change{Status: string(ps.Status)}
	if ps.Status.Final() {
		ch.State = ledger.Final
	}
	if ch.Status != a.Status || ch.State != "" {
		if _, err := s.Ledger.Move(ctx, a.UpstreamID, a.State, ch); err != nil {
			s.log().WarnContext(ctx, "recording a payment status", "attempt", a.UpstreamID, "err", err)
		}
		a.Updated = s.now()
	}
	a.Status = ch.Status
	if ch.State != "" {
		a.State = ch.State
	}
	if elsewhere && a.State.Live() {
		// The read counts as the attempt's: the follower's next one waits
		// its interval from now.
		if err := s.Ledger.ReadElsewhere(context.WithoutCancel(ctx), a.UpstreamID, plan(*a, s.now())); err != nil {
			s.log().WarnContext(ctx, "moving the follower's next read", "attempt", a.UpstreamID, "err", err)
		}
	}
	return true
}

// read asks the provider for an attempt's status. A read made elsewhere
// than in the follower is charged to the deployment's budget, answered or
// not: the provider counted it.
func (s *Service) read(ctx context.Context, provider Provider, a *ledger.Attempt, elsewhere bool) (*pisclient.PaymentStatus, error) {
	if elsewhere {
		s.Budget.Spent()
	}
	return provider.PaymentStatus(ctx, a.UpstreamID)
}

// liveAttempt returns the order's attempt that blocks a new one, if any,
// and its newest attempt of any kind.
func liveAttempt(attempts []ledger.Attempt) (live, last *ledger.Attempt) {
	for i := range attempts {
		a := &attempts[i]
		if a.State.Live() {
			live = a
		}
		last = a
	}
	return live, last
}

// paidAttempt returns the order's completed attempt, if any.
func paidAttempt(attempts []ledger.Attempt) *ledger.Attempt {
	for i := range attempts {
		if pisclient.Status(attempts[i].Status).Paid() && attempts[i].State != ledger.Orphaned {
			return &attempts[i]
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// View is where an order stands, for the shopper's status page, the way back
// and the merchants' API.
type View struct {
	Order ledger.Order
	// Attempt is the attempt reported as the order's payment: its paid one,
	// else its newest that was made. Nil before any.
	Attempt *ledger.Attempt
	// Attempts are every attempt, oldest first.
	Attempts []ledger.Attempt
	// Status is the provider's status of Attempt, verbatim; NOT_FOUND when
	// no payment was begun.
	Status pisclient.Status
	// Known is false while the status could not be read: the provider did
	// not answer, or an attempt's outcome is still unknown.
	Known bool
	// Paid is true only for a COMPLETED attempt of the order's own amount
	// and currency.
	Paid bool
}

// Final reports whether the order's status can no longer change.
func (v View) Final() bool { return v.Known && v.Status.Final() }

// Status reads where a merchant's order stands from the ledger, refreshing
// its current attempt from the provider while it can still change.
func (s *Service) Status(ctx context.Context, m *merchant.Merchant, orderID string) (View, error) {
	return s.status(ctx, m, orderID, nil)
}

// status is Status; when held is set (the order a shopper holds), an order
// recorded for another amount or currency gives ErrOrderChanged before the
// provider is asked anything.
func (s *Service) status(ctx context.Context, m *merchant.Merchant, orderID string, held *Order) (View, error) {
	o, attempts, err := s.Ledger.Order(ctx, m.ID, orderID)
	if err != nil {
		return View{}, err
	}
	if held != nil {
		if amount, err := canonicalAmount(*held); err != nil || amount != o.Amount || held.Currency != o.Currency {
			return View{}, ErrOrderChanged
		}
	}
	provider := s.ProviderFor(m)
	if cur := reported(attempts); cur != nil && cur.State == ledger.Unknown && s.settle(ctx, provider, cur, true) == nil {
		if o, attempts, err = s.Ledger.Order(ctx, m.ID, orderID); err != nil {
			return View{}, err
		}
	}
	cur := reported(attempts)
	known := true
	if cur != nil && cur.State == ledger.Open && !pisclient.Status(cur.Status).Final() && !s.refresh(ctx, provider, cur, true) {
		known = cur.Status != ""
	}
	v := Describe(o, attempts)
	v.Known = v.Known && known
	return v, nil
}

// Describe is where an order stands by the ledger alone, without asking
// the provider: what the console shows until someone checks now.
func Describe(o ledger.Order, attempts []ledger.Attempt) View {
	v := View{Order: o, Attempts: attempts, Status: pisclient.StatusNotFound, Known: true}
	cur := reported(attempts)
	if cur == nil {
		return v
	}
	if cur.State == ledger.Unknown || cur.State == ledger.Creating {
		v.Known = false
	}
	v.Attempt = cur
	if cur.Status != "" {
		v.Status = pisclient.Status(cur.Status)
	}
	v.Paid = v.Status.Paid() && cur.Amount == o.Amount && cur.Currency == o.Currency
	return v
}

// Returned records that the shopper of o came back from the bank through
// the return URL, so that the payment counts as opened at the bank whatever
// status the follower saw (ledger.ReturnedFromBank). Another checkout's
// visit to its own return address says nothing of this payment.
func (s *Service) Returned(ctx context.Context, o Order) error {
	_, err := s.Ledger.ReturnedFromBank(ctx, o.Merchant.ID, o.ID, o.Payer)
	return err
}

// StatusOf is Status for the order a shopper holds: an order of another
// amount or currency under its id gives ErrOrderChanged, and an order not
// yet recorded (a checkout begun before the ledger) is recorded first. Only
// then does it write: the status page is read again and again while a
// payment is pending.
func (s *Service) StatusOf(ctx context.Context, o Order) (View, error) {
	v, err := s.status(ctx, o.Merchant, o.ID, &o)
	if !errors.Is(err, ErrNotFound) {
		return v, err
	}
	if _, err := s.Record(ctx, o); err != nil {
		return View{}, err
	}
	return s.status(ctx, o.Merchant, o.ID, &o)
}

// reported picks the attempt that stands for the order: a paid one, else
// the newest that was (or may have been) made. Orphaned and refused attempts
// never reached a shopper and are never reported.
func reported(attempts []ledger.Attempt) *ledger.Attempt {
	if paid := paidAttempt(attempts); paid != nil {
		return paid
	}
	for i := len(attempts) - 1; i >= 0; i-- {
		if st := attempts[i].State; st != ledger.Orphaned && st != ledger.Refused {
			return &attempts[i]
		}
	}
	return nil
}
