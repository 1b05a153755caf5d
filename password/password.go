// Package password hashes and checks the console's passwords: argon2id,
// written as a PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash) so that the
// merchants file holds the parameters with each hash and they can be raised
// later without invalidating what is there. It also refuses the 100,000 most
// used passwords (IsCommon) and bounds how many hashes run at once (Gate).
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// MinLength is the shortest password accepted, in characters.
const MinLength = 12

// maxLength bounds what is hashed: a sign-in form must not make the server
// hash megabytes.
const maxLength = 1024

// Params are argon2id's costs.
type Params struct {
	// Memory in KiB.
	Memory  uint32
	Time    uint32
	Threads uint8
}

// Default are the costs of new hashes: OWASP's first argon2id
// configuration (19 MiB, 2 passes, 1 lane), about 30 ms on one core.
var Default = Params{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLength = 16
	keyLength  = 32
)

// Hash is a password's PHC string with p's costs and a random salt.
func Hash(pw string, p Params) (string, error) {
	if err := CheckNew(pw); err != nil {
		return "", err
	}
	salt := make([]byte, saltLength)
	rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLength)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Refusal says why a password may not be chosen: in English, and by Key
// and Args for the console to say it in its person's language
// ("console.reason." + Key).
type Refusal struct {
	Key     string
	Args    []any
	english string
}

func (r *Refusal) Error() string { return r.english }

func refuse(key string, args []any, format string, fargs ...any) *Refusal {
	return &Refusal{Key: key, Args: args, english: fmt.Sprintf(format, fargs...)}
}

// CheckNew says why pw may not become a password, as a *Refusal, or nil.
func CheckNew(pw string) error {
	switch n := utf8.RuneCountInString(pw); {
	case n < MinLength:
		return refuse("passwordShort", []any{MinLength, n}, "a password needs at least %d characters; this one has %d", MinLength, n)
	case len(pw) > maxLength:
		return refuse("passwordLong", []any{maxLength}, "a password has at most %d bytes", maxLength)
	case IsCommon(pw):
		return refuse("passwordCommon", nil, "this password is one of the 100,000 most used, the first ones tried by anyone guessing: choose another")
	}
	return nil
}

// Hashed is a parsed PHC string.
type Hashed struct {
	Params
	salt, key []byte
}

// Parse reads a PHC string as Hash writes it; anything else (another
// algorithm, version or form, costs out of range) is an error that says what.
func Parse(phc string) (Hashed, error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[0] != "" {
		return Hashed{}, errors.New("not a PHC string like $argon2id$v=19$m=19456,t=2,p=1$salt$hash (make one with `console-password`)")
	}
	if parts[1] != "argon2id" {
		return Hashed{}, fmt.Errorf("the algorithm is %q; only argon2id is accepted", parts[1])
	}
	if parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return Hashed{}, fmt.Errorf("the version is %q; only v=%d is accepted", parts[2], argon2.Version)
	}
	var h Hashed
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.Memory, &h.Time, &threads); err != nil ||
		fmt.Sprintf("m=%d,t=%d,p=%d", h.Memory, h.Time, threads) != parts[3] {
		return Hashed{}, fmt.Errorf("the costs %q are not m=…,t=…,p=…", parts[3])
	}
	switch {
	case h.Memory < 8 || h.Memory > 4<<20:
		return Hashed{}, fmt.Errorf("the memory cost m=%d is outside 8 to %d KiB", h.Memory, 4<<20)
	case h.Time < 1 || h.Time > 100:
		return Hashed{}, fmt.Errorf("the time cost t=%d is outside 1 to 100", h.Time)
	case threads < 1 || threads > 255:
		return Hashed{}, fmt.Errorf("the parallelism p=%d is outside 1 to 255", threads)
	}
	h.Threads = uint8(threads)
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 {
		return Hashed{}, errors.New("the salt is not unpadded base64 of at least 8 bytes")
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.key) < 16 {
		return Hashed{}, errors.New("the hash is not unpadded base64 of at least 16 bytes")
	}
	return h, nil
}

// Matches reports whether pw is the password, comparing in constant time.
func (h Hashed) Matches(pw string) bool {
	if len(pw) > maxLength || len(h.key) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pw), h.salt, h.Time, h.Memory, h.Threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// Decoy is a hash of no password with h's costs: checking a password against
// it takes as long as against h, so an unknown e-mail costs a sign-in as
// much time as a wrong password.
func (h Hashed) Decoy() Hashed {
	salt := make([]byte, len(h.salt))
	rand.Read(salt)
	return Hashed{Params: h.Params, salt: salt, key: make([]byte, len(h.key))}
}
