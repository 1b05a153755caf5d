package i18n

import (
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	msgcatalog "golang.org/x/text/message/catalog"
)

// counted names the sentences that count something, and which argument
// (from 1) is the count: their words follow the number in many languages.
var counted = map[string]int{
	"status.refresh":  1, // seconds
	"invalid.tooLong": 2, // characters
	// The console's (issue 36).
	"console.health.note":   2, // payments
	"console.health.more":   1, // banks
	"console.duration.days": 1, // days
}

// plurals gives, per language, the forms of the counted sentences by CLDR
// plural category ("one", "few", "many", "other"…), chosen by x/text's plural
// rules. A language whose sentence does not change with the number (or whose
// numbers here always take one form) keeps its catalog entry alone.
var plurals = map[string]map[string][]string{
	"en": {
		"status.refresh": {
			"one", "This page checks again in %d second.",
			"other", "This page checks again in %d seconds.",
		},
	},
	"pl": {
		"status.refresh": {
			"one", "Ta strona sprawdzi ponownie za %d sekundę.",
			"few", "Ta strona sprawdzi ponownie za %d sekundy.",
			"many", "Ta strona sprawdzi ponownie za %d sekund.",
			"other", "Ta strona sprawdzi ponownie za %d sekundy.",
		},
		"invalid.tooLong": {
			"one", "%s jest za długie: użyj najwyżej %d znaku.",
			"other", "%s jest za długie: użyj najwyżej %d znaków.",
		},
	},
	"cs": {
		"status.refresh": {
			"one", "Tato stránka znovu ověří za %d sekundu.",
			"few", "Tato stránka znovu ověří za %d sekundy.",
			"many", "Tato stránka znovu ověří za %d sekundy.",
			"other", "Tato stránka znovu ověří za %d sekund.",
		},
		"invalid.tooLong": {
			"one", "%s je příliš dlouhé: použijte nejvýše %d znak.",
			"few", "%s je příliš dlouhé: použijte nejvýše %d znaky.",
			"other", "%s je příliš dlouhé: použijte nejvýše %d znaků.",
		},
	},
	"sk": {
		"status.refresh": {
			"one", "Stránka znova overí o %d sekundu.",
			"few", "Stránka znova overí o %d sekundy.",
			"many", "Stránka znova overí o %d sekundy.",
			"other", "Stránka znova overí o %d sekúnd.",
		},
		"invalid.tooLong": {
			"one", "%s je príliš dlhé: najviac %d znak.",
			"few", "%s je príliš dlhé: najviac %d znaky.",
			"other", "%s je príliš dlhé: najviac %d znakov.",
		},
	},
	"sl": {
		"status.refresh": {
			"one", "Stran bo znova preverila čez %d sekundo.",
			"two", "Stran bo znova preverila čez %d sekundi.",
			"few", "Stran bo znova preverila čez %d sekunde.",
			"other", "Stran bo znova preverila čez %d sekund.",
		},
		"invalid.tooLong": {
			"one", "%s je predolgo: največ %d znak.",
			"two", "%s je predolgo: največ %d znaka.",
			"few", "%s je predolgo: največ %d znaki.",
			"other", "%s je predolgo: največ %d znakov.",
		},
	},
	"lt": {
		"status.refresh": {
			"one", "Puslapis vėl patikrins po %d sekundės.",
			"few", "Puslapis vėl patikrins po %d sekundžių.",
			"many", "Puslapis vėl patikrins po %d sekundės.",
			"other", "Puslapis vėl patikrins po %d sekundžių.",
		},
		"invalid.tooLong": {
			"one", "%s per ilgas: ne daugiau kaip %d simbolis.",
			"few", "%s per ilgas: ne daugiau kaip %d simboliai.",
			"other", "%s per ilgas: ne daugiau kaip %d simbolių.",
		},
	},
	"lv": {
		"status.refresh": {
			"zero", "Lapa atkal pārbaudīs pēc %d sekundēm.",
			"one", "Lapa atkal pārbaudīs pēc %d sekundes.",
			"other", "Lapa atkal pārbaudīs pēc %d sekundēm.",
		},
		"invalid.tooLong": {
			"zero", "%s ir par garu: ne vairāk kā %d rakstzīmju.",
			"one", "%s ir par garu: ne vairāk kā %d rakstzīme.",
			"other", "%s ir par garu: ne vairāk kā %d rakstzīmes.",
		},
	},
	"hr": {
		"status.refresh": {
			"one", "Stranica ponovno provjerava za %d sekundu.",
			"few", "Stranica ponovno provjerava za %d sekunde.",
			"other", "Stranica ponovno provjerava za %d sekundi.",
		},
		"invalid.tooLong": {
			"one", "%s je predugo: najviše %d znak.",
			"few", "%s je predugo: najviše %d znaka.",
			"other", "%s je predugo: najviše %d znakova.",
		},
	},
	"ro": {
		"status.refresh": {
			"one", "Pagina verifică din nou peste %d secundă.",
			"few", "Pagina verifică din nou peste %d secunde.",
			"other", "Pagina verifică din nou peste %d de secunde.",
		},
		"invalid.tooLong": {
			"one", "%s este prea lung: folosiți cel mult %d caracter.",
			"few", "%s este prea lung: folosiți cel mult %d caractere.",
			"other", "%s este prea lung: folosiți cel mult %d de caractere.",
		},
	},
	"ga": {
		"status.refresh": {
			"one", "Seiceálfaidh an leathanach seo arís i gceann %d soicind.",
			"two", "Seiceálfaidh an leathanach seo arís i gceann %d shoicind.",
			"few", "Seiceálfaidh an leathanach seo arís i gceann %d shoicind.",
			"many", "Seiceálfaidh an leathanach seo arís i gceann %d soicind.",
			"other", "Seiceálfaidh an leathanach seo arís i gceann %d soicind.",
		},
		"invalid.tooLong": {
			"one", "Tá %s rófhada: úsáid %d charachtar ar a mhéad.",
			"two", "Tá %s rófhada: úsáid %d charachtar ar a mhéad.",
			"few", "Tá %s rófhada: úsáid %d charachtar ar a mhéad.",
			"many", "Tá %s rófhada: úsáid %d gcarachtar ar a mhéad.",
			"other", "Tá %s rófhada: úsáid %d carachtar ar a mhéad.",
		},
	},
	"mt": {
		"status.refresh": {
			"one", "Din il-paġna terġa' tiċċekkja f'%d sekonda.",
			"few", "Din il-paġna terġa' tiċċekkja f'%d sekondi.",
			"many", "Din il-paġna terġa' tiċċekkja f'%d sekonda.",
			"other", "Din il-paġna terġa' tiċċekkja f'%d sekonda.",
		},
	},
	"bg": {
		"status.refresh": {
			"one", "Страницата ще провери отново след %d секунда.",
			"other", "Страницата ще провери отново след %d секунди.",
		},
	},
	"is": {
		"status.refresh": {
			"one", "Síðan athugar aftur eftir %d sekúndu.",
			"other", "Síðan athugar aftur eftir %d sekúndur.",
		},
		"invalid.tooLong": {
			"one", "%s er of langt: notaðu í mesta lagi %d staf.",
			"other", "%s er of langt: notaðu í mesta lagi %d stafi.",
		},
	},
}

// pluralCatalog holds the plural forms for x/text's message printers.
var pluralCatalog = func() msgcatalog.Catalog {
	b := msgcatalog.NewBuilder()
	for lang, keys := range allPlurals() {
		tag := language.MustParse(lang)
		for key, forms := range keys {
			cases := make([]any, len(forms))
			for i, f := range forms {
				cases[i] = f
			}
			if err := b.Set(tag, key, plural.Selectf(counted[key], "%d", cases...)); err != nil {
				panic("i18n: plural forms of " + lang + " " + key + ": " + err.Error())
			}
		}
	}
	return b
}()

// pluralPrinter prints the counted sentences of lang; nil when it has none.
func pluralPrinter(lang string) *message.Printer {
	if _, ok := allPlurals()[lang]; !ok {
		return nil
	}
	return message.NewPrinter(language.MustParse(lang), message.Catalog(pluralCatalog))
}

// allPlurals are the counted sentences of the shopper's pages and of the
// console together, by language.
func allPlurals() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, set := range []map[string]map[string][]string{plurals, staffPlurals} {
		for lang, keys := range set {
			if out[lang] == nil {
				out[lang] = map[string][]string{}
			}
			for key, forms := range keys {
				out[lang][key] = forms
			}
		}
	}
	return out
}

// counts says whether key is a counted sentence in lang.
func counts(lang, key string) bool {
	if _, ok := plurals[lang][key]; ok {
		return true
	}
	_, ok := staffPlurals[lang][key]
	return ok
}
