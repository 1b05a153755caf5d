package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Merchants' settings live beside the payments: one row per merchant, its
// API tokens, the console's people and the audit log. The ledger keeps them
// as it is given them: sealing secrets and checking values is package
// settings' business.

// Who manages a merchant (and a person, and a token).
const (
	ManagedByFile    = "file"
	ManagedByConsole = "console"
	// ManagedByCommand is a person the command line made (operator add).
	ManagedByCommand = "command line"
)

// A merchant's states.
const (
	MerchantActive   = "active"
	MerchantDisabled = "disabled"
)

// MerchantRow is one merchant's settings as stored.
type MerchantRow struct {
	ID      string
	Name    string
	State   string
	Managed string
	// Version counts the merchant's changes from 1: a save names the
	// version it was made from, and loses to any newer one.
	Version int64
	// Doc is the rest of the settings, as package settings writes them.
	Doc       string
	Created   time.Time
	Updated   time.Time
	UpdatedBy string
}

// TokenRow is one API token: its SHA-256 hash, never the token.
type TokenRow struct {
	ID         string
	MerchantID string
	Name       string
	// Hash is the hex SHA-256 of the token.
	Hash string
	// Prefix is the token's first characters, to tell tokens apart.
	Prefix  string
	Managed string
	Created time.Time
	// Expires and Revoked are zero when the token does not expire or was
	// not revoked; Used when it was never used (to the hour).
	Expires time.Time
	Revoked time.Time
	Used    time.Time
}

// PersonRow is one person who signs in to the console.
type PersonRow struct {
	// Email is in lower case.
	Email string
	// Operator sees and changes every merchant.
	Operator     bool
	PasswordHash string
	// TOTPSecret is the sealed secret of their two-step sign-in; empty
	// while it is off.
	TOTPSecret string
	Managed    string
	// Language is the console's language the person chose; empty while
	// they follow their browser's.
	Language string
	// Passkeys counts the person's passkeys.
	Passkeys int
	Created  time.Time
	Updated  time.Time
}

// MembershipRow is a person's place at one merchant: their role there.
type MembershipRow struct {
	Email      string
	MerchantID string
	Role       string
	Managed    string
	Created    time.Time
}

// AuditEntry is one change of the settings: never a secret's value.
type AuditEntry struct {
	ID int64
	At time.Time
	// Actor is a person's e-mail, "merchants file" or "command line".
	Actor      string
	MerchantID string
	// Event is what was done, kept as a name and its values rather than as
	// text, so that every reader reads the line in their own language: the
	// console says it from its catalog's "audit.<Event>" sentence, whose
	// first value is the actor and whose others are Args, in their order.
	Event string
	Args  []AuditArg
	// Action and Fields are the English text of the lines written before
	// events were kept; they read as they were written.
	Action string
	// Fields names what changed, with secrets said as "set", "rolled" or
	// "revoked".
	Fields    string
	RequestID string
}

// AuditArg is one value of an audit line's event, with the kind that says
// how a reader's language writes it.
type AuditArg struct {
	Kind  ArgKind `json:"k"`
	Value string  `json:"v"`
}

// ArgKind is how an audit value is said.
type ArgKind string

const (
	// ArgText is said as it is: an e-mail, a key's id, a token's name.
	ArgText ArgKind = "text"
	// ArgRole is a role's name (merchant.Role), said as the console names it.
	ArgRole ArgKind = "role"
	// ArgFields lists what a change touched: field names separated by
	// commas, a secret's with what happened to it after a colon
	// ("webhook_url,webhook_secret:set"); each said as its page names it.
	ArgFields ArgKind = "fields"
	// ArgDuration is a span in whole seconds.
	ArgDuration ArgKind = "duration"
	// ArgTime is a moment in unix milliseconds, said in the reader's way
	// with its zone.
	ArgTime ArgKind = "time"
	// ArgCount is a whole number.
	ArgCount ArgKind = "count"
	// ArgLanguage is a language's code, said by its name.
	ArgLanguage ArgKind = "language"
	// ArgReason is a reason's name, said from the catalog's
	// "audit.reason.<name>".
	ArgReason ArgKind = "reason"
	// ArgDevice is a browser and its system as a session keeps them
	// ("Firefox/Linux"), said as the reader's language says a device.
	ArgDevice ArgKind = "device"
)

// Text is a value said as it is.
func Text(v string) AuditArg { return AuditArg{ArgText, v} }

// Role is a role said by its name.
func Role(role string) AuditArg { return AuditArg{ArgRole, role} }

// Fields lists the fields a change touched (see ArgFields).
func Fields(names ...string) AuditArg { return AuditArg{ArgFields, strings.Join(names, ",")} }

// Duration is a span, in whole seconds.
func Duration(d time.Duration) AuditArg {
	return AuditArg{ArgDuration, strconv.FormatInt(int64(d/time.Second), 10)}
}

// Moment is a moment, said with its zone.
func Moment(t time.Time) AuditArg { return AuditArg{ArgTime, strconv.FormatInt(t.UnixMilli(), 10)} }

// Count is a whole number.
func Count(n int64) AuditArg { return AuditArg{ArgCount, strconv.FormatInt(n, 10)} }

// Language is a language said by its name.
func Language(code string) AuditArg { return AuditArg{ArgLanguage, code} }

// Reason is a reason said from the catalog.
func Reason(name string) AuditArg { return AuditArg{ArgReason, name} }

// Device is a browser and its system ("Firefox/Linux").
func Device(device string) AuditArg { return AuditArg{ArgDevice, device} }

// SettingsSnapshot is every merchant's settings at one version.
type SettingsSnapshot struct {
	Version     int64
	Merchants   []MerchantRow
	Tokens      []TokenRow
	People      []PersonRow
	Memberships []MembershipRow
	// OperatorsPasskeys is set when operators sign in with a passkey only.
	OperatorsPasskeys bool
}

// ErrSettingsConflict means a merchant was saved meanwhile: the save was
// made from an older version.
var ErrSettingsConflict = errors.New("ledger: the merchant's settings were changed meanwhile")

// SettingsVersion is the version of the settings: it moves with every
// change, on every instance's database alike.
func (l *Ledger) SettingsVersion(ctx context.Context) (int64, error) {
	var v int64
	err := l.db.QueryRowContext(ctx, `SELECT version FROM settings_version WHERE id = 1`).Scan(&v)
	return v, err
}

// Settings reads every merchant's settings, as of one version.
func (l *Ledger) Settings(ctx context.Context) (SettingsSnapshot, error) {
	var s SettingsSnapshot
	opts := &sql.TxOptions{ReadOnly: true}
	if l.dialect == postgres {
		// One snapshot for the version and every table read after it.
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := l.db.BeginTx(ctx, opts)
	if err != nil {
		return s, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT version FROM settings_version WHERE id = 1`).Scan(&s.Version); err != nil {
		return s, err
	}
	if s.Merchants, err = merchantRows(ctx, tx, ``); err != nil {
		return s, err
	}
	if s.Tokens, err = tokenRows(ctx, tx, `WHERE revoked_at = 0`); err != nil {
		return s, err
	}
	if s.People, err = peopleRows(ctx, tx); err != nil {
		return s, err
	}
	if s.Memberships, err = membershipRows(ctx, tx, ``); err != nil {
		return s, err
	}
	if s.OperatorsPasskeys, err = operatorsPasskeys(ctx, tx); err != nil {
		return s, err
	}
	return s, tx.Commit()
}

const merchantColumns = `id, name, state, managed, version, doc, created_at, updated_at, updated_by`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func merchantRows(ctx context.Context, q querier, where string, args ...any) ([]MerchantRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+merchantColumns+` FROM merchants `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []MerchantRow
	for rows.Next() {
		var m MerchantRow
		var created, updated int64
		if err := rows.Scan(&m.ID, &m.Name, &m.State, &m.Managed, &m.Version, &m.Doc, &created, &updated, &m.UpdatedBy); err != nil {
			return nil, err
		}
		m.Created, m.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		list = append(list, m)
	}
	return list, rows.Err()
}

const tokenColumns = `id, merchant_id, name, hash, prefix, managed, created_at, expires_at, revoked_at, last_used_at`

func scanToken(row interface{ Scan(...any) error }) (TokenRow, error) {
	var t TokenRow
	var created, expires, revoked, used int64
	err := row.Scan(&t.ID, &t.MerchantID, &t.Name, &t.Hash, &t.Prefix, &t.Managed, &created, &expires, &revoked, &used)
	t.Created, t.Expires, t.Revoked, t.Used = time.UnixMilli(created), unixOrZero(expires), unixOrZero(revoked), unixOrZero(used)
	return t, err
}

// tokenRows reads the tokens where selects, oldest first.
func tokenRows(ctx context.Context, q querier, where string, args ...any) ([]TokenRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []TokenRow
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, rows.Err()
}

func unixOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func peopleRows(ctx context.Context, q querier) ([]PersonRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT email, operator, password_hash, totp_secret, managed, language, created_at, updated_at,
			(SELECT COUNT(*) FROM passkeys WHERE passkeys.email = console_people.email)
		FROM console_people ORDER BY created_at, email`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []PersonRow
	for rows.Next() {
		var p PersonRow
		var operator int
		var created, updated int64
		if err := rows.Scan(&p.Email, &operator, &p.PasswordHash, &p.TOTPSecret, &p.Managed, &p.Language, &created, &updated, &p.Passkeys); err != nil {
			return nil, err
		}
		p.Operator = operator == 1
		p.Created, p.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		list = append(list, p)
	}
	return list, rows.Err()
}

func membershipRows(ctx context.Context, q querier, where string, args ...any) ([]MembershipRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT email, merchant_id, role, managed, created_at FROM memberships `+where+` ORDER BY created_at, email`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []MembershipRow
	for rows.Next() {
		var m MembershipRow
		var created int64
		if err := rows.Scan(&m.Email, &m.MerchantID, &m.Role, &m.Managed, &created); err != nil {
			return nil, err
		}
		m.Created = time.UnixMilli(created)
		list = append(list, m)
	}
	return list, rows.Err()
}

// SettingsTx is one change of the settings, under way: what it writes is
// seen by every instance together when ChangeSettings commits it.
type SettingsTx struct {
	l       *Ledger
	tx      *sql.Tx
	at      time.Time
	changed bool
}

// ChangeSettings runs change in one transaction that bumps the settings
// version, so that every instance reads the change whole. Changes of the
// settings take turns: the version's row is locked first. A change that
// writes no setting (an audit line at most) leaves the version alone.
// It returns the settings version after the change.
func (l *Ledger) ChangeSettings(ctx context.Context, change func(*SettingsTx) error) (int64, error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var version int64
	// Taking the row first makes concurrent changes queue here, so that a
	// merchant's version read below is the latest.
	if _, err := tx.ExecContext(ctx, `UPDATE settings_version SET version = version WHERE id = 1`); err != nil {
		return 0, err
	}
	s := &SettingsTx{l: l, tx: tx, at: l.now()}
	if err := change(s); err != nil {
		return 0, err
	}
	if !s.changed {
		// Nothing the instances read changed; an audit line alone is
		// still kept.
		if err := tx.QueryRowContext(ctx, `SELECT version FROM settings_version WHERE id = 1`).Scan(&version); err != nil {
			return 0, err
		}
		return version, tx.Commit()
	}
	if err := tx.QueryRowContext(ctx, `UPDATE settings_version SET version = version + 1 WHERE id = 1 RETURNING version`).Scan(&version); err != nil {
		return 0, err
	}
	return version, tx.Commit()
}

// Now is the time the change is made at.
func (s *SettingsTx) Now() time.Time { return s.at }

// Merchants reads the merchants as they are inside the change.
func (s *SettingsTx) Merchants(ctx context.Context) ([]MerchantRow, error) {
	return merchantRows(ctx, s.tx, ``)
}

// Merchant reads one merchant inside the change.
func (s *SettingsTx) Merchant(ctx context.Context, id string) (MerchantRow, bool, error) {
	list, err := merchantRows(ctx, s.tx, `WHERE id = $1`, id)
	if err != nil || len(list) == 0 {
		return MerchantRow{}, false, err
	}
	return list[0], true, nil
}

// PutMerchant writes m: a new merchant at version 1, or the next version of
// one saved from m.Version; ErrSettingsConflict when the merchant is at
// another version by now. It returns the version written.
func (s *SettingsTx) PutMerchant(ctx context.Context, m MerchantRow, by string) (int64, error) {
	at := s.at.UnixMilli()
	old, exists, err := s.Merchant(ctx, m.ID)
	if err != nil {
		return 0, err
	}
	s.changed = true
	if !exists {
		_, err := s.tx.ExecContext(ctx, `INSERT INTO merchants (`+merchantColumns+`) VALUES ($1, $2, $3, $4, 1, $5, $6, $6, $7)`,
			m.ID, m.Name, m.State, m.Managed, m.Doc, at, by)
		return 1, err
	}
	if old.Version != m.Version {
		return 0, ErrSettingsConflict
	}
	_, err = s.tx.ExecContext(ctx, `UPDATE merchants SET name = $2, state = $3, managed = $4, version = $5, doc = $6, updated_at = $7, updated_by = $8
		WHERE id = $1`, m.ID, m.Name, m.State, m.Managed, m.Version+1, m.Doc, at, by)
	return m.Version + 1, err
}

// Tokens reads a merchant's tokens inside the change, revoked ones too.
func (s *SettingsTx) Tokens(ctx context.Context, merchantID string) ([]TokenRow, error) {
	return tokenRows(ctx, s.tx, `WHERE merchant_id = $1`, merchantID)
}

// AddToken stores a token's hash.
func (s *SettingsTx) AddToken(ctx context.Context, t TokenRow) error {
	s.changed = true
	_, err := s.tx.ExecContext(ctx, `INSERT INTO api_tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, 0)`,
		t.ID, t.MerchantID, t.Name, t.Hash, t.Prefix, t.Managed, s.at.UnixMilli(), msOrZero(t.Expires))
	return err
}

// RevokeToken revokes a merchant's token: it is refused from then on.
// It reports whether the token was live.
func (s *SettingsTx) RevokeToken(ctx context.Context, merchantID, id string) (bool, error) {
	res, err := s.tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = $3 WHERE merchant_id = $1 AND id = $2 AND revoked_at = 0`,
		merchantID, id, s.at.UnixMilli())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if n > 0 {
		s.changed = true
	}
	return n > 0, err
}

// People reads the console's people inside the change.
func (s *SettingsTx) People(ctx context.Context) ([]PersonRow, error) { return peopleRows(ctx, s.tx) }

// SetLanguage keeps the console language a person chose ("" to follow
// their browser's).
func (s *SettingsTx) SetLanguage(ctx context.Context, email, lang string) error {
	s.changed = true
	_, err := s.tx.ExecContext(ctx, `UPDATE console_people SET language = $2 WHERE email = $1`, strings.ToLower(email), lang)
	return err
}

// PutPerson writes a person, new or not (by e-mail, in lower case); their
// memberships and language are left as they are.
func (s *SettingsTx) PutPerson(ctx context.Context, p PersonRow) error {
	s.changed = true
	operator := 0
	if p.Operator {
		operator = 1
	}
	at := s.at.UnixMilli()
	_, err := s.tx.ExecContext(ctx, `INSERT INTO console_people (email, password_hash, operator, managed, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (email) DO UPDATE SET password_hash = excluded.password_hash, operator = excluded.operator,
			managed = excluded.managed, updated_at = excluded.updated_at`, strings.ToLower(p.Email), p.PasswordHash, operator, p.Managed, at)
	return err
}

// RemovePerson removes a person and their memberships: they cannot sign
// in from then on.
func (s *SettingsTx) RemovePerson(ctx context.Context, email string) error {
	s.changed = true
	email = strings.ToLower(email)
	for _, table := range []string{"memberships", "recovery_codes", "console_sessions", "passkey_devices", "passkeys", "passkey_events"} {
		if _, err := s.tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE email = $1`, email); err != nil {
			return err
		}
	}
	_, err := s.tx.ExecContext(ctx, `DELETE FROM console_people WHERE email = $1`, email)
	return err
}

// Memberships reads every membership inside the change.
func (s *SettingsTx) Memberships(ctx context.Context) ([]MembershipRow, error) {
	return membershipRows(ctx, s.tx, ``)
}

// PutMembership gives a person a role at a merchant, new or changed.
func (s *SettingsTx) PutMembership(ctx context.Context, m MembershipRow) error {
	s.changed = true
	_, err := s.tx.ExecContext(ctx, `INSERT INTO memberships (email, merchant_id, role, managed, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (email, merchant_id) DO UPDATE SET role = excluded.role, managed = excluded.managed`,
		strings.ToLower(m.Email), m.MerchantID, m.Role, m.Managed, s.at.UnixMilli())
	return err
}

// RemoveMembership takes a person off a merchant's team.
func (s *SettingsTx) RemoveMembership(ctx context.Context, email, merchantID string) error {
	s.changed = true
	_, err := s.tx.ExecContext(ctx, `DELETE FROM memberships WHERE email = $1 AND merchant_id = $2`, strings.ToLower(email), merchantID)
	return err
}

// Audit writes a line of the audit log, in the change's transaction.
func (s *SettingsTx) Audit(ctx context.Context, e AuditEntry) error {
	return insertAudit(ctx, s.tx, s.at, e)
}

// ResealMerchant writes a merchant's document again with its secrets
// sealed under a newer key: the values are the same, so neither the
// merchant's version nor the settings version moves. It reports false when
// the merchant changed since doc was read (the next pass reseals it).
func (l *Ledger) ResealMerchant(ctx context.Context, id string, version int64, oldDoc, newDoc string) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE merchants SET doc = $4 WHERE id = $1 AND version = $2 AND doc = $3`, id, version, oldDoc, newDoc)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ResealTOTP writes a person's two-step secret again sealed under a newer
// key: the same secret, so no version moves. It reports false when the
// secret changed since old was read (the next pass reseals it).
func (l *Ledger) ResealTOTP(ctx context.Context, email, old, sealed string) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE console_people SET totp_secret = $3 WHERE email = $1 AND totp_secret = $2`,
		strings.ToLower(email), old, sealed)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AuditQuery picks lines of the audit log: a merchant's only when
// MerchantID is set, older than Before when that is set, Limit at most.
type AuditQuery struct {
	MerchantID string
	Before     int64
	Limit      int
}

// Audit reads the audit log, newest first.
func (l *Ledger) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	var conds []string
	var args []any
	if q.MerchantID != "" {
		args = append(args, q.MerchantID)
		conds = append(conds, fmt.Sprintf("merchant_id = $%d", len(args)))
	}
	if q.Before > 0 {
		args = append(args, q.Before)
		conds = append(conds, fmt.Sprintf("id < $%d", len(args)))
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	args = append(args, q.Limit)
	rows, err := l.db.QueryContext(ctx, fmt.Sprintf(`SELECT id, at, actor, merchant_id, action, fields, request_id, event, args FROM audit_log %s ORDER BY id DESC LIMIT $%d`, where, len(args)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at int64
		var args string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.MerchantID, &e.Action, &e.Fields, &e.RequestID, &e.Event, &args); err != nil {
			return nil, err
		}
		if args != "" {
			if err := json.Unmarshal([]byte(args), &e.Args); err != nil {
				return nil, fmt.Errorf("audit line %d: %w", e.ID, err)
			}
		}
		e.At = time.UnixMilli(at)
		list = append(list, e)
	}
	return list, rows.Err()
}

// TokenUsed records that a token was used at; it is not a setting, and no
// version moves.
func (l *Ledger) TokenUsed(ctx context.Context, id string, at time.Time) error {
	_, err := l.db.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = $2 WHERE id = $1 AND last_used_at < $2`, id, at.UnixMilli())
	return err
}

// MerchantTokens lists a merchant's tokens not revoked, oldest first.
func (l *Ledger) MerchantTokens(ctx context.Context, merchantID string) ([]TokenRow, error) {
	return tokenRows(ctx, l.db, `WHERE merchant_id = $1 AND revoked_at = 0`, merchantID)
}
