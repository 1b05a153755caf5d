package i18n

import (
	"maps"
	"slices"
	"strings"
	"testing"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"github.com/nicksnyder/go-i18n/v2/i18n/template"
	"golang.org/x/text/language"
)

// TestEveryLanguageTranslatesEveryString fails when any language lacks a
// shopper-visible string, leaves it empty, copies an English sentence
// untranslated, or changes its placeholders.
func TestEveryLanguageTranslatesEveryString(t *testing.T) {
	for _, tag := range Supported {
		if _, ok := shopperCatalog.messages[code(tag)]; !ok {
			t.Errorf("%s: no messages/shopper/%s.json", code(tag), code(tag))
		}
	}
	if len(shopperCatalog.messages) != len(Supported) {
		t.Errorf("%d languages in messages/shopper, %d supported", len(shopperCatalog.messages), len(Supported))
	}
	checkTranslations(t, shopperCatalog, nil)
}

// checkTranslations fails when a language of c lacks one of English's
// strings, leaves it empty, copies an English sentence untranslated (but
// for the keys of same), changes the placeholders of any of its forms, or
// has a key English does not.
func checkTranslations(t *testing.T, c catalog, same map[string]bool) {
	t.Helper()
	english := c.messages["en"]
	for lang, messages := range c.messages {
		for key, en := range english {
			m, ok := messages[key]
			want := verbs.FindAllString(en.Other, -1)
			switch {
			case !ok || strings.TrimSpace(m.Other) == "":
				t.Errorf("%s: %q is not translated", lang, key)
				continue
			case lang != "en" && m.Other == en.Other && !same[key] && strings.Contains(strings.TrimSpace(verbs.ReplaceAllString(en.Other, "")), " "):
				t.Errorf("%s: %q is the English sentence %q", lang, key, en.Other)
			}
			for form, text := range forms(m) {
				if got := verbs.FindAllString(text, -1); !slices.Equal(got, want) {
					t.Errorf("%s: %q (%s) has placeholders %v, English has %v", lang, key, form, got, want)
				}
			}
		}
		for key := range messages {
			if _, ok := english[key]; !ok {
				t.Errorf("%s: %q is not an English key (a typo or a leftover)", lang, key)
			}
		}
	}
}

// forms are the texts of m by CLDR plural form; "other" alone for a
// sentence that counts nothing.
func forms(m *goi18n.Message) map[string]string {
	out := map[string]string{}
	for form, text := range map[string]string{"zero": m.Zero, "one": m.One, "two": m.Two, "few": m.Few, "many": m.Many, "other": m.Other} {
		if text != "" {
			out[form] = text
		}
	}
	return out
}

func TestMissingKeysShowAMarker(t *testing.T) {
	if got := New("de").T("no.such.key"); !strings.HasPrefix(got, Missing) {
		t.Errorf("missing key gives %q", got)
	}
	if got := New("de").T("status.pending.text", "Shop"); strings.Contains(got, "%!") {
		t.Errorf("an unused argument leaks into %q", got)
	}
}

func TestAmountsAreWrittenTheLanguagesWay(t *testing.T) {
	tests := []struct{ lang, amount, want string }{
		{"en", "49.9", "€49.90"},
		{"en", "15000", "€15,000.00"},
		{"de", "49.90", "49,90\u00a0€"},
		{"de", "15000", "15.000,00\u00a0€"},
		{"fr", "1234.5", "1\u00a0234,50\u00a0€"},
		{"nl", "49.90", "€\u00a049,90"},
		{"el", "1.00", "1,00\u00a0€"},
		{"fi", "999.99", "999,99\u00a0€"},
		{"pl", "1234.5", "1\u00a0234,50\u00a0€"},
		{"da", "15000", "15.000,00\u00a0€"},
		{"ga", "1234.5", "€1,234.50"},
		{"bg", "49.90", "49,90\u00a0€"},
	}
	for _, tt := range tests {
		if got := New(tt.lang).Amount(tt.amount); got != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.lang, tt.amount, got, tt.want)
		}
	}
	for _, tag := range Supported {
		if got := New(code(tag)).Amount("15000"); !strings.Contains(got, "€") || !strings.Contains(got, "000") || len([]rune(got)) < 10 {
			t.Errorf("%s: 15000 is written %q", tag, got)
		}
	}
}

func TestChoosingALanguage(t *testing.T) {
	for in, want := range map[string]string{"de": "de", "de-AT": "de", "EL": "el", "pt-BR": "pt", "zz": "", "": "", "ja": ""} {
		got, ok := Base(in)
		if got != want || ok != (want != "") {
			t.Errorf("Base(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for header, want := range map[string]string{
		"de-AT,de;q=0.9,en;q=0.8": "de", "ja,el;q=0.5": "el", "ja": "en", "": "en", "fr-BE": "fr", "mt": "mt",
		"pl-PL,pl;q=0.9": "pl", "sv-FI": "sv", "ga-IE": "ga", "is": "is", "bg": "bg", "cs,sk;q=0.5": "cs",
	} {
		if got := Negotiate(header); got != want {
			t.Errorf("Negotiate(%q) = %q, want %q", header, got, want)
		}
	}
}

func TestCountryNamesInTheLanguage(t *testing.T) {
	for lang, want := range map[string]string{"en": "Germany", "de": "Deutschland", "el": "Γερμανία", "fi": "Saksa"} {
		if got := New(lang).Country("DE"); got != want {
			t.Errorf("%s: DE is %q, want %q", lang, got, want)
		}
	}
	if got := New("mt").Country("MT"); got == "" || got == "MT" {
		t.Errorf("mt: MT is %q", got)
	}
}

func TestNorwegianOfAnyFormReachesBokmal(t *testing.T) {
	for _, s := range []string{"no", "nn", "nb", "no-NO", "nn-NO"} {
		if lang, ok := Base(s); !ok || lang != "nb" {
			t.Errorf("Base(%q) = %q, %v; want nb", s, lang, ok)
		}
		if got := Negotiate(s + ",en;q=0.5"); got != "nb" {
			t.Errorf("Negotiate(%q) = %q, want nb", s, got)
		}
	}
}

// TestCountedSentencesFollowTheNumber checks plural forms through x/text:
// the words after a number change as each language's grammar wants.
func TestCountedSentencesFollowTheNumber(t *testing.T) {
	for _, tt := range []struct {
		lang string
		n    int
		want string
	}{
		{"en", 1, "in 1 second."}, {"en", 5, "in 5 seconds."},
		{"pl", 1, "za 1 sekundę."}, {"pl", 2, "za 2 sekundy."}, {"pl", 5, "za 5 sekund."}, {"pl", 22, "za 22 sekundy."},
		{"cs", 3, "za 3 sekundy."}, {"cs", 8, "za 8 sekund."},
		{"sl", 2, "čez 2 sekundi."}, {"sl", 3, "čez 3 sekunde."}, {"sl", 5, "čez 5 sekund."},
		{"lt", 1, "po 1 sekundės."}, {"lt", 13, "po 13 sekundžių."},
		{"hr", 2, "za 2 sekunde."}, {"hr", 5, "za 5 sekundi."},
		{"ro", 2, "peste 2 secunde."}, {"ro", 20, "peste 20 de secunde."},
		// CLDR 42 gave Maltese a form for two alone: 102 takes "other".
		{"mt", 2, "f'2 sekondi."}, {"mt", 3, "f'3 sekondi."}, {"mt", 102, "f'102 sekonda."},
	} {
		if got := New(tt.lang).T("status.refresh", tt.n); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%s, %d: %q, want it to end %q", tt.lang, tt.n, got, tt.want)
		}
	}
	if got := New("pl").T("invalid.tooLong", "IBAN", 140); got != "IBAN jest za długie: użyj najwyżej 140 znaków." {
		t.Errorf("pl, 140 characters: %q", got)
	}
}

// TestCountedSentencesHaveTheirLanguagesPluralForms holds every sentence
// with plural forms, in both catalogs, to its language's CLDR rules (as
// go-i18n carries them): it has each form some whole number takes and
// "other", no form the language does not have, and it counts something.
func TestCountedSentencesHaveTheirLanguagesPluralForms(t *testing.T) {
	for _, c := range []catalog{shopperCatalog, staffCatalog} {
		for lang, messages := range c.messages {
			whole, all := cldrForms(lang)
			for key, m := range messages {
				if !counts(m) {
					continue
				}
				if en, ok := c.messages["en"][key]; ok && !slices.Contains(verbs.FindAllString(en.Other, -1), "%d") {
					t.Errorf("%s: %q has plural forms but counts nothing (no %%d)", lang, key)
				}
				has := forms(m)
				for form := range whole {
					if _, ok := has[form]; !ok {
						t.Errorf("%s: %q lacks the plural form %q", lang, key, form)
					}
				}
				for form := range has {
					if !all[form] {
						t.Errorf("%s: %q has the plural form %q, which CLDR does not give %s", lang, key, form, lang)
					}
				}
			}
		}
	}
}

// cldrForms are the plural forms of lang: whole are those whole numbers
// take, and "other"; all adds those only fractions take.
func cldrForms(lang string) (whole, all map[string]bool) {
	b := goi18n.NewBundle(language.English)
	b.MustAddMessages(language.MustParse(lang), &goi18n.Message{ID: "form", Zero: "zero", One: "one", Two: "two", Few: "few", Many: "many", Other: "other"})
	l := goi18n.NewLocalizer(b, lang)
	form := func(n any) string {
		s, err := l.Localize(&goi18n.LocalizeConfig{MessageID: "form", PluralCount: n, TemplateParser: template.IdentityParser{}})
		if err != nil {
			panic(err)
		}
		return s
	}
	whole = map[string]bool{"other": true}
	for n := range 1000 {
		whole[form(n)] = true
	}
	whole[form(1000000)] = true
	all = maps.Clone(whole)
	for _, n := range []string{"0.0", "0.1", "0.5", "1.0", "1.5", "2.0", "2.5", "3.5", "5.5", "11.5", "0.11", "1.25"} {
		all[form(n)] = true
	}
	return whole, all
}

// A browser's Accept-Language is answered from a memo; a value far longer
// than any browser sends is answered as well, but not kept, so that
// nobody can fill the process's memory with megabytes of headers.
func TestALongAcceptLanguageIsAnsweredNotKept(t *testing.T) {
	long := "de-DE,de;q=0.9" + strings.Repeat(",fr;q=0.1", 100)
	kept := negotiated.size.Load()
	if got := Negotiate(long); got != "de" {
		t.Errorf("a long Accept-Language preferring German: %q", got)
	}
	if _, ok := negotiated.answers.Load(long); ok || negotiated.size.Load() != kept {
		t.Errorf("a %d-byte Accept-Language was kept in the memo", len(long))
	}
	if got := Negotiate("pl-PL,pl;q=0.9"); got != "pl" {
		t.Errorf("a browser's Accept-Language: %q", got)
	}
}
