package ledger_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
)

func TestSettingsChangesMoveOneVersionAndKeepTheirAuditLine(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {

		l := ledgertest.Open(t, url)
		v0, err := l.SettingsVersion(ctx)
		if err != nil || v0 != 0 {
			t.Fatalf("a new ledger's settings version: %d, %v", v0, err)
		}
		put := func(m ledger.MerchantRow, by string) (int64, error) {
			var version int64
			_, err := l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
				var err error
				if version, err = tx.PutMerchant(ctx, m, by); err != nil {
					return err
				}
				return tx.Audit(ctx, ledger.AuditEntry{Actor: by, MerchantID: m.ID, Action: "settings changed", Fields: "name", RequestID: "r-" + by})
			})
			return version, err
		}
		row := ledger.MerchantRow{ID: "shop1", Name: "Shop", State: ledger.MerchantActive, Managed: ledger.ManagedByConsole, Doc: "{}"}
		if v, err := put(row, "ann"); err != nil || v != 1 {
			t.Fatalf("first save: version %d, %v", v, err)
		}
		row.Name = "Shop One"
		row.Version = 1
		if v, err := put(row, "ann"); err != nil || v != 2 {
			t.Fatalf("second save: version %d, %v", v, err)
		}
		// A save from version 1 again loses: its change and its audit line
		// are not written.
		row.Name = "Stale"
		if _, err := put(row, "bob"); !errors.Is(err, ledger.ErrSettingsConflict) {
			t.Fatalf("a save from an old version: %v, want ErrSettingsConflict", err)
		}
		snap, err := l.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Version != 2 || len(snap.Merchants) != 1 || snap.Merchants[0].Name != "Shop One" || snap.Merchants[0].UpdatedBy != "ann" {
			t.Errorf("settings after a lost save: %+v", snap)
		}
		// A change that writes nothing leaves the version alone.
		if v, err := l.ChangeSettings(ctx, func(*ledger.SettingsTx) error { return nil }); err != nil || v != 2 {
			t.Errorf("an empty change: version %d, %v", v, err)
		}
		// The audit log pages newest first, a merchant's alone when asked.
		for i := range 5 {
			l.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
				return tx.Audit(ctx, ledger.AuditEntry{Actor: "ops", MerchantID: fmt.Sprintf("shop%d", 2+i%2), Action: "settings changed"})
			})
		}
		first, _ := l.Audit(ctx, ledger.AuditQuery{Limit: 3})
		rest, _ := l.Audit(ctx, ledger.AuditQuery{Limit: 10, Before: first[2].ID})
		if len(first) != 3 || len(rest) != 4 || first[0].ID <= first[1].ID || rest[0].ID >= first[2].ID {
			t.Errorf("audit pages: %d then %d lines", len(first), len(rest))
		}
		own, _ := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop1"})
		if len(own) != 2 || own[0].RequestID != "r-ann" {
			t.Errorf("shop1's audit lines: %+v", own)
		}
	})
}
