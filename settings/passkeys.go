package settings

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paybybank/checkout/ledger"
)

// Passkeys: a person's WebAuthn credentials, in the ledger beside their
// two-step secret. The WebAuthn ceremonies themselves are the console's;
// here each change is written, audited and made known to every instance.

// MaxPasskeyName is the longest name a passkey may have, in characters.
const MaxPasskeyName = 64

// Errors of passkeys.
var (
	// ErrPasskeyNameMissing means a passkey was given no name.
	ErrPasskeyNameMissing = errors.New("the passkey has no name")
	// ErrPasskeyNameLong means a name longer than MaxPasskeyName.
	ErrPasskeyNameLong = errors.New("the passkey's name is too long")
	// ErrPasskeyNameTaken means the person has a passkey of that name.
	ErrPasskeyNameTaken = errors.New("the person has a passkey of that name")
	// ErrTooManyPasskeys means the person has ledger.MaxPasskeys already.
	ErrTooManyPasskeys = errors.New("the person has as many passkeys as they may")
	// ErrPasskeyTaken means the credential is kept already, the person's
	// or another's.
	ErrPasskeyTaken = errors.New("the passkey is kept already")
	// ErrPasskeyUser means the passkey was made in a ceremony begun before
	// the person's first passkey was kept (two at once): it would never
	// sign in, so it is not kept; adding it again works.
	ErrPasskeyUser = errors.New("the passkey was made for another user handle than the person's others")
	// ErrNoPasskey means the person has no passkey of that ref.
	ErrNoPasskey = errors.New("the person has no such passkey")
)

// PasskeyName is a passkey's name as typed, trimmed, or why it cannot be
// one.
func PasskeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", ErrPasskeyNameMissing
	case utf8.RuneCountInString(name) > MaxPasskeyName:
		return "", ErrPasskeyNameLong
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", ErrPasskeyNameMissing
	}
	return name, nil
}

// AddPasskey keeps a person's new passkey, made on device, and says so in
// the audit log.
func (s *Store) AddPasskey(ctx context.Context, p ledger.Passkey, device string) error {
	name, err := PasskeyName(p.Name)
	if err != nil {
		return err
	}
	p.Name, p.Email = name, strings.ToLower(p.Email)
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		switch err := tx.AddPasskey(ctx, p, device); {
		case errors.Is(err, ledger.ErrTooManyPasskeys):
			return ErrTooManyPasskeys
		case errors.Is(err, ledger.ErrPasskeyName):
			return ErrPasskeyNameTaken
		case errors.Is(err, ledger.ErrPasskeyTaken):
			return ErrPasskeyTaken
		case errors.Is(err, ledger.ErrPasskeyUser):
			return ErrPasskeyUser
		case err != nil:
			return err
		}
		return tx.Audit(ctx, say(EventPasskeyAdded, ledger.Text(name), ledger.Device(device)).line(Actor{Name: p.Email}, ""))
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// RemovePasskey removes one of a person's passkeys, named by its ref, by
// them; it returns its name.
func (s *Store) RemovePasskey(ctx context.Context, by Actor, email, ref string) (string, error) {
	email = strings.ToLower(email)
	var name string
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		p, err := tx.RemovePasskey(ctx, email, ref)
		if errors.Is(err, ledger.ErrNoPasskey) {
			return ErrNoPasskey
		}
		if err != nil {
			return err
		}
		name = p.Name
		return tx.Audit(ctx, say(EventPasskeyRemoved, ledger.Text(p.Name)).line(by, ""))
	})
	if err != nil {
		return "", err
	}
	return name, s.Load(ctx)
}

// PasskeyOnNewDevice says, in the audit log and the person's own list,
// that one of their passkeys signed in from a device it never had before.
func (s *Store) PasskeyOnNewDevice(ctx context.Context, by Actor, p ledger.Passkey, device string) error {
	return s.passkeyEvent(ctx, by, ledger.PasskeyEvent{Email: p.Email, Kind: ledger.PasskeyNewDevice, Name: p.Name, Device: device},
		say(EventPasskeyNewDevice, ledger.Text(p.Name), ledger.Device(device)))
}

// PasskeySuspended says, in the audit log and the person's own list, that
// one of their passkeys was suspended, a sign-in from device having shown
// its counter going backwards: a copy of it is in someone's hands, and the
// sessions it started were ended.
func (s *Store) PasskeySuspended(ctx context.Context, by Actor, p ledger.Passkey, device string) error {
	return s.passkeyEvent(ctx, by, ledger.PasskeyEvent{Email: p.Email, Kind: ledger.PasskeySuspended, Name: p.Name, Device: device},
		say(EventPasskeySuspended, ledger.Text(p.Name), ledger.Device(device)))
}

// passkeyEvent writes a person's passkey event with its audit line; no
// setting changes.
func (s *Store) passkeyEvent(ctx context.Context, by Actor, e ledger.PasskeyEvent, line said) error {
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.PasskeyEvent(ctx, e); err != nil {
			return err
		}
		return tx.Audit(ctx, line.line(by, ""))
	})
	return err
}

// RequireOperatorsPasskeys makes a passkey the only way operators sign in
// (a recovery code aside), or not.
func (s *Store) RequireOperatorsPasskeys(ctx context.Context, by Actor, on bool) error {
	if s.Dir.OperatorsPasskeys() == on {
		return nil
	}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.SetOperatorsPasskeys(ctx, on); err != nil {
			return err
		}
		event := EventOperatorsPasskeys
		if !on {
			event = EventOperatorsPasskeysNot
		}
		return tx.Audit(ctx, say(event).line(by, ""))
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}
