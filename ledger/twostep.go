package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// Two-step sign-in: a person's TOTP secret, sealed by package settings, the
// last time step a code was taken at, and recovery codes by hash.

// SetPendingTOTP keeps the secret a person is setting up, until they
// confirm it with a code. It is not a setting: no version moves.
func (l *Ledger) SetPendingTOTP(ctx context.Context, email, sealed string) error {
	_, err := l.db.ExecContext(ctx, `UPDATE console_people SET totp_pending = $2 WHERE email = $1`, strings.ToLower(email), sealed)
	return err
}

// PendingTOTP is the secret a person is setting up; empty when none.
func (l *Ledger) PendingTOTP(ctx context.Context, email string) (string, error) {
	var sealed string
	err := l.db.QueryRowContext(ctx, `SELECT totp_pending FROM console_people WHERE email = $1`, strings.ToLower(email)).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sealed, err
}

// SetTOTP turns a person's two-step sign-in on with the sealed secret, or
// off with "", and replaces their recovery codes with codeHashes.
func (s *SettingsTx) SetTOTP(ctx context.Context, email, sealed string, codeHashes []string) error {
	s.changed = true
	email = strings.ToLower(email)
	if _, err := s.tx.ExecContext(ctx, `UPDATE console_people SET totp_secret = $2, totp_pending = '' WHERE email = $1`, email, sealed); err != nil {
		return err
	}
	if _, err := s.tx.ExecContext(ctx, `DELETE FROM recovery_codes WHERE email = $1`, email); err != nil {
		return err
	}
	for _, h := range codeHashes {
		if _, err := s.tx.ExecContext(ctx, `INSERT INTO recovery_codes (email, code_hash) VALUES ($1, $2)`, email, h); err != nil {
			return err
		}
	}
	return nil
}

// UseTOTPStep takes a code of time step step for a person, once: false
// when a code of that step or a later one was taken already (a replay).
func (l *Ledger) UseTOTPStep(ctx context.Context, email string, step int64) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE console_people SET totp_step = $2 WHERE email = $1 AND totp_step < $2`, strings.ToLower(email), step)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UseRecoveryCode takes one of a person's recovery codes, once.
func (l *Ledger) UseRecoveryCode(ctx context.Context, email, codeHash string, at int64) (bool, error) {
	res, err := l.db.ExecContext(ctx, `UPDATE recovery_codes SET used_at = $3 WHERE email = $1 AND code_hash = $2 AND used_at = 0`,
		strings.ToLower(email), codeHash, at)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RecoveryCodesLeft counts a person's recovery codes not yet used.
func (l *Ledger) RecoveryCodesLeft(ctx context.Context, email string) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM recovery_codes WHERE email = $1 AND used_at = 0`, strings.ToLower(email)).Scan(&n)
	return n, err
}
