package keyring_test

import (
	"errors"
	"testing"

	"github.com/paybybank/checkout/keyring"
)

func TestANewestKeySealsAndEveryKeyOpensWhatItSealed(t *testing.T) {
	old, err := keyring.New("test sealing", "test key id ", []byte("the-old-secret-of-32-characters-or-more"))
	if err != nil {
		t.Fatal(err)
	}
	rotated, _ := keyring.New("test sealing", "test key id ", []byte("the-new-secret-of-32-characters-or-more"), []byte("the-old-secret-of-32-characters-or-more"))
	sealed := old.Seal([]byte("a secret"), []byte("shop1/webhook_secret"))
	if plain, err := rotated.Open(sealed, []byte("shop1/webhook_secret")); err != nil || string(plain) != "a secret" {
		t.Errorf("the older key in a rotated ring: %q, %v", plain, err)
	}
	if plain, err := rotated.OpenWith(old.NewestID(), sealed, []byte("shop1/webhook_secret")); err != nil || string(plain) != "a secret" {
		t.Errorf("opened by the old key's id: %q, %v", plain, err)
	}
	// Bound to its place, and nothing opens without its key.
	if _, err := rotated.Open(sealed, []byte("shop2/webhook_secret")); !errors.Is(err, keyring.ErrDoesNotOpen) {
		t.Errorf("a value moved to another place opened: %v", err)
	}
	newOnly, _ := keyring.New("test sealing", "test key id ", []byte("the-new-secret-of-32-characters-or-more"))
	if _, err := newOnly.OpenWith(old.NewestID(), sealed, []byte("shop1/webhook_secret")); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Errorf("a key gone from the ring: %v", err)
	}
	other, _ := keyring.New("another purpose", "test key id ", []byte("the-old-secret-of-32-characters-or-more"))
	if _, err := other.Open(sealed, []byte("shop1/webhook_secret")); err == nil {
		t.Error("a key of another purpose, from the same secret, opened the value")
	}
	if _, err := rotated.Open(sealed[:5], nil); !errors.Is(err, keyring.ErrDoesNotOpen) {
		t.Errorf("a cut value: %v", err)
	}
}
