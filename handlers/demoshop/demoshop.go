// Package demoshop is the demo merchant's side in sandbox mode, so that a
// newcomer sees the whole way back: its return page checks the signed
// result, and its webhook endpoint checks and keeps the events it receives,
// as a merchant's shop and server would.
package demoshop

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/views/demo"
	"github.com/paybybank/checkout/webhook"
)

// Routes of the demo shop, on the app.
const (
	RouteShop    = merchant.DemoShopPath
	RouteWebhook = merchant.DemoWebhookPath
)

// Frame is what the demo shop needs of the shopper's pages: the page frame
// in a merchant's look, and the request's language.
type Frame interface {
	MerchantPage(c echo.Context, m *merchant.Merchant, title func(*i18n.Localizer) string) views.Page
}

// Shop is the demo merchant's return page and webhook endpoint.
type Shop struct {
	Merchants *merchant.Directory
	Frame     Frame
	Now       func() time.Time
	// hooks are the webhooks received.
	hooks demoHooks
}

// ShowShop is the demo merchant's return page, served in sandbox mode so
// that a newcomer sees the whole way back: it checks the signature as a
// merchant's shop would.
func (h *Shop) ShowShop(c echo.Context) error {
	q := c.QueryParams()
	m, ok := h.Merchants.Get(merchant.DemoID)
	if !ok {
		return web.ErrNotFound
	}
	secret, known := m.LinkKey(q.Get(order.ParamKID))
	orderID := q.Get(order.ParamMerchantOrderID)
	return web.Render(c, http.StatusOK, demo.DemoShop(demo.DemoShopPage{
		Page:     h.Frame.MerchantPage(c, m, func(l *i18n.Localizer) string { return l.T("demo.title") }),
		OrderID:  orderID,
		Status:   q.Get(order.ParamStatus),
		Verified: known && order.VerifyWayBack(secret, q),
		Hooks:    h.hooks.of(orderID),
	}))
}

// demoHooks keeps the last webhooks the demo shop received, in memory: it
// is a demonstration, not a merchant's server.
type demoHooks struct {
	mu   sync.Mutex
	list []receivedHook
}

type receivedHook struct {
	orderID string
	hook    demo.DemoHook
}

// maxDemoHooks bounds what the demo shop remembers.
const maxDemoHooks = 200

func (d *demoHooks) add(orderID string, hook demo.DemoHook) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.list) == maxDemoHooks {
		d.list = d.list[1:]
	}
	d.list = append(d.list, receivedHook{orderID, hook})
}

// of returns the webhooks received for an order, oldest first.
func (d *demoHooks) of(orderID string) []demo.DemoHook {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []demo.DemoHook
	for _, r := range d.list {
		if r.orderID == orderID {
			out = append(out, r.hook)
		}
	}
	return out
}

// ReceiveWebhook is the demo shop's webhook endpoint, doing what a
// merchant's server should: check the signature and the time, then act on
// the event once by its id (here: remember it for the return page).
func (h *Shop) ReceiveWebhook(c echo.Context) error {
	m, ok := h.Merchants.Get(merchant.DemoID)
	if !ok {
		return web.ErrNotFound
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, 64<<10))
	if err != nil {
		return err
	}
	verified := webhook.Verify(m.WebhookSecret, c.Request().Header.Get(webhook.Header), body, h.Now(), 5*time.Minute) == nil
	var event ledger.EventBody
	if err := json.Unmarshal(body, &event); err != nil || event.ID == "" {
		return c.NoContent(http.StatusBadRequest)
	}
	for _, seen := range h.hooks.of(event.Data.MerchantOrderID) {
		if seen.EventID == event.ID && seen.Verified {
			return c.NoContent(http.StatusNoContent) // delivered again: already handled
		}
	}
	h.hooks.add(event.Data.MerchantOrderID, demo.DemoHook{EventID: event.ID, Status: event.Data.Status, Verified: verified})
	if !verified {
		return c.NoContent(http.StatusUnauthorized)
	}
	return c.NoContent(http.StatusNoContent)
}
