package banks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/pisclient"
)

// BenchmarkSearch folds a query and matches it against 3,000 banks of one
// country.
func BenchmarkSearch(b *testing.B) {
	var list []pisclient.Institution
	for i := range 3000 {
		list = append(list, pisclient.Institution{ID: fmt.Sprint(i), Name: fmt.Sprintf("Crédit Régional Numéro %d", i), CountryCode: "FR", BIC: fmt.Sprintf("CRED%04dXXX", i)})
	}
	l := banks.NewList(list, false, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		if len(l.Matches("FR", "crédit régional 299")) == 0 {
			b.Fatal("no match")
		}
	}
}
