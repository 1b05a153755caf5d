package shopper

import (
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/ledger"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// RouteHandoff moves a checkout from a computer to the shopper's phone: a
// QR code of a short-lived address of the same order, and the computer's
// page follows the order until the phone has paid.
const RouteHandoff = "/c/:token/phone"

// handoffTTL is how long the phone's address opens the checkout.
const handoffTTL = 10 * time.Minute

// RouteHandoffCode is the short address the QR code carries: a code kept
// in the ledger (so any instance opens it) for the checkout's own address.
// A short address makes a QR code of few, large modules that any phone
// camera reads from a screen; the checkout's token alone is some 250
// characters.
const RouteHandoffCode = "/p/:code"

// handoffCodeLength is the code's length in base32 characters: 60 bits,
// guessed with no real chance in the minutes it lives.
const handoffCodeLength = 12

// openHandoff answers GET /p/{code}: the phone goes on to the checkout.
func (h *Steps) openHandoff(c echo.Context) error {
	target, err := h.Orders.Ledger.Handoff(c.Request().Context(), strings.ToUpper(c.Param("code")))
	if err == nil && !strings.HasPrefix(target, "/c/") {
		// Only this app's checkouts are kept there; anything else is not
		// followed off the site.
		err = ledger.ErrNoHandoff
	}
	if errors.Is(err, ledger.ErrNoHandoff) {
		return &web.PageError{Status: http.StatusGone, Key: "error.handoffExpired", Err: err}
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// showHandoff answers GET /c/{token}/phone?country=XX.
func (h *Steps) showHandoff(c echo.Context) error {
	co, err := h.open(c)
	if err != nil {
		return err
	}
	ttl := min(handoffTTL, time.Until(time.Unix(co.order.Expires, 0)))
	token, err := h.Sealer.SealFor(co.order, h.Now(), max(ttl, time.Minute))
	if err != nil {
		return err
	}
	target := "/c/" + url.PathEscape(token)
	if country := strings.ToUpper(c.QueryParam("country")); len(country) == 2 && strings.Trim(country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
		target += "/banks?country=" + country
	}
	code := rand.Text()[:handoffCodeLength]
	if err := h.Orders.Ledger.PutHandoff(c.Request().Context(), code, target, h.Now().Add(max(ttl, time.Minute))); err != nil {
		return err
	}
	phone := h.BaseURL + strings.Replace(RouteHandoffCode, ":code", code, 1)
	qr, err := web.QRSVG(phone)
	if err != nil {
		return err
	}
	l := h.loc(c)
	page := h.page(c, l.T("handoff.heading"))
	page.Scripts = []string{h.Assets.HandoffJS}
	return web.Render(c, http.StatusOK, checkoutviews.Handoff(checkoutviews.HandoffPage{
		Page:      page,
		Summary:   co.summary(l),
		QR:        qr,
		PhoneURL:  templ.SafeURL(phone),
		ResultURL: templ.SafeURL(statusPath(co.token)),
		HereURL:   countryURL(co.token, true),
	}))
}
