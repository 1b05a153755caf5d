package settings_test

import (
	"errors"
	"testing"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
)

// TestAWebhookAtAnAddressThatIsNotPublicIsNeverSavedOutsideSandboxMode:
// whoever calls SetWebhook, an IP address no delivery may reach is refused
// on webhook_url outside sandbox mode; a name (looked up at each delivery)
// and a public address are saved, and sandbox mode keeps taking the
// merchant's server on this machine.
func TestAWebhookAtAnAddressThatIsNotPublicIsNeverSavedOutsideSandboxMode(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := instance(t, l, key1)
	s.Sandbox = false
	by := settings.Actor{Name: "root@psp.example"}
	if _, err := s.CreateMerchant(ctx, by, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://100.64.0.1/hooks", "https://198.18.0.1/hooks", "https://0.0.0.0/hooks", "https://192.0.0.8/hooks",
		"https://[64:ff9b::a00:1]/hooks", "https://[::ffff:10.0.0.1]/hooks", "https://[fe80::1%25eth0]/hooks", "http://127.0.0.1:8080/hooks", "http://[::1]/hooks"} {
		_, err := s.SetWebhook(ctx, by, "shop3", u)
		var fe *merchant.FieldError
		if !errors.As(err, &fe) || fe.Field != "webhook_url" || fe.Key == "" {
			t.Errorf("%s: err = %v, want a refusal of webhook_url the console can say", u, err)
		}
		if m, _ := s.Dir.Get("shop3"); m.WebhookURL != "" {
			t.Fatalf("%s: saved", u)
		}
	}
	for _, u := range []string{"https://hooks.shop3.example/pay", "https://8.8.8.8/hooks", "https://[2606:4700::1111]/hooks"} {
		if _, err := s.SetWebhook(ctx, by, "shop3", u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}

	sandbox := instance(t, ledgertest.Open(t, ledgertest.SQLiteURL(t)), key1)
	if _, err := sandbox.CreateMerchant(ctx, by, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.SetWebhook(ctx, by, "shop3", "http://127.0.0.1:8080/hooks"); err != nil {
		t.Errorf("a loopback endpoint in sandbox mode: %v", err)
	}
}
