package i18n

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var verbs = regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)

// TestEveryLanguageTranslatesEveryString fails when any language lacks a
// shopper-visible string, leaves it empty, copies an English sentence
// untranslated, or changes its placeholders.
func TestEveryLanguageTranslatesEveryString(t *testing.T) {
	if len(catalog) != len(Supported) {
		t.Errorf("%d catalogs for %d supported languages", len(catalog), len(Supported))
	}
	for _, tag := range Supported {
		lang := code(tag)
		messages, ok := catalog[lang]
		if !ok {
			t.Errorf("%s: no catalog", lang)
			continue
		}
		for key, english := range en {
			got, ok := messages[key]
			switch {
			case !ok || strings.TrimSpace(got) == "":
				t.Errorf("%s: %q is not translated", lang, key)
			case lang != "en" && got == english && strings.Contains(strings.TrimSpace(verbs.ReplaceAllString(english, "")), " "):
				t.Errorf("%s: %q is the English sentence %q", lang, key, english)
			case !slices.Equal(verbs.FindAllString(got, -1), verbs.FindAllString(english, -1)):
				t.Errorf("%s: %q has placeholders %v, English has %v", lang, key, verbs.FindAllString(got, -1), verbs.FindAllString(english, -1))
			}
		}
		for key := range messages {
			if _, ok := en[key]; !ok {
				t.Errorf("%s: %q is not an English key (a typo or a leftover)", lang, key)
			}
		}
	}
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
	} {
		if got := New(tt.lang).T("status.refresh", tt.n); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%s, %d: %q, want it to end %q", tt.lang, tt.n, got, tt.want)
		}
	}
	if got := New("pl").T("invalid.tooLong", "IBAN", 140); got != "IBAN jest za długie: użyj najwyżej 140 znaków." {
		t.Errorf("pl, 140 characters: %q", got)
	}
}

// TestPluralFormsKeepThePlaceholders holds every plural form to the English
// sentence's placeholders, and to keys English has.
func TestPluralFormsKeepThePlaceholders(t *testing.T) {
	for lang, keys := range allPlurals() {
		for key, forms := range keys {
			if _, ok := counted[key]; !ok {
				t.Errorf("%s: %q is not a counted sentence", lang, key)
			}
			for i := 1; i < len(forms); i += 2 {
				english, ok := en[key]
				if !ok {
					english = consoleEN[key]
				}
				if !slices.Equal(verbs.FindAllString(forms[i], -1), verbs.FindAllString(english, -1)) {
					t.Errorf("%s %s (%s): placeholders of %q differ from English", lang, key, forms[i-1], forms[i])
				}
			}
			if forms[len(forms)-2] != "other" {
				t.Errorf("%s %s: the last form must be other", lang, key)
			}
		}
	}
}
