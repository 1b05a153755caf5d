package i18n

import (
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/number"
)

// Staff returns the localizer of the console's pages in lang; English for
// a language the console does not speak.
func Staff(lang string) *Localizer {
	if l, ok := staffLocalizers[lang]; ok {
		return l
	}
	return staffLocalizers["en"]
}

// StaffChoices are the languages the console speaks, in the order of
// Supported, for its switcher.
func StaffChoices() []Choice {
	var out []Choice
	for _, c := range Choices {
		if _, ok := staffCatalog.messages[c.Code]; ok {
			out = append(out, c)
		}
	}
	return out
}

// StaffLanguage is the console's language for a person: their own choice
// when the console speaks it, else the first language of their browser's
// (Accept-Language) that it speaks, else English.
func StaffLanguage(chosen, acceptLanguage string) string {
	if _, ok := staffCatalog.messages[chosen]; ok {
		return chosen
	}
	tags, _, _ := language.ParseAcceptLanguage(acceptLanguage)
	for _, t := range tags {
		if lang := Negotiate(t.String()); lang != "en" || isEnglish(t) {
			if _, ok := staffCatalog.messages[lang]; ok {
				return lang
			}
		}
	}
	return "en"
}

func isEnglish(t language.Tag) bool {
	b, _ := t.Base()
	return b.String() == "en"
}

var staffLocalizers = staffCatalog.localizers()

// Number writes a count as the language does: 12,345 in English, 12 345
// in Polish.
func (l *Localizer) Number(n int64) string { return l.digits.Sprint(number.Decimal(n)) }

// Percent writes a share (0.123) as a percentage with one decimal, as the
// language does: 12.3% in English, 12,3 % in German.
func (l *Localizer) Percent(share float64) string {
	return l.digits.Sprint(number.Percent(share, number.MinFractionDigits(1), number.MaxFractionDigits(1)))
}

// DateTime writes a moment in UTC as the language writes a date and time
// in figures (CLDR's short date with a 24-hour time); English keeps the
// ISO form, which sorts as it reads.
func (l *Localizer) DateTime(t time.Time) string {
	layout, ok := dateTimeLayouts[l.lang]
	if !ok {
		layout = dateTimeLayouts["en"]
	}
	return t.UTC().Format(layout)
}

// dateTimeLayouts are Go layouts of each language's numeric date and
// 24-hour time, after CLDR's short date patterns.
var dateTimeLayouts = map[string]string{
	"en": "2006-01-02 15:04:05",
	"de": "02.01.2006, 15:04:05",
	"fr": "02/01/2006 15:04:05",
	"es": "2/1/2006, 15:04:05",
	"it": "02/01/2006, 15:04:05",
	"nl": "02-01-2006 15:04:05",
	"pt": "02/01/2006, 15:04:05",
	"fi": "2.1.2006 15.04.05",
	"et": "02.01.2006 15:04:05",
	"lv": "02.01.2006 15:04:05",
	"lt": "2006-01-02 15:04:05",
	"sk": "2. 1. 2006 15:04:05",
	"sl": "2. 1. 2006, 15:04:05",
	"el": "2/1/2006, 15:04:05",
	"hr": "02. 01. 2006. 15:04:05",
	"mt": "02/01/2006 15:04:05",
	"pl": "2.01.2006, 15:04:05",
	"cs": "2. 1. 2006 15:04:05",
	"sv": "2006-01-02 15:04:05",
	"da": "02.01.2006 15.04.05",
	"nb": "02.01.2006, 15:04:05",
	"hu": "2006. 01. 02. 15:04:05",
	"ro": "02.01.2006, 15:04:05",
	"bg": "2.01.2006 г., 15:04:05",
	"ga": "02/01/2006 15:04:05",
	"is": "2.1.2006, 15:04:05",
}
