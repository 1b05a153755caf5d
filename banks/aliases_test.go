package banks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

// sandboxList is the sandbox catalogue's banks, test banks included.
func sandboxList(t *testing.T) *List {
	t.Helper()
	provider := sandbox.New(sandbox.Config{})
	client, err := pisclient.New("http://sandbox.invalid", sandbox.DefaultAPIKey, pisclient.WithHTTPClient(&http.Client{Transport: provider}))
	if err != nil {
		t.Fatal(err)
	}
	institutions, err := client.Institutions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return NewList(institutions, true, time.Now())
}

// Every other name in the table belongs to a bank the sandbox lists under
// exactly that name, so no entry is dead or misspelt (a key not folded, a
// country prefix on a bank of another country).
func TestEveryOtherNameNamesACatalogueBank(t *testing.T) {
	l := sandboxList(t)
	named := map[string]bool{}
	for _, country := range l.Countries() {
		for _, b := range l.Matches(country, "") {
			named[b.folded] = true
			named[Fold(country)+" "+b.folded] = true
		}
	}
	for key, names := range knownAs {
		if !named[key] {
			t.Errorf("knownAs[%q]: no bank of the catalogue is named so", key)
		}
		if len(names) == 0 {
			t.Errorf("knownAs[%q] lists no names", key)
		}
	}
}

func TestSearchFindsBanksByTheirOtherNames(t *testing.T) {
	l := sandboxList(t)
	for _, tt := range []struct{ country, query, want string }{
		{"FR", "boursorama", "boursobank"},
		{"FR", "Boursorama Banque", "boursobank"},
		{"DE", "HVB", "hypovereinsbank"},
		{"DE", "unicredit bank", "hypovereinsbank"},
		{"EE", "hansapank", "swedbank"},
		{"FI", "sampo", "danske-bank-fi"},
		{"HR", "splitska", "otp-hr"},
		{"GR", "πειραιως", "piraeus"},
	} {
		var ids []string
		for _, b := range l.Matches(tt.country, tt.query) {
			ids = append(ids, b.ID)
		}
		if len(ids) != 1 || ids[0] != tt.want {
			t.Errorf("%s %q found %v, want [%s]", tt.country, tt.query, ids, tt.want)
		}
	}
	// A name known in one country only is not lent to a namesake elsewhere:
	// OTP banka of Slovenia was SKB banka, OTP banka of Croatia was not.
	for _, b := range l.Matches("HR", "skb") {
		t.Errorf("SKB banka found in Croatia: %s", b.Name)
	}
	b, _ := l.Bank("FR", "boursobank")
	if got := strings.Join(b.KnownAs, ", "); got != "Boursorama, Boursorama Banque" {
		t.Errorf("BoursoBank known as %q", got)
	}
}
