package shopper

import (
	"net/http"
	"slices"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/shopper/details"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// The shopper's pages a designer previews in a draft look on the Branding
// page, in the order a checkout meets them.
const (
	PreviewCountry    = "country"
	PreviewBanks      = "banks"
	PreviewDetails    = "details"
	PreviewOneClick   = "one-click"
	PreviewPending    = "pending"
	PreviewPaid       = "paid"
	PreviewCanceled   = "canceled"
	PreviewAccepted   = "accepted"
	PreviewProcessing = "processing"
	PreviewError      = "error"
)

// PreviewPages are the pages Preview draws, in the order of a checkout.
var PreviewPages = []string{PreviewCountry, PreviewBanks, PreviewDetails, PreviewOneClick, PreviewPending,
	PreviewAccepted, PreviewPaid, PreviewCanceled, PreviewProcessing, PreviewError}

// Pages are the pages Preview draws.
func (h *Steps) Pages() []string { return PreviewPages }

// previewRows is how many banks the bank list's preview shows.
const previewRows = 8

// Preview answers with one of the shopper's pages (PreviewPages) as m's
// shoppers would see it in look custom, filled with a sample order and the
// provider's banks: the same page models and templates as a checkout,
// nothing recorded and nothing asked of the provider but the cached banks
// list. link is the address of another page of the preview, which the
// page's own links lead to. The page may be framed by the app's own pages
// only.
func (h *Steps) Preview(c echo.Context, m *merchant.Merchant, custom *rules.Customization, page string, link func(page string) templ.SafeURL) error {
	if !slices.Contains(PreviewPages, page) {
		return web.ErrNotFound
	}
	if custom == nil {
		custom = &rules.Customization{}
	}
	// Served outside the steps (from the console's routes), the request
	// may have no description yet: this one is kept for the page.
	r := web.RequestOf(c)
	r.ForMerchant(m, custom)
	web.SetRequest(c, r)
	list, err := h.Banks.List(c.Request().Context())
	if err != nil {
		return err
	}
	l := h.loc(c)
	co := checkout{token: "preview", merchant: m, order: order.Order{ID: "A-1001", Amount: "49.90", Currency: rules.Currency}}
	summary := co.summary(l)
	country, withDetails, oneClick := previewBanks(list)
	var component templ.Component
	switch page {
	case PreviewCountry:
		var options []checkoutviews.CountryOption
		for _, code := range list.Countries() {
			options = append(options, checkoutviews.CountryOption{Code: code, Name: l.Country(code), URL: link(PreviewBanks), Suggested: code == country})
		}
		collator := l.Collator()
		slices.SortStableFunc(options, func(a, b checkoutviews.CountryOption) int { return collator.CompareString(a.Name, b.Name) })
		component = checkoutviews.Countries(checkoutviews.CountryPage{Page: h.page(c, l.T("country.title")), Summary: checkoutviews.OrderSummary(summary), Countries: options})
	case PreviewBanks:
		all := list.Matches(country, "")
		var rows []checkoutviews.BankRow
		for _, b := range all[:min(len(all), previewRows)] {
			row := bankRow(b, country, h.Health.Snapshot())
			row.URL = link(PreviewDetails)
			rows = append(rows, row)
		}
		var last templ.Component = templ.NopComponent
		if len(rows) > 0 {
			row := rows[0]
			row.LastUsed = true
			last = checkoutviews.LastUsedBank(row)
		}
		component = checkoutviews.Banks(checkoutviews.BanksPage{
			Page:     h.page(c, l.T("banks.title")),
			Top:      checkoutviews.BanksHead(checkoutviews.BanksTop{Summary: summary, CountryName: l.Country(country), ChangeCountryURL: link(PreviewCountry)}),
			LastUsed: last, Country: country, CountryName: l.Country(country), Action: link(PreviewBanks),
			Banks: rows, Matches: len(all), Total: len(all), ChangeCountryURL: link(PreviewCountry),
		})
	case PreviewDetails, PreviewOneClick:
		bank := withDetails
		if page == PreviewOneClick {
			bank = oneClick
		}
		p := h.payPage(c, co, bank, details.New(l, bank, list.Countries(), m.IPVerification, nil), "")
		p.Action, p.ChangeBankURL = link(PreviewPaid), link(PreviewBanks)
		component = checkoutviews.Pay(p)
	case PreviewError:
		pe := &web.PageError{Status: http.StatusForbidden, Key: "error.linkExpired"}
		heading, message := pe.Texts(l)
		component = checkoutviews.Error(checkoutviews.ErrorPage{Page: h.page(c, heading), Status: pe.Status, Heading: heading, Message: message,
			WayBackURL: link(PreviewCountry), ShopName: m.Name})
	default:
		status := map[string]pisclient.Status{PreviewPending: pisclient.StatusInProgress, PreviewPaid: pisclient.StatusCompleted,
			PreviewCanceled: pisclient.StatusCanceled, PreviewAccepted: pisclient.StatusAccepted, PreviewProcessing: pisclient.StatusUnrecognized}[page]
		kind, key := describeStatus(status)
		view := checkoutviews.StatusPage{Summary: summary, Kind: kind, Heading: l.T(key), Message: l.T(key+".text", m.Name),
			WayBackURL: link(PreviewCountry), Begun: true}
		if status == pisclient.StatusCanceled {
			view.TryAgainURL = link(PreviewBanks)
		}
		view.Page = h.page(c, view.Heading)
		component = checkoutviews.Status(view)
	}
	return web.Write(c, http.StatusOK, component, web.RenderContext(c), func(body []byte) string {
		return web.FramedBySelf(web.ContentSecurityPolicy(c, web.StyleSources(body)))
	})
}

// previewBanks picks the country of the preview (the one with most banks)
// and in it a bank that needs details and one that needs none, or the
// same bank where every bank is alike.
func previewBanks(list *banks.List) (country string, withDetails, oneClick pisclient.Institution) {
	for _, code := range list.Countries() {
		if country == "" || list.Count(code) > list.Count(country) {
			country = code
		}
	}
	all := list.Matches(country, "")
	for _, b := range all {
		if len(b.ExtraFields) > 0 && withDetails.ID == "" {
			withDetails = b.Institution
		}
		if len(b.ExtraFields) == 0 && oneClick.ID == "" {
			oneClick = b.Institution
		}
	}
	if withDetails.ID == "" {
		withDetails = oneClick
	}
	if oneClick.ID == "" {
		oneClick = withDetails
		oneClick.ExtraFields = nil
	}
	return country, withDetails, oneClick
}
