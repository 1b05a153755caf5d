package handlers_test

import (
	"cmp"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

// TestEveryShopperPageInEveryLanguage renders each shopper page in each
// language and fails on any string the catalog lacks: a key used in code but
// missing, or misspelt, shows as a marker.
// englishSentences are, per language, the pieces of English catalog text
// (between placeholders, 15 characters or more) that the language does not
// share: none may appear on its pages.
func englishSentences() map[string][]string {
	verbs := regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)
	en := i18n.New("en")
	out := map[string][]string{}
	for _, tag := range i18n.Supported {
		lang, _ := i18n.Base(tag.String())
		if lang == "en" {
			continue
		}
		l := i18n.New(lang)
		for _, key := range i18n.Keys() {
			for _, piece := range verbs.Split(en.T(key), -1) {
				piece = strings.TrimSpace(piece)
				if len(piece) >= 15 && strings.Contains(piece, " ") && !strings.Contains(l.T(key), piece) {
					out[lang] = append(out[lang], piece)
				}
			}
		}
	}
	return out
}

func TestEveryShopperPageInEveryLanguage(t *testing.T) {
	a := setup(t, options{knobs: sandbox.Knobs{SettleDelay: 1 << 62}})
	english := englishSentences()
	for _, tag := range i18n.Supported {
		lang, _ := i18n.Base(tag.String())
		t.Run(lang, func(t *testing.T) {
			checkout := a.enter("L-"+lang, func(l *order.Link) { l.Lang = lang })
			pages := map[string]*http.Response{
				"country":  a.get(checkout),
				"banks":    a.get(checkout + "/banks?country=FR"),
				"none":     a.get(checkout + "/banks?country=FR&q=zzzz"),
				"details":  a.get(checkout + "/pay?country=FR&bank=caisse-d-epargne"),
				"errors":   a.post(checkout+"/pay", url.Values{"country": {"FR"}, "bank": {"caisse-d-epargne"}, "iban": {"FR76 0000"}}),
				"login":    a.get(checkout + "/pay?country=DE&bank=hypovereinsbank"),
				"summary":  a.get(checkout + "/pay?country=DE&bank=deutsche-bank"),
				"status":   a.get(checkout + "/return"),
				"notFound": a.get(a.url + "/c/forged"),
				"expired":  a.do(http.MethodGet, a.link("X-"+lang, func(l *order.Link) { l.TTL = -time.Minute; l.Lang = lang }), nil, nil),
			}
			statuses := map[string]int{"errors": http.StatusUnprocessableEntity, "notFound": http.StatusNotFound, "expired": http.StatusForbidden}
			for name, res := range pages {
				if want := cmp.Or(statuses[name], http.StatusOK); res.StatusCode != want {
					t.Errorf("%s page: status %d, want %d", name, res.StatusCode, want)
				}
				doc, err := goqueryDoc(res)
				if err != nil {
					t.Fatal(err)
				}
				body := doc.Text()
				if strings.Contains(body, i18n.Missing) {
					i := strings.Index(body, i18n.Missing)
					t.Errorf("%s page: untranslated %q", name, body[i:min(len(body), i+40)])
				}
				if name != "notFound" {
					for _, sentence := range english[lang] {
						if strings.Contains(body, sentence) {
							t.Errorf("%s page: English text %q", name, sentence)
						}
					}
				}
				want := lang
				if name == "notFound" {
					want = "en" // no checkout, no Accept-Language: English
				}
				if got := doc.Find("html").AttrOr("lang", ""); got != want {
					t.Errorf("%s page: <html lang=%q>, want %q", name, got, want)
				}
			}
		})
	}
}

func TestLinkLanguageAndTheSwitcher(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", func(l *order.Link) { l.Lang = "el" })
	doc := page(t, a.get(checkout+"/banks?country=GR"), http.StatusOK)
	if got := text(doc, "h1"); got != "Επιλέξτε την τράπεζά σας" {
		t.Errorf("Greek link: heading %q", got)
	}
	if got := doc.Find(testid("amount")).Text(); got != "49,90\u00a0€" {
		t.Errorf("Greek amount %q", got)
	}

	// The shopper switches to French on the banks page (no cookies here).
	french := doc.Find(testid("language-switch") + ` a[data-lang="fr"]`)
	if french.AttrOr("lang", "") != "fr" || french.Text() != "Français" {
		t.Errorf("the switcher's French link is %q in %q", french.Text(), french.AttrOr("lang", ""))
	}
	res := a.get(resolve(checkout+"/banks?country=GR", french.AttrOr("href", "")))
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || strings.Contains(loc, "lang=") || !strings.Contains(loc, "country=GR") {
		t.Fatalf("switch: %d to %q", res.StatusCode, loc)
	}
	inFrench := page(t, a.get(a.url+loc), http.StatusOK)
	if got := text(inFrench, "h1"); got != "Choisir votre banque" {
		t.Errorf("after the switch: heading %q", got)
	}
	// The choice travels with the checkout: the next step is French too.
	next := inFrench.Find(testid("bank")).First().AttrOr("href", "")
	if got := page(t, a.get(resolve(a.url+loc, next)), http.StatusOK).Find("html").AttrOr("lang", ""); got != "fr" {
		t.Errorf("the next page is in %q, want fr", got)
	}
}
