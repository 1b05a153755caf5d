package shopper

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/views"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// RoutePaymentLink is a payment link's address: it opens the usual
// checkout for the link's order, and is the way back to the payer's receipt.
const RoutePaymentLink = "/l/:id"

// paramReceipt carries a sealed receipt: the order of a link that a payer
// paid (or began to pay), so that the way back shows their own payment and
// no one else's.
const paramReceipt = "r"

// receiptTTL is how long the way back to a receipt opens: kept, it is a
// payer's record for a year and more.
const receiptTTL = 400 * 24 * time.Hour

// receiptRefresh is how often a receipt of a payment under way reloads
// itself.
const receiptRefresh = 10

// errLinkUnknown answers an id that is no link: malformed, unknown or
// guessed alike, so that nothing tells which ids exist.
var errLinkUnknown = &web.PageError{Status: http.StatusNotFound, Key: "plink.unknown"}

// openLink answers GET /l/{id}: an open link starts the checkout of its
// order (a single link's one order, or a reusable link's next); a paid
// single link shows its receipt; a cancelled or expired one says so (410),
// with the receipt where there is one; a reusable link whose payments are
// all made says so too, and one whose payments are all under way asks the
// payer to come back.
func (h *Steps) openLink(c echo.Context) error {
	id := c.Param("id")
	if !links.ValidID(id) {
		return errLinkUnknown
	}
	if raw := c.QueryParam(paramReceipt); raw != "" {
		return h.showReceipt(c, id, raw)
	}
	ctx := c.Request().Context()
	p, o, err := h.Orders.Ledger.OpenLink(ctx, id)
	if errors.Is(err, ledger.ErrLinkNotFound) {
		return errLinkUnknown
	}
	var taken *ledger.ReferenceTakenError
	if p.ID == "" && err != nil {
		return err
	}
	m, ok := h.linkMerchant(c, p.MerchantID, p.Lang)
	if !ok {
		return errMerchantGone(p.MerchantID)
	}
	if m.Disabled() {
		return errMerchantDisabled(m)
	}
	switch {
	case errors.Is(err, ledger.ErrLinkEnded):
		return h.linkEnded(c, m, p)
	case errors.Is(err, ledger.ErrLinkFull):
		return h.linkBusy(c, m, p)
	case errors.As(err, &taken):
		return errOrderChanged(err)
	case err != nil:
		return err
	}
	token, err := h.Sealer.Seal(order.Order{Merchant: m.ID, ID: o.OrderID, Amount: o.Amount, Currency: o.Currency,
		Lang: web.Localizer(c).Lang(), Link: p.ID, Description: p.Description}, h.Now())
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, string(countryURL(token, false)))
}

// linkMerchant finds a link's merchant and makes the page its: its look,
// and the payer's language (their own choice, else the link's).
func (h *Steps) linkMerchant(c echo.Context, merchantID, lang string) (*merchant.Merchant, bool) {
	r := web.RequestOf(c)
	r.Lang = i18n.New(h.chooseLanguage(c, lang))
	m, ok := h.Merchants.Get(merchantID)
	if ok {
		r.ForMerchant(m, nil)
	}
	return m, ok
}

func errMerchantGone(id string) error {
	return &web.PageError{Status: http.StatusNotFound, Key: "error.shopGone", Err: errors.New("merchant gone: " + id)}
}

// linkEnded is the page of a link that starts nothing: a paid single
// link's receipt (200), else why it ended (410) with the receipt where
// there is one.
func (h *Steps) linkEnded(c echo.Context, m *merchant.Merchant, p ledger.PaymentLink) error {
	l := h.loc(c)
	state := p.State(h.Now())
	if state == ledger.LinkOpen {
		// The ledger's clock said it ended: it is past its expiry there.
		state = ledger.LinkExpired
	}
	page := checkoutviews.LinkPage{State: state}
	if p.Kind == ledger.LinkSingle {
		r, err := h.receipt(c.Request().Context(), l, m, p, p.Reference, false)
		if err != nil {
			return err
		}
		page.Receipt = r
	}
	status := http.StatusGone
	switch {
	case state == ledger.LinkPaid && page.Receipt != nil:
		status = http.StatusOK
	case state == ledger.LinkPaid:
		page.Heading, page.Message = l.T("plink.full"), l.T("plink.full.text", m.Name)
	case state == ledger.LinkCancelled:
		page.Heading, page.Message = l.T("plink.cancelled"), l.T("plink.cancelled.text", m.Name)
	default:
		page.Heading, page.Message = l.T("plink.expired"), l.T("plink.expired.text", l.DateTime(p.Expires)+" UTC", m.Name)
	}
	title := page.Heading
	if title == "" {
		title = l.T("receipt.heading")
	}
	page.Page = h.linkPageFrame(c, title)
	return web.Render(c, status, checkoutviews.Link(page))
}

// linkBusy is the page of a reusable link whose every payment is made or
// under way: one under way that ends unpaid frees its place.
func (h *Steps) linkBusy(c echo.Context, m *merchant.Merchant, p ledger.PaymentLink) error {
	l := h.loc(c)
	page := checkoutviews.LinkPage{State: "busy", Heading: l.T("plink.busy"), Message: l.T("plink.busy.text", m.Name)}
	page.Page = h.linkPageFrame(c, page.Heading)
	c.Response().Header().Set("Retry-After", "600")
	return web.Render(c, http.StatusConflict, checkoutviews.Link(page))
}

// linkPageFrame is the layout of a link's page, with the language switcher
// leading back to the same address.
func (h *Steps) linkPageFrame(c echo.Context, title string) views.Page {
	page := h.page(c, title)
	page.Switch = linkLanguageSwitch(c)
	return page
}

// showReceipt answers GET /l/{id}?r=…: the receipt of the payer's own
// order of the link, sealed in r, in whatever state the link is; it
// reloads itself while the payment is under way.
func (h *Steps) showReceipt(c echo.Context, id, raw string) error {
	o, err := h.Sealer.Open(raw, h.Now())
	if err != nil || o.Link != id {
		return errLinkUnknown
	}
	ctx := c.Request().Context()
	p, err := h.Orders.Ledger.LinkByID(ctx, id)
	if errors.Is(err, ledger.ErrLinkNotFound) || err == nil && p.MerchantID != o.Merchant {
		return errLinkUnknown
	}
	if err != nil {
		return err
	}
	m, ok := h.linkMerchant(c, p.MerchantID, o.Lang)
	if !ok {
		return errMerchantGone(p.MerchantID)
	}
	l := h.loc(c)
	r, err := h.receipt(ctx, l, m, p, o.ID, true)
	if err != nil {
		return err
	}
	if r == nil {
		// Nothing was begun: the payer goes on paying.
		return c.Redirect(http.StatusSeeOther, links.Route+id)
	}
	page := checkoutviews.LinkPage{State: p.State(h.Now()), Receipt: r, Page: h.linkPageFrame(c, l.T("receipt.heading"))}
	if r.Kind != checkoutviews.StatusPaid && r.Kind != checkoutviews.StatusCanceled {
		page.Refresh, page.RefreshURL = receiptRefresh, c.Request().URL.RequestURI()
	}
	return web.Render(c, http.StatusOK, checkoutviews.Link(page))
}

// receipt is the receipt of the link's order orderID, nil before a payment
// was begun for it. fresh reads the status from the provider while it can
// still change; otherwise the ledger's word is shown.
func (h *Steps) receipt(ctx context.Context, l *i18n.Localizer, m *merchant.Merchant, p ledger.PaymentLink, orderID string, fresh bool) (*checkoutviews.Receipt, error) {
	var v payment.View
	var err error
	if fresh {
		v, err = h.Orders.Status(ctx, m, orderID)
	} else {
		o, attempts, oerr := h.Orders.Ledger.Order(ctx, m.ID, orderID)
		v, err = payment.Describe(o, attempts), oerr
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if v.Attempt == nil {
		return nil, nil
	}
	kind, key := describeStatus(v.Status)
	if !v.Known {
		kind, key = checkoutviews.StatusChecking, "status.checking"
	}
	at := v.Attempt.Updated
	if !v.Order.Paid.IsZero() {
		at = v.Order.Paid
	}
	return &checkoutviews.Receipt{Kind: kind, Status: l.T(key), Amount: l.Amount(v.Order.Amount), Merchant: m.Name,
		Description: p.Description, Reference: orderID, Date: l.DateTime(at) + " UTC",
		Bank: h.bankName(ctx, v.Attempt.Country, v.Attempt.BankID)}, nil
}

// bankName is a bank's name as the list gives it, else its id.
func (h *Steps) bankName(ctx context.Context, country, id string) string {
	if list, err := h.Banks.List(ctx); err == nil {
		if b, ok := list.Find(country, id); ok {
			return b.Name
		}
	}
	return id
}

// receiptURL is the way back from a payment link's checkout: the payer's
// receipt of their own order.
func (h *Steps) receiptURL(co checkout) (templ.SafeURL, error) {
	token, err := h.Sealer.SealFor(order.Order{Merchant: co.merchant.ID, ID: co.order.ID, Link: co.order.Link, Lang: co.order.Lang}, h.Now(), receiptTTL)
	if err != nil {
		return "", err
	}
	return templ.SafeURL(h.BaseURL + links.Route + co.order.Link + "?" + url.Values{paramReceipt: {token}}.Encode()), nil
}

// errLinkStopped is the answer to a payment of a link that ended or filled
// while its payer was choosing a bank: said as opening the link says it.
func (h *Steps) errLinkStopped(c echo.Context, co checkout, err error) error {
	p, lerr := h.Orders.Ledger.LinkByID(c.Request().Context(), co.order.Link)
	if lerr != nil {
		return lerr
	}
	if errors.Is(err, ledger.ErrLinkFull) {
		return h.linkBusy(c, co.merchant, p)
	}
	return h.linkEnded(c, co.merchant, p)
}
