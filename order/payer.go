package order

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// NewPayer makes a payer key: 128 random bits (rand.Text's 26 base32
// characters) naming one checkout, the browser that opened it, and nothing
// about the person.
func NewPayer() string { return rand.Text() }

// PayerDigest is what the ledger keeps of a payer key: enough to tell one
// checkout from another, and nothing that opens a checkout if read.
func PayerDigest(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("paybybank payer " + key))
	return hex.EncodeToString(sum[:16])
}
