// Package banks keeps the provider's banks list close at hand: cached for a
// while and refreshed in the background before it ends, fetched once
// however many shoppers ask at the same moment, served from the last good
// copy (marked stale) when the provider fails or sends an implausible list,
// and searchable by name, former and short names, and BIC.
package banks

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/paybybank/checkout/pisclient"
)

// Bank is one entry of the list with what search needs.
type Bank struct {
	pisclient.Institution
	// KnownAs are the bank's other names (former names, short forms), from
	// the app's own table: the provider gives none.
	KnownAs []string
	folded  string
	// search is the folded name and other names, as search matches them.
	search string
}

// SearchText is the bank's name and other names, folded, as search
// matches them.
func (b Bank) SearchText() string { return b.search }

func newBank(in pisclient.Institution) Bank {
	b := Bank{Institution: in, folded: Fold(in.Name)}
	b.KnownAs = aliasesOf(in.CountryCode, b.folded)
	b.search = b.folded
	for _, name := range b.KnownAs {
		b.search += " " + Fold(name)
	}
	return b
}

// List is one copy of the banks list, grouped by country.
type List struct {
	byCountry map[string][]Bank
	// byID finds a bank by country and id ("FR\x00ing"): the bank page
	// looks up the popular and last-used banks on every request.
	byID      map[string]Bank
	countries []string
	// logos are the banks' logo addresses by LogoKey, with a bank's name
	// for its stand-in.
	logos map[string]Logo
	// gone are the names of banks earlier lists held and this one does
	// not, by country and id: a link or a shopper may still name them.
	gone map[string]string
	// FetchedAt is when the provider first sent this list: a later answer
	// that is the same keeps it (Cache.fetch).
	FetchedAt time.Time
	// source is what the provider sent, to tell a later answer that is
	// the same.
	source []pisclient.Institution
	// Stale is set when the provider failed and this is the last good copy.
	Stale bool
}

// NewList groups institutions by country, names in alphabetical order. Test
// banks are left out unless withTest.
func NewList(institutions []pisclient.Institution, withTest bool, fetchedAt time.Time) *List {
	l := &List{byCountry: make(map[string][]Bank), byID: make(map[string]Bank), logos: make(map[string]Logo), FetchedAt: fetchedAt,
		source: institutions}
	for _, in := range institutions {
		if in.IsForTest && !withTest {
			continue
		}
		if in.LogoURL != "" {
			l.logos[LogoKey(in.LogoURL)] = Logo{URL: in.LogoURL, Name: in.Name}
		}
		l.byCountry[in.CountryCode] = append(l.byCountry[in.CountryCode], newBank(in))
	}
	for country, list := range l.byCountry {
		slices.SortFunc(list, func(a, b Bank) int {
			return cmp.Or(strings.Compare(a.folded, b.folded), strings.Compare(a.ID, b.ID))
		})
		for _, b := range list {
			// An id listed twice in a country: the first by name stands.
			if _, seen := l.byID[country+"\x00"+b.ID]; !seen {
				l.byID[country+"\x00"+b.ID] = b
			}
		}
		l.countries = append(l.countries, country)
	}
	slices.Sort(l.countries)
	return l
}

// Countries returns the codes of the countries that have banks, sorted.
func (l *List) Countries() []string { return l.countries }

// Count is the number of banks in country.
func (l *List) Count(country string) int { return len(l.byCountry[country]) }

// Len is the number of bank entries in every country.
func (l *List) Len() int {
	n := 0
	for _, banks := range l.byCountry {
		n += len(banks)
	}
	return n
}

// HasCountry reports whether country has banks.
func (l *List) HasCountry(country string) bool { return len(l.byCountry[country]) > 0 }

// Find returns the bank id in country.
func (l *List) Find(country, id string) (pisclient.Institution, bool) {
	b, ok := l.Bank(country, id)
	return b.Institution, ok
}

// Bank returns the bank id of country with what the list keeps of it.
func (l *List) Bank(country, id string) (Bank, bool) {
	b, ok := l.byID[country+"\x00"+id]
	return b, ok
}

// Name is the name of bank id of country: from this list, or from an
// earlier one that held it while this one does not (Gone).
func (l *List) Name(country, id string) (string, bool) {
	if b, ok := l.Bank(country, id); ok {
		return b.Name, true
	}
	name, ok := l.gone[country+"\x00"+id]
	return name, ok
}

// Gone reports whether bank id of country was in an earlier list and is
// not in this one: the provider dropped it, for a while or for good.
func (l *List) Gone(country, id string) bool {
	_, ok := l.gone[country+"\x00"+id]
	return ok
}

// remember keeps the names of the banks of earlier (and of what it
// remembered) that l no longer holds.
func (l *List) remember(earlier *List) {
	if earlier == nil {
		return
	}
	l.gone = map[string]string{}
	for key, b := range earlier.byID {
		if _, ok := l.byID[key]; !ok {
			l.gone[key] = b.Name
		}
	}
	for key, name := range earlier.gone {
		if _, ok := l.byID[key]; !ok {
			l.gone[key] = name
		}
	}
}

// Logo is where a bank's logo lives at the provider.
type Logo struct {
	URL  string
	Name string // the bank's, for a stand-in when the logo fails
}

// LogoKey names a logo address in the app's own /logos/ path: the first 16
// hex digits of its SHA-256.
func LogoKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:8])
}

// Logo returns the logo named key, if a bank of the list has it.
func (l *List) Logo(key string) (Logo, bool) {
	logo, ok := l.logos[key]
	return logo, ok
}

// Matches returns the banks of country whose name, or other names, hold
// every word of query, case and accents folded ("credit agri" finds "Crédit
// Agricole", "boursorama" finds BoursoBank), or whose BIC starts with query.
// An empty query returns them all.
func (l *List) Matches(country, query string) []Bank {
	words := strings.Fields(Fold(query))
	bic := strings.ToUpper(strings.Join(strings.Fields(query), ""))
	if len(words) == 0 && bic == "" {
		return l.byCountry[country]
	}
	var found []Bank
	for _, b := range l.byCountry[country] {
		if matches(b, words, bic) {
			found = append(found, b)
		}
	}
	return found
}

func matches(b Bank, words []string, bic string) bool {
	if len(bic) >= 4 && b.BIC != "" && strings.HasPrefix(b.BIC, bic) {
		return true
	}
	for _, w := range words {
		if !strings.Contains(b.search, w) {
			return false
		}
	}
	return true
}

// Fold returns s in lower case without accents, punctuation turned to spaces,
// so that names compare as a shopper types them.
func Fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	plain, _, err := transform.String(t, s)
	if err != nil {
		plain = s
	}
	plain = cases.Fold().String(plain)
	return strings.Join(strings.FieldsFunc(plain, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
