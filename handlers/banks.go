package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/a-h/templ"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
	"golang.org/x/text/language"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/views"
)

// Session values: conveniences only, losing them loses nothing.
const (
	sessionName     = "pbb"
	sessionLastBank = "last_bank" // "CC/institution_id"
)

// bankList asks the cache for the banks list; with none at all the shopper
// gets a page that says so and offers to try again.
func (h *Handler) bankList(c echo.Context, retry string) (*banks.List, error) {
	list, err := h.Banks.List(c.Request().Context())
	if err != nil {
		return nil, &pageError{status: http.StatusServiceUnavailable, key: "error.banksUnavailable",
			retryURL: templ.SafeURL(retry), err: err}
	}
	return list, nil
}

// openWithBanks opens the order and gets the banks list: where the country,
// bank and details steps start.
func (h *Handler) openWithBanks(c echo.Context) (checkout, *banks.List, error) {
	co, err := h.open(c)
	if err != nil {
		return co, nil, err
	}
	list, err := h.bankList(c, c.Request().URL.String())
	return co, list, err
}

// showCountries lets the shopper pick their bank's country, unless the link
// or the list leaves only one choice (DESIGN.md section 2.2).
func (h *Handler) showCountries(c echo.Context) error {
	co, list, err := h.openWithBanks(c)
	if err != nil {
		return err
	}
	choose := c.QueryParam("choose") != ""
	if !choose {
		o := co.order
		switch {
		case o.Country != "" && o.Bank != "":
			if _, ok := list.Find(o.Country, o.Bank); ok {
				return c.Redirect(http.StatusSeeOther, string(payURL(co.token, o.Country, o.Bank)))
			}
			fallthrough
		case o.Country != "" && list.HasCountry(o.Country):
			return c.Redirect(http.StatusSeeOther, string(banksURL(co.token, o.Country, "")))
		case len(list.Countries()) == 1:
			return c.Redirect(http.StatusSeeOther, string(banksURL(co.token, list.Countries()[0], "")))
		}
	}
	suggested := h.suggestCountry(c, co, list)
	l := h.loc(c)
	var options []views.CountryOption
	for _, code := range list.Countries() {
		options = append(options, views.CountryOption{
			Code: code, Name: l.Country(code), URL: banksURL(co.token, code, ""), Suggested: code == suggested,
		})
	}
	order := l.Collator()
	slices.SortStableFunc(options, func(a, b views.CountryOption) int {
		if a.Suggested != b.Suggested {
			if a.Suggested {
				return -1
			}
			return 1
		}
		return order.CompareString(a.Name, b.Name)
	})
	return render(c, http.StatusOK, views.Countries(views.CountryPage{
		Page:      h.page(c, l.T("country.title")),
		Summary:   co.summary(l),
		Countries: options,
	}))
}

// suggestCountry picks the country to offer first: the link's hint, then the
// shopper's last bank, then their browser's language region.
func (h *Handler) suggestCountry(c echo.Context, co checkout, list *banks.List) string {
	if list.HasCountry(co.order.Country) {
		return co.order.Country
	}
	if country, _, ok := h.lastBank(c); ok && list.HasCountry(country) {
		return country
	}
	tags, _, _ := language.ParseAcceptLanguage(c.Request().Header.Get("Accept-Language"))
	for _, tag := range tags {
		if region, conf := tag.Region(); conf >= language.High && list.HasCountry(region.String()) {
			return region.String()
		}
	}
	return ""
}

// maxQueryLength bounds the search box, as its maxlength does in the browser.
const maxQueryLength = 100

// showBanks lists the banks of a country, filtered by the search box
// (DESIGN.md section 2.3).
func (h *Handler) showBanks(c echo.Context) error {
	co, list, err := h.openWithBanks(c)
	if err != nil {
		return err
	}
	country := strings.ToUpper(c.QueryParam("country"))
	if !list.HasCountry(country) {
		return c.Redirect(http.StatusSeeOther, string(countryURL(co.token, true)))
	}
	query := c.QueryParam("q")
	if r := []rune(query); len(r) > maxQueryLength {
		query = string(r[:maxQueryLength])
	}
	lastCountry, lastID, _ := h.lastBank(c)
	var rows []views.BankRow
	for _, b := range list.Search(country, query) {
		rows = append(rows, views.BankRow{
			ID: b.ID, Name: b.Name, LogoURL: b.LogoURL, BIC: b.BIC,
			URL:      payURL(co.token, country, b.ID),
			LastUsed: lastCountry == country && lastID == b.ID,
			Search:   strings.TrimSpace(banks.Fold(b.Name) + " " + strings.ToLower(b.BIC)),
		})
	}
	slices.SortStableFunc(rows, func(a, b views.BankRow) int {
		switch {
		case a.LastUsed == b.LastUsed:
			return 0
		case a.LastUsed:
			return -1
		}
		return 1
	})
	l := h.loc(c)
	page := h.page(c, l.T("banks.title"))
	page.Scripts = []string{h.Assets.BanksJS}
	return render(c, http.StatusOK, views.Banks(views.BanksPage{
		Page:             page,
		Summary:          co.summary(l),
		Country:          country,
		CountryName:      l.Country(country),
		Query:            query,
		Action:           banksAction(co.token),
		Banks:            rows,
		Total:            list.Count(country),
		ChangeCountryURL: countryURL(co.token, true),
		Stale:            list.Stale,
	}))
}

// embedded adapts cookie options to a page inside a merchant's iframe: there
// a cookie is third-party, so it must be SameSite=None, Secure and
// Partitioned (CHIPS) to be kept at all. Browsers that block third-party
// cookies drop it anyway, and nothing depends on it.
func embedded(r *http.Request, o *sessions.Options) {
	if r.Header.Get("Sec-Fetch-Dest") == "iframe" && o != nil {
		o.SameSite = http.SameSiteNoneMode
		o.Secure = true
		o.Partitioned = true
	}
}

// lastBank is the bank the shopper used last time, from the session cookie.
func (h *Handler) lastBank(c echo.Context) (country, id string, ok bool) {
	return strings.Cut(h.sessionValue(c, sessionLastBank), "/")
}

// rememberBank stores the shopper's bank for next time.
func (h *Handler) rememberBank(c echo.Context, country, id string) {
	h.remember(c, sessionLastBank, country+"/"+id)
}

// sessionValue reads a convenience from the session cookie; "" when absent.
func (h *Handler) sessionValue(c echo.Context, key string) string {
	if h.Sessions == nil {
		return ""
	}
	s, err := h.Sessions.Get(c.Request(), sessionName)
	if err != nil {
		return ""
	}
	v, _ := s.Values[key].(string)
	return v
}

// remember stores a convenience in the session cookie; a failure only loses
// the convenience.
func (h *Handler) remember(c echo.Context, key, value string) {
	if h.Sessions == nil {
		return
	}
	s, err := h.Sessions.Get(c.Request(), sessionName)
	if err != nil && s == nil {
		return
	}
	s.Values[key] = value
	embedded(c.Request(), s.Options)
	if err := s.Save(c.Request(), c.Response()); err != nil {
		h.log(c).Warn("session not saved", "err", err)
	}
}
