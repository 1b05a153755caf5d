package settings

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paybybank/checkout/keyring"
)

// MinKeyLength is the shortest SETTINGS_KEYS key accepted.
const MinKeyLength = 32

// Keys seal the secrets the app needs in the clear (link keys, webhook
// secrets, provider keys) before they reach the ledger: AES-256-GCM under
// a key derived from each SETTINGS_KEYS entry, newest first. A sealed value
// names its key, so older keys still open what they sealed until it is
// sealed again under the newest.
type Keys struct {
	ring *keyring.Ring
}

// sealPrefix starts every sealed value: "sealed:<key id>:<nonce+ciphertext>".
const sealPrefix = "sealed:"

// ParseKeys reads SETTINGS_KEYS: keys of 32 characters or more, separated
// by commas, newest first.
func ParseKeys(v string) (*Keys, error) {
	var secrets [][]byte
	for i, secret := range strings.Split(v, ",") {
		secret = strings.TrimSpace(secret)
		if len(secret) < MinKeyLength {
			return nil, fmt.Errorf("SETTINGS_KEYS: key %d is shorter than %d characters", i+1, MinKeyLength)
		}
		secrets = append(secrets, []byte(secret))
	}
	// A sealed value names its key by an id, a hash of the derived key:
	// it tells nothing of the key.
	ring, err := keyring.New("paybybank settings sealing", "paybybank settings key id ", secrets...)
	if err != nil {
		return nil, err
	}
	return &Keys{ring: ring}, nil
}

// KeyFile is where sandbox mode keeps its sealing key when SETTINGS_KEYS is
// not set, beside the SQLite ledger.
const KeyFile = "settings.key"

// SandboxKeys reads the key file in dir, or makes one (mode 0600) the first
// time. made reports a new file.
func SandboxKeys(dir string) (keys *Keys, path string, made bool, err error) {
	path = filepath.Join(dir, KeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		// Written whole under another name first, then linked into place:
		// two instances starting at once on one folder read one key.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, path, false, err
		}
		tmp, err := os.CreateTemp(dir, KeyFile+".new-*")
		if err != nil {
			return nil, path, false, err
		}
		defer os.Remove(tmp.Name())
		secret := rand.Text() + rand.Text()
		if _, err := tmp.WriteString(secret + "\n"); err != nil {
			tmp.Close()
			return nil, path, false, err
		}
		if err := tmp.Close(); err != nil {
			return nil, path, false, err
		}
		switch err := os.Link(tmp.Name(), path); {
		case err == nil:
			raw, made = []byte(secret), true
		case errors.Is(err, os.ErrExist):
			if raw, err = os.ReadFile(path); err != nil {
				return nil, path, false, err
			}
		default:
			return nil, path, false, err
		}
	} else if err != nil {
		return nil, path, false, err
	}
	keys, err = ParseKeys(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, path, false, fmt.Errorf("%s: %w", path, err)
	}
	return keys, path, made, nil
}

// Seal seals value for one place (bound names where it belongs, such as
// "demo/link_keys/2026-11"): a sealed value copied to another place does
// not open there.
func (k *Keys) Seal(value, bound string) string {
	return sealPrefix + k.ring.NewestID() + ":" + base64.RawURLEncoding.EncodeToString(k.ring.Seal([]byte(value), []byte(bound)))
}

// ErrUnknownKey means a value was sealed under a key SETTINGS_KEYS no
// longer holds.
var ErrUnknownKey = errors.New("sealed under a key SETTINGS_KEYS does not hold")

// Open opens a sealed value of place bound.
func (k *Keys) Open(sealed, bound string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, sealPrefix)
	id, body, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", errors.New("not a sealed value")
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return "", errors.New("a sealed value is damaged")
	}
	plain, err := k.ring.OpenWith(id, raw, []byte(bound))
	switch {
	case errors.Is(err, keyring.ErrUnknownKey):
		return "", ErrUnknownKey
	case err != nil:
		return "", errors.New("a sealed value does not open: damaged, or moved from another place")
	}
	return string(plain), nil
}

// Newest reports whether sealed was sealed under the newest key.
func (k *Keys) Newest(sealed string) bool {
	return strings.HasPrefix(sealed, sealPrefix+k.ring.NewestID()+":")
}

// fingerprintPrefix starts a secret kept in the merchants file only: the
// ledger holds its SHA-256, to see whether the file changed it, and the
// instance takes the value from the file.
const fingerprintPrefix = "file-sha256:"

func fingerprint(value string) string {
	sum := sha256.Sum256([]byte(value))
	return fingerprintPrefix + hex.EncodeToString(sum[:])
}
