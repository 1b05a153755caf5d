package checkout_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/a-h/templ"

	"github.com/paybybank/checkout/views/checkout"
)

func banksPage(n int) checkout.BanksPage {
	p := checkout.BanksPage{Country: "FR", CountryName: "France", Total: n, Matches: n, Action: "banks", Top: templ.NopComponent, LastUsed: templ.NopComponent}
	for i := range n {
		p.Banks = append(p.Banks, checkout.BankRow{
			ID: fmt.Sprintf("bank-%d", i), Name: fmt.Sprintf("Banque Numéro %d", i),
			LogoURL: fmt.Sprintf("/logos/%016x", i),
			URL:     templ.SafeURL(fmt.Sprintf("pay?bank=bank-%d&country=FR", i)),
			Search:  fmt.Sprintf("banque numero %d", i),
		})
	}
	return p
}

func benchmarkBanks(b *testing.B, n int) {
	page := checkout.Banks(banksPage(n))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := page.Render(ctx, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderBankList300 and 3000 render the bank list page: the
// catalogue's size today, and ten times it.
func BenchmarkRenderBankList300(b *testing.B)  { benchmarkBanks(b, 300) }
func BenchmarkRenderBankList3000(b *testing.B) { benchmarkBanks(b, 3000) }
