// Package i18n speaks the shopper's language: it picks one of the supported
// languages, translates every string a shopper sees, names countries and
// writes amounts the way that language does.
package i18n

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/message"
)

// Supported are the shoppers' languages, English first: the fallback.
var Supported = []language.Tag{
	language.English, language.German, language.French, language.Spanish, language.Italian,
	language.Dutch, language.Portuguese, language.Finnish, language.Estonian, language.Latvian,
	language.Lithuanian, language.Slovak, language.Slovenian, language.Greek, language.Croatian,
	language.MustParse("mt"), language.Polish, language.Czech, language.Swedish, language.Danish,
	language.MustParse("nb"), language.Hungarian, language.Romanian, language.Bulgarian,
	language.MustParse("ga"), language.Icelandic,
}

var matcher = language.NewMatcher(Supported)

// Base returns the supported language that s names ("de", "de-AT"), and
// whether there is one.
func Base(s string) (string, bool) {
	if s == "" || len(s) > 35 {
		return "", false
	}
	tag, err := language.Parse(s)
	if err != nil {
		return "", false
	}
	_, i, conf := matcher.Match(tag)
	if conf < language.High {
		return "", false
	}
	return code(Supported[i]), true
}

// Negotiate picks the language of the shopper's browser (Accept-Language),
// or English.
func Negotiate(acceptLanguage string) string {
	tags, _, _ := language.ParseAcceptLanguage(acceptLanguage)
	if len(tags) == 0 {
		return "en"
	}
	for i, t := range tags {
		// A reader of Nynorsk or of "Norwegian" reads Bokmål far better
		// than any other language offered.
		if b, _ := t.Base(); b.String() == "nn" || b.String() == "no" {
			tags[i] = language.MustParse("nb")
		}
	}
	_, i, conf := matcher.Match(tags...)
	if conf == language.No {
		return "en"
	}
	return code(Supported[i])
}

func code(t language.Tag) string {
	b, _ := t.Base()
	return b.String()
}

// Localizer translates into one language.
type Localizer struct {
	lang     string
	tag      language.Tag
	messages map[string]string
	// plural prints the sentences that count something (plural.go).
	plural *message.Printer
}

// New returns the localizer of lang, a code of Supported; English for others.
func New(lang string) *Localizer {
	messages, ok := catalog[lang]
	if !ok {
		lang, messages = "en", catalog["en"]
	}
	return &Localizer{lang: lang, tag: language.MustParse(lang), messages: messages, plural: pluralPrinter(lang)}
}

// Keys lists the key of every string, sorted, for tests that look for text
// left untranslated on a page.
func Keys() []string {
	return slices.Sorted(maps.Keys(catalog["en"]))
}

// Lang is the language's code, for <html lang>.
func (l *Localizer) Lang() string { return l.lang }

// Missing marks a key without a translation, so tests find it on a page.
const Missing = "⟦"

// T translates key, filling in args as fmt does.
func (l *Localizer) T(key string, args ...any) string {
	format, ok := l.messages[key]
	if !ok {
		format, ok = catalog["en"][key]
		if !ok {
			return Missing + key + "⟧"
		}
	}
	if len(args) == 0 || !strings.Contains(format, "%") {
		return format
	}
	if _, counts := plurals[l.lang][key]; counts && l.plural != nil {
		return l.plural.Sprintf(key, args...)
	}
	return fmt.Sprintf(format, args...)
}

// Collator orders names the way the language sorts them.
func (l *Localizer) Collator() *collate.Collator {
	return collate.New(l.tag)
}

// Country names a country code in the language, English where the language
// has no name for it.
func (l *Localizer) Country(code string) string {
	region, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if name := display.Regions(l.tag).Name(region); name != "" && name != code {
		return name
	}
	if name := display.English.Regions().Name(region); name != "" {
		return name
	}
	return code
}

// Choice is a language as the switcher offers it.
type Choice struct {
	Code string
	// Name is the language's name in itself (Deutsch, Ελληνικά).
	Name string
}

// Choices lists the supported languages for the switcher, in the order of
// Supported.
var Choices = func() []Choice {
	out := make([]Choice, len(Supported))
	for i, tag := range Supported {
		out[i] = Choice{Code: code(tag), Name: Name(code(tag))}
	}
	return out
}()

// Name is the language's own name, for the language switcher.
func Name(lang string) string {
	t := language.MustParse(lang)
	name := display.Self.Name(t)
	if name == "" {
		return lang
	}
	r := []rune(name)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// Amount writes an amount in euros as the language does: €49.90 in
// English, 49,90 € in German.
func (l *Localizer) Amount(amount string) string {
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return amount + " EUR"
	}
	f := formats[l.lang]
	whole, frac, _ := strings.Cut(d.StringFixed(2), ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(f.group)
		}
		b.WriteRune(r)
	}
	number := b.String() + f.decimal + frac
	if f.before {
		return "€" + f.gap + number
	}
	return number + f.gap + "€"
}

// numberFormat is how a language writes an amount in euros (CLDR).
type numberFormat struct {
	group, decimal, gap string
	before              bool
}

const nbsp, narrowNbsp = "\u00a0", "\u202f"

var formats = map[string]numberFormat{
	"en": {",", ".", "", true},
	"mt": {",", ".", "", true},
	"nl": {".", ",", nbsp, true},
	"de": {".", ",", nbsp, false},
	"es": {".", ",", nbsp, false},
	"it": {".", ",", nbsp, false},
	"pt": {nbsp, ",", nbsp, false},
	"el": {".", ",", nbsp, false},
	"hr": {".", ",", nbsp, false},
	"sl": {".", ",", nbsp, false},
	"fr": {narrowNbsp, ",", nbsp, false},
	"fi": {nbsp, ",", nbsp, false},
	"et": {nbsp, ",", nbsp, false},
	"lv": {nbsp, ",", nbsp, false},
	"lt": {nbsp, ",", nbsp, false},
	"sk": {nbsp, ",", nbsp, false},
	"pl": {nbsp, ",", nbsp, false},
	"cs": {nbsp, ",", nbsp, false},
	"sv": {nbsp, ",", nbsp, false},
	"da": {".", ",", nbsp, false},
	"nb": {nbsp, ",", nbsp, false},
	"hu": {nbsp, ",", nbsp, false},
	"ro": {".", ",", nbsp, false},
	"bg": {nbsp, ",", nbsp, false},
	"ga": {",", ".", "", true},
	"is": {".", ",", nbsp, false},
}

type ctxKey struct{}

// With returns ctx carrying l, for the views.
func With(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the localizer in ctx, or English.
func From(ctx context.Context) *Localizer {
	if l, ok := ctx.Value(ctxKey{}).(*Localizer); ok {
		return l
	}
	return New("en")
}

// T translates key into the language of ctx.
func T(ctx context.Context, key string, args ...any) string {
	return From(ctx).T(key, args...)
}
