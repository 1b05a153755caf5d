package settings

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// InvitationValid is how long an invitation's link may be used.
const InvitationValid = 72 * time.Hour

// Errors of the team's changes.
var (
	// ErrLastOwner refuses to remove or demote a merchant's last owner:
	// someone must be able to manage the team.
	ErrLastOwner = errors.New("the last owner of a merchant cannot be removed or given another role")
	// ErrNotOnTeam means the person is not on the merchant's team.
	ErrNotOnTeam = errors.New("not on this merchant's team")
	// ErrInvitationExpired and ErrInvitationUsed say why an invitation's
	// link no longer works.
	ErrInvitationExpired = errors.New("the invitation has expired")
	ErrInvitationUsed    = ledger.ErrInvitationUsed
	// ErrNoInvitation means no invitation has the link's token.
	ErrNoInvitation = errors.New("no such invitation")
	// ErrInvitationWithdrawn means an owner withdrew the invitation, a newer
	// one replaced it, or the person's place on the team changed since.
	ErrInvitationWithdrawn = errors.New("the invitation was withdrawn")
	// ErrInviterGone means whoever made the invitation may no longer
	// invite to that team: it is no longer good.
	ErrInviterGone = errors.New("the person who invited may no longer invite to this team")
	// ErrAlreadyOnTeam refuses an invitation of someone who is on the team
	// already: their role changes on the Team page, by an owner, never
	// through a link.
	ErrAlreadyOnTeam = errors.New("already on this merchant's team")
	// ErrPersonExists refuses to set a password for a person who has one:
	// only they know it.
	ErrPersonExists = errors.New("the person has an account already")
	// ErrCodeNeeded refuses an invitation accepted with the password alone
	// by a person who signs in with two steps (turned on meanwhile, on
	// another instance): their code comes first.
	ErrCodeNeeded = errors.New("the person signs in with two steps: their code comes first")
)

// Invited is an invitation made: its token, for the link shown once to the
// inviter, and when it ends.
type Invited struct {
	Token   string
	Email   string
	Role    merchant.Role
	Expires time.Time
}

// CheckEmail refuses what is not a plain e-mail address, as a form's field.
func CheckEmail(field, email string) error {
	if rules.CheckEmail(field, email) != nil {
		return merchant.Refuse(field, "%q is not a plain e-mail address like ann@shop.example", email).Says("email", email)
	}
	return nil
}

// CheckRole reads a role's name from a form's field.
func CheckRole(field, name string) (merchant.Role, error) {
	role, ok := merchant.ParseRole(name)
	if !ok {
		return "", merchant.Refuse(field, "%q is not one of %s", name, merchant.RoleNames()).Says("role", name)
	}
	return role, nil
}

// hashOf is how the ledger keeps a link's token: its SHA-256, as tokens.
func hashOf(token string) string { return HashToken(token) }

// Invite makes an invitation to a merchant's team, valid InvitationValid.
// A bad e-mail or role, or an e-mail already on the team, is a
// *merchant.FieldError. The invitation is written with its audit line;
// nothing an instance serves changes until it is accepted.
func (s *Store) Invite(ctx context.Context, by Actor, merchantID, email, roleName string, now time.Time) (Invited, error) {
	email = strings.TrimSpace(email)
	if err := CheckEmail("email", email); err != nil {
		return Invited{}, err
	}
	role, err := CheckRole("role", roleName)
	if err != nil {
		return Invited{}, err
	}
	email = strings.ToLower(email)
	b := make([]byte, 32)
	rand.Read(b)
	inv := Invited{Token: base64.RawURLEncoding.EncodeToString(b), Email: email, Role: role, Expires: now.Add(InvitationValid)}
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := consoleMerchant(ctx, tx, merchantID); err != nil {
			return err
		}
		members, err := tx.Memberships(ctx)
		if err != nil {
			return err
		}
		for _, ms := range members {
			if ms.MerchantID == merchantID && ms.Email == email {
				return merchant.Refuse("email", "%s is on the team already: change their role in the team list instead", email).Says("onTeam", email)
			}
		}
		// One live invitation a person and team: a new one replaces the
		// older, whose link stops working.
		replaced, err := tx.WithdrawInvitations(ctx, merchantID, email, by.Name)
		if err != nil {
			return err
		}
		if err := tx.AddInvitation(ctx, ledger.Invitation{TokenHash: hashOf(inv.Token), MerchantID: merchantID, Email: email,
			Role: string(role), InvitedBy: by.Name, Expires: inv.Expires}); err != nil {
			return err
		}
		event := EventInvited
		if replaced > 0 {
			event = EventInvitedAgain
		}
		return tx.Audit(ctx, say(event, ledger.Text(email), ledger.Role(string(role))).line(by, merchantID))
	})
	return inv, err
}

// Invitation finds the invitation of a link's token while it may be used:
// ErrNoInvitation, ErrInvitationUsed or ErrInvitationExpired otherwise.
func (s *Store) Invitation(ctx context.Context, token string, now time.Time) (ledger.Invitation, error) {
	inv, err := s.Ledger.Invitation(ctx, hashOf(token))
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return inv, ErrNoInvitation
	case err != nil:
		return inv, err
	case !inv.Used.IsZero():
		return inv, ErrInvitationUsed
	case !inv.Revoked.IsZero():
		return inv, ErrInvitationWithdrawn
	case !now.Before(inv.Expires):
		return inv, ErrInvitationExpired
	}
	return inv, nil
}

// RevokeInvitation withdraws the live invitation of email to a console
// merchant's team: its link stops working at once. ErrNoInvitation when
// there is none.
func (s *Store) RevokeInvitation(ctx context.Context, by Actor, merchantID, email string) error {
	email = strings.ToLower(strings.TrimSpace(email))
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := consoleMerchant(ctx, tx, merchantID); err != nil {
			return err
		}
		n, err := tx.WithdrawInvitations(ctx, merchantID, email, by.Name)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNoInvitation
		}
		return tx.Audit(ctx, say(EventInvitationRevoked, ledger.Text(email)).line(by, merchantID))
	})
	return err
}

// Accept puts the invited person on the team, once. A new person's
// password hash is phc; a person the ledger knows already (on another
// team, or on none any more) keeps their own password and two-step
// sign-in (the caller checked the password, and codeChecked says whether
// it checked a code or a passkey too: a person whose row holds a two-step
// secret or a passkey is refused ErrCodeNeeded without one), and phc is
// empty. Within the same change it checks again that the invitation is
// live, that whoever made it may still invite to the team, and that the
// person is not on the team already: an invitation never changes a
// member's role, so a team never loses its last owner through one.
func (s *Store) Accept(ctx context.Context, token, phc string, codeChecked bool, now time.Time) (ledger.Invitation, error) {
	inv, err := s.Invitation(ctx, token, now)
	if err != nil {
		return inv, err
	}
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.UseInvitation(ctx, inv.TokenHash); errors.Is(err, ledger.ErrInvitationUsed) {
			// Used or withdrawn meanwhile: say which.
			_, err = s.Invitation(ctx, token, now)
			return cmp.Or(err, ErrInvitationUsed)
		} else if err != nil {
			return err
		}
		people, err := tx.People(ctx)
		if err != nil {
			return err
		}
		members, err := tx.Memberships(ctx)
		if err != nil {
			return err
		}
		if !mayInvite(people, members, inv.InvitedBy, inv.MerchantID) {
			return ErrInviterGone
		}
		i := slices.IndexFunc(people, func(p ledger.PersonRow) bool { return p.Email == inv.Email })
		exists := i >= 0
		switch {
		case exists && (people[i].TOTPSecret != "" || people[i].Passkeys > 0) && !codeChecked:
			return ErrCodeNeeded
		case slices.ContainsFunc(members, func(m ledger.MembershipRow) bool { return m.Email == inv.Email && m.MerchantID == inv.MerchantID }):
			return ErrAlreadyOnTeam
		case exists && phc != "":
			return ErrPersonExists
		case !exists && phc == "":
			return errors.New("settings: a new person's invitation accepted without a password")
		}
		if phc != "" {
			if err := tx.PutPerson(ctx, ledger.PersonRow{Email: inv.Email, PasswordHash: phc, Managed: ledger.ManagedByConsole}); err != nil {
				return err
			}
		}
		if err := tx.PutMembership(ctx, ledger.MembershipRow{Email: inv.Email, MerchantID: inv.MerchantID, Role: inv.Role, Managed: ledger.ManagedByConsole}); err != nil {
			return err
		}
		event := EventJoined
		if phc != "" {
			event = EventJoinedNew
		}
		return tx.Audit(ctx, say(event, ledger.Role(inv.Role)).line(Actor{Name: inv.Email}, inv.MerchantID))
	})
	if errors.Is(err, ErrCodeNeeded) {
		// This instance's settings were older than the ledger's: brought
		// up to date, the caller asks for the code.
		return inv, errors.Join(err, s.Load(ctx))
	}
	if err != nil {
		return inv, err
	}
	return inv, s.Load(ctx)
}

// mayInvite reports whether who may invite to a merchant's team: an
// operator, or an owner of that team.
func mayInvite(people []ledger.PersonRow, members []ledger.MembershipRow, who, merchantID string) bool {
	if slices.ContainsFunc(people, func(p ledger.PersonRow) bool { return p.Email == who && p.Operator }) {
		return true
	}
	return slices.ContainsFunc(members, func(m ledger.MembershipRow) bool {
		return m.Email == who && m.MerchantID == merchantID && m.Role == string(merchant.Owner)
	})
}

// SetRole gives a member another role. The last owner keeps theirs.
func (s *Store) SetRole(ctx context.Context, by Actor, merchantID, email, roleName string) error {
	role, err := CheckRole("role", roleName)
	if err != nil {
		return err
	}
	return s.changeTeam(ctx, by, merchantID, email, func(tx *ledger.SettingsTx, m ledger.MembershipRow, owners int) error {
		if m.Role == string(role) {
			return nil
		}
		if m.Role == string(merchant.Owner) && owners == 1 {
			return ErrLastOwner
		}
		m.Role = string(role)
		m.Managed = ledger.ManagedByConsole
		if err := tx.PutMembership(ctx, m); err != nil {
			return err
		}
		// A pending link must not give back the role just changed.
		if _, err := tx.WithdrawInvitations(ctx, merchantID, email, by.Name); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventRoleChanged, ledger.Text(email), ledger.Role(string(role))).line(by, merchantID))
	})
}

// RemoveMember takes a person off the team: their sessions for this
// merchant end on every instance with the next settings load. The last
// owner stays.
func (s *Store) RemoveMember(ctx context.Context, by Actor, merchantID, email string) error {
	return s.changeTeam(ctx, by, merchantID, email, func(tx *ledger.SettingsTx, m ledger.MembershipRow, owners int) error {
		if m.Role == string(merchant.Owner) && owners == 1 {
			return ErrLastOwner
		}
		if err := tx.RemoveMembership(ctx, m.Email, merchantID); err != nil {
			return err
		}
		// Nor may an older link bring them back.
		if _, err := tx.WithdrawInvitations(ctx, merchantID, m.Email, by.Name); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventMemberRemoved, ledger.Text(m.Email)).line(by, merchantID))
	})
}

// changeTeam runs change on a member of a console merchant's team, told
// how many owners the team has.
func (s *Store) changeTeam(ctx context.Context, by Actor, merchantID, email string, change func(*ledger.SettingsTx, ledger.MembershipRow, int) error) error {
	email = strings.ToLower(email)
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := consoleMerchant(ctx, tx, merchantID); err != nil {
			return err
		}
		members, err := tx.Memberships(ctx)
		if err != nil {
			return err
		}
		owners, found := 0, -1
		for i, ms := range members {
			if ms.MerchantID != merchantID {
				continue
			}
			if ms.Role == string(merchant.Owner) {
				owners++
			}
			if ms.Email == email {
				found = i
			}
		}
		if found < 0 {
			return ErrNotOnTeam
		}
		return change(tx, members[found], owners)
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// SetPassword gives a person a new password hash: every session of the old
// password ends, on every instance, with the next settings load. A person
// the merchants file holds changes theirs there.
func (s *Store) SetPassword(ctx context.Context, email, phc string) error {
	email = strings.ToLower(email)
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		people, err := tx.People(ctx)
		if err != nil {
			return err
		}
		for _, p := range people {
			if p.Email != email {
				continue
			}
			if p.Managed == merchant.ManagedByFile {
				return ErrManagedByFile
			}
			p.PasswordHash = phc
			if err := tx.PutPerson(ctx, p); err != nil {
				return err
			}
			return tx.Audit(ctx, say(EventPasswordChanged).line(Actor{Name: email}, ""))
		}
		return ErrNotOnTeam
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// SetLanguage keeps the console language a person chose, on every
// instance ("" to follow their browser's again).
func (s *Store) SetLanguage(ctx context.Context, by Actor, email, lang string) error {
	if u, ok := s.Dir.Person(email); ok && u.Language == lang {
		// Nothing changes: no version moves, no line is written.
		return nil
	}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if err := tx.SetLanguage(ctx, email, lang); err != nil {
			return err
		}
		return tx.Audit(ctx, say(EventLanguageChosen, ledger.Language(lang)).line(by, ""))
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}
