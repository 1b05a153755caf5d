package order

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/paybybank/checkout/keyring"
)

// TokenTTL is how long a sealed order lives: long enough for the bank step
// (the provider cancels after 30 minutes) and a look at the result.
const TokenTTL = 2 * time.Hour

// ErrTokenInvalid means a token was not sealed by this app (or by a key it
// no longer has); ErrTokenExpired that it is past its life.
var (
	ErrTokenInvalid = errors.New("the checkout address is not valid")
	ErrTokenExpired = errors.New("the checkout address has expired")
)

// Sealer turns an order into the opaque, tamper-proof token of /c/{token}
// (AES-256-GCM) and back. The first key seals; every key opens, so keys
// rotate without breaking checkouts under way. Instances that share the keys
// open each other's tokens.
type Sealer struct {
	ring *keyring.Ring

	// opened remembers tokens opened lately: a shopper's every step opens
	// the same one, and opening costs a decryption and a JSON decode.
	mu     sync.Mutex
	opened map[string]Order
}

// maxOpened bounds the tokens remembered.
const maxOpened = 4096

// NewSealer derives one sealing key from each secret.
func NewSealer(secrets ...[]byte) (*Sealer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("order: no token keys")
	}
	ring, err := keyring.New("paybybank order token", "", secrets...)
	if err != nil {
		return nil, err
	}
	return &Sealer{ring: ring}, nil
}

// Seal returns the token of o, valid for TokenTTL from now.
func (s *Sealer) Seal(o Order, now time.Time) (string, error) {
	return s.SealFor(o, now, TokenTTL)
}

// SealFor is Seal for a token that lives ttl: the short-lived address that
// opens a checkout on the shopper's phone.
func (s *Sealer) SealFor(o Order, now time.Time, ttl time.Duration) (string, error) {
	o.Expires = now.Add(ttl).Unix()
	plain, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.ring.Seal(plain, nil)), nil
}

// Open returns the order sealed in token.
func (s *Sealer) Open(token string, now time.Time) (Order, error) {
	s.mu.Lock()
	o, ok := s.opened[token]
	s.mu.Unlock()
	if ok {
		if now.Unix() > o.Expires {
			return Order{}, ErrTokenExpired
		}
		return o, nil
	}
	o, err := s.open(token, now)
	if err == nil {
		s.mu.Lock()
		if s.opened == nil || len(s.opened) >= maxOpened {
			s.opened = make(map[string]Order, maxOpened)
		}
		s.opened[token] = o
		s.mu.Unlock()
	}
	return o, err
}

func (s *Sealer) open(token string, now time.Time) (Order, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Order{}, ErrTokenInvalid
	}
	plain, err := s.ring.Open(raw, nil)
	if err != nil {
		return Order{}, ErrTokenInvalid
	}
	var o Order
	if err := json.Unmarshal(plain, &o); err != nil {
		return Order{}, ErrTokenInvalid
	}
	if now.Unix() > o.Expires {
		return Order{}, ErrTokenExpired
	}
	return o, nil
}
