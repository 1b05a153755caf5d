package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/views"
)

// enter checks a merchant's signed link and sends the shopper on to the
// first step, carrying the order in a sealed token (DESIGN.md section 2.1).
func (h *Handler) enter(c echo.Context) error {
	o, m, err := order.FromLink(c.QueryParams(), h.Merchants, h.Now())
	allowFraming(c, m)
	var ve *pisclient.ValidationError
	switch {
	case errors.Is(err, order.ErrLinkExpired):
		return &pageError{status: http.StatusForbidden, heading: "This payment link has expired",
			message: "Payment links are valid for a limited time. Go back to the shop and start the payment again.", err: err}
	case errors.As(err, &ve):
		names := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			names[i] = f.Field
		}
		return &pageError{status: http.StatusBadRequest, heading: "This payment link cannot be used",
			message: "The shop made the link with a value we cannot accept (" + strings.Join(names, ", ") + "). Nothing was charged. Please let the shop know.", err: err}
	case err != nil:
		return &pageError{status: http.StatusForbidden, heading: "This payment link is not valid",
			message: "It may have been changed or copied incompletely. Nothing was charged. Go back to the shop and start the payment again.", err: err}
	}
	token, err := h.Sealer.Seal(o, h.Now())
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, string(countryURL(token, false)))
}

// checkout is an open order and its merchant: what every later step needs.
type checkout struct {
	token    string
	order    order.Order
	merchant *merchant.Merchant
}

// open reads the sealed order of /c/{token}.
func (h *Handler) open(c echo.Context) (checkout, error) {
	token := c.Param("token")
	if unescaped, err := url.PathUnescape(token); err == nil {
		token = unescaped
	}
	o, err := h.Sealer.Open(token, h.Now())
	switch {
	case errors.Is(err, order.ErrTokenExpired):
		return checkout{}, &pageError{status: http.StatusGone, heading: "This checkout has expired",
			message: "Go back to the shop and start the payment again. If you already paid, the shop will confirm it.", err: err}
	case err != nil:
		return checkout{}, &pageError{status: http.StatusNotFound, heading: "This checkout address is not valid",
			message: "It may have been copied incompletely. Go back to the shop and start the payment again.", err: err}
	}
	m, ok := h.Merchants.Get(o.Merchant)
	allowFraming(c, m)
	if !ok {
		return checkout{}, &pageError{status: http.StatusNotFound, heading: "This shop is no longer served here",
			message: "Go back to the shop and start the payment again.", err: errors.New("merchant gone: " + o.Merchant)}
	}
	return checkout{token: token, order: o, merchant: m}, nil
}

// summary is the order as the shopper reads it.
func (co checkout) summary() views.Summary {
	return views.Summary{Merchant: co.merchant.Name, Amount: formatAmount(co.order.Amount), OrderID: co.order.ID}
}

// formatAmount writes an amount the way an English reader expects: €49.90.
func formatAmount(amount string) string {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return amount + " EUR"
	}
	return "€" + d.StringFixed(2)
}
