package shopper

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/a-h/templ"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"golang.org/x/text/language"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/logos"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/views"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// Session values: conveniences only, losing them loses nothing.
const (
	sessionName     = "pbb"
	sessionLastBank = "last_bank" // "CC/institution_id"
)

// bankList asks the cache for the banks list; with none at all the shopper
// gets a page that says so and offers to try again.
func (h *Steps) bankList(c echo.Context) (*banks.List, error) {
	list, err := h.Banks.List(c.Request().Context())
	if err != nil {
		return nil, &web.PageError{Status: http.StatusServiceUnavailable, Key: "error.banksUnavailable",
			RetryURL: templ.SafeURL(c.Request().URL.String()), Err: err}
	}
	return list, nil
}

// openWithBanks opens the order and gets the banks list: where the country,
// bank and details steps start.
func (h *Steps) openWithBanks(c echo.Context) (checkout, *banks.List, error) {
	co, err := h.open(c)
	if err != nil {
		return co, nil, err
	}
	list, err := h.bankList(c)
	return co, list, err
}

// showCountries lets the shopper pick their bank's country, unless the link
// or the list leaves only one choice. The page is kept rendered per look,
// language and suggestion; a request fills in its order and its token.
func (h *Steps) showCountries(c echo.Context) error {
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
	key := pageKey{route: RouteCountry, look: lookKey(c), lang: l.Lang(), extra: suggested, stale: list.Stale}
	now := h.Now()
	kept, ok := h.pages.get(list, key, now)
	if !ok {
		var options []checkoutviews.CountryOption
		for _, code := range list.Countries() {
			options = append(options, checkoutviews.CountryOption{
				Code: code, Name: l.Country(code), URL: banksURL(tokenMarker, code, ""), Suggested: code == suggested,
			})
		}
		order := l.Collator()
		slices.SortStableFunc(options, func(a, b checkoutviews.CountryOption) int {
			if a.Suggested != b.Suggested {
				if a.Suggested {
					return -1
				}
				return 1
			}
			return order.CompareString(a.Name, b.Name)
		})
		page := h.page(c, l.T("country.title"))
		page.Switch.Action = countryURL(tokenMarker, false)
		page.Switch.Keep = []views.Hidden{{Name: "choose", Value: "1"}}
		if kept, err = keep(c, checkoutviews.Countries(checkoutviews.CountryPage{
			Page:      page,
			Summary:   templ.Raw(summaryMarker),
			Countries: options,
		}), now, false, summaryMarker, tokenMarker); err != nil {
			return err
		}
		h.pages.put(list, key, kept)
	}
	buf := newPartBuffer()
	defer buf.release()
	summary, err := h.shopperPart(c, list, pageKey{route: "summary", look: lookKey(c), lang: l.Lang()}, co,
		func(s checkoutviews.Summary, _ string) templ.Component { return checkoutviews.OrderSummary(s) }, buf.b)
	if err != nil {
		return err
	}
	summary = buf.keep(summary)
	// The app compresses this page: the token stands in it once per
	// country, and compressed together those repeats cost nothing.
	return serveKept(c, kept, false, summary, []byte(url.PathEscape(co.token)))
}

// suggestCountry picks the country to offer first: the link's hint, then the
// shopper's last bank, then their browser's language region.
func (h *Steps) suggestCountry(c echo.Context, co checkout, list *banks.List) string {
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

// Bank list sizes.
const (
	// maxQueryLength bounds the search box, as its maxlength does in the
	// browser.
	maxQueryLength = 100
	// listAllUpTo is the most banks listed on one page; longer lists come
	// in ranges of rangeSize by name.
	listAllUpTo = 200
	rangeSize   = 100
	// maxPopular is how many banks the popular list shows.
	maxPopular = 6
)

// showBanks lists the banks of a country, filtered by the search box: the
// last-used and popular banks first, then every match, or for a long list
// one range of them by name. The page is kept rendered per look, language,
// country, search and range, with links relative to the checkout's address;
// a request fills in its order and its last-used bank.
func (h *Steps) showBanks(c echo.Context) error {
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
	// A range past the last is the last: an address cannot make pages the
	// cache has to keep apart.
	pageNo, _ := strconv.Atoi(c.QueryParam("page"))
	pageNo = min(max(pageNo, 1), max(1, (list.Count(country)+rangeSize-1)/rangeSize))
	var popular []banks.Bank
	if query == "" && pageNo == 1 {
		popular = h.popular(co, list, country)
	}
	l := h.loc(c)
	look := lookKey(c)
	health := h.Health.Snapshot()
	key := pageKey{route: RouteBanks, look: look, lang: l.Lang(), country: country, query: query, page: pageNo,
		popular: bankIDs(popular), degraded: strings.Join(health.DegradedIn(country), "\x00"), stale: list.Stale}
	now := h.Now()
	kept, ok := h.pages.get(list, key, now)
	if !ok {
		if kept, err = h.keepBanks(c, list, health, country, query, pageNo, popular, now); err != nil {
			return err
		}
		h.pages.put(list, key, kept)
	}
	buf := newPartBuffer()
	defer buf.release()
	top, err := h.shopperPart(c, list, pageKey{route: "banks-head", look: look, lang: l.Lang(), country: country}, co,
		func(s checkoutviews.Summary, token string) templ.Component {
			return checkoutviews.BanksHead(checkoutviews.BanksTop{Summary: s, CountryName: l.Country(country), ChangeCountryURL: countryURL(token, true)})
		}, buf.b)
	if err != nil {
		return err
	}
	top = buf.keep(top)
	yours, err := h.yourBank(c, co, list, health, country)
	if err != nil {
		return err
	}
	return serveKept(c, kept, true, top, yours, []byte(url.PathEscape(co.token)))
}

// yourBank is the shopper's own part above the list: their bank from last
// time (lastUsed), and first, when the bank the link, the shop or their
// last payment names has left the provider's list, or the details step
// found it gone (?unavailable=), a word that it is unavailable for now,
// with the country's other banks right below it.
func (h *Steps) yourBank(c echo.Context, co checkout, list *banks.List, health *bankhealth.Snapshot, country string) ([]byte, error) {
	b, ok, gone := h.lastUsed(c, co, list, country)
	if id := c.QueryParam("unavailable"); id != "" {
		if _, listed := list.Bank(country, id); !listed {
			gone = id
		}
	}
	var out []byte
	if gone != "" {
		l := h.loc(c)
		text := l.T("banks.unavailable.unnamed")
		if name, known := list.Name(country, gone); known {
			text = l.T("banks.unavailable", name)
		}
		part, err := fragment(c, checkoutviews.UnavailableBank(text))
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	if ok {
		row := bankRow(b, country, health)
		row.LastUsed = true
		part, err := fragment(c, checkoutviews.LastUsedBank(row))
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// keepBanks renders the bank page of a country, search and range.
func (h *Steps) keepBanks(c echo.Context, list *banks.List, health *bankhealth.Snapshot, country, query string, pageNo int, popular []banks.Bank, now time.Time) (*keptPage, error) {
	l := h.loc(c)
	matches := list.Matches(country, query)
	shown := matches
	var ranges []checkoutviews.BankRange
	if len(matches) > listAllUpTo {
		count := (len(matches) + rangeSize - 1) / rangeSize
		pageNo = min(pageNo, count)
		for i := range count {
			from, to := i*rangeSize, min((i+1)*rangeSize, len(matches))-1
			label := rangeLabel(matches, from, to)
			ranges = append(ranges, checkoutviews.BankRange{Label: label, URL: banksPageURL(country, query, i+1), Current: i+1 == pageNo})
		}
		shown = matches[(pageNo-1)*rangeSize : min(pageNo*rangeSize, len(matches))]
	}
	rows := make([]checkoutviews.BankRow, 0, len(shown))
	for _, b := range shown {
		rows = append(rows, bankRow(b, country, health))
	}
	var elsewhere []checkoutviews.Elsewhere
	if len(matches) == 0 && len([]rune(strings.TrimSpace(query))) >= 2 {
		elsewhere = h.elsewhere(l, list, country, query)
	}
	var popularRows []checkoutviews.BankRow
	for _, b := range popular {
		popularRows = append(popularRows, bankRow(b, country, health))
	}
	page := h.page(c, l.T("banks.title"))
	page.Scripts = []string{h.Assets.BanksJS}
	page.Switch.Action = "banks"
	page.Switch.Keep = []views.Hidden{{Name: "country", Value: country}}
	if query != "" {
		page.Switch.Keep = append(page.Switch.Keep, views.Hidden{Name: "q", Value: query})
	}
	if len(ranges) > 0 {
		page.Switch.Keep = append(page.Switch.Keep, views.Hidden{Name: "page", Value: strconv.Itoa(pageNo)})
	}
	return keep(c, checkoutviews.Banks(checkoutviews.BanksPage{
		Page:        page,
		Top:         templ.Raw(summaryMarker),
		LastUsed:    templ.Raw(lastMarker),
		Country:     country,
		CountryName: l.Country(country),
		Query:       query,
		Action:      "banks",
		Popular:     popularRows,
		Banks:       rows,
		Matches:     len(matches),
		Total:       list.Count(country),
		Ranges:      ranges,
		Elsewhere:   elsewhere,
		// The shopper's token goes in per request.
		ChangeCountryURL: countryURL(tokenMarker, true),
		Stale:            list.Stale,
	}), now, true, summaryMarker, lastMarker, tokenMarker)
}

// maxElsewhere is how many other countries a search names.
const maxElsewhere = 3

// elsewhere are the other countries with banks matching query, most
// matches first: a French bank searched under Germany says it is in France.
func (h *Steps) elsewhere(l *i18n.Localizer, list *banks.List, country, query string) []checkoutviews.Elsewhere {
	var out []checkoutviews.Elsewhere
	for _, cc := range list.Countries() {
		if cc == country {
			continue
		}
		if n := len(list.Matches(cc, query)); n > 0 {
			out = append(out, checkoutviews.Elsewhere{Country: cc, CountryName: l.Country(cc), Count: n, URL: banksPageURL(cc, query, 0)})
		}
	}
	slices.SortStableFunc(out, func(a, b checkoutviews.Elsewhere) int { return b.Count - a.Count })
	return out[:min(len(out), maxElsewhere)]
}

// bankRow is a bank as the list shows it, its link relative to the bank
// page's address, saying whether it is failing more often than usual.
func bankRow(b banks.Bank, country string, health *bankhealth.Snapshot) checkoutviews.BankRow {
	q := url.Values{"country": {country}, "bank": {b.ID}}
	row := checkoutviews.BankRow{
		ID: b.ID, Name: b.Name, LogoURL: logos.BankPath(b.LogoURL), Degraded: health.Degraded(country, b.ID),
		URL:     templ.SafeURL("pay?" + q.Encode()),
		Search:  strings.TrimSpace(b.SearchText() + " " + strings.ToLower(b.BIC)),
		KnownAs: strings.Join(b.KnownAs, ", "),
	}
	if row.LogoURL == "" {
		row.Initials, row.Tone = views.Initials(b.Name), logos.Tone(b.Name)
	}
	return row
}

// banksPageURL is a bank list (a search, a range of a long list when page
// is above 0), relative to the bank page.
func banksPageURL(country, query string, page int) templ.SafeURL {
	q := url.Values{"country": {country}}
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	if query != "" {
		q.Set("q", query)
	}
	return templ.SafeURL("banks?" + q.Encode())
}

// rangeLabel names a range of a long list by the names it runs between,
// each cut after the letters that tell it from its neighbour in the next
// range ("Sparkasse Ob – Sparkasse Wa"), as a phone book does.
func rangeLabel(all []banks.Bank, from, to int) string {
	first, last := []rune(all[from].Name), []rune(all[to].Name)
	start := 1
	if from > 0 {
		start = commonPrefix(first, []rune(all[from-1].Name)) + 1
	}
	end := 1
	if to+1 < len(all) {
		end = commonPrefix(last, []rune(all[to+1].Name)) + 1
	}
	return strings.TrimSpace(string(first[:min(max(start, 2), len(first))])) + " – " + strings.TrimSpace(string(last[:min(max(end, 2), len(last))]))
}

func commonPrefix(a, b []rune) int {
	n := 0
	for n < len(a) && n < len(b) && unicode.ToLower(a[n]) == unicode.ToLower(b[n]) {
		n++
	}
	return n
}

// popular are the banks shown first in country: the merchant's pins, or
// else the banks most paid with over the last 30 days that are not
// failing right now (a bank the merchant pins stays, marked degraded).
// Both come from memory: the most paid are counted in the background
// with the banks' health.
func (h *Steps) popular(co checkout, list *banks.List, country string) []banks.Bank {
	health := h.Health.Snapshot()
	ids := co.merchant.PopularBanks[country]
	pinned := len(ids) > 0
	if !pinned {
		ids = health.MostPaid(country)
	}
	var out []banks.Bank
	for _, id := range ids {
		if !pinned && health.Degraded(country, id) {
			continue
		}
		if b, ok := list.Bank(country, id); ok && len(out) < maxPopular {
			out = append(out, b)
		}
	}
	return out
}

func bankIDs(list []banks.Bank) string {
	ids := make([]string, len(list))
	for i, b := range list {
		ids[i] = b.ID
	}
	return strings.Join(ids, "\x00")
}

// lastUsed is the shopper's bank in country: the one the shop says they
// paid with last time (last_bank), else the one the link named (bank), else
// the one this browser remembers from their last payment. The first two
// travel in the token, so they show inside a frame, where the cookie is
// often blocked. gone is the first of them the list no longer holds.
func (h *Steps) lastUsed(c echo.Context, co checkout, list *banks.List, country string) (b banks.Bank, ok bool, gone string) {
	var ids []string
	if co.order.Country == country {
		ids = append(ids, co.order.LastBank, co.order.Bank)
	}
	if lastCountry, id, remembered := h.lastBank(c); remembered && lastCountry == country {
		ids = append(ids, id)
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		if found, listed := list.Bank(country, id); !listed {
			gone = cmp.Or(gone, id)
		} else if !ok {
			b, ok = found, true
		}
	}
	return b, ok, gone
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
func (h *Steps) lastBank(c echo.Context) (country, id string, ok bool) {
	return strings.Cut(h.sessionValue(c, sessionLastBank), "/")
}

// rememberBank stores the shopper's bank for next time.
func (h *Steps) rememberBank(c echo.Context, country, id string) {
	h.remember(c, sessionLastBank, country+"/"+id)
}

// sessionValue reads a convenience from the session cookie; "" when absent.
func (h *Steps) sessionValue(c echo.Context, key string) string {
	if h.Sessions == nil {
		return ""
	}
	if _, err := c.Request().Cookie(sessionName); err != nil {
		// No cookie, nothing to read: spare the store's work on every
		// page of a shopper who has none.
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
func (h *Steps) remember(c echo.Context, key, value string) {
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
