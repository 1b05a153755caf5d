package shopper

import (
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/views"
)

// sawPaymentLink remembers the origin of a payment link the provider gave,
// so that later pages' forms may lead there too.
func (h *Steps) sawPaymentLink(link string) {
	origin := web.OriginOf(link)
	if origin == "" || origin == web.OriginOf(h.BaseURL) || origin == h.ProviderOrigin {
		return
	}
	h.originsMu.Lock()
	defer h.originsMu.Unlock()
	if !slices.Contains(h.linkOrigins, origin) {
		h.linkOrigins = append(h.linkOrigins, origin)
		h.setFormAction()
	}
}

// setFormAction rebuilds the form-action sources; callers other than New
// hold originsMu.
func (h *Steps) setFormAction() {
	sources := []string{"'self'"}
	if h.ProviderOrigin != "" {
		sources = append(sources, h.ProviderOrigin)
	}
	list := strings.Join(append(sources, h.linkOrigins...), " ")
	h.formAction.Store(&list)
}

// page is the layout model of the page being served, in its merchant's look
// (forMerchant), or the app's own when no merchant is known.
func (h *Steps) page(c echo.Context, title string) views.Page {
	l := web.Look{Name: h.loc(c).T("app.name")}
	if r := web.RequestOf(c); r.Merchant != nil {
		l = web.Look{Name: r.Merchant.Name, Custom: r.Custom}
	}
	p := web.PageFor(title, l, h.Assets)
	p.Theme.LogoURL = h.logoPath(p.Theme.LogoURL)
	p.Switch = languageSwitch(c)
	return p
}

// logoPath is the app's address of a merchant's logo: an uploaded one's
// own (/brand/…, served from the ledger), another's as the app fetches and
// serves it.
func (h *Steps) logoPath(url string) string {
	if path, ok := strings.CutPrefix(url, h.BaseURL); ok && strings.HasPrefix(path, "/brand/") {
		return path
	}
	return h.logos.ThemePath(url)
}
