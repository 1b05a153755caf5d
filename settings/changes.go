package settings

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
)

// Created is a new merchant with its first link key and API token, in the
// clear: shown once, to the person who made it.
type Created struct {
	Merchant   *merchant.Merchant
	Token      string
	KID        string
	LinkSecret string
}

// CreateMerchant makes a merchant managed in the console, active, with a
// first link key and API token, so that it can take payments at once. A
// bad value is a *merchant.FieldError, an id in use one on "id".
func (s *Store) CreateMerchant(ctx context.Context, by Actor, id, name string, returnOrigins []string) (Created, error) {
	kid := time.Now().UTC().Format("2006-01-02")
	c := Created{Token: s.NewToken(), KID: kid, LinkSecret: newSecret()}
	m := &merchant.Merchant{ID: strings.TrimSpace(id), Name: strings.TrimSpace(name), ReturnOrigins: returnOrigins,
		LinkKeys: map[string]string{kid: c.LinkSecret}, State: merchant.Active, Managed: merchant.ManagedByConsole}
	if err := m.Check(); err != nil {
		return c, err
	}
	if s.Keys == nil {
		return c, ErrNoKeys
	}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, exists, err := tx.Merchant(ctx, m.ID); err != nil {
			return err
		} else if exists {
			return merchant.Refuse("id", "%q is taken: a merchant's id is never used twice", m.ID).Says("idTaken", m.ID)
		}
		row, err := s.rowOf(m, merchant.Active, merchant.ManagedByConsole)
		if err != nil {
			return err
		}
		if _, err := tx.PutMerchant(ctx, row, by.Name); err != nil {
			return err
		}
		t := ledger.TokenRow{ID: newID("tok"), MerchantID: m.ID, Name: "first token", Hash: HashToken(c.Token),
			Prefix: tokenPrefix(c.Token), Managed: merchant.ManagedByConsole}
		if err := tx.AddToken(ctx, t); err != nil {
			return err
		}
		return tx.Audit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID, Action: "merchant added",
			Fields: "id, name, return_origins, link_keys (set), api_token " + t.Prefix + "… (set)"})
	})
	if err != nil {
		return c, err
	}
	if err := s.Load(ctx); err != nil {
		return c, err
	}
	c.Merchant, _ = s.Dir.Get(m.ID)
	return c, nil
}

// consoleMerchant reads a merchant the console may change: ErrNoMerchant
// when there is none, ErrManagedByFile when the merchants file manages it.
func consoleMerchant(ctx context.Context, tx *ledger.SettingsTx, id string) (ledger.MerchantRow, error) {
	row, exists, err := tx.Merchant(ctx, id)
	switch {
	case err != nil:
		return row, err
	case !exists:
		return row, ErrNoMerchant
	case row.Managed == merchant.ManagedByFile:
		return row, ErrManagedByFile
	}
	return row, nil
}

// ErrDisabled refuses a change to a disabled merchant's settings: no new
// tokens, link keys, webhook changes or publishing until an operator
// enables it again. Taking access away (revoking a token, a member, an
// invitation) stays possible.
var ErrDisabled = errors.New("the merchant is disabled: its settings are read-only")

// changeableMerchant is consoleMerchant for a change that adds or alters
// what the merchant serves: ErrDisabled for a disabled merchant.
func changeableMerchant(ctx context.Context, tx *ledger.SettingsTx, id string) (ledger.MerchantRow, error) {
	row, err := consoleMerchant(ctx, tx, id)
	if err == nil && row.State == merchant.Disabled {
		return row, ErrDisabled
	}
	return row, err
}

// SetState disables or enables a merchant managed in the console. A
// disabled merchant's links and API calls are refused; its people still
// sign in and read, and its open payments are still followed and told.
func (s *Store) SetState(ctx context.Context, by Actor, id, state string) error {
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		row, err := consoleMerchant(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case row.State == state:
			return nil
		}
		row.State = state
		if _, err := tx.PutMerchant(ctx, row, by.Name); err != nil {
			return err
		}
		action := "merchant enabled"
		if state == merchant.Disabled {
			action = "merchant disabled"
		}
		return tx.Audit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: id, Action: action, Fields: "state"})
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// Update changes a merchant managed in the console: edit is given a copy of
// the merchant at version (the one the person's form was made from) and
// changes it. A merchant saved since is a *ConflictError with its newer
// values; a bad value a *merchant.FieldError. Nothing changed writes
// nothing.
func (s *Store) Update(ctx context.Context, by Actor, id string, version int64, edit func(*merchant.Merchant)) error {
	return s.change(ctx, by, id, version, func(m *merchant.Merchant) (string, error) {
		edit(m)
		return "settings changed", nil
	})
}

// change edits a merchant managed in the console in one settings change:
// edit is given a copy of it, whose lists and maps are its own, and says
// the audit line's action. from, when not 0, is the version the edit was
// made from: a merchant saved since is a *ConflictError with its newer
// values. A value the rules refuse is a *merchant.FieldError; an edit that
// changes nothing writes nothing.
func (s *Store) change(ctx context.Context, by Actor, id string, from int64, edit func(*merchant.Merchant) (string, error)) error {
	return s.changeIn(ctx, by, id, from, func(_ *ledger.SettingsTx, m *merchant.Merchant) (string, error) { return edit(m) })
}

// changeIn is change for an edit that writes more in the same change of
// the settings (a published look's version).
func (s *Store) changeIn(ctx context.Context, by Actor, id string, from int64, edit func(*ledger.SettingsTx, *merchant.Merchant) (string, error)) error {
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		row, err := changeableMerchant(ctx, tx, id)
		if err != nil {
			return err
		}
		current, err := s.merchantOf(row, nil)
		if err != nil {
			return err
		}
		if from != 0 && row.Version != from {
			return &ConflictError{By: row.UpdatedBy, At: row.Updated, Newer: current}
		}
		next := *current
		next.ReturnOrigins, next.FrameAncestors = slices.Clone(current.ReturnOrigins), slices.Clone(current.FrameAncestors)
		next.LinkKeys, next.Retiring = maps.Clone(current.LinkKeys), maps.Clone(current.Retiring)
		if next.LinkKeys == nil {
			next.LinkKeys = map[string]string{}
		}
		action, err := edit(tx, &next)
		if err != nil {
			return err
		}
		if err := next.Check(); err != nil {
			return err
		}
		return s.writeNext(ctx, tx, by, row, current, &next, action, "")
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// writeNext writes next as the version after row's, with an audit line
// naming the fields that differ from current (and why, when said); nothing
// when none does.
func (s *Store) writeNext(ctx context.Context, tx *ledger.SettingsTx, by Actor, row ledger.MerchantRow, current, next *merchant.Merchant, action, why string) error {
	fields := changed(current, next)
	if len(fields) == 0 {
		return nil
	}
	nextRow, err := s.rowOf(next, row.State, row.Managed)
	if err != nil {
		return err
	}
	nextRow.Version = row.Version
	if _, err := tx.PutMerchant(ctx, nextRow, by.Name); err != nil {
		return err
	}
	list := strings.Join(fields, ", ")
	if why != "" {
		list += " (" + why + ")"
	}
	return tx.Audit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: row.ID, Action: action, Fields: list})
}

// AddOperator writes an operator with the password hash phc (the command
// line's operator add): a person who exists becomes an operator, keeping
// their memberships, with the new password, which ends every session of the
// old one, and without two-step sign-in or passkeys (they set them up
// again). It reports whether the person existed.
func (s *Store) AddOperator(ctx context.Context, email, phc string) (bool, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	existed := false
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		people, err := tx.People(ctx)
		if err != nil {
			return err
		}
		for _, p := range people {
			existed = existed || p.Email == email
		}
		if err := tx.PutPerson(ctx, ledger.PersonRow{Email: email, Operator: true, PasswordHash: phc, Managed: ledger.ManagedByCommand}); err != nil {
			return err
		}
		action, fields := "operator added: "+email, "email, password (set)"
		if existed {
			// The command line is the way back in for someone locked out:
			// a lost authenticator goes with the old password.
			if err := tx.SetTOTP(ctx, email, "", nil); err != nil {
				return err
			}
			names, err := tx.RemovePasskeys(ctx, email)
			if err != nil {
				return err
			}
			action, fields = "operator's password changed: "+email, "operator, password (set; their sessions ended), two-step sign-in (removed)"
			if len(names) > 0 {
				fields += ", passkeys (" + strings.Join(names, ", ") + ": removed)"
			}
		}
		return tx.Audit(ctx, ledger.AuditEntry{Actor: ByCommand, Action: action, Fields: fields})
	})
	return existed, err
}

// Import moves the merchants of a merchants file to console management,
// once: each is written as the file has it and is managed in the console
// from then on (the file's entry is ignored after). Its people stay, its
// operators become operators of the command line. It returns the ids
// imported and those that were already managed in the console.
func (s *Store) Import(ctx context.Context, file *merchant.Directory) (imported, skipped []string, err error) {
	if s.Keys == nil {
		return nil, nil, ErrNoKeys
	}
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		imported, skipped = nil, nil
		for _, m := range file.All() {
			row, exists, err := tx.Merchant(ctx, m.ID)
			if err != nil {
				return err
			}
			if exists && row.Managed == merchant.ManagedByConsole {
				skipped = append(skipped, m.ID)
				continue
			}
			next, err := s.rowOf(m, merchant.Active, merchant.ManagedByConsole)
			if err != nil {
				return err
			}
			next.Version = row.Version
			if _, err := tx.PutMerchant(ctx, next, ByCommand); err != nil {
				return err
			}
			if err := s.provisionToken(ctx, tx, m.ID, m.APIToken, merchant.ManagedByFile, ByCommand); err != nil {
				return err
			}
			if err := tx.Audit(ctx, ledger.AuditEntry{Actor: ByCommand, MerchantID: m.ID, Action: "merchant imported from the merchants file",
				Fields: "managed (console)"}); err != nil {
				return err
			}
			imported = append(imported, m.ID)
		}
		done := map[string]bool{}
		for _, id := range imported {
			done[id] = true
		}
		for _, u := range file.ConsoleUsers() {
			managed := ledger.ManagedByConsole
			if u.Operator {
				managed = ledger.ManagedByCommand
			}
			var moved []merchant.Membership
			for _, ms := range u.Memberships {
				if done[ms.Merchant.ID] {
					moved = append(moved, ms)
				}
			}
			if !u.Operator && len(moved) == 0 {
				continue
			}
			if err := tx.PutPerson(ctx, ledger.PersonRow{Email: u.Email, Operator: u.Operator, PasswordHash: u.PasswordHash, Managed: managed}); err != nil {
				return err
			}
			for _, ms := range moved {
				if err := tx.PutMembership(ctx, ledger.MembershipRow{Email: u.Email, MerchantID: ms.Merchant.ID, Role: string(ms.Role), Managed: ledger.ManagedByConsole}); err != nil {
					return err
				}
			}
			if err := tx.Audit(ctx, ledger.AuditEntry{Actor: ByCommand,
				Action: "person imported from the merchants file: " + strings.ToLower(u.Email)}); err != nil {
				return err
			}
		}
		return nil
	})
	return imported, skipped, err
}

// SeedDemo makes the demo merchant of sandbox mode, managed in the console,
// the first time; later starts only point its return origin and webhook at
// this start's address. The demo sign-in (demoHash, a new password each
// start) is an operator.
func (s *Store) SeedDemo(ctx context.Context, baseURL, demoHash string) error {
	demo, err := merchant.Demo(baseURL)
	if err != nil {
		return err
	}
	want, _ := demo.Get(merchant.DemoID)
	if s.Keys == nil {
		return ErrNoKeys
	}
	_, err = s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		row, exists, err := tx.Merchant(ctx, merchant.DemoID)
		if err != nil {
			return err
		}
		switch {
		case !exists:
			next, err := s.rowOf(want, merchant.Active, merchant.ManagedByConsole)
			if err != nil {
				return err
			}
			if _, err := tx.PutMerchant(ctx, next, BySandbox); err != nil {
				return err
			}
			t := ledger.TokenRow{ID: newID("tok"), MerchantID: want.ID, Name: "the demo token (published: sandbox mode only)",
				Hash: HashToken(want.APIToken), Prefix: tokenPrefix(want.APIToken), Managed: merchant.ManagedByConsole}
			if err := tx.AddToken(ctx, t); err != nil {
				return err
			}
			if err := tx.Audit(ctx, ledger.AuditEntry{Actor: BySandbox, MerchantID: want.ID, Action: "merchant added",
				Fields: "the demo shop of sandbox mode"}); err != nil {
				return err
			}
		case row.Managed == merchant.ManagedByConsole:
			current, err := s.merchantOf(row, nil)
			if err != nil {
				return err
			}
			next := *current
			u, _ := url.Parse(baseURL)
			if origin := merchant.Origin(u); !slices.Contains(next.ReturnOrigins, origin) {
				next.ReturnOrigins = append(slices.Clone(next.ReturnOrigins), origin)
			}
			if strings.HasSuffix(next.WebhookURL, merchant.DemoWebhookPath) || next.WebhookURL == "" {
				next.WebhookURL, next.WebhookSecret = want.WebhookURL, want.WebhookSecret
			}
			if err := s.writeNext(ctx, tx, Actor{Name: BySandbox}, row, current, &next, "settings changed", "this start's address"); err != nil {
				return err
			}
		}
		if demoHash == "" {
			return nil
		}
		if err := tx.PutPerson(ctx, ledger.PersonRow{Email: merchant.DemoConsoleEmail, Operator: true, PasswordHash: demoHash, Managed: ledger.ManagedByConsole}); err != nil {
			return err
		}
		// An operator, and the demo shop's owner: every page of the
		// console is there to see.
		if err := tx.PutMembership(ctx, ledger.MembershipRow{Email: merchant.DemoConsoleEmail, MerchantID: merchant.DemoID,
			Role: string(merchant.Owner), Managed: ledger.ManagedByConsole}); err != nil {
			return err
		}
		return tx.Audit(ctx, ledger.AuditEntry{Actor: BySandbox, Action: "operator's password changed: " + merchant.DemoConsoleEmail,
			Fields: "password (set: a new one each start in sandbox mode)"})
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// IsConflict reports a *ConflictError.
func IsConflict(err error) (*ConflictError, bool) {
	var ce *ConflictError
	ok := errors.As(err, &ce)
	return ce, ok
}
