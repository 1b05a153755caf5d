// Package api serves the merchants' servers, as docs/integrate.md and the
// OpenAPI document beside this file (openapi.json) describe: signed links made
// on request, where an order stands, the lists for reconciliation, the events
// with their deliveries and how each bank is doing. Every call but the OpenAPI
// document's carries the merchant's api_token and sees only that merchant's
// orders. Errors are *web.APIError, told as JSON by the app's error handler.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/rules"
)

var errUnauthorized = &web.APIError{Status: http.StatusUnauthorized, Code: "unauthorized",
	Message: "send the merchant's api_token as 'Authorization: Bearer <token>'"}

// errTwoAuthorizations answers a request that carries more than one
// Authorization header.
var errTwoAuthorizations = &web.APIError{Status: http.StatusBadRequest, Code: "bad_request",
	Message: "send one Authorization header: this request has several"}

// errDisabled answers a disabled merchant's token: its payments under way
// are still followed and told by webhook, but nothing new is taken.
var errDisabled = &web.APIError{Status: http.StatusForbidden, Code: "merchant_disabled",
	Message: "merchant disabled: this merchant takes no new payments here; ask the checkout's operator"}

// Routes of the API. Other programs rely on them (docs/integrate.md,
// openapi.json).
const (
	RouteLinks     = "/api/v1/links"
	RoutePayment   = "/api/v1/payments/*"
	RoutePayments  = "/api/v1/payments"
	RouteEvents    = "/api/v1/events"
	RouteRedeliver = "/api/v1/events/:id/redeliver"
)

// Config is what the API is built from.
type Config struct {
	// BaseURL is the app's public URL, which links lead to.
	BaseURL   string
	Merchants *merchant.Directory
	// Orders records the orders links are made for and reads where they
	// stand; its Ledger lists them and their events.
	Orders *payment.Service
	// Health is the bank health read in the background; Banks names the
	// banks in it.
	Health *bankhealth.Keeper
	Banks  BankLists
	// APIRate is the requests a second each token may make on average,
	// with bursts of twice that (API_RATE); DefaultRate when 0. A
	// merchant's api_rate overrides it.
	APIRate rate.Limit
	Now     func() time.Time
	// Requests keeps each merchant's recent requests for its Developers
	// page; none are kept when nil.
	Requests *ledger.RequestLog
	// Links makes and cancels payment links.
	Links *links.Store
	// Refunds makes and moves refunds.
	Refunds *refunds.Service
}

// DefaultRate is each API token's budget (API_RATE): enough for a shop's
// checkouts and its reconciliation paging at once.
const DefaultRate = rate.Limit(50)

// API answers the merchants' servers.
type API struct {
	Config
	budgets web.Budgets
	// used remembers when each token's use was last written.
	used sync.Map
}

// New returns the API.
func New(cfg Config) *API {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.APIRate <= 0 {
		cfg.APIRate = DefaultRate
	}
	return &API{Config: cfg}
}

// merchant is the merchant whose bearer token the request carries, once
// the request is taken from its token's budget: APIRate a second with
// bursts of twice that, or the merchant's own api_rate. Every answer says
// what is left in the RateLimit headers. A request without a known token
// spends a budget of its address instead, so that guessing tokens is as
// slow as using one.
func (h *API) merchant(c echo.Context) (*merchant.Merchant, error) {
	var m *merchant.Merchant
	var tokenID string
	known := false
	if len(c.Request().Header.Values(echo.HeaderAuthorization)) > 1 {
		// Which one would be judged is a guess a proxy and the app may
		// make differently: neither.
		return nil, errTwoAuthorizations
	}
	if token, ok := bearer(c.Request().Header.Get(echo.HeaderAuthorization)); ok {
		m, tokenID, known = h.Merchants.APIToken(token, h.Now())
	}
	r, burst := h.rate(m)
	key := "address " + c.RealIP()
	if known {
		// Each token its own budget: a merchant's servers may hold several.
		key = "token " + tokenID
		h.tokenUsed(c, tokenID)
		c.Set(ctxMerchant, m.ID)
		c.Set(ctxToken, tokenID)
	}
	spend := h.budgets.Spend(key, r, burst, h.Now())
	spend.Tell(c, budgetName)
	switch {
	case !spend.OK:
		return nil, &web.APIError{Status: http.StatusTooManyRequests, Code: "too_many_requests",
			Message: fmt.Sprintf("over this token's %d requests in %d s; try again in %d s", spend.Quota, spend.Window, spend.RetryAfter)}
	case !known:
		return nil, errUnauthorized
	case m.Disabled():
		return nil, errDisabled
	}
	return m, nil
}

// bearer is the token of an "Authorization: Bearer <token>" header, its
// scheme in any case (RFC 9110 section 11.1). Any other header, a Basic
// one say, carries no token of ours: false.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// ctxMerchant names the merchant a request's token belongs to, for Logged.
const ctxMerchant = "api.merchant"

// ctxToken names the id of the token a request carries, for the audit log.
const ctxToken = "api.token"

// Logged keeps each request whose token was known in the merchant's recent
// requests: method, route pattern, status and time, nothing more.
func (h *API) Logged(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		id, ok := c.Get(ctxMerchant).(string)
		if !ok || h.Requests == nil {
			return err
		}
		status := c.Response().Status
		if err != nil {
			status = web.Classify(err).Status()
		}
		h.Requests.Add(ledger.APIRequest{MerchantID: id, At: h.Now(), Method: c.Request().Method, Route: c.Path(), Status: status})
		return err
	}
}

// usedEvery is how often a token's last use is written to the ledger: the
// console shows it to the hour.
const usedEvery = time.Hour

// tokenUsed writes a token's use, at most once per usedEvery on this
// instance; a failure only leaves the date older.
func (h *API) tokenUsed(c echo.Context, id string) {
	now := h.Now()
	if last, ok := h.used.Load(id); ok && now.Sub(last.(time.Time)) < usedEvery {
		return
	}
	h.used.Store(id, now)
	if h.Orders != nil && h.Orders.Ledger != nil {
		h.Orders.Ledger.TokenUsed(c.Request().Context(), id, now)
	}
}

// budgetName names the API's policy in the RateLimit headers.
const budgetName = "api"

// rate is the budget of m's token, its api_rate or else the deployment's,
// with bursts of twice that.
func (h *API) rate(m *merchant.Merchant) (rate.Limit, int) {
	r := h.APIRate
	if m != nil && m.APIRate > 0 {
		r = rate.Limit(m.APIRate)
	}
	return r, int(math.Ceil(2 * float64(r)))
}

// linkRequest is the body of POST /api/v1/links.
type linkRequest struct {
	Order     string `json:"order"`
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
	ReturnURL string `json:"return_url"`
	Email     string `json:"email"`
	Country   string `json:"country"`
	Bank      string `json:"bank"`
	Lang      string `json:"lang"`
	LastBank  string `json:"last_bank"`
	// ExpiresIn is the link's life in seconds; DefaultLinkTTL when zero.
	ExpiresIn int64 `json:"expires_in"`
}

// Bounds of a link's life made through the API.
const (
	DefaultLinkTTL = 24 * time.Hour
	MaxLinkTTL     = 30 * 24 * time.Hour
	maxAPIBody     = 64 << 10
)

// CreateLink makes a signed /checkout link for the calling merchant, signed
// with its newest key (the scheme is in docs/integrate.md).
func (h *API) CreateLink(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	var req linkRequest
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badJSON(err)
	}
	if req.Currency == "" {
		req.Currency = rules.Currency
	}
	ttl := DefaultLinkTTL
	switch {
	case req.ExpiresIn == 0:
	case req.ExpiresIn < int64(time.Minute/time.Second) || req.ExpiresIn > int64(MaxLinkTTL/time.Second):
		// Checked before it becomes a Duration, which could overflow.
		ttl = -1
	default:
		ttl = time.Duration(req.ExpiresIn) * time.Second
	}
	l := order.Link{Order: order.Order{
		ID: req.Order, Amount: req.Amount, Currency: req.Currency, ReturnURL: req.ReturnURL,
		Email: req.Email, Country: req.Country, Bank: req.Bank, Lang: req.Lang, LastBank: req.LastBank, KID: m.NewestKID(),
	}, TTL: ttl}
	var fields []rules.FieldError
	var ve *rules.ValidationError
	if err := l.Check(m); errors.As(err, &ve) {
		fields = ve.Fields
	}
	if ttl < time.Minute || ttl > MaxLinkTTL {
		fields = append(fields, rules.FieldError{Field: "expires_in", Reason: rules.ReasonInvalid,
			Message: "expires_in must be 60 to 2592000 seconds"})
	}
	if len(fields) > 0 {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the link's order breaks these rules", Fields: fields}
	}
	recorded, err := h.Orders.Record(c.Request().Context(), payment.Order{Merchant: m, ID: l.ID, Amount: l.Amount, Currency: l.Currency, ReturnURL: l.ReturnURL})
	if errors.Is(err, payment.ErrOrderChanged) {
		field := "amount"
		if recorded.Currency != l.Currency {
			field = "currency"
		}
		return &web.APIError{Status: http.StatusConflict, Code: "order_changed",
			Message: "this order id is already recorded with another amount or currency; use a new order id", Err: err,
			Fields: []rules.FieldError{{Field: field, Reason: "conflict",
				Message: "order " + l.ID + " was recorded for " + recorded.Amount + " " + recorded.Currency}}}
	}
	if err != nil {
		return err
	}
	now := h.Now()
	link, err := l.URL(h.BaseURL, m, now)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{
		"url":        link,
		"expires_at": now.Add(ttl).UTC().Format(time.RFC3339),
	})
}

// badJSON explains a body that is not the expected JSON, naming the field
// when one is to blame.
func badJSON(err error) *web.APIError {
	e := &web.APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "the body must be a JSON object with the documented fields", Err: err}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		e.Code, e.Message = "validation_error", "a field has the wrong type"
		e.Fields = []rules.FieldError{{Field: typeErr.Field, Reason: rules.ReasonInvalid, Message: typeErr.Field + " must be a " + typeErr.Type.String()}}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		e.Code, e.Message = "validation_error", "an unknown field"
		e.Fields = []rules.FieldError{{Field: name, Reason: rules.ReasonNotAllowed, Message: "unknown field " + name}}
	}
	return e
}

// paymentJSON is the answer of GET /api/v1/payments/{merchant_order_id}:
// the order as the ledger has it, with every payment made for it.
type paymentJSON struct {
	orderJSON
	Attempts []attemptJSON `json:"attempts"`
}

// attemptJSON is one payment made for the order, at one bank.
type attemptJSON struct {
	Attempt   int       `json:"attempt"`
	Bank      string    `json:"bank"`
	Country   string    `json:"country"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// statusUnknown is the status reported while it cannot be read.
const statusUnknown = "UNKNOWN"

// newPaymentJSON writes an order's view for the API. Attempts that never
// reached a shopper (orphaned, refused) are not the merchant's concern.
func newPaymentJSON(v payment.View) paymentJSON {
	out := paymentJSON{orderJSON: orderJSON{
		MerchantOrderID: v.Order.OrderID, Amount: v.Order.Amount, Currency: v.Order.Currency,
		Status: string(v.Status), Paid: v.Paid, Final: v.Final(),
		CreatedAt: v.Order.Created.UTC(), UpdatedAt: v.Order.Updated.UTC(), PaymentLink: v.Order.PaymentLink,
		RefundedAmount: v.Order.Refunded(), ReceivedAt: v.Order.ReceivedOn,
	}, Attempts: []attemptJSON{}}
	if !v.Known {
		out.Status = statusUnknown
	}
	for _, a := range v.Attempts {
		if a.State == ledger.Orphaned || a.State == ledger.Refused {
			continue
		}
		status := a.Status
		switch {
		case a.State == ledger.Unknown || a.State == ledger.Creating:
			status = statusUnknown
		case status == "":
			status = string(pisclient.StatusNotFound)
		}
		out.Attempts = append(out.Attempts, attemptJSON{Attempt: a.Seq, Bank: a.BankID, Country: a.Country,
			Status: status, CreatedAt: a.Created.UTC(), UpdatedAt: a.Updated.UTC()})
	}
	return out
}

// ShowPaymentStatus answers where one of the calling merchant's orders
// stands, from the ledger (refreshed from the provider while it can change).
// Orders are the merchant's own: another merchant's order id is not found.
func (h *API) ShowPaymentStatus(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	// The escaped path, decoded exactly once: Echo's parameter is sometimes
	// decoded already and sometimes not.
	raw := strings.TrimPrefix(c.Request().URL.EscapedPath(), strings.TrimSuffix(RoutePayment, "*"))
	id, err := url.PathUnescape(raw)
	if err != nil || rules.CheckOrderID(id) != nil {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "not an order id",
			Fields: []rules.FieldError{{Field: "merchant_order_id", Reason: rules.ReasonInvalid, Message: "not an order id"}}}
	}
	v, err := h.Orders.Status(c.Request().Context(), m, id)
	if errors.Is(err, payment.ErrNotFound) {
		return &web.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no order with this merchant_order_id", Err: err}
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newPaymentJSON(v))
}

// Bounds of a listing.
const (
	defaultListLimit = 50
	maxListLimit     = 200
)

// listParams reads limit, cursor and a time filter (RFC 3339) named
// timeParam, with field-named errors.
func listParams(c echo.Context, timeParam string) (limit int, after ledger.Cursor, since time.Time, err error) {
	var fields []rules.FieldError
	limit = defaultListLimit
	if v := c.QueryParam("limit"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > maxListLimit {
			fields = append(fields, rules.FieldError{Field: "limit", Reason: rules.ReasonInvalid,
				Message: fmt.Sprintf("limit must be 1 to %d", maxListLimit)})
		}
		limit = n
	}
	if after, err = ledger.ParseCursor(c.QueryParam("cursor")); err != nil {
		fields = append(fields, rules.FieldError{Field: "cursor", Reason: rules.ReasonInvalid, Message: "cursor must be a next_cursor this API gave"})
	}
	if v := c.QueryParam(timeParam); v != "" {
		if since, err = time.Parse(time.RFC3339, v); err != nil {
			fields = append(fields, rules.FieldError{Field: timeParam, Reason: rules.ReasonInvalid, Message: timeParam + " must be a time like 2026-11-23T10:00:00Z"})
		}
	}
	if len(fields) > 0 {
		return 0, ledger.Cursor{}, time.Time{}, &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the query breaks these rules", Fields: fields}
	}
	return limit, after, since, nil
}

// orderJSON is an order as the API shows it.
type orderJSON struct {
	MerchantOrderID string `json:"merchant_order_id"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	// Status is the provider's status of the order's payment as it came
	// (docs/provider.md), NOT_FOUND before one was begun, UNKNOWN while it
	// cannot be read.
	Status string `json:"status"`
	// Paid is true only when a payment of the order's own amount is
	// COMPLETED: the moment to ship.
	Paid bool `json:"paid"`
	// Final is true when the status can no longer change.
	Final     bool      `json:"final"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// PaymentLink is the id of the payment link the order was made for;
	// absent for an order of a signed link or of this API.
	PaymentLink string `json:"payment_link,omitempty"`
	// RefundedAmount is the sum of the order's refunds that are not
	// cancelled or returned.
	RefundedAmount string `json:"refunded_amount"`
	// ReceivedAt is the booking date of the bank statement's entry that
	// showed the order's money on the merchant's account; absent before.
	ReceivedAt string `json:"received_at,omitempty"`
}

// ListPayments lists the calling merchant's orders, newest change first, for
// reconciliation: GET /api/v1/payments?status=&updated_since=&limit=&cursor=.
// An order's status is its last recorded one (the follower keeps it fresh).
func (h *API) ListPayments(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	limit, after, since, err := listParams(c, "updated_since")
	if err != nil {
		return err
	}
	orders, err := h.Orders.Ledger.Orders(c.Request().Context(), m.ID, c.QueryParam("status"), since, after, limit)
	if err != nil {
		return err
	}
	out := struct {
		Payments   []orderJSON `json:"payments"`
		NextCursor string      `json:"next_cursor,omitempty"`
	}{Payments: []orderJSON{}}
	for _, o := range orders {
		st := pisclient.Status(o.Status)
		out.Payments = append(out.Payments, orderJSON{MerchantOrderID: o.OrderID, Amount: o.Amount, Currency: o.Currency,
			Status: o.Status, Paid: st.Paid(), Final: st.Final(), CreatedAt: o.Created.UTC(), UpdatedAt: o.Updated.UTC(), PaymentLink: o.PaymentLink,
			RefundedAmount: o.Refunded(), ReceivedAt: o.ReceivedOn})
	}
	if len(orders) == limit {
		last := orders[len(orders)-1]
		out.NextCursor = ledger.Cursor{At: last.Updated, ID: last.OrderID}.String()
	}
	return c.JSON(http.StatusOK, out)
}

// eventJSON is one event with its deliveries.
type eventJSON struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	CreatedAt  time.Time       `json:"created_at"`
	Data       json.RawMessage `json:"data"`
	Delivery   string          `json:"delivery"`
	Deliveries []deliveryJSON  `json:"deliveries"`
}

type deliveryJSON struct {
	Try        int       `json:"try"`
	At         time.Time `json:"at"`
	Code       int       `json:"code"`
	DurationMS int64     `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`
}

func newEventJSON(e ledger.Event) eventJSON {
	var body struct {
		Data json.RawMessage `json:"data"`
	}
	json.Unmarshal(e.Body, &body)
	out := eventJSON{ID: e.ID, Type: e.Type, CreatedAt: e.Created.UTC(), Data: body.Data, Delivery: e.Delivery, Deliveries: []deliveryJSON{}}
	for _, d := range e.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryJSON{Try: d.Try, At: d.At.UTC(), Code: d.Code, DurationMS: d.Duration.Milliseconds(), Error: d.Error})
	}
	return out
}

// ListEvents lists the calling merchant's events, oldest first, with their
// deliveries: GET /api/v1/events?since=&limit=&cursor=.
func (h *API) ListEvents(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	limit, after, since, err := listParams(c, "since")
	if err != nil {
		return err
	}
	events, err := h.Orders.Ledger.Events(c.Request().Context(), m.ID, since, after, limit)
	if err != nil {
		return err
	}
	out := struct {
		Events     []eventJSON `json:"events"`
		NextCursor string      `json:"next_cursor,omitempty"`
	}{Events: []eventJSON{}}
	for _, e := range events {
		out.Events = append(out.Events, newEventJSON(e))
	}
	if len(events) == limit {
		last := events[len(events)-1]
		out.NextCursor = ledger.Cursor{At: last.Created, ID: last.ID}.String()
	}
	return c.JSON(http.StatusOK, out)
}

// RedeliverEvent queues one of the calling merchant's events to be sent
// again now: POST /api/v1/events/{id}/redeliver.
func (h *API) RedeliverEvent(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	id := c.Param("id")
	err = h.Orders.Ledger.Redeliver(ctx, m.ID, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return &web.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no event with this id", Err: err}
	}
	if err != nil {
		return err
	}
	e, err := h.Orders.Ledger.Event(ctx, m.ID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, newEventJSON(e))
}

// NotFound answers an /api/ path no route matches with the JSON error, so
// that a program calling a wrong path learns so in its own terms.
func (h *API) NotFound(echo.Context) error {
	return &web.APIError{Status: http.StatusNotFound, Code: "not_found",
		Message: "no API route has this path and method; the routes are listed in " + RouteContract}
}
