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
		return tx.Audit(ctx, say(EventMerchantAdded, ledger.Text(m.ID), ledger.Text(t.Prefix)).line(by, m.ID))
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
		event := EventMerchantEnabled
		if state == merchant.Disabled {
			event = EventMerchantDisabled
		}
		return tx.Audit(ctx, say(event).line(by, id))
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
	return s.change(ctx, by, id, version, func(m *merchant.Merchant) (said, error) {
		edit(m)
		return say(EventSettingsChanged), nil
	})
}

// change edits a merchant managed in the console in one settings change:
// edit is given a copy of it, whose lists and maps are its own, and says
// the audit line's event (EventSettingsChanged and EventRestartAddress are
// given the fields that changed). from, when not 0, is the version the edit was
// made from: a merchant saved since is a *ConflictError with its newer
// values. A value the rules refuse is a *merchant.FieldError; an edit that
// changes nothing writes nothing.
func (s *Store) change(ctx context.Context, by Actor, id string, from int64, edit func(*merchant.Merchant) (said, error)) error {
	return s.changeIn(ctx, by, id, from, func(_ *ledger.SettingsTx, m *merchant.Merchant) (said, error) { return edit(m) })
}

// changeIn is change for an edit that writes more in the same change of
// the settings (a published look's version).
func (s *Store) changeIn(ctx context.Context, by Actor, id string, from int64, edit func(*ledger.SettingsTx, *merchant.Merchant) (said, error)) error {
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
		line, err := edit(tx, &next)
		if err != nil {
			return err
		}
		if err := next.Check(); err != nil {
			return err
		}
		return s.writeNext(ctx, tx, by, row, current, &next, line)
	})
	if err != nil {
		return err
	}
	return s.Load(ctx)
}

// writeNext writes next as the version after row's, with the audit line
// said (the fields that differ from current given to the events that list
// them); nothing when no field differs.
func (s *Store) writeNext(ctx context.Context, tx *ledger.SettingsTx, by Actor, row ledger.MerchantRow, current, next *merchant.Merchant, line said) error {
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
	if line.event == EventSettingsChanged || line.event == EventRestartAddress {
		line.args = append(line.args, ledger.Fields(fields...))
	}
	return tx.Audit(ctx, line.line(by, row.ID))
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
		event, args := EventOperatorAdded, []ledger.AuditArg{ledger.Text(email)}
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
			event = EventOperatorPassword
			if len(names) > 0 {
				event, args = EventOperatorPasswordPasskeys, append(args, ledger.Text(strings.Join(names, ", ")))
			}
		}
		return tx.Audit(ctx, say(event, args...).line(Actor{Name: ByCommand}, ""))
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
			if err := tx.Audit(ctx, say(EventMerchantImported).line(Actor{Name: ByCommand}, m.ID)); err != nil {
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
			if err := tx.Audit(ctx, say(EventPersonImported, ledger.Text(strings.ToLower(u.Email))).line(Actor{Name: ByCommand}, "")); err != nil {
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
			if err := tx.Audit(ctx, say(EventDemoAdded).line(Actor{Name: BySandbox}, want.ID)); err != nil {
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
			if err := s.writeNext(ctx, tx, Actor{Name: BySandbox}, row, current, &next, say(EventRestartAddress)); err != nil {
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
		return tx.Audit(ctx, say(EventDemoPassword, ledger.Text(merchant.DemoConsoleEmail)).line(Actor{Name: BySandbox}, ""))
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
