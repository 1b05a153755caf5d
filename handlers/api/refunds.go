package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/rules"
)

// Routes of refunds: what the console's refunds do, for programs. A
// refund is made under its order's own address, its order id one escaped
// segment: POST /api/v1/payments/{merchant_order_id}/refunds.
const (
	RouteRefunds      = "/api/v1/refunds"
	RouteRefund       = "/api/v1/refunds/:id"
	RouteRefundCancel = "/api/v1/refunds/:id/cancel"
	// refundsSuffix ends an order's refunds' address under RoutePayment.
	refundsSuffix = "/refunds"
)

// MaxIdempotencyKey bounds an Idempotency-Key, as Stripe's does.
const MaxIdempotencyKey = 255

// refundRequest is the body of POST /api/v1/payments/{id}/refunds.
type refundRequest struct {
	Amount  string           `json:"amount"`
	Reason  string           `json:"reason"`
	Account *refunds.Account `json:"account"`
}

// refundJSON is a refund as the API shows it: the payer's account masked,
// the payer's page while it waits for the account.
type refundJSON struct {
	ID              string       `json:"id"`
	MerchantOrderID string       `json:"merchant_order_id"`
	Amount          string       `json:"amount"`
	Currency        string       `json:"currency"`
	Reason          string       `json:"reason"`
	State           string       `json:"state"`
	Account         *accountJSON `json:"account"`
	PayerURL        string       `json:"payer_url,omitempty"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
}

type accountJSON struct {
	Name       string `json:"name"`
	IBANMasked string `json:"iban_masked"`
}

func (h *API) refundJSON(r ledger.Refund) refundJSON {
	out := refundJSON{ID: r.ID, MerchantOrderID: r.OrderID, Amount: r.Amount, Currency: r.Currency, Reason: r.Reason, State: r.State,
		CreatedAt: r.Created.UTC(), UpdatedAt: r.Updated.UTC()}
	if a, ok := h.Refunds.AccountOf(r); ok {
		out.Account = &accountJSON{Name: a.Name, IBANMasked: r.AccountMasked}
	} else if r.AccountMasked != "" {
		out.Account = &accountJSON{IBANMasked: r.AccountMasked}
	}
	if r.State == ledger.RefundAwaitingAccount {
		out.PayerURL = h.Refunds.PageURL(r)
	}
	return out
}

var errNoRefund = &web.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no refund with this id"}

// PaymentAction answers POST /api/v1/payments/{merchant_order_id}/refunds,
// the one action under an order's address.
func (h *API) PaymentAction(c echo.Context) error {
	rest := strings.TrimPrefix(c.Request().URL.EscapedPath(), strings.TrimSuffix(RoutePayment, "*"))
	raw, ok := strings.CutSuffix(rest, refundsSuffix)
	id, err := url.PathUnescape(raw)
	if !ok || err != nil || raw == "" || strings.Contains(raw, "/") {
		return echo.ErrNotFound
	}
	return h.createRefund(c, id)
}

// createRefund makes a refund of one of the calling merchant's paid
// orders. The same Idempotency-Key gives the same refund, never two.
func (h *API) createRefund(c echo.Context, orderID string) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	if fe := rules.CheckOrderID(orderID); fe != nil {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "not an order id",
			Fields: []rules.FieldError{{Field: "merchant_order_id", Reason: rules.ReasonInvalid, Message: "not an order id"}}}
	}
	key := c.Request().Header.Get("Idempotency-Key")
	if utf8.RuneCountInString(key) > MaxIdempotencyKey || rules.HasHidden(key) {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the Idempotency-Key breaks these rules",
			Fields: []rules.FieldError{{Field: "Idempotency-Key", Reason: rules.ReasonInvalid, Message: "at most 255 printable characters"}}}
	}
	var req refundRequest
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badJSON(err)
	}
	r, made, err := h.Refunds.Make(c.Request().Context(), tokenActor(c), m, orderID,
		refunds.Ask{Amount: req.Amount, Reason: req.Reason, Account: req.Account, AccountBy: refunds.ByAPI, IdempotencyKey: key})
	if err != nil {
		return refundRefusal(err)
	}
	if made && r.State == ledger.RefundAwaitingAccount && h.Refunds.Mail != nil {
		// The payer is asked for their account where the order has their
		// address; the refund stands whether the e-mail goes or not.
		h.Refunds.SendPage(c.Request().Context(), tokenActor(c), m, r)
	}
	return c.JSON(http.StatusCreated, h.refundJSON(r))
}

// refundRefusal tells a program why a refund was not made or moved.
func refundRefusal(err error) error {
	var refusal *refunds.Refusal
	var exceeds *refunds.ExceedsError
	switch {
	case errors.As(err, &refusal):
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the refund breaks these rules",
			Fields: fieldErrors(refusal.Fields), Err: err}
	case errors.As(err, &exceeds):
		return &web.APIError{Status: http.StatusConflict, Code: "refund_exceeds_paid", Remaining: exceeds.Remaining, Err: err,
			Message: "the refunds of this order would add up to more than was paid: " + exceeds.Remaining + " EUR remains to refund"}
	case errors.Is(err, ledger.ErrNotFound):
		return &web.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no order with this merchant_order_id", Err: err}
	case errors.Is(err, refunds.ErrNotPaid):
		return &web.APIError{Status: http.StatusUnprocessableEntity, Code: "order_not_paid", Err: err,
			Message: "only a paid order can be refunded: this one is not paid in full (yet)"}
	case errors.Is(err, ledger.ErrIdempotencyReused):
		return &web.APIError{Status: http.StatusConflict, Code: "idempotency_key_reused", Err: err,
			Message: "this Idempotency-Key made a refund of another order or amount: use a new key for a new refund"}
	case errors.Is(err, refunds.ErrNotFound):
		return errNoRefund
	case errors.Is(err, refunds.ErrMoved):
		return &web.APIError{Status: http.StatusConflict, Code: "refund_moved", Err: err,
			Message: "the refund is past the point where this can be done (sent, cancelled, or its account given)"}
	}
	return err
}

func fieldErrors(list []*merchant.FieldError) []rules.FieldError {
	out := make([]rules.FieldError, len(list))
	for i, f := range list {
		out[i] = rules.FieldError{Field: f.Field, Reason: rules.ReasonInvalid, Message: f.Field + ": " + f.Reason}
	}
	return out
}

// ShowRefund answers one of the calling merchant's refunds:
// GET /api/v1/refunds/{id}. Another merchant's is not found.
func (h *API) ShowRefund(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !refunds.ValidID(id) {
		return errNoRefund
	}
	r, err := h.Orders.Ledger.Refund(c.Request().Context(), m.ID, id)
	if err != nil {
		return refundRefusal(err)
	}
	return c.JSON(http.StatusOK, h.refundJSON(r))
}

// ListRefunds lists the calling merchant's refunds, newest first:
// GET /api/v1/refunds?state=&order=&limit=&cursor=.
func (h *API) ListRefunds(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	limit, after, _, err := listParams(c, "")
	if err != nil {
		return err
	}
	f := ledger.RefundFilter{Merchant: m.ID, State: c.QueryParam("state"), Order: c.QueryParam("order")}
	if f.State != "" && !validRefundState(f.State) {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the query breaks these rules",
			Fields: []rules.FieldError{{Field: "state", Reason: rules.ReasonInvalid, Message: "state must be one of " + strings.Join(ledger.RefundStates, ", ")}}}
	}
	list, err := h.Orders.Ledger.ListRefunds(c.Request().Context(), f, after, limit)
	if err != nil {
		return err
	}
	out := struct {
		Refunds    []refundJSON `json:"refunds"`
		NextCursor string       `json:"next_cursor,omitempty"`
	}{Refunds: []refundJSON{}}
	for _, r := range list {
		out.Refunds = append(out.Refunds, h.refundJSON(r))
	}
	if len(list) == limit {
		last := list[len(list)-1]
		out.NextCursor = ledger.Cursor{At: last.Created, ID: last.ID}.String()
	}
	return c.JSON(http.StatusOK, out)
}

func validRefundState(s string) bool {
	for _, st := range ledger.RefundStates {
		if s == st {
			return true
		}
	}
	return false
}

// CancelRefund cancels one of the calling merchant's refunds before it is
// sent: POST /api/v1/refunds/{id}/cancel. Its amount may be refunded again.
func (h *API) CancelRefund(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !refunds.ValidID(id) {
		return errNoRefund
	}
	r, err := h.Refunds.Cancel(c.Request().Context(), tokenActor(c), m, id)
	if err != nil {
		return refundRefusal(err)
	}
	return c.JSON(http.StatusOK, h.refundJSON(r))
}
