package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Invitation is an invitation to a merchant's team: its link's token is
// known only by its hash.
type Invitation struct {
	TokenHash  string
	MerchantID string
	Email      string
	Role       string
	InvitedBy  string
	Created    time.Time
	Expires    time.Time
	// Used is when the invitation was accepted; zero while it was not.
	Used time.Time
	// Revoked is when it was withdrawn (by an owner, by a newer invitation
	// of the same person, by a change to their place on the team), and
	// RevokedBy who withdrew it; zero while it was not.
	Revoked   time.Time
	RevokedBy string
}

// ErrInvitationUsed means the invitation was accepted already.
var ErrInvitationUsed = errors.New("ledger: the invitation was used")

// AddInvitation records an invitation, in a change of the settings.
func (s *SettingsTx) AddInvitation(ctx context.Context, inv Invitation) error {
	_, err := s.tx.ExecContext(ctx, `INSERT INTO invitations (token_hash, merchant_id, email, role, invited_by, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, inv.TokenHash, inv.MerchantID, strings.ToLower(inv.Email), inv.Role, inv.InvitedBy,
		s.at.UnixMilli(), inv.Expires.UnixMilli())
	return err
}

// UseInvitation marks an invitation accepted, once, unless it was
// withdrawn: a second use, or a use after it was withdrawn, is
// ErrInvitationUsed.
func (s *SettingsTx) UseInvitation(ctx context.Context, tokenHash string) error {
	res, err := s.tx.ExecContext(ctx, `UPDATE invitations SET used_at = $2 WHERE token_hash = $1 AND used_at = 0 AND revoked_at = 0`,
		tokenHash, s.at.UnixMilli())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return cmpErr(err, ErrInvitationUsed)
	}
	return nil
}

// WithdrawInvitations withdraws every invitation of email to a merchant's
// team not yet used, by by; it returns how many there were.
func (s *SettingsTx) WithdrawInvitations(ctx context.Context, merchantID, email, by string) (int64, error) {
	res, err := s.tx.ExecContext(ctx, `UPDATE invitations SET revoked_at = $3, revoked_by = $4
		WHERE merchant_id = $1 AND email = $2 AND used_at = 0 AND revoked_at = 0`, merchantID, strings.ToLower(email), s.at.UnixMilli(), by)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

const invitationColumns = `token_hash, merchant_id, email, role, invited_by, created_at, expires_at, used_at, revoked_at, revoked_by`

func scanInvitation(row interface{ Scan(...any) error }) (Invitation, error) {
	var inv Invitation
	var created, expires, used, revoked int64
	err := row.Scan(&inv.TokenHash, &inv.MerchantID, &inv.Email, &inv.Role, &inv.InvitedBy, &created, &expires, &used, &revoked, &inv.RevokedBy)
	inv.Created, inv.Expires, inv.Used, inv.Revoked = time.UnixMilli(created), time.UnixMilli(expires), unixOrZero(used), unixOrZero(revoked)
	return inv, err
}

// Invitation finds an invitation by its token's hash.
func (l *Ledger) Invitation(ctx context.Context, tokenHash string) (Invitation, error) {
	inv, err := scanInvitation(l.db.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) {
		return inv, ErrNotFound
	}
	return inv, err
}

// PendingInvitations lists a merchant's invitations not yet used, withdrawn
// nor expired at now, newest first.
func (l *Ledger) PendingInvitations(ctx context.Context, merchantID string, now time.Time) ([]Invitation, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE merchant_id = $1 AND used_at = 0 AND revoked_at = 0 AND expires_at > $2 ORDER BY created_at DESC`, merchantID, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Invitation
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, inv)
	}
	return list, rows.Err()
}

// SignedIn records a person's sign-in, for their team's list. It is not a
// setting: no version moves.
func (l *Ledger) SignedIn(ctx context.Context, email string, at time.Time) error {
	_, err := l.db.ExecContext(ctx, `UPDATE console_people SET last_sign_in = $2 WHERE email = $1`, strings.ToLower(email), at.UnixMilli())
	return err
}

// LastSignIns are when each person last signed in, by e-mail (zero for
// never).
func (l *Ledger) LastSignIns(ctx context.Context) (map[string]time.Time, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT email, last_sign_in FROM console_people`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var email string
		var at int64
		if err := rows.Scan(&email, &at); err != nil {
			return nil, err
		}
		out[email] = unixOrZero(at)
	}
	return out, rows.Err()
}

// Session is one console session of a person, for their own list.
type Session struct {
	ID      string
	Email   string
	Device  string
	Address string
	Created time.Time
	Seen    time.Time
	Ends    time.Time
	// Passkey is the ref of the passkey that started the session; empty
	// for a password's (and a code's).
	Passkey string
}

// StartSession records a session at sign-in, and forgets the person's
// sessions that ended.
func (l *Ledger) StartSession(ctx context.Context, s Session) error {
	email := strings.ToLower(s.Email)
	if _, err := l.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE email = $1 AND ends_at < $2`, email, s.Created.UnixMilli()); err != nil {
		return err
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO console_sessions (id, email, device, address, created_at, seen_at, ends_at, passkey)
		VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`, s.ID, email, s.Device, s.Address, s.Created.UnixMilli(), s.Ends.UnixMilli(), s.Passkey)
	return err
}

// SessionSeen records a session's use.
func (l *Ledger) SessionSeen(ctx context.Context, id, address string, at time.Time) error {
	_, err := l.db.ExecContext(ctx, `UPDATE console_sessions SET seen_at = $2, address = $3 WHERE id = $1`, id, at.UnixMilli(), address)
	return err
}

// Sessions lists a person's sessions not ended at now, the latest used
// first: neither signed out nor past their end.
func (l *Ledger) Sessions(ctx context.Context, email string, now time.Time) ([]Session, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT id, email, device, address, created_at, seen_at, ends_at FROM console_sessions s
		WHERE email = $1 AND ends_at > $2 AND NOT EXISTS (SELECT 1 FROM console_signouts o WHERE o.session_id = s.id)
		ORDER BY seen_at DESC`, strings.ToLower(email), now.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []Session
	for rows.Next() {
		var s Session
		var created, seen, ends int64
		if err := rows.Scan(&s.ID, &s.Email, &s.Device, &s.Address, &created, &seen, &ends); err != nil {
			return nil, err
		}
		s.Created, s.Seen, s.Ends = time.UnixMilli(created), time.UnixMilli(seen), time.UnixMilli(ends)
		list = append(list, s)
	}
	return list, rows.Err()
}

// LinksOpenedByKey counts a merchant's orders first opened since since, by
// the link key their link was signed with.
func (l *Ledger) LinksOpenedByKey(ctx context.Context, merchantID string, since time.Time) (map[string]int64, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT kid, COUNT(*) FROM orders WHERE merchant_id = $1 AND opened_at >= $2 GROUP BY kid`,
		merchantID, since.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var kid string
		var n int64
		if err := rows.Scan(&kid, &n); err != nil {
			return nil, err
		}
		out[kid] = n
	}
	return out, rows.Err()
}
