package sandbox

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed catalogue.txt
var catalogueText string

// fieldSets are the extraFields lists the catalogue refers to by letter.
// "-" sends no extraFields key at all; "0" sends an empty list.
var fieldSets = map[string][]string{
	"0": {},
	"I": {"iban"},
	"N": {"name", "iban"},
	"P": {"psuId"},
	"C": {"psuId", "psuCorporateId"},
	"B": {"bic", "iban"},
	"A": {"name", "iban", "country", "city", "postCode", "addressLines"},
	"K": {"psuId", "iban"},
}

// bank is one catalogue entry: one bank in one country.
type bank struct {
	ID          string
	Name        string
	Country     string
	BIC         string
	ExtraFields []string // nil: the key is absent
	Logo        bool
	LogoKey     string // "logo_link" or "logoUrl": the provider uses both
	IsForTest   bool
}

// catalogue holds the embedded banks in file order, one entry per country.
var catalogue = mustParseCatalogue(catalogueText)

func mustParseCatalogue(text string) []bank {
	banks, err := parseCatalogue(text)
	if err != nil {
		panic(err)
	}
	return banks
}

func parseCatalogue(text string) ([]bank, error) {
	var banks []bank
	for n, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(line, "|")
		if len(col) != 6 {
			return nil, fmt.Errorf("catalogue line %d: want 6 columns, have %d", n+1, len(col))
		}
		var fields []string
		if col[4] != "-" {
			set, ok := fieldSets[col[4]]
			if !ok {
				return nil, fmt.Errorf("catalogue line %d: unknown field set %q", n+1, col[4])
			}
			fields = set
		}
		logoKey := "logo_link"
		if n%2 == 1 {
			logoKey = "logoUrl"
		}
		for _, cc := range strings.Split(col[0], ",") {
			banks = append(banks, bank{
				ID: col[1], Name: col[2], Country: cc, BIC: col[3],
				ExtraFields: fields,
				Logo:        !strings.Contains(col[5], "L"),
				LogoKey:     logoKey,
				IsForTest:   strings.Contains(col[5], "T"),
			})
		}
	}
	return banks, nil
}
