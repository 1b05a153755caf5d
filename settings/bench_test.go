package settings

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// thousandMerchants fills a ledger with 1,000 merchants managed in the
// console, each with two link keys, a webhook, a theme and a token, as a
// large deployment would hold.
func thousandMerchants(b *testing.B, url string) *ledger.Ledger {
	b.Helper()
	l := ledgertest.Open(b, url)
	keys, err := ParseKeys("the-benchmarks-settings-key-000000000000")
	if err != nil {
		b.Fatal(err)
	}
	s := &Store{Ledger: l, Keys: keys, Dir: merchant.Empty(), Sandbox: true, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	_, err = l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		for i := range 1000 {
			id := fmt.Sprintf("shop%04d", i)
			m := &merchant.Merchant{ID: id, Name: "Shop " + id, ReturnOrigins: []string{"https://" + id + ".example"},
				FrameAncestors: []string{"https://" + id + ".example"},
				LinkKeys:       map[string]string{"2026-10": newSecret(), "2026-11": newSecret()},
				WebhookURL:     "https://" + id + ".example/hooks", WebhookSecret: newSecret(),
				Customization: &rules.Customization{Title: "Shop " + id, PrimaryColor: "#0B5FFF"}}
			row, err := s.rowOf(m, merchant.Active, merchant.ManagedByConsole)
			if err != nil {
				return err
			}
			if _, err := tx.PutMerchant(ctx, row, ByCommand); err != nil {
				return err
			}
			token := s.NewToken()
			if err := tx.AddToken(ctx, ledger.TokenRow{ID: newID("tok"), MerchantID: id, Name: "bench", Hash: HashToken(token),
				Prefix: tokenPrefix(token), Managed: merchant.ManagedByConsole}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkStartWith1000Merchants is an instance's start-up read of the
// settings: every merchant read, its secrets unsealed, the set built. It
// reports the heap the set holds (MB-held), which the issue bounds at 50 MB,
// beside the time a start takes (bounded at 2 s).
func BenchmarkStartWith1000Merchants(b *testing.B) {
	for name, newURL := range ledgertest.Backends() {
		b.Run(name, func(b *testing.B) {
			l := thousandMerchants(b, newURL(b))
			keys, _ := ParseKeys("the-benchmarks-settings-key-000000000000")
			var held uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := &Store{Ledger: l, Keys: keys, Dir: merchant.Empty(), Log: slog.New(slog.DiscardHandler)}
				if err := s.Load(context.Background()); err != nil {
					b.Fatal(err)
				}
				if len(s.Dir.All()) != 1000 {
					b.Fatalf("%d merchants loaded", len(s.Dir.All()))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				held = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(s)
			}
			b.ReportMetric(float64(held)/1e6, "MB-held")
		})
	}
}
