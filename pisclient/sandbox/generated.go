package sandbox

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Countries of many banks: real aggregators list up to ~2,000 institutions in
// one country (every Sparkasse and Volksbank of Germany). The CountryBanks
// knob tops a country's catalogue up with generated banks to that count.

// generatedPrefix marks the institution ids of generated banks.
const generatedPrefix = "gen-"

// Word parts of generated bank and town names: 8 kinds of bank in 40×30
// towns make 9,600 distinct names per country.
var (
	bankKinds  = []string{"Sparkasse", "Volksbank", "Raiffeisenbank", "Kreissparkasse", "Stadtsparkasse", "VR Bank", "Bürgerbank", "Genossenschaftsbank"}
	townStarts = []string{"Alt", "Bad ", "Berg", "Birk", "Blau", "Brei", "Dorn", "Eich", "Elm", "Fal", "Fried", "Gold", "Grün", "Hag", "Hohen", "Kirch", "Königs", "Lang", "Lin", "Mar", "Mühl", "Neu", "Nieder", "Ober", "Ost", "Rosen", "Sankt ", "Schön", "Stein", "Sulz", "Tann", "Unter", "Wald", "Weiß", "West", "Wies", "Wolf", "Zell", "Öster", "Über"}
	townEnds   = []string{"au", "bach", "berg", "brück", "burg", "dorf", "feld", "furt", "hagen", "hausen", "heim", "hof", "hofen", "holz", "kirchen", "lingen", "mark", "münde", "ried", "rode", "see", "stadt", "stein", "tal", "wald", "walde", "weiler", "werder", "wick", "zell"}
)

// maxGenerated is the most banks one country can be given.
const maxGenerated = 9600

// generatedCache keeps each country's generated banks: they are the same on
// every call.
var generatedCache sync.Map // "CC/n" → []bank

// generated returns n generated banks of country: every fifth without a logo,
// most asking for the IBAN, some for a login.
func generated(country string, n int) []bank {
	n = min(n, maxGenerated)
	key := country + "/" + strconv.Itoa(n)
	if v, ok := generatedCache.Load(key); ok {
		return v.([]bank)
	}
	towns := len(townStarts) * len(townEnds)
	out := make([]bank, 0, n)
	for i := range n {
		// A fixed walk through the towns (7 is prime to 1,200), so that
		// neighbours in the list are not neighbours in name.
		t := (i / len(bankKinds) * 7) % towns
		town := townStarts[t/len(townEnds)] + townEnds[t%len(townEnds)]
		b := bank{
			ID:          fmt.Sprintf("%s%s-%04d", generatedPrefix, strings.ToLower(country), i+1),
			Name:        bankKinds[i%len(bankKinds)] + " " + town,
			Country:     country,
			ExtraFields: fieldSets["I"],
			Logo:        i%5 != 4,
			LogoKey:     "logo_link",
		}
		if i%7 == 3 {
			b.ExtraFields = fieldSets["K"]
		}
		out = append(out, b)
	}
	generatedCache.Store(key, out)
	return out
}

// banksFor is the catalogue as the knobs make it: every country of the
// embedded catalogue, each topped up to its CountryBanks count of real banks
// ("*" for all countries the catalogue has); test banks come on top.
func banksFor(k Knobs) []bank {
	if len(k.CountryBanks) == 0 {
		return catalogue
	}
	out := slices.Clone(catalogue)
	have := map[string]int{} // banks a shopper can pick: test banks come on top
	for _, b := range catalogue {
		if !b.IsForTest {
			have[b.Country]++
		}
	}
	want := map[string]int{}
	if n, ok := k.CountryBanks["*"]; ok {
		for cc := range have {
			want[cc] = n
		}
	}
	for cc, n := range k.CountryBanks {
		if cc != "*" {
			want[cc] = n
		}
	}
	countries := make([]string, 0, len(want))
	for cc := range want {
		countries = append(countries, cc)
	}
	slices.Sort(countries)
	for _, cc := range countries {
		if extra := want[cc] - have[cc]; extra > 0 {
			out = append(out, generated(cc, extra)...)
		}
	}
	return out
}

// parseCountryBanks reads SANDBOX_COUNTRY_BANKS: "DE:2000" or "*:150,DE:2000".
func parseCountryBanks(v string) (map[string]int, error) {
	out := map[string]int{}
	for part := range strings.SplitSeq(v, ",") {
		cc, count, ok := strings.Cut(strings.TrimSpace(part), ":")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || n < 0 || n > maxGenerated || !(cc == "*" || len(cc) == 2 && strings.ToUpper(cc) == cc) {
			return nil, fmt.Errorf("%q is not a country code (or *) and a count up to %d, like DE:2000", part, maxGenerated)
		}
		out[cc] = n
	}
	return out, nil
}
