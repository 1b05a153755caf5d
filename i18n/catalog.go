package i18n

// catalog holds every string a shopper sees, by language and key. English is
// the reference: a test fails when any other language lacks one of its keys
// or changes its placeholders.
var catalog = map[string]map[string]string{
	"en": en, "de": de, "fr": fr, "es": es, "it": it, "nl": nl, "pt": pt, "fi": fi,
	"et": et, "lv": lv, "lt": lt, "sk": sk, "sl": sl, "el": el, "hr": hr, "mt": mt, "pl": pl,
	"cs": cs, "sv": sv, "da": da, "nb": nb, "hu": hu, "ro": ro,
	"bg": bg, "ga": ga, "is": is,
}
