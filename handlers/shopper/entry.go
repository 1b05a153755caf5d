package shopper

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/rules"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// enter checks a merchant's signed link and sends the shopper on to the
// first step, carrying the order in a sealed token (package order), so that
// no step depends on a cookie.
func (h *Steps) enter(c echo.Context) error {
	o, m, err := order.FromLink(c.QueryParams(), h.Merchants, h.Now())
	web.RequestOf(c).ForMerchant(m, nil)
	var ve *rules.ValidationError
	switch {
	case errors.Is(err, order.ErrLinkExpired):
		return &web.PageError{Status: http.StatusForbidden, Key: "error.linkExpired", Err: err}
	case errors.As(err, &ve):
		names := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			names[i] = f.Field
		}
		return &web.PageError{Status: http.StatusBadRequest, Key: "error.linkUnusable", Args: []any{strings.Join(names, ", ")}, Err: err}
	case err != nil:
		return &web.PageError{Status: http.StatusForbidden, Key: "error.linkInvalid", Err: err}
	}
	// An error page from here on leads back to the shop.
	web.RequestOf(c).Step = &checkout{order: o, merchant: m}
	if m.Disabled() {
		return errMerchantDisabled(m)
	}
	if _, err := h.Orders.Open(c.Request().Context(), checkout{order: o, merchant: m}.payment()); err != nil {
		if errors.Is(err, payment.ErrOrderChanged) {
			return errOrderChanged(err)
		}
		return err
	}
	// The shop's link gave the payer's address: kept sealed with the
	// order, where a refund's page may be sent to (refunds.KeepOrderEmails).
	if err := h.Refunds.KeepOrderEmail(c.Request().Context(), m.ID, o.ID, o.Email, h.loc(c).Lang()); err != nil {
		h.log(c).Warn("keeping the order's e-mail for a refund", "merchant", m.ID, "err", err)
	}
	// The same browser coming in again through the shop's link finds its
	// own payment under way; anyone else's checkout is another payer's.
	o.Payer, _ = h.payerFor(c, orderPayer(m.ID, o.ID))
	if raw := c.QueryParam(ParamPreviewTheme); raw != "" {
		if o.Theme, err = h.previewTheme(raw); err != nil {
			return &web.PageError{Status: http.StatusBadRequest, Key: "error.previewInvalid", Err: err}
		}
	}
	token, err := h.Sealer.Seal(o, h.Now())
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, string(countryURL(token, false)))
}

// ParamPreviewTheme carries a designer's draft customization (JSON) in a
// signed link of the studio. It is honoured in sandbox mode only: in
// production a merchant's look comes from its configuration alone.
const ParamPreviewTheme = "theme"

// previewTheme reads the draft of a preview link.
func (h *Steps) previewTheme(raw string) (*rules.Customization, error) {
	if !h.Sandbox {
		return nil, errors.New("preview themes work in sandbox mode only")
	}
	var c rules.Customization
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if errs := c.Check(); len(errs) > 0 {
		return nil, &rules.ValidationError{Fields: errs}
	}
	return &c, nil
}

// customization is the theme sent to the provider: a preview's draft, or
// the merchant's own.
func (co checkout) customization() *rules.Customization {
	if co.order.Theme != nil {
		return co.order.Theme
	}
	return co.merchant.Customization
}

// errOrderChanged is the page for a link whose order id the shop used
// before with another amount or currency: it is refused, so that the earlier
// payment is never taken for this one.
func errOrderChanged(err error) error {
	return &web.PageError{Status: http.StatusConflict, Key: "error.orderChanged", Err: err}
}

// payment is the order as the payment logic records it.
func (co checkout) payment() payment.Order {
	return payment.Order{Merchant: co.merchant, ID: co.order.ID, Amount: co.order.Amount,
		Currency: co.order.Currency, ReturnURL: co.order.ReturnURL, KID: co.order.KID, Link: co.order.Link,
		Payer: order.PayerDigest(co.order.Payer)}
}

// checkout is an open order and its merchant: what every later step needs.
type checkout struct {
	token    string
	order    order.Order
	merchant *merchant.Merchant
}

// open is the sealed order of the /c/{token} step being served, opened by
// describe.
func (h *Steps) open(c echo.Context) (checkout, error) {
	co := checkoutOf(c)
	if err := checkoutErrOf(c); co == nil || err != nil {
		return checkout{}, err
	}
	return *co, nil
}

// summary is the order as the shopper reads it, in their language.
func (co checkout) summary(l *i18n.Localizer) checkoutviews.Summary {
	return checkoutviews.Summary{Merchant: co.merchant.Name, Amount: l.Amount(co.order.Amount), OrderID: co.order.ID,
		Description: co.order.Description, Linked: co.order.Link != ""}
}
