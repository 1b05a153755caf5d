package views

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/paybybank/checkout/i18n"
)

// describedBy ties an input to its hint and error for screen readers.
func describedBy(f Field) string {
	var ids []string
	if f.Hint != "" {
		ids = append(ids, f.ID+"-hint")
	}
	if f.Error != "" {
		ids = append(ids, f.ID+"-error")
	}
	return strings.Join(ids, " ")
}

func optionID(f Field, i int) string {
	if i == 0 {
		return f.ID
	}
	return f.ID + "-" + strconv.Itoa(i)
}

// emptyOption is the label of a select's empty choice.
func emptyOption(ctx context.Context, f Field) string {
	if f.EmptyOption != "" {
		return f.EmptyOption
	}
	return i18n.T(ctx, "pay.choose")
}

// languageURL is the page of the switcher s in lang: its address with the
// page's own values kept.
func languageURL(s LanguageSwitch, lang string) templ.SafeURL {
	q := url.Values{}
	for _, h := range s.Keep {
		q.Add(h.Name, h.Value)
	}
	q.Set("lang", lang)
	return templ.SafeURL(string(s.Action) + "?" + q.Encode())
}

// currentLanguage is the name of the language the page is in.
func currentLanguage(s LanguageSwitch) string {
	for _, o := range s.Languages {
		if o.Selected {
			return o.Label
		}
	}
	return ""
}

// Initials are the first letters of the first two words of a name: a bank's
// stand-in for a logo, and a merchant's beside its name when its theme has
// no logo.
func Initials(name string) string {
	var out []rune
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		out = append(out, unicode.ToUpper([]rune(w)[0]))
		if len(out) == 2 {
			break
		}
	}
	return string(out)
}
