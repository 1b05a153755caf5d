package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/skip2/go-qrcode"

	"github.com/paybybank/checkout/views"
)

// RouteHandoff moves a checkout from a computer to the shopper's phone: a
// QR code of a short-lived address of the same order, and the computer's
// page follows the order until the phone has paid.
const RouteHandoff = "/c/:token/phone"

// handoffTTL is how long the phone's address opens the checkout.
const handoffTTL = 10 * time.Minute

// showHandoff answers GET /c/{token}/phone?country=XX.
func (h *Handler) showHandoff(c echo.Context) error {
	co, err := h.open(c)
	if err != nil {
		return err
	}
	ttl := min(handoffTTL, time.Until(time.Unix(co.order.Expires, 0)))
	token, err := h.Sealer.SealFor(co.order, h.Now(), max(ttl, time.Minute))
	if err != nil {
		return err
	}
	phone := h.BaseURL + "/c/" + url.PathEscape(token)
	if country := strings.ToUpper(c.QueryParam("country")); len(country) == 2 && strings.Trim(country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
		phone += "/banks?country=" + country
	}
	qr, err := qrSVG(phone)
	if err != nil {
		return err
	}
	l := h.loc(c)
	page := h.page(c, l.T("handoff.heading"))
	page.Scripts = []string{h.Assets.HandoffJS}
	return render(c, http.StatusOK, views.Handoff(views.HandoffPage{
		Page:      page,
		Summary:   co.summary(l),
		QR:        qr,
		PhoneURL:  templ.SafeURL(phone),
		ResultURL: templ.SafeURL(returnPath(co.token, 0)),
		HereURL:   countryURL(co.token, true),
	}))
}

// qrSVG draws text as a QR code (medium error correction) in an SVG: one
// path of the dark modules, row by row, with the code's quiet zone.
func qrSVG(text string) (string, error) {
	code, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", err
	}
	bits := code.Bitmap()
	var path strings.Builder
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 0
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&path, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	n := len(bits)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="224" height="224" shape-rendering="crispEdges" aria-hidden="true"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n, n, n, n, path.String()), nil
}
