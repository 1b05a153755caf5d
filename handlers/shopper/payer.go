package shopper

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/order"
)

// sessionPayers keeps the payer keys of the browser's latest checkouts, by
// what each pays: a merchant's order, or a payment link. The checkout's
// token carries its key already; the cookie only lets the same browser,
// coming in again through the shop's link or the payment link's address,
// find its own payment under way.
const sessionPayers = "payers"

// maxPayers bounds the keys kept: the newest win.
const maxPayers = 8

// payerFor is the payer key this browser holds for what it pays (an order
// of a merchant, or a payment link), or a new one, kept in the cookie;
// fresh reports a new one: a browser seen for the first time.
func (h *Steps) payerFor(c echo.Context, what string) (key string, fresh bool) {
	name := payerName(what)
	kept := strings.Fields(h.sessionValue(c, sessionPayers))
	for _, entry := range kept {
		if n, k, ok := strings.Cut(entry, "="); ok && n == name && k != "" {
			return k, false
		}
	}
	key = order.NewPayer()
	if c.Request().Method == http.MethodGet {
		kept = append([]string{name + "=" + key}, kept[:min(len(kept), maxPayers-1)]...)
		h.remember(c, sessionPayers, strings.Join(kept, " "))
	}
	return key, true
}

// payerName names what a payer key pays in the cookie without saying it:
// the cookie is sealed anyway, and kept short.
func payerName(what string) string {
	sum := sha256.Sum256([]byte(what))
	return hex.EncodeToString(sum[:6])
}

// orderPayer and linkPayer name what a payer key pays.
func orderPayer(merchantID, orderID string) string { return "order " + merchantID + "/" + orderID }
func linkPayer(id string) string                   { return "link " + id }
