package shopper

import (
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/shopper/details"
	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/views"
)

// sessionLang remembers the language a shopper chose, for their next
// checkout; a convenience, like every session value.
const sessionLang = "lang"

// paramLang is the language switcher's query parameter.
const paramLang = "lang"

// localizer is the language of the request (chosen by describe).
func localizer(c echo.Context) *i18n.Localizer { return web.RequestOf(c).Lang }

func (h *Steps) loc(c echo.Context) *i18n.Localizer { return web.Localizer(c) }

// switchLanguage makes a shopper's choice of language the checkout's own:
// the order is sealed again with it and the page reloads at the new address,
// so the choice holds in an iframe without cookies.
func (h *Steps) switchLanguage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		lang, ok := i18n.Base(c.QueryParam(paramLang))
		if !ok || c.Request().Method != http.MethodGet {
			return next(c)
		}
		co := checkoutOf(c)
		if co == nil {
			return next(c)
		}
		o := co.order
		o.Lang = lang
		token, err := h.Sealer.Seal(o, h.Now())
		if err != nil {
			return err
		}
		q := c.QueryParams()
		q.Del(paramLang)
		path, ok := stepPath(c, token)
		if !ok {
			return next(c)
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		return c.Redirect(http.StatusSeeOther, path)
	}
}

// linkLanguageSwitch is the switcher of a payment link's page: plain
// links back to the link's address (with its receipt, if shown) in each
// language.
func linkLanguageSwitch(c echo.Context) views.LanguageSwitch {
	return addressLanguageSwitch(c, "/l/"+url.PathEscape(c.Param("id")))
}

// addressLanguageSwitch is the switcher of a page of the app's own address
// (a payment link's, a refund's): back to it in each language, keeping
// its query values.
func addressLanguageSwitch(c echo.Context, address string) views.LanguageSwitch {
	current := web.Localizer(c).Lang()
	s := views.LanguageSwitch{Action: templ.SafeURL(address)}
	for name, values := range c.QueryParams() {
		if name == paramLang {
			continue
		}
		for _, v := range values {
			s.Keep = append(s.Keep, views.Hidden{Name: name, Value: v})
		}
	}
	for _, l := range i18n.Choices {
		s.Languages = append(s.Languages, views.Option{Value: l.Code, Label: l.Name, Selected: l.Code == current})
	}
	return s
}

// languageSwitch is the switcher of the page being served: a GET form back
// to it that keeps its query values (on a POST, the chosen bank).
func languageSwitch(c echo.Context) views.LanguageSwitch {
	action, ok := stepPath(c, c.Param("token"))
	if !ok {
		// Only the shopper's steps have one: a signed link cannot take
		// another parameter, the studio is English, and on a page that is
		// no step (an unknown address) the form could only lead where the
		// request pointed.
		return views.LanguageSwitch{}
	}
	current := web.Localizer(c).Lang()
	s := views.LanguageSwitch{Action: templ.SafeURL(action)}
	keep := c.QueryParams()
	if c.Request().Method == http.MethodPost {
		keep = url.Values{}
		for _, name := range []string{details.FieldCountry, details.FieldBank} {
			if v := c.FormValue(name); v != "" {
				keep.Set(name, v)
			}
		}
	}
	for name, values := range keep {
		if name == paramLang {
			continue
		}
		for _, v := range values {
			s.Keep = append(s.Keep, views.Hidden{Name: name, Value: v})
		}
	}
	for _, l := range i18n.Choices {
		s.Languages = append(s.Languages, views.Option{Value: l.Code, Label: l.Name, Selected: l.Code == current})
	}
	return s
}
