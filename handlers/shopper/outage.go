package shopper

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
)

// RetryAfterOutage is the Retry-After, in seconds, of an answer given while
// the payments ledger does not answer.
const RetryAfterOutage = 5

// outage is what the steps know of the payments ledger not answering: a
// request that failed on our side is told as a moment's trouble (503) when
// the ledger does not answer a ping. It is logged once when it begins and
// once when it ends, with how many requests it refused, never once per
// request.
type outage struct {
	down    atomic.Bool
	refused atomic.Int64
}

// pingTimeout bounds the ping that tells an outage from another fault.
const pingTimeout = time.Second

// ledgerDown reports whether the request's failure (err) comes from the
// payments ledger not answering, and starts watching for its return the
// first time.
func (h *Steps) ledgerDown(c echo.Context, err error) bool {
	if h.Orders == nil || h.Orders.Ledger == nil {
		return false
	}
	if h.outage.down.Load() {
		h.outage.refused.Add(1)
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), pingTimeout)
	defer cancel()
	if ping := h.Orders.Ledger.Ping(ctx); ping == nil || errors.Is(ping, ledger.ErrClosed) {
		return false
	}
	h.outage.refused.Add(1)
	if h.outage.down.CompareAndSwap(false, true) {
		h.log(c).Error("the payments ledger does not answer: shoppers and programs are asked to try again in a moment (503) until it does",
			"ledger", h.Orders.Ledger.Where, "err", err)
		go h.watchLedger(h.Now())
	}
	return true
}

// watchLedger pings the ledger every second until it answers again (or is
// closed), then says so once.
func (h *Steps) watchLedger(since time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		err := h.Orders.Ledger.Ping(ctx)
		cancel()
		if err != nil && !errors.Is(err, ledger.ErrClosed) {
			continue
		}
		if err == nil {
			h.Log.Warn("the payments ledger answers again", "ledger", h.Orders.Ledger.Where,
				"down_for", h.Now().Sub(since).Round(time.Second).String(), "requests_refused", h.outage.refused.Swap(0))
		}
		h.outage.down.Store(false)
		return
	}
}

// tellOutage answers a request that failed because the ledger does not
// answer: the page says nothing was charged (or, back from the bank, not to
// pay again), with Try again (the same request) and the way back to the
// shop; programs get the JSON error unavailable. (The details form answers
// its own, with everything typed: createPayment.)
func (h *Steps) tellOutage(c echo.Context) {
	c.Response().Header().Set("Retry-After", strconv.Itoa(RetryAfterOutage))
	r := c.Request()
	f := web.Unavailable()
	if c.Path() == RouteReturn {
		// Back from the bank: the payment may have been approved there.
		f.Page.Key = "error.unavailableAtBank"
	}
	if r.Method == http.MethodGet {
		f.Page.RetryURL = templ.SafeURL(r.URL.RequestURI())
	}
	h.tell(c, f)
}
