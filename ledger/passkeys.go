package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Passkeys: each person's WebAuthn credentials, kept here so that a passkey
// made on one instance signs in on every other. The ledger keeps a
// credential as package console gives it (the WebAuthn library's record of
// it, which holds a public key, never a private one) and keeps its sign
// counter apart, so that an advance is one statement no other instance can
// interleave with.

// MaxPasskeys is how many passkeys one person may have.
const MaxPasskeys = 10

// Passkey is one person's WebAuthn credential.
type Passkey struct {
	// ID is the credential's id, base64url without padding. It stays
	// between the server and the browser's WebAuthn: no address holds it.
	ID string
	// Ref names the passkey in the console's addresses (its removal) and
	// in the sessions it started: random, made by AddPasskey, nothing of
	// the credential.
	Ref   string
	Email string
	// UserHandle is the person's WebAuthn user handle (base64url), the same
	// for each of their passkeys.
	UserHandle string
	Name       string
	// Credential is the credential's record, as package console wrote it.
	Credential string
	SignCount  uint32
	Created    time.Time
	// LastUsed is zero while it never signed in.
	LastUsed time.Time
	// Suspended is when its counter went backwards, as a copy's would:
	// from then on it signs in nowhere until it is removed (and added
	// again). Zero while it is in use.
	Suspended time.Time
}

// Errors of passkeys.
var (
	// ErrTooManyPasskeys means the person has MaxPasskeys already.
	ErrTooManyPasskeys = errors.New("ledger: the person has as many passkeys as they may")
	// ErrPasskeyName means the person has a passkey of that name already.
	ErrPasskeyName = errors.New("ledger: the person has a passkey of that name")
	// ErrPasskeyTaken means a passkey of that credential id is kept
	// already, the person's or another's.
	ErrPasskeyTaken = errors.New("ledger: a passkey of that credential id is kept already")
	// ErrPasskeyUser means a passkey made for another WebAuthn user handle
	// than the person's others: two added at once from two browsers, of
	// which the second would never sign in.
	ErrPasskeyUser = errors.New("ledger: the passkey was made for another user handle than the person's others")
	// ErrNoPasskey means no passkey has the id or ref (for that person).
	ErrNoPasskey = errors.New("ledger: no such passkey")
)

const passkeyColumns = `id, ref, email, user_handle, name, credential, sign_count, created_at, last_used_at, suspended_at`

func scanPasskey(row interface{ Scan(...any) error }) (Passkey, error) {
	var p Passkey
	var count, created, used, suspended int64
	err := row.Scan(&p.ID, &p.Ref, &p.Email, &p.UserHandle, &p.Name, &p.Credential, &count, &created, &used, &suspended)
	p.SignCount, p.Created, p.LastUsed, p.Suspended = uint32(count), time.UnixMilli(created), unixOrZero(used), unixOrZero(suspended)
	return p, err
}

func passkeysOf(ctx context.Context, q querier, email string) ([]Passkey, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE email = $1 ORDER BY created_at, id`, strings.ToLower(email))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Passkey
	for rows.Next() {
		p, err := scanPasskey(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, p)
	}
	return list, rows.Err()
}

// Passkeys are a person's passkeys, oldest first.
func (l *Ledger) Passkeys(ctx context.Context, email string) ([]Passkey, error) {
	return passkeysOf(ctx, l.db, email)
}

// Passkeys are a person's passkeys inside the change.
func (s *SettingsTx) Passkeys(ctx context.Context, email string) ([]Passkey, error) {
	return passkeysOf(ctx, s.tx, email)
}

// Passkey finds a passkey by its credential id; ErrNoPasskey when none has
// it.
func (l *Ledger) Passkey(ctx context.Context, id string) (Passkey, error) {
	p, err := scanPasskey(l.db.QueryRowContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNoPasskey
	}
	return p, err
}

// AddPasskey keeps a person's new passkey under a new Ref, with the device
// it was made on as the first it signed in from, and says so in their
// events. It refuses a credential id kept already, the person's or
// another's (ErrPasskeyTaken), an eleventh passkey (ErrTooManyPasskeys) and
// a name the person has already (ErrPasskeyName); changes of the settings
// take turns, so two at once cannot both be the tenth, nor both make one
// credential.
func (s *SettingsTx) AddPasskey(ctx context.Context, p Passkey, device string) error {
	s.changed = true
	email := strings.ToLower(p.Email)
	var kept int
	if err := s.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM passkeys WHERE id = $1`, p.ID).Scan(&kept); err != nil {
		return err
	}
	if kept > 0 {
		return ErrPasskeyTaken
	}
	list, err := passkeysOf(ctx, s.tx, email)
	if err != nil {
		return err
	}
	if len(list) >= MaxPasskeys {
		return ErrTooManyPasskeys
	}
	if len(list) > 0 && list[0].UserHandle != p.UserHandle {
		return ErrPasskeyUser
	}
	for _, k := range list {
		if strings.EqualFold(k.Name, p.Name) {
			return ErrPasskeyName
		}
	}
	at := s.at.UnixMilli()
	if _, err := s.tx.ExecContext(ctx, `INSERT INTO passkeys (id, ref, email, user_handle, name, credential, sign_count, created_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)`, p.ID, rand.Text(), email, p.UserHandle, p.Name, p.Credential, int64(p.SignCount), at); err != nil {
		return err
	}
	if _, err := s.tx.ExecContext(ctx, `INSERT INTO passkey_devices (passkey_id, email, device, first_at) VALUES ($1, $2, $3, $4)`,
		p.ID, email, device, at); err != nil {
		return err
	}
	return s.PasskeyEvent(ctx, PasskeyEvent{Email: email, Kind: PasskeyAdded, Name: p.Name, Device: device})
}

// RemovePasskey removes one of a person's passkeys, named by its Ref, and
// returns it; ErrNoPasskey when they have none of that ref.
func (s *SettingsTx) RemovePasskey(ctx context.Context, email, ref string) (Passkey, error) {
	s.changed = true
	email = strings.ToLower(email)
	p, err := scanPasskey(s.tx.QueryRowContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE ref = $1 AND email = $2`, ref, email))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNoPasskey
	}
	if err != nil {
		return p, err
	}
	if _, err := s.tx.ExecContext(ctx, `DELETE FROM passkey_devices WHERE passkey_id = $1`, p.ID); err != nil {
		return p, err
	}
	if _, err := s.tx.ExecContext(ctx, `DELETE FROM passkeys WHERE id = $1`, p.ID); err != nil {
		return p, err
	}
	return p, s.PasskeyEvent(ctx, PasskeyEvent{Email: email, Kind: PasskeyRemoved, Name: p.Name})
}

// RemovePasskeys removes every passkey of a person (a recovery by an
// operator, or the command line's operator add); it returns their names.
func (s *SettingsTx) RemovePasskeys(ctx context.Context, email string) ([]string, error) {
	list, err := passkeysOf(ctx, s.tx, email)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range list {
		if _, err := s.RemovePasskey(ctx, email, p.Ref); err != nil {
			return nil, err
		}
		names = append(names, p.Name)
	}
	return names, nil
}

// PasskeyUse is what became of a passkey's sign-in.
type PasskeyUse int

const (
	// PasskeyTaken: its counter moved forward; it signs in.
	PasskeyTaken PasskeyUse = iota
	// PasskeySuspendedNow: its counter did not move forward, as a copy's
	// would not, and this sign-in suspended it.
	PasskeySuspendedNow
	// PasskeyWasSuspended: it was suspended before (or removed meanwhile).
	PasskeyWasSuspended
)

// UsePasskey takes a sign-in of a passkey whose authenticator said its
// counter is now count. The counter must move forward (or both stay 0, for
// authenticators that keep none, such as synced passkeys); when it does not,
// two authenticators hold the credential, the real one and a copy, and
// which is which cannot be told: the same statement suspends it, so that
// neither signs in anywhere until its person removes it and adds it again.
// One statement, so that a copy racing the real one on another instance is
// caught all the same.
func (l *Ledger) UsePasskey(ctx context.Context, id string, count uint32, at time.Time) (PasskeyUse, error) {
	var suspended int64
	err := l.db.QueryRowContext(ctx, `UPDATE passkeys SET
			sign_count   = CASE WHEN sign_count < $2 OR (sign_count = 0 AND $2 = 0) THEN $2 ELSE sign_count END,
			last_used_at = CASE WHEN sign_count < $2 OR (sign_count = 0 AND $2 = 0) THEN $3 ELSE last_used_at END,
			suspended_at = CASE WHEN sign_count < $2 OR (sign_count = 0 AND $2 = 0) THEN 0 ELSE $3 END
		WHERE id = $1 AND suspended_at = 0
		RETURNING suspended_at`, id, int64(count), at.UnixMilli()).Scan(&suspended)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return PasskeyWasSuspended, nil
	case err != nil:
		return PasskeyWasSuspended, err
	case suspended != 0:
		return PasskeySuspendedNow, nil
	}
	return PasskeyTaken, nil
}

// EndSessionsOfPasskey ends, on every instance, the sessions the passkey of
// ref started that are not over at now.
func (l *Ledger) EndSessionsOfPasskey(ctx context.Context, ref string, now time.Time) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO console_signouts (session_id, until)
		SELECT id, ends_at FROM console_sessions WHERE passkey = $1 AND ends_at > $2
		ON CONFLICT (session_id) DO NOTHING`, ref, now.UnixMilli())
	return err
}

// PasskeySeenOn records that a passkey signed in from device, and reports
// whether it never had before.
func (l *Ledger) PasskeySeenOn(ctx context.Context, id, email, device string, at time.Time) (bool, error) {
	res, err := l.db.ExecContext(ctx, `INSERT INTO passkey_devices (passkey_id, email, device, first_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (passkey_id, device) DO NOTHING`, id, strings.ToLower(email), device, at.UnixMilli())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Kinds of a person's passkey events.
const (
	PasskeyAdded     = "added"
	PasskeyRemoved   = "removed"
	PasskeyNewDevice = "new device"
	// PasskeySuspended is a passkey suspended because its counter went
	// backwards: a copy of it exists.
	PasskeySuspended = "suspended"
)

// PasskeyEvent is one line of a person's own list of what happened to their
// passkeys.
type PasskeyEvent struct {
	Email  string
	At     time.Time
	Kind   string
	Name   string
	Device string
}

// PasskeyEvent adds a line to the person's passkey events, in the change.
func (s *SettingsTx) PasskeyEvent(ctx context.Context, e PasskeyEvent) error {
	_, err := s.tx.ExecContext(ctx, `INSERT INTO passkey_events (email, at, kind, name, device) VALUES ($1, $2, $3, $4, $5)`,
		strings.ToLower(e.Email), s.at.UnixMilli(), e.Kind, e.Name, e.Device)
	return err
}

// PasskeyEvents are a person's latest passkey events, newest first.
func (l *Ledger) PasskeyEvents(ctx context.Context, email string, limit int) ([]PasskeyEvent, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT email, at, kind, name, device FROM passkey_events WHERE email = $1 ORDER BY id DESC LIMIT $2`,
		strings.ToLower(email), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []PasskeyEvent
	for rows.Next() {
		var e PasskeyEvent
		var at int64
		if err := rows.Scan(&e.Email, &at, &e.Kind, &e.Name, &e.Device); err != nil {
			return nil, err
		}
		e.At = time.UnixMilli(at)
		list = append(list, e)
	}
	return list, rows.Err()
}

// Kinds of WebAuthn ceremonies.
const (
	// CeremonyRegister makes a passkey.
	CeremonyRegister = "register"
	// CeremonySignIn signs in with a passkey.
	CeremonySignIn = "sign-in"
	// CeremonyProof proves, with one of a person's passkeys, that it is
	// them, before their passkeys change.
	CeremonyProof = "proof"
)

// Ceremony is a WebAuthn ceremony under way: its challenge and options (as
// the WebAuthn library keeps them, in Data), kept under a key only the
// browser session that began it holds.
type Ceremony struct {
	// Key is a digest of the token the session holds.
	Key  string
	Kind string
	// Email is the person the ceremony is for; empty for a sign-in by a
	// passkey that says whose it is.
	Email   string
	Data    string
	Expires time.Time
}

// BeginCeremony keeps a ceremony until it is taken or expires, in place of
// any the same session began before; ceremonies past their time are
// removed on the way.
func (l *Ledger) BeginCeremony(ctx context.Context, c Ceremony, replaces string) error {
	if _, err := l.db.ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE key = $1 OR expires_at < $2`, replaces, l.now().UnixMilli()); err != nil {
		return err
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO passkey_ceremonies (key, kind, email, data, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		c.Key, c.Kind, strings.ToLower(c.Email), c.Data, c.Expires.UnixMilli())
	return err
}

// ErrNoCeremony means no ceremony is under way under the key: none began,
// it was taken already, or it expired.
var ErrNoCeremony = errors.New("ledger: no such WebAuthn ceremony")

// TakeCeremony takes a ceremony of kind, once: it is gone for every later
// request on every instance, whatever the answer. One past its time is
// ErrNoCeremony.
func (l *Ledger) TakeCeremony(ctx context.Context, key, kind string, now time.Time) (Ceremony, error) {
	c := Ceremony{Key: key}
	var expires int64
	err := l.db.QueryRowContext(ctx, `DELETE FROM passkey_ceremonies WHERE key = $1 RETURNING kind, email, data, expires_at`, key).
		Scan(&c.Kind, &c.Email, &c.Data, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNoCeremony
	}
	if err != nil {
		return c, err
	}
	c.Expires = time.UnixMilli(expires)
	if c.Kind != kind || !c.Expires.After(now) {
		return c, ErrNoCeremony
	}
	return c, nil
}

// SetOperatorsPasskeys makes a passkey the only way operators sign in, or
// not.
func (s *SettingsTx) SetOperatorsPasskeys(ctx context.Context, on bool) error {
	s.changed = true
	v := 0
	if on {
		v = 1
	}
	_, err := s.tx.ExecContext(ctx, `UPDATE console_policy SET operators_passkeys = $1 WHERE id = 1`, v)
	return err
}

func operatorsPasskeys(ctx context.Context, q querier) (bool, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT operators_passkeys FROM console_policy WHERE id = 1`).Scan(&v)
	return v == 1, err
}
