package i18n

// staffPlurals are the console's counted sentences (plural.go's counted
// names them) in each language, by CLDR plural category; the last form is
// "other".
var staffPlurals = map[string]map[string][]string{
	"ga": consolePluralsGA,
	"mt": consolePluralsMT,
	"is": consolePluralsIS,
	"bg": consolePluralsBG,
	"ro": consolePluralsRO,
	"hu": consolePluralsHU,
	"nb": consolePluralsNB,
	"da": consolePluralsDA,
	"sv": consolePluralsSV,
	"hr": consolePluralsHR,
	"sl": consolePluralsSL,
	"cs": consolePluralsCS,
	"sk": consolePluralsSK,
	"lt": consolePluralsLT,
	"lv": consolePluralsLV,
	"et": consolePluralsET,
	"fi": consolePluralsFI,
	"pt": consolePluralsPT,
	"nl": consolePluralsNL,
	"it": consolePluralsIT,
	"es": consolePluralsES,
	"fr": consolePluralsFR,
	"el": consolePluralsEL,
	"pl": consolePluralsPL,
	"de": consolePluralsDE,
	"en": {
		"console.duration.days": {
			"one", "%d day",
			"other", "%d days",
		},
		"console.health.note": {
			"one", "Payments made %s at each bank, by how they ended, over every shop of this deployment: no shop's orders are named. A bank is degraded when at least %d payment finished in the last hour and fewer than %s of them were paid. Read %s.",
			"other", "Payments made %s at each bank, by how they ended, over every shop of this deployment: no shop's orders are named. A bank is degraded when at least %d payments finished in the last hour and fewer than %s of them were paid. Read %s.",
		},
		"console.health.more": {
			"one", "The %d busiest bank and every degraded one are shown; GET /api/v1/banks/health gives them all.",
			"other", "The %d busiest banks and every degraded one are shown; GET /api/v1/banks/health gives them all.",
		},
	},
}
