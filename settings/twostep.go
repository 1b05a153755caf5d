package settings

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
)

// Two-step sign-in: a time-based code (RFC 6238: 6 digits, 30 seconds, SHA-1,
// as every authenticator app reads it) after the password, or one of 10
// recovery codes, each good once. A code is good once too: the ledger keeps
// the last time step taken, on every instance.

// Issuer names the app in a person's authenticator.
const Issuer = "Pay by bank checkout"

// RecoveryCodes is how many recovery codes a person is given.
const RecoveryCodes = 10

var totpOptions = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// Errors of two-step sign-in.
var (
	// ErrWrongCode means neither a code of now nor an unused recovery code.
	ErrWrongCode = errors.New("the code is not right")
	// ErrCodeUsed means the code of this time step was taken already.
	ErrCodeUsed = errors.New("the code was used already")
	// ErrNoPendingTwoStep means no two-step sign-in is being set up.
	ErrNoPendingTwoStep = errors.New("no two-step sign-in is being set up")
)

func totpPlace(email string) string { return "people/" + strings.ToLower(email) + "/totp" }

func (s *Store) openTOTP(email, sealed string) (string, error) {
	// The errors name the person as the log may: their e-mail shortened.
	if s.Keys == nil {
		return "", fmt.Errorf("person %s: their two-step secret is sealed, and SETTINGS_KEYS is not set", maskEmail(email))
	}
	v, err := s.Keys.Open(sealed, totpPlace(email))
	if err != nil {
		return "", fmt.Errorf("person %s: two-step secret: %w", maskEmail(email), err)
	}
	return v, nil
}

// TwoStepSetup is a new two-step secret, shown to its person to enter in
// their authenticator: as text and as the otpauth:// address a QR code
// carries.
type TwoStepSetup struct {
	Secret string
	URL    string
}

// BeginTwoStep makes a new secret for a person, kept aside until they
// confirm it with a code.
func (s *Store) BeginTwoStep(ctx context.Context, email string) (TwoStepSetup, error) {
	if s.Keys == nil {
		return TwoStepSetup{}, ErrNoKeys
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: strings.ToLower(email), SecretSize: 20,
		Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return TwoStepSetup{}, err
	}
	if err := s.Ledger.SetPendingTOTP(ctx, email, s.Keys.Seal(key.Secret(), totpPlace(email))); err != nil {
		return TwoStepSetup{}, err
	}
	return TwoStepSetup{Secret: key.Secret(), URL: key.URL()}, nil
}

// SetupFor is the setup of a secret shown before, to show it again (after
// a wrong first code).
func SetupFor(email, secret string) (TwoStepSetup, error) {
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secret))
	if err != nil || len(raw) == 0 {
		return TwoStepSetup{}, errors.New("not a two-step secret")
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: strings.ToLower(email), Secret: raw,
		Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return TwoStepSetup{}, err
	}
	return TwoStepSetup{Secret: key.Secret(), URL: key.URL()}, nil
}

// matchStep is the time step code belongs to, around now (a step either
// side, for clocks apart), or false.
func matchStep(secret, code string, now time.Time) (int64, bool) {
	// Spaces aside: authenticator apps show the code in two halves.
	code = strings.Join(strings.Fields(code), "")
	// No secret (one that did not open) matches no code: the code of an
	// empty key is one anyone can compute.
	if len(code) != 6 || secret == "" {
		return 0, false
	}
	for _, skew := range []int64{0, -1, 1} {
		at := now.Add(time.Duration(skew) * 30 * time.Second)
		want, err := totp.GenerateCodeCustom(secret, at, totpOptions)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return at.Unix() / 30, true
		}
	}
	return 0, false
}

// ConfirmTwoStep turns two-step sign-in on when code is right for the
// secret being set up, and returns the person's recovery codes, in the
// clear this once (the ledger keeps their hashes).
func (s *Store) ConfirmTwoStep(ctx context.Context, email, code string, now time.Time) ([]string, error) {
	sealed, err := s.Ledger.PendingTOTP(ctx, email)
	if err != nil {
		return nil, err
	}
	if sealed == "" {
		return nil, ErrNoPendingTwoStep
	}
	secret, err := s.openTOTP(email, sealed)
	if err != nil {
		return nil, err
	}
	step, ok := matchStep(secret, code, now)
	if !ok {
		return nil, ErrWrongCode
	}
	codes := make([]string, RecoveryCodes)
	hashes := make([]string, RecoveryCodes)
	for i := range codes {
		b := make([]byte, 10)
		rand.Read(b)
		raw := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
		codes[i] = raw[:4] + "-" + raw[4:8] + "-" + raw[8:12] + "-" + raw[12:]
		hashes[i] = HashToken(normalRecovery(codes[i]))
	}
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.SetTOTP(ctx, email, sealed, hashes); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventTwoStepOn).line(Actor{Name: strings.ToLower(email)}, ""))
	})
	if err != nil {
		return nil, err
	}
	// The code that confirmed is taken: it does not sign in again.
	if _, err := s.Ledger.UseTOTPStep(ctx, email, step); err != nil {
		return nil, err
	}
	return codes, s.Load(ctx)
}

// normalRecovery reads a recovery code as typed or pasted: case, spaces of
// any kind and dashes of any kind aside.
func normalRecovery(code string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) {
			return -1
		}
		return r
	}, code))
}

// CheckCode takes a person's code at sign-in: a time-based code, good once,
// or an unused recovery code, good once. It reports whether a recovery code
// was used.
func (s *Store) CheckCode(ctx context.Context, u *merchant.ConsoleUser, code string, now time.Time) (recovery bool, err error) {
	if step, ok := matchStep(u.TOTPSecret, code, now); ok {
		fresh, err := s.Ledger.UseTOTPStep(ctx, u.Email, step)
		switch {
		case err != nil:
			return false, err
		case !fresh:
			return false, ErrCodeUsed
		}
		return false, nil
	}
	if err := s.CheckRecoveryCode(ctx, u, code, now); err != nil {
		return false, err
	}
	return true, nil
}

// CheckRecoveryCode takes an unused recovery code of the person, good
// once, and nothing else: the way in of someone whose second step is a
// passkey when they have lost every one.
func (s *Store) CheckRecoveryCode(ctx context.Context, u *merchant.ConsoleUser, code string, now time.Time) error {
	if !IsRecoveryCode(code) {
		return ErrWrongCode
	}
	used, err := s.Ledger.UseRecoveryCode(ctx, u.Email, HashToken(normalRecovery(code)), now.UnixMilli())
	switch {
	case err != nil:
		return err
	case !used:
		return ErrWrongCode
	}
	return nil
}

// IsRecoveryCode reports whether code, as typed, has the form of a
// recovery code (16 of base32's letters and digits, dashes and spaces
// aside), not whether it is one.
func IsRecoveryCode(code string) bool {
	n := normalRecovery(code)
	return len(n) == 16 && strings.Trim(n, "abcdefghijklmnopqrstuvwxyz234567") == ""
}

// EndTwoStep turns a person's two-step sign-in off, when code (a code of
// now, or a recovery code) is right.
func (s *Store) EndTwoStep(ctx context.Context, u *merchant.ConsoleUser, code string, now time.Time) error {
	if _, err := s.CheckCode(ctx, u, code, now); err != nil {
		return err
	}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.SetTOTP(ctx, u.Email, "", nil); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventTwoStepOff).line(Actor{Name: strings.ToLower(u.Email)}, ""))
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// RequireTwoStep makes two-step sign-in a condition of a console merchant's
// team, or not.
func (s *Store) RequireTwoStep(ctx context.Context, by Actor, merchantID string, on bool) error {
	m, ok := s.Dir.Get(merchantID)
	if !ok {
		return ErrNoMerchant
	}
	return s.change(ctx, by, merchantID, m.Version, func(m *merchant.Merchant) (said, error) {
		m.RequireTwoStep = on
		if on {
			return say(EventTwoStepRequired), nil
		}
		return say(EventTwoStepNotRequired), nil
	})
}

// ErrNoTwoStep means the person has no two-step sign-in to reset.
var ErrNoTwoStep = errors.New("the person has no two-step sign-in")

// ResetTwoStep turns off the two-step sign-in of a person who lost their
// authenticator and their recovery codes, and removes their passkeys: an
// operator's action, in the audit log, after the operator made sure it is
// them. They sign in with
// their password and set it up again; an operator is recovered by the
// command line's operator add instead. A person the merchants file holds
// is reset too: two-step sign-in is the ledger's, not the file's.
func (s *Store) ResetTwoStep(ctx context.Context, by Actor, email string) error {
	email = strings.ToLower(strings.TrimSpace(email))
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		people, err := tx.People(ctx)
		if err != nil {
			return err
		}
		for _, p := range people {
			if p.Email != email {
				continue
			}
			if p.Operator {
				// An operator is recovered on the command line.
				return ErrNotOnTeam
			}
			if p.TOTPSecret == "" && p.Passkeys == 0 {
				return ErrNoTwoStep
			}
			if err := tx.SetTOTP(ctx, email, "", nil); err != nil {
				return err
			}
			// Lost passkeys go too: the person adds new ones.
			names, err := tx.RemovePasskeys(ctx, email)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				return tx.Audit(ctx, say(EventTwoStepResetPasskeys, ledger.Text(email), ledger.Text(strings.Join(names, ", "))).line(by, ""))
			}
			return tx.Audit(ctx, say(EventTwoStepReset, ledger.Text(email)).line(by, ""))
		}
		return ErrNotOnTeam
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}
