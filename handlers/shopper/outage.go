package shopper

import (
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
)

// tellOutage answers a request that failed because the ledger does not
// answer: the page says nothing was charged (or, back from the bank, not to
// pay again), with Try again (the same request) and the way back to the
// shop; programs get the JSON error unavailable. (The details form answers
// its own, with everything typed: createPayment.)
func (h *Steps) tellOutage(c echo.Context) {
	c.Response().Header().Set("Retry-After", strconv.Itoa(web.RetryAfterOutage))
	r := c.Request()
	f := web.Unavailable()
	if c.Path() == RouteReturn {
		// Back from the bank: the payment may have been approved there.
		f.Page.Key = "error.unavailableAtBank"
	}
	if r.Method == http.MethodGet {
		f.Page.RetryURL = templ.SafeURL(r.URL.RequestURI())
	}
	h.tell(c, f)
}
