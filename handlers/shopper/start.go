package shopper

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// RouteStart is the app's own address, where whoever types it lands.
const RouteStart = "/"

// ShowStart answers the app's own address, in the visitor's language:
// in sandbox mode, a newcomer's start, with a demo checkout of its own
// (signed with the demo merchant's newest key, as the shop's server would
// sign it) and the console at consolePath; in live mode, what the service
// is, for a payer who lands here, and where the console is.
func (h *Steps) ShowStart(consolePath string) echo.HandlerFunc {
	return func(c echo.Context) error {
		l := h.loc(c)
		p := checkoutviews.StartPage{Sandbox: h.Sandbox, AppName: l.T("app.name"), ConsoleURL: templ.SafeURL(h.BaseURL + consolePath)}
		title := l.T("start.live.title")
		if h.Sandbox {
			title = l.T("start.sandbox.heading")
			if demo, ok := h.Merchants.Get(merchant.DemoID); ok && !demo.Disabled() {
				link, err := order.DemoLinkOf(h.BaseURL, demo, order.NewDemoOrder(), order.DemoTTL, h.Now(), nil)
				if err != nil {
					return err
				}
				p.DemoURL, p.DemoAmount = templ.SafeURL(link), l.Amount(order.DemoAmount)
			}
		}
		p.Page = h.page(c, title)
		p.Switch = addressLanguageSwitch(c, RouteStart)
		return web.Render(c, http.StatusOK, checkoutviews.Start(p))
	}
}
