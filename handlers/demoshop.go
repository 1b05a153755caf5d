package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/views"
)

// showDemoShop is the demo merchant's return page, served in sandbox mode so
// that a newcomer sees the whole way back: it checks the signature as a
// merchant's shop would.
func (h *Handler) showDemoShop(c echo.Context) error {
	q := c.QueryParams()
	m, ok := h.Merchants.Get(merchant.DemoID)
	if !ok {
		return errNotFound
	}
	forMerchant(c, m, nil)
	secret, known := m.LinkKey(q.Get(order.ParamKID))
	return render(c, http.StatusOK, views.DemoShop(views.DemoShopPage{
		Page:     h.page(c, h.loc(c).T("demo.title")),
		OrderID:  q.Get(order.ParamMerchantOrderID),
		Status:   q.Get(order.ParamStatus),
		Verified: known && order.VerifyWayBack(secret, q),
	}))
}
