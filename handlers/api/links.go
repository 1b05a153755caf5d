package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

// Routes of payment links: what the console's Payment links page does,
// for programs.
const (
	RoutePaymentLinks      = "/api/v1/payment-links"
	RoutePaymentLink       = "/api/v1/payment-links/:id"
	RoutePaymentLinkCancel = "/api/v1/payment-links/:id/cancel"
)

// paymentLinkRequest is the body of POST /api/v1/payment-links.
type paymentLinkRequest struct {
	Amount      string `json:"amount"`
	Description string `json:"description"`
	Reference   string `json:"reference"`
	Email       string `json:"email"`
	Lang        string `json:"lang"`
	// ExpiresIn is the link's life in seconds, 3600 to 31536000; 30 days
	// when absent.
	ExpiresIn   int64  `json:"expires_in"`
	Kind        string `json:"kind"`
	MaxPayments int    `json:"max_payments"`
}

// paymentLinkJSON is a payment link as the API shows it.
type paymentLinkJSON struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	State       string    `json:"state"`
	Kind        string    `json:"kind"`
	Amount      string    `json:"amount"`
	Currency    string    `json:"currency"`
	Description string    `json:"description"`
	Reference   string    `json:"reference"`
	ExpiresAt   time.Time `json:"expires_at"`
	Payments    int       `json:"payments"`
	PaidAmount  string    `json:"paid_amount"`
}

func (h *API) paymentLinkJSON(p ledger.PaymentLink) paymentLinkJSON {
	return paymentLinkJSON{ID: p.ID, URL: h.Links.URL(p.ID), State: p.State(h.Now()), Kind: p.Kind, Amount: p.Amount, Currency: p.Currency,
		Description: p.Description, Reference: p.Reference, ExpiresAt: p.Expires.UTC().Truncate(time.Second), Payments: p.Payments, PaidAmount: p.PaidAmount()}
}

// tokenActor names the calling token in the audit log.
func tokenActor(c echo.Context) settings.Actor {
	id, _ := c.Get(ctxToken).(string)
	return settings.Actor{Name: "API token " + id, RequestID: c.Response().Header().Get(echo.HeaderXRequestID)}
}

var errNoPaymentLink = &web.APIError{Status: http.StatusNotFound, Code: "not_found", Message: "no payment link with this id"}

// CreatePaymentLink makes a payment link for the calling merchant (and,
// with email and SMTP_URL set, sends it to the payer):
// POST /api/v1/payment-links.
func (h *API) CreatePaymentLink(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	var req paymentLinkRequest
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badJSON(err)
	}
	d := links.Draft{Amount: req.Amount, Description: req.Description, Reference: req.Reference, Email: req.Email, Lang: req.Lang,
		Kind: req.Kind, ExpiryField: "expires_in"}
	var fields []rules.FieldError
	switch {
	case req.ExpiresIn == 0:
	case req.ExpiresIn < int64(links.MinExpiry/time.Second) || req.ExpiresIn > int64(links.MaxExpiry/time.Second):
		fields = append(fields, rules.FieldError{Field: "expires_in", Reason: rules.ReasonInvalid, Message: "expires_in must be 3600 to 31536000 seconds"})
	default:
		d.Expiry = time.Duration(req.ExpiresIn) * time.Second
	}
	if req.MaxPayments != 0 {
		d.MaxPayments = strconv.Itoa(req.MaxPayments)
		if req.Kind != ledger.LinkReusable || req.MaxPayments < 0 {
			fields = append(fields, rules.FieldError{Field: "max_payments", Reason: rules.ReasonInvalid,
				Message: "max_payments bounds a reusable link: 1 or more, with kind reusable"})
		}
	}
	var refusal *links.Refusal
	if _, err := links.Check(d, h.Now()); errors.As(err, &refusal) {
		for _, f := range refusal.Fields {
			fields = append(fields, rules.FieldError{Field: f.Field, Reason: rules.ReasonInvalid, Message: f.Field + ": " + f.Reason})
		}
	}
	if len(fields) > 0 {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the payment link breaks these rules", Fields: fields}
	}
	made, err := h.Links.Make(c.Request().Context(), tokenActor(c), m, d)
	var taken *ledger.ReferenceTakenError
	var limit *mailer.LimitError
	if errors.As(err, &limit) {
		// Nothing was made; the same request may be sent again later, or
		// without an e-mail address now.
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(limit.RetryAfter.Seconds())))
		return &web.APIError{Status: http.StatusTooManyRequests, Code: "mail_limit", Err: err,
			Message: mailLimitMessage(limit), Fields: []rules.FieldError{{Field: "email", Reason: "limit", Message: mailLimitMessage(limit)}}}
	}
	if errors.As(err, &taken) {
		holder := "payment link " + taken.LinkID
		if taken.OrderID != "" {
			holder = "order " + taken.OrderID
		}
		return &web.APIError{Status: http.StatusConflict, Code: "reference_taken", Err: err,
			Message: "this reference is used already; choose another or leave it out",
			Fields:  []rules.FieldError{{Field: "reference", Reason: "conflict", Message: "reference " + req.Reference + " is used by " + holder}}}
	}
	if err != nil {
		return err
	}
	if made.MailErr != nil {
		web.Logger(c, slog.Default()).Warn("api: a payment link's e-mail failed", "merchant", m.ID, "link", made.Link.ID, "err", made.MailErr)
	}
	return c.JSON(http.StatusCreated, h.paymentLinkJSON(made.Link))
}

// mailLimitMessage says which mail bound a request reached.
func mailLimitMessage(limit *mailer.LimitError) string {
	wait := fmt.Sprintf("; no payment link was made: send it again in %d s, or without email", int(limit.RetryAfter.Seconds()))
	switch limit.Bound {
	case mailer.BoundAddress:
		return fmt.Sprintf("this address was e-mailed %d times today, as many as a day allows", limit.Limit) + wait
	case mailer.BoundMerchant:
		return fmt.Sprintf("this merchant sent %d e-mails this hour, as many as an hour allows", limit.Limit) + wait
	}
	return fmt.Sprintf("this payment link was e-mailed %d times today, as many as a day allows", limit.Limit) + wait
}

// ListPaymentLinks lists the calling merchant's payment links, newest
// first: GET /api/v1/payment-links?state=&limit=&cursor=.
func (h *API) ListPaymentLinks(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	limit, after, _, err := listParams(c, "")
	if err != nil {
		return err
	}
	state := c.QueryParam("state")
	if state != "" && state != ledger.LinkOpen && state != ledger.LinkPaid && state != ledger.LinkCancelled && state != ledger.LinkExpired {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the query breaks these rules",
			Fields: []rules.FieldError{{Field: "state", Reason: rules.ReasonInvalid, Message: "state must be open, paid, cancelled or expired"}}}
	}
	list, err := h.Orders.Ledger.ListLinks(c.Request().Context(), ledger.LinkFilter{Merchant: m.ID, State: state}, after, limit)
	if err != nil {
		return err
	}
	out := struct {
		PaymentLinks []paymentLinkJSON `json:"payment_links"`
		NextCursor   string            `json:"next_cursor,omitempty"`
	}{PaymentLinks: []paymentLinkJSON{}}
	for _, p := range list {
		out.PaymentLinks = append(out.PaymentLinks, h.paymentLinkJSON(p))
	}
	if len(list) == limit {
		last := list[len(list)-1]
		out.NextCursor = ledger.Cursor{At: last.Created, ID: last.ID}.String()
	}
	return c.JSON(http.StatusOK, out)
}

// ShowPaymentLink answers one of the calling merchant's payment links:
// GET /api/v1/payment-links/{id}. Another merchant's is not found.
func (h *API) ShowPaymentLink(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !links.ValidID(id) {
		return errNoPaymentLink
	}
	p, err := h.Orders.Ledger.Link(c.Request().Context(), m.ID, id)
	if errors.Is(err, ledger.ErrLinkNotFound) {
		return errNoPaymentLink
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.paymentLinkJSON(p))
}

// CancelPaymentLink cancels one of the calling merchant's open payment
// links: POST /api/v1/payment-links/{id}/cancel. No payment starts from it
// any more; one already at the bank is still followed and notified.
func (h *API) CancelPaymentLink(c echo.Context) error {
	m, err := h.merchant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !links.ValidID(id) {
		return errNoPaymentLink
	}
	p, err := h.Links.Cancel(c.Request().Context(), tokenActor(c), m.ID, id)
	switch {
	case errors.Is(err, ledger.ErrLinkNotFound):
		return errNoPaymentLink
	case errors.Is(err, ledger.ErrLinkEnded):
		return &web.APIError{Status: http.StatusConflict, Code: "link_ended", Err: err,
			Message: "the payment link is " + p.State(h.Now()) + " already: there is nothing to cancel"}
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, h.paymentLinkJSON(p))
}
