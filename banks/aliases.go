package banks

// knownAs holds other names shoppers use for banks: former names (a bank
// renamed, or merged into another) and common short forms. The provider's
// list gives none, so search would miss a shopper who types the name on
// their old card. A bank is found by its name as Fold gives it; a name
// used by different banks in different countries is keyed "CC name".
// Only facts that hold for the bank as listed belong here.
var knownAs = map[string][]string{
	// Germany
	"hypovereinsbank": {"HVB", "UniCredit Bank"},
	"commerzbank":     {"Dresdner Bank"},
	"postbank":        {"Deutsche Postbank"},
	"consorsbank":     {"Cortal Consors"},
	"targobank":       {"Citibank"},
	// France
	"boursobank":              {"Boursorama", "Boursorama Banque"},
	"hsbc continental europe": {"HSBC France"},
	"la banque postale":       {"La Poste"},
	// Spain
	"caixabank":     {"la Caixa", "Bankia"},
	"unicaja banco": {"Liberbank"},
	"abanca":        {"NCG Banco", "Novagalicia Banco"},
	// Italy
	"intesa sanpaolo":           {"Banca Intesa", "Sanpaolo IMI", "UBI Banca"},
	"bper banca":                {"Banca Carige"},
	"monte dei paschi di siena": {"MPS"},
	"bnl":                       {"Banca Nazionale del Lavoro"},
	"banco bpm":                 {"Banco Popolare", "Banca Popolare di Milano"},
	"credem":                    {"Credito Emiliano"},
	// Belgium and Luxembourg
	"belfius":                            {"Dexia"},
	"beobank":                            {"Citibank Belgium"},
	"crelan":                             {"AXA Bank"},
	"spuerkeess":                         {"BCEE", "Banque et Caisse d'Épargne de l'État"},
	"banque internationale a luxembourg": {"BIL", "Dexia BIL"},
	"quintet private bank":               {"KBL European Private Bankers"},
	// Austria
	"bawag":        {"BAWAG P.S.K.", "PSK"},
	"bank austria": {"UniCredit Bank Austria", "Creditanstalt"},
	// Portugal
	"caixa geral de depositos": {"CGD"},
	"millennium bcp":           {"BCP", "Banco Comercial Português"},
	"novobanco":                {"BES", "Banco Espírito Santo"},
	"eurobic":                  {"Banco BIC"},
	"banco montepio":           {"Montepio Geral"},
	// Finland
	"op financial group": {"OP", "Osuuspankki"},
	"fi danske bank":     {"Sampo Pankki", "Sampo Bank"},
	"handelsbanken":      {"Svenska Handelsbanken"},
	"saastopankki":       {"Sparbanken"},
	// Ireland
	"aib":             {"Allied Irish Banks"},
	"bank of ireland": {"BOI"},
	"ptsb":            {"Permanent TSB", "Irish Permanent"},
	// Greece and Cyprus
	"εθνικη τραπεζα national bank of greece": {"NBG"},
	"eurobank":       {"Eurobank Ergasias"},
	"piraeus bank":   {"Τράπεζα Πειραιώς"},
	"bank of cyprus": {"BOC"},
	// Slovenia, Croatia, Slovakia
	"nlb":                      {"Nova Ljubljanska banka"},
	"nova kbm":                 {"Nova Kreditna banka Maribor"},
	"si otp banka":             {"SKB banka"},
	"hr otp banka":             {"Splitska banka"},
	"zagrebacka banka":         {"Zaba"},
	"privredna banka zagreb":   {"PBZ"},
	"hrvatska postanska banka": {"HPB"},
	"slovenska sporitelna":     {"SLSP"},
	"vub banka":                {"Všeobecná úverová banka"},
	"prima banka":              {"Sberbank Slovensko"},
	// Baltics
	"swedbank":  {"Hansabank", "Hansapank"},
	"luminor":   {"DNB", "Nordea"},
	"coop pank": {"Eesti Krediidipank"},
	// Malta
	"bank of valletta": {"BOV"},
}

// aliasesOf returns the other names of a bank named folded in country.
func aliasesOf(country, folded string) []string {
	if names, ok := knownAs[Fold(country)+" "+folded]; ok {
		return names
	}
	return knownAs[folded]
}
