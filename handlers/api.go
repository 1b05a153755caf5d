package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient"
)

// apiError is an error of the merchants' API, answered as JSON:
// {"error": {"code", "message", "fields": [{"field", "reason", "message"}]}}.
type apiError struct {
	status  int
	code    string
	message string
	fields  []pisclient.FieldError
	err     error
}

func (e *apiError) Error() string {
	if e.err != nil {
		return e.code + ": " + e.err.Error()
	}
	return e.code + ": " + e.message
}

func (e *apiError) Unwrap() error { return e.err }

type apiFieldJSON struct {
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (e *apiError) body() any {
	type errorJSON struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Fields  []apiFieldJSON `json:"fields,omitempty"`
	}
	out := errorJSON{Code: e.code, Message: e.message}
	for _, f := range e.fields {
		out.Fields = append(out.Fields, apiFieldJSON{f.Field, f.Reason, f.Message})
	}
	return map[string]any{"error": out}
}

var errAPIUnauthorized = &apiError{status: http.StatusUnauthorized, code: "unauthorized",
	message: "send the merchant's api_token as 'Authorization: Bearer <token>'"}

// apiMerchant is the merchant whose bearer token the request carries.
func (h *Handler) apiMerchant(c echo.Context) (*merchant.Merchant, error) {
	token, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok {
		return nil, errAPIUnauthorized
	}
	m, ok := h.Merchants.ByAPIToken(strings.TrimSpace(token))
	if !ok {
		return nil, errAPIUnauthorized
	}
	return m, nil
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
	// ExpiresIn is the link's life in seconds; DefaultLinkTTL when zero.
	ExpiresIn int64 `json:"expires_in"`
}

// Bounds of a link's life made through the API.
const (
	DefaultLinkTTL = 24 * time.Hour
	MaxLinkTTL     = 30 * 24 * time.Hour
	maxAPIBody     = 64 << 10
)

// createLink makes a signed /checkout link for the calling merchant, signed
// with its newest key (DESIGN.md section 4).
func (h *Handler) createLink(c echo.Context) error {
	m, err := h.apiMerchant(c)
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
		req.Currency = pisclient.Currency
	}
	ttl := DefaultLinkTTL
	if req.ExpiresIn != 0 {
		ttl = time.Duration(req.ExpiresIn) * time.Second
	}
	l := order.Link{Order: order.Order{
		ID: req.Order, Amount: req.Amount, Currency: req.Currency, ReturnURL: req.ReturnURL,
		Email: req.Email, Country: req.Country, Bank: req.Bank, Lang: req.Lang, KID: m.NewestKID(),
	}, TTL: ttl}
	var fields []pisclient.FieldError
	var ve *pisclient.ValidationError
	if err := l.Check(m); errors.As(err, &ve) {
		fields = ve.Fields
	}
	if ttl < time.Minute || ttl > MaxLinkTTL {
		fields = append(fields, pisclient.FieldError{Field: "expires_in", Reason: pisclient.ReasonInvalid,
			Message: "expires_in must be 60 to 2592000 seconds"})
	}
	if len(fields) > 0 {
		return &apiError{status: http.StatusBadRequest, code: "validation_error", message: "the link's order breaks these rules", fields: fields}
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
func badJSON(err error) *apiError {
	e := &apiError{status: http.StatusBadRequest, code: "bad_request", message: "the body must be a JSON object with the documented fields", err: err}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		e.code, e.message = "validation_error", "a field has the wrong type"
		e.fields = []pisclient.FieldError{{Field: typeErr.Field, Reason: pisclient.ReasonInvalid, Message: typeErr.Field + " must be a " + typeErr.Type.String()}}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		e.code, e.message = "validation_error", "an unknown field"
		e.fields = []pisclient.FieldError{{Field: name, Reason: pisclient.ReasonNotAllowed, Message: "unknown field " + name}}
	}
	return e
}

// paymentJSON is the answer of GET /api/v1/payments/{merchant_order_id}.
type paymentJSON struct {
	MerchantOrderID string `json:"merchant_order_id"`
	// Status is the provider's status as it came (DESIGN.md section 3).
	Status string `json:"status"`
	// Paid is true only for COMPLETED: the moment to ship.
	Paid bool `json:"paid"`
	// Final is true when the status can no longer change.
	Final bool `json:"final"`
}

// showPaymentStatus answers the provider's status of one of the calling
// merchant's orders. The order id is namespaced by the merchant before it
// reaches the provider (merchant.UpstreamOrderID), so another merchant's
// order is never found: its id names a different payment.
func (h *Handler) showPaymentStatus(c echo.Context) error {
	m, err := h.apiMerchant(c)
	if err != nil {
		return err
	}
	id, err := url.PathUnescape(c.Param("*"))
	if err != nil || pisclient.CheckOrderID(id) != nil {
		return &apiError{status: http.StatusBadRequest, code: "validation_error", message: "not an order id",
			fields: []pisclient.FieldError{{Field: "merchant_order_id", Reason: pisclient.ReasonInvalid, Message: "not an order id"}}}
	}
	ps, err := h.PaymentsFor(m).PaymentStatus(c.Request().Context(), m.UpstreamOrderID(id))
	if err != nil {
		return &apiError{status: http.StatusBadGateway, code: "provider_unavailable",
			message: "the provider did not answer; nothing is known yet, ask again shortly", err: err}
	}
	return c.JSON(http.StatusOK, paymentJSON{
		MerchantOrderID: id, Status: string(ps.Status), Paid: ps.Status.Paid(), Final: ps.Status.Final(),
	})
}
