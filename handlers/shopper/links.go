package shopper

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// openLink answers GET /l/{id}, reading only: an open link starts the
// usual checkout (its order is made when the payer first submits); a paid
// single link shows its receipt, without anything of its payer's; a
// cancelled or expired one says so (410), with the receipt where there is
// one; a single link whose payment is under way in another browser says it
// is being paid right now and starts nothing; a reusable link whose
// payments are all made or under way says so too.
//
// A browser's first opening counts once in the link's funnel, in the
// background; a HEAD, a prefetch or a link preview counts nothing.
func (h *Steps) openLink(c echo.Context) error {
	id := c.Param("id")
	if !links.ValidID(id) {
		return errLinkUnknown
	}
	if raw := c.QueryParam(paramReceipt); raw != "" {
		return h.showReceipt(c, id, raw)
	}
	ctx := c.Request().Context()
	p, err := h.Orders.Ledger.LinkByID(ctx, id)
	if errors.Is(err, ledger.ErrLinkNotFound) {
		return errLinkUnknown
	}
	if err != nil {
		return err
	}
	m, ok := h.linkMerchant(c, p.MerchantID, p.Lang)
	if !ok {
		return errMerchantGone(p.MerchantID)
	}
	if m.Disabled() {
		return errMerchantDisabled(m)
	}
	if p.State(h.Orders.Ledger.Now()) != ledger.LinkOpen {
		// Judged by the ledger's clock, as a payment's start is.
		return h.linkEnded(c, m, p)
	}
	counted := c.Request().Method == http.MethodGet && !previewing(c.Request())
	var payer string
	fresh := false
	if counted {
		payer, fresh = h.payerFor(c, linkPayer(p.ID))
	} else {
		payer = order.NewPayer()
	}
	o := order.Order{Merchant: m.ID, Amount: p.Amount, Currency: p.Currency, Lang: web.Localizer(c).Lang(), Link: p.ID,
		Description: p.Description, Payer: payer}
	switch p.Kind {
	case ledger.LinkSingle:
		o.ID = p.Reference
		_, attempts, err := h.Orders.Ledger.Order(ctx, m.ID, p.Reference)
		if err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return err
		}
		if payment.InProgressElsewhere(attempts, order.PayerDigest(payer)) {
			return h.linkInProgress(c, m, p)
		}
	default:
		_, mine, err := h.Orders.Ledger.PayerOrder(ctx, p.ID, order.PayerDigest(payer))
		switch {
		case err == nil:
			o.ID = mine.OrderID
		case !errors.Is(err, ledger.ErrNotFound):
			return err
		default:
			// Told now rather than after choosing a bank; the bound itself
			// is kept where payments start.
			if full, err := h.Orders.Ledger.LinkFull(ctx, p); err != nil || full {
				return cmp.Or(err, h.linkBusy(c, m, p))
			}
		}
	}
	if fresh {
		h.Links.Opened(m.ID, p.ID, payerName(c.RealIP()+" "+c.Request().UserAgent()))
	}
	token, err := h.Sealer.Seal(o, h.Now())
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, string(countryURL(token, false)))
}

// previewing reports a request that fetches a page without a person
// reading it: a HEAD, a browser's prefetch, or a link preview of a chat
// or mail program, which say so in their headers or their name.
func previewing(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return true
	}
	for _, h := range []string{"Sec-Purpose", "Purpose", "X-Purpose", "X-Moz"} {
		if v := strings.ToLower(r.Header.Get(h)); strings.Contains(v, "prefetch") || strings.Contains(v, "preview") {
			return true
		}
	}
	ua := strings.ToLower(r.UserAgent())
	for _, bot := range previewAgents {
		if strings.Contains(ua, bot) {
			return true
		}
	}
	return false
}

// previewAgents are words in the User-Agent of programs that fetch links
// to show a preview or to scan them: chat apps, social sites, mail
// scanners, search engines.
var previewAgents = []string{
	"bot/", "bot;", "bot)", "+http", "crawler", "spider", "preview", "facebookexternalhit", "whatsapp", "telegram",
	"slack", "discord", "skype", "linkedin", "mastodon", "viber", "microsoft office", "ms-office", "proofpoint",
	"mimecast", "barracuda", "safelinks", "scanner",
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
		// Whoever opens the address: nothing of the payer's.
		r, err := h.receipt(c.Request().Context(), l, m, p, p.Reference, false, "")
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
		// The shop is named twice: it cancelled, and it is whom to ask.
		page.Heading, page.Message = l.T("plink.cancelled"), l.T("plink.cancelled.text", m.Name, m.Name)
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

// linkInProgress is the page of a single link whose payment another
// browser began: it says nothing of that payment or its payer, starts
// nothing, and looks again by itself; once that payment ends unpaid the
// link opens for anyone, once paid it shows the receipt.
func (h *Steps) linkInProgress(c echo.Context, m *merchant.Merchant, p ledger.PaymentLink) error {
	l := h.loc(c)
	page := checkoutviews.LinkPage{State: "in-progress", Heading: l.T("plink.inProgress"), Message: l.T("plink.inProgress.text", m.Name),
		Refresh: inProgressRefresh, RefreshURL: links.Route + p.ID, RetryURL: templ.SafeURL(links.Route + p.ID)}
	page.Page = h.linkPageFrame(c, page.Heading)
	c.Response().Header().Set("Retry-After", strconv.Itoa(inProgressRefresh))
	return web.Render(c, http.StatusConflict, checkoutviews.Link(page))
}

// inProgressRefresh is how often, in seconds, the page of a link being
// paid elsewhere looks again.
const inProgressRefresh = 30

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
	r, err := h.receipt(ctx, l, m, p, o.ID, true, order.PayerDigest(o.Payer))
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
// still change; otherwise the ledger's word is shown. The bank is shown to
// the payer who paid (payer, their checkout's digest) alone.
func (h *Steps) receipt(ctx context.Context, l *i18n.Localizer, m *merchant.Merchant, p ledger.PaymentLink, orderID string, fresh bool, payer string) (*checkoutviews.Receipt, error) {
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
	r := &checkoutviews.Receipt{Kind: kind, Status: l.T(key), Amount: l.Amount(v.Order.Amount), Merchant: m.Name,
		Description: p.Description, Reference: orderID, Date: l.DateTime(at) + " UTC"}
	if payer != "" && v.Attempt.Payer == payer {
		r.Bank = h.bankName(ctx, v.Attempt.Country, v.Attempt.BankID)
	}
	return r, nil
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
	token, err := h.Sealer.SealFor(order.Order{Merchant: co.merchant.ID, ID: co.order.ID, Link: co.order.Link, Lang: co.order.Lang,
		Payer: co.order.Payer}, h.Now(), receiptTTL)
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
