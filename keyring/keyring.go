// Package keyring seals small values with AES-256-GCM under keys derived
// from secrets (HKDF-SHA256), newest first: the first key seals, and every
// key opens what it sealed, so secrets rotate without breaking what was
// sealed before. The order tokens of /c/{token} (SESSION_KEYS) and the
// merchants' secrets at rest (SETTINGS_KEYS) are sealed with it.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// Ring is a list of keys, newest first.
type Ring struct {
	keys []key
}

type key struct {
	// id names the key without telling anything of it.
	id   string
	aead cipher.AEAD
}

// New derives one key from each secret, for one purpose: info keeps keys
// of different purposes apart even when their secrets are the same, and
// idLabel prefixes what a key's id is a hash of.
func New(info, idLabel string, secrets ...[]byte) (*Ring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("keyring: no secrets")
	}
	r := &Ring{}
	for _, secret := range secrets {
		raw, err := hkdf.Key(sha256.New, secret, nil, info, 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(append([]byte(idLabel), raw...))
		r.keys = append(r.keys, key{id: hex.EncodeToString(sum[:4]), aead: aead})
	}
	return r, nil
}

// NewestID is the id of the key that seals.
func (r *Ring) NewestID() string { return r.keys[0].id }

// Seal seals plain under the newest key, bound to bound (the place it
// belongs: it opens nowhere else): a random nonce, then the ciphertext.
func (r *Ring) Seal(plain, bound []byte) []byte {
	aead := r.keys[0].aead
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, bound)
}

// Errors of opening.
var (
	// ErrUnknownKey means the value names a key the ring does not hold.
	ErrUnknownKey = errors.New("keyring: sealed under a key not held")
	// ErrDoesNotOpen means no key opens the value: damaged, sealed for
	// another place, or under a key not held.
	ErrDoesNotOpen = errors.New("keyring: the sealed value does not open")
)

// Open opens a value Seal made, trying every key, newest first.
func (r *Ring) Open(sealed, bound []byte) ([]byte, error) {
	for _, k := range r.keys {
		if plain, err := open(k.aead, sealed, bound); err == nil {
			return plain, nil
		}
	}
	return nil, ErrDoesNotOpen
}

// OpenWith opens a value sealed under the key named id: ErrUnknownKey when
// the ring holds none of that id.
func (r *Ring) OpenWith(id string, sealed, bound []byte) ([]byte, error) {
	for _, k := range r.keys {
		if k.id == id {
			return open(k.aead, sealed, bound)
		}
	}
	return nil, ErrUnknownKey
}

func open(aead cipher.AEAD, sealed, bound []byte) ([]byte, error) {
	n := aead.NonceSize()
	if len(sealed) < n+aead.Overhead() {
		return nil, ErrDoesNotOpen
	}
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], bound)
	if err != nil {
		return nil, ErrDoesNotOpen
	}
	return plain, nil
}
