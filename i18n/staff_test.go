package i18n

import (
	"strings"
	"testing"
	"time"
)

// sameInEveryLanguage are the console's strings that are no words: a
// pattern of names.
var sameInEveryLanguage = map[string]bool{"console.whose": true}

// TestTheConsoleSpeaksEveryLanguage fails when a language of the console
// lacks a string, leaves it empty, copies an English sentence, changes its
// placeholders, or has a key English does not.
func TestTheConsoleSpeaksEveryLanguage(t *testing.T) {
	checkTranslations(t, staffCatalog, sameInEveryLanguage)
	// The sentences that count something change with the number.
	for key, en := range staffCatalog.messages["en"] {
		if !counts(en) {
			continue
		}
		for lang, messages := range staffCatalog.messages {
			if m, ok := messages[key]; ok && !counts(m) {
				t.Errorf("%s: %q has no plural forms", lang, key)
			}
		}
	}
}

// TestTheConsoleSpeaksTheShoppersLanguages fails when a language the
// shopper's pages speak has no console catalog: the people who run a shop
// read the same language as its shoppers.
func TestTheConsoleSpeaksTheShoppersLanguages(t *testing.T) {
	for _, tag := range Supported {
		if _, ok := staffCatalog.messages[code(tag)]; !ok {
			t.Errorf("%s: the shopper's pages speak it, the console does not", code(tag))
		}
	}
	if len(StaffChoices()) != len(Supported) {
		t.Errorf("the console's switcher offers %d languages, the shopper's pages speak %d", len(StaffChoices()), len(Supported))
	}
	if len(staffCatalog.messages) != len(Supported) {
		t.Errorf("%d languages in messages/console, %d supported", len(staffCatalog.messages), len(Supported))
	}
}

func TestTheConsoleWritesNumbersAndTimesAsItsLanguageDoes(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 5, 7, 0, time.UTC)
	for _, tt := range []struct {
		lang, amount, percent, count, when string
	}{
		{"en", "€1,234.50", "25.0%", "12,345", "2026-11-24 09:05:07"},
		{"pl", "1\u00a0234,50\u00a0€", "25,0%", "12\u00a0345", "24.11.2026, 09:05:07"},
		{"de", "1.234,50\u00a0€", "25,0\u00a0%", "12.345", "24.11.2026, 09:05:07"},
	} {
		l := Staff(tt.lang)
		if got := l.Amount("1234.5"); got != tt.amount {
			t.Errorf("%s amount %q, want %q", tt.lang, got, tt.amount)
		}
		if got := l.Percent(0.25); got != tt.percent {
			t.Errorf("%s percent %q, want %q", tt.lang, got, tt.percent)
		}
		if got := l.Number(12345); got != tt.count {
			t.Errorf("%s count %q, want %q", tt.lang, got, tt.count)
		}
		if got := l.DateTime(at); got != tt.when {
			t.Errorf("%s time %q, want %q", tt.lang, got, tt.when)
		}
	}
	for lang := range staffCatalog.messages {
		if _, ok := dateTimeLayouts[lang]; !ok {
			t.Errorf("%s: no date layout", lang)
		}
	}
}

func TestTheConsolesCountedSentencesFollowTheNumber(t *testing.T) {
	for _, tt := range []struct {
		lang string
		n    int
		want string
	}{
		{"en", 1, "The 1 busiest bank "}, {"en", 20, "The 20 busiest banks "},
		{"pl", 1, "Pokazano 1 najbardziej obciążony bank "}, {"pl", 3, "Pokazano 3 najbardziej obciążone banki "},
		{"pl", 20, "Pokazano 20 najbardziej obciążonych banków "},
	} {
		if got := Staff(tt.lang).T("console.health.more", tt.n); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s, %d: %q, want it to begin %q", tt.lang, tt.n, got, tt.want)
		}
	}
	// A span of whole days, as the webhooks' oldest wait can be.
	for _, tt := range []struct {
		lang string
		n    int
		want string
	}{
		{"en", 2, "2 days"}, {"pl", 2, "2 dni"}, {"pl", 5, "5 dni"}, {"cs", 3, "3 dny"}, {"cs", 5, "5 dní"},
		{"sl", 2, "2 dneva"}, {"lt", 10, "10 dienų"}, {"ro", 20, "20 de zile"}, {"ro", 3, "3 zile"},
		{"mt", 2, "2 ijiem"}, {"mt", 102, "102 jum"}, {"fr", 1000000, "1\u00a0000\u00a0000 jours"},
	} {
		if got := Staff(tt.lang).T("console.duration.days", tt.n); got != tt.want {
			t.Errorf("%s, %d days: %q, want %q", tt.lang, tt.n, got, tt.want)
		}
	}
}

func TestTheConsolesLanguageIsTheChoiceThenTheBrowsers(t *testing.T) {
	for _, tt := range []struct{ chosen, accept, want string }{
		{"", "", "en"},
		{"", "pl-PL,pl;q=0.9,en;q=0.8", "pl"},
		{"en", "pl", "en"},
		{"pl", "en-GB", "pl"},
		{"xx", "pl", "pl"},
		{"", "zh-CN", "en"},
	} {
		if got := StaffLanguage(tt.chosen, tt.accept); got != tt.want {
			t.Errorf("StaffLanguage(%q, %q) = %q, want %q", tt.chosen, tt.accept, got, tt.want)
		}
	}
}
