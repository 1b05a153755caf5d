// Package i18n speaks the shopper's language: it picks one of the supported
// languages, translates every string a shopper sees, names countries and
// writes amounts the way that language does.
package i18n

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
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
	lang := bases.get(s, base)
	return lang, lang != ""
}

func base(s string) string {
	tag, err := language.Parse(s)
	if err != nil {
		return ""
	}
	_, i, conf := matcher.Match(tag)
	if conf < language.High {
		return ""
	}
	return code(Supported[i])
}

// Negotiate picks the language of the shopper's browser (Accept-Language),
// or English.
func Negotiate(acceptLanguage string) string {
	if len(acceptLanguage) > maxKeptQuestion {
		// Browsers send a few dozen bytes: a long value is answered, never
		// kept, so that nobody fills the memo with megabytes of headers.
		return negotiate(acceptLanguage)
	}
	return negotiated.get(acceptLanguage, negotiate)
}

// maxKeptQuestion is the longest Accept-Language value whose answer is
// kept.
const maxKeptQuestion = 256

func negotiate(acceptLanguage string) string {
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

// bases and negotiated keep the answers of Base and Negotiate: every
// request asks, and browsers send a few hundred Accept-Language values
// between them, so the common ones are parsed once.
var bases, negotiated memo

// memo keeps a function's answers by question, up to memoSize of them;
// past that, questions are answered anew.
type memo struct {
	answers sync.Map
	size    atomic.Int32
}

const memoSize = 2048

func (m *memo) get(question string, answer func(string) string) string {
	if a, ok := m.answers.Load(question); ok {
		return a.(string)
	}
	a := answer(question)
	if m.size.Load() < memoSize && m.size.Add(1) <= memoSize {
		m.answers.Store(question, a)
	}
	return a
}

func code(t language.Tag) string {
	b, _ := t.Base()
	return b.String()
}

// Localizer translates into one language.
type Localizer struct {
	lang     string
	tag      language.Tag
	messages map[string]*goi18n.Message
	// fallback are the English strings of the same catalog.
	fallback map[string]*goi18n.Message
	// plural picks the form of a counted sentence (catalog.go).
	plural *goi18n.Localizer
	// countries keeps the country names asked for, by code.
	countries sync.Map
	// digits prints numbers as the language writes them; amounts prints
	// amounts the same, quicker.
	digits  *message.Printer
	amounts amountDigits
}

// New returns the localizer of lang, a code of Supported; English for others.
func New(lang string) *Localizer {
	if l, ok := localizers[lang]; ok {
		return l
	}
	return localizers["en"]
}

// localizers holds one Localizer per language: they never change, and
// every request needs one.
var localizers = shopperCatalog.localizers()

// Keys lists the key of every string, sorted, for tests that look for text
// left untranslated on a page.
func Keys() []string { return shopperCatalog.keys() }

// Lang is the language's code, for <html lang>.
func (l *Localizer) Lang() string { return l.lang }

// Missing marks a key without a translation, so tests find it on a page.
const Missing = "⟦"

// T translates key, filling in args as fmt does. A counted sentence (one
// with plural forms) takes the form its count asks for, and writes its
// numbers as the language does.
func (l *Localizer) T(key string, args ...any) string {
	m, ok := l.messages[key]
	if !ok {
		if m, ok = l.fallback[key]; !ok {
			return Missing + key + "⟧"
		}
	}
	if len(args) == 0 || !strings.Contains(m.Other, "%") {
		return m.Other
	}
	if !counts(m) {
		return fmt.Sprintf(m.Other, args...)
	}
	format := l.form(key, count(m.Other, args))
	if format == "" {
		format = m.Other
	}
	return l.digits.Sprintf(format, args...)
}

// Collator orders names the way the language sorts them.
func (l *Localizer) Collator() *collate.Collator {
	return collate.New(l.tag)
}

// Country names a country code in the language, English where the language
// has no name for it.
func (l *Localizer) Country(code string) string {
	if name, ok := l.countries.Load(code); ok {
		return name.(string)
	}
	name := l.country(code)
	if len(code) == 2 {
		// Two letters: a bounded set of names worth keeping.
		l.countries.Store(code, name)
	}
	return name
}

func (l *Localizer) country(code string) string {
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
// English, 49,90 € in German. The digits, decimal mark and grouping are
// CLDR's, through x/text; where the euro sign goes is CLDR's currency
// pattern, which x/text does not carry, so euroBefore holds it.
func (l *Localizer) Amount(amount string) string {
	digits, ok := l.amounts.fast(amount)
	if !ok {
		d, err := decimal.NewFromString(amount)
		if err != nil {
			return amount + " EUR"
		}
		// Amounts are at most 15000 with two decimals: a float64 holds
		// them exactly enough to print cents, and it is only printed.
		digits = l.amounts.slow(d.InexactFloat64())
	}
	if gap, before := euroBefore[l.lang]; before {
		return "€" + gap + digits
	}
	return digits + nbsp + "€"
}

const nbsp = "\u00a0"

// euroBefore lists the languages whose CLDR currency pattern puts the euro
// sign before the amount, with the space between; the others write it
// after, with a no-break space.
var euroBefore = map[string]string{"en": "", "mt": "", "ga": "", "nl": nbsp}

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
