// Package settings keeps merchants' settings in the ledger and the running
// set in memory: every change is written with a new settings
// version; each instance polls that version and swaps in the whole set when
// it moves, so that a change is live everywhere within a second or two and
// no request reads settings from the database. The merchants file, when
// there is one, provisions its merchants into the ledger (read-only in the
// console); merchants made in the console are managed there. Secrets the
// app must sign with are sealed under SETTINGS_KEYS; API tokens are kept as
// SHA-256 hashes only. Every change the console or the command line makes
// goes through a function here that checks it and writes its audit line:
// merchants and their state, a shop's settings, the team and its
// invitations, two-step sign-in, API tokens, link keys and the webhook, and
// the Branding page's drafts, looks and logos.
package settings

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Who changed the settings, in the audit log, when it was no person.
const (
	ByFile    = "merchants file"
	ByCommand = "command line"
	// BySandbox is the demo merchant's set-up at each start in sandbox mode.
	BySandbox = "sandbox start"
)

// PollEvery is how often an instance reads the settings version.
const PollEvery = 250 * time.Millisecond

// Actor is who makes a change and from which request.
type Actor struct {
	Name      string
	RequestID string
}

// Store is the settings of a deployment: in the ledger, and the running set
// in Dir.
type Store struct {
	Ledger *ledger.Ledger
	// Keys seal secrets; nil without SETTINGS_KEYS, when only the merchants
	// file's merchants can be served (their secrets stay in the file).
	Keys *Keys
	// Dir is the running set, swapped in place by every load.
	Dir *merchant.Directory
	// Sandbox makes API tokens pbb_test_… instead of pbb_live_….
	Sandbox bool
	// Prepare is called with each new set before it is swapped in (the
	// provider clients of merchants' own keys are made there); an error
	// keeps the running set.
	Prepare func(*merchant.Directory) error
	Log     *slog.Logger
	// Every is how often the version is polled; PollEvery when zero.
	Every time.Duration

	mu sync.Mutex
	// file is the merchants file last provisioned: the clear secrets of
	// its merchants when SETTINGS_KEYS is not set.
	file *merchant.Directory
	// version is the settings version of the running set.
	version atomic.Int64
	// loaded is set once a set was loaded.
	loaded bool
	// warned are the merchants file's entries already said to be ignored.
	warned map[string]bool
}

// Version is the settings version the instance is serving.
func (s *Store) Version() int64 { return s.version.Load() }

// Errors of changes.
var (
	// ErrManagedByFile refuses a console change to a merchant the
	// merchants file manages.
	ErrManagedByFile = errors.New("managed by the merchants file: change it there")
	// ErrNoKeys refuses to store a secret without SETTINGS_KEYS.
	ErrNoKeys = errors.New("SETTINGS_KEYS is not set: secrets of merchants managed in the console cannot be sealed")
	// ErrNoMerchant means no merchant has the id.
	ErrNoMerchant = errors.New("no such merchant")
)

// ConflictError says a merchant was saved meanwhile, by whom, and what it
// holds now.
type ConflictError struct {
	By    string
	At    time.Time
	Newer *merchant.Merchant
}

func (e *ConflictError) Error() string {
	return "changed meanwhile by " + e.By
}

// doc is what a merchant's row keeps beside its name, state and manager.
// Secrets are sealed (or, for a file's merchant without SETTINGS_KEYS,
// fingerprints of the file's values).
type doc struct {
	ReturnOrigins  []string             `json:"return_origins"`
	FrameAncestors []string             `json:"frame_ancestors,omitempty"`
	Customization  *rules.Customization `json:"customization,omitempty"`
	IPVerification bool                 `json:"ip_verification,omitempty"`
	APIRate        float64              `json:"api_rate,omitempty"`
	PopularBanks   map[string][]string  `json:"popular_banks,omitempty"`
	WebhookURL     string               `json:"webhook_url,omitempty"`
	WebhookSecret  string               `json:"webhook_secret,omitempty"`
	PISAPIKey      string               `json:"pis_api_key,omitempty"`
	LinkKeys       map[string]string    `json:"link_keys,omitempty"`
	RequireTwoStep bool                 `json:"require_two_step,omitempty"`
	// LinkKeysUntil are the retiring link keys: unix milliseconds until
	// which links signed with each still work.
	LinkKeysUntil map[string]int64 `json:"link_keys_until,omitempty"`
	// LinkKeysMade are when the console made each link key (unix
	// milliseconds): the last made signs new links.
	LinkKeysMade map[string]int64 `json:"link_keys_made,omitempty"`
	// WebhookPrevious signs beside the webhook secret until
	// WebhookPreviousUntil (unix milliseconds), while a roll overlaps.
	WebhookPrevious      string `json:"webhook_previous_secret,omitempty"`
	WebhookPreviousUntil int64  `json:"webhook_previous_until,omitempty"`
	// Who is paid, and the shop's own account (not a secret: kept as it
	// is, and named but never said in the audit log, as every value).
	LegalName          string           `json:"legal_name,omitempty"`
	ContactEmail       string           `json:"contact_email,omitempty"`
	ContactPhone       string           `json:"contact_phone,omitempty"`
	ContactURL         string           `json:"contact_url,omitempty"`
	TermsURL           string           `json:"terms_url,omitempty"`
	PrivacyURL         string           `json:"privacy_url,omitempty"`
	TimeZone           string           `json:"time_zone,omitempty"`
	AccountName        string           `json:"account_name,omitempty"`
	AccountIBAN        string           `json:"account_iban,omitempty"`
	AccountBIC         string           `json:"account_bic,omitempty"`
	RefundApprovalOver *decimal.Decimal `json:"refund_approval_over,omitempty"`
}

// secretFields are the doc's fields whose values are secrets: the audit
// log says "set", "rolled" or "removed" of them, never more.
var secretFields = map[string]bool{"webhook_secret": true, "pis_api_key": true, "link_keys": true, "webhook_previous_secret": true}

// docOf is m's document with its secrets as seal gives them.
func docOf(m *merchant.Merchant, seal func(value, place string) (string, error)) (doc, error) {
	d := doc{
		ReturnOrigins: m.ReturnOrigins, FrameAncestors: m.FrameAncestors, Customization: m.Customization,
		IPVerification: m.IPVerification, APIRate: m.APIRate, PopularBanks: m.PopularBanks, WebhookURL: m.WebhookURL,
		RequireTwoStep: m.RequireTwoStep,
		LegalName:      m.LegalName, ContactEmail: m.ContactEmail, ContactPhone: m.ContactPhone, ContactURL: m.ContactURL,
		TermsURL: m.TermsURL, PrivacyURL: m.PrivacyURL, TimeZone: m.TimeZone,
		AccountName: m.AccountName, AccountIBAN: m.AccountIBAN, AccountBIC: m.AccountBIC, RefundApprovalOver: m.RefundApprovalOver,
	}
	for kid, until := range m.Retiring {
		if d.LinkKeysUntil == nil {
			d.LinkKeysUntil = map[string]int64{}
		}
		d.LinkKeysUntil[kid] = until.UnixMilli()
	}
	for kid, made := range m.KeysMade {
		if _, kept := m.LinkKeys[kid]; !kept {
			continue
		}
		if d.LinkKeysMade == nil {
			d.LinkKeysMade = map[string]int64{}
		}
		d.LinkKeysMade[kid] = made.UnixMilli()
	}
	var err error
	if m.WebhookSecret != "" {
		if d.WebhookSecret, err = seal(m.WebhookSecret, m.ID+"/webhook_secret"); err != nil {
			return d, err
		}
	}
	if m.PISAPIKey != "" {
		if d.PISAPIKey, err = seal(m.PISAPIKey, m.ID+"/pis_api_key"); err != nil {
			return d, err
		}
	}
	if m.PreviousWebhookSecret != "" {
		if d.WebhookPrevious, err = seal(m.PreviousWebhookSecret, m.ID+"/webhook_previous_secret"); err != nil {
			return d, err
		}
		d.WebhookPreviousUntil = m.PreviousUntil.UnixMilli()
	}
	if len(m.LinkKeys) > 0 {
		d.LinkKeys = make(map[string]string, len(m.LinkKeys))
		for kid, secret := range m.LinkKeys {
			if d.LinkKeys[kid], err = seal(secret, m.ID+"/link_keys/"+kid); err != nil {
				return d, err
			}
		}
	}
	return d, nil
}

// clear leaves a secret as it is: for comparing two merchants in memory.
func clear(value, _ string) (string, error) { return value, nil }

// sealFor seals a merchant's secrets for the ledger: under the keys when
// there are some, else (for a file's merchant only) as fingerprints.
func (s *Store) sealFor(managed string) func(value, place string) (string, error) {
	return func(value, place string) (string, error) {
		switch {
		case s.Keys != nil:
			return s.Keys.Seal(value, place), nil
		case managed == merchant.ManagedByFile:
			return fingerprint(value), nil
		}
		return "", ErrNoKeys
	}
}

// rowOf is m as the ledger keeps it.
func (s *Store) rowOf(m *merchant.Merchant, state, managed string) (ledger.MerchantRow, error) {
	d, err := docOf(m, s.sealFor(managed))
	if err != nil {
		return ledger.MerchantRow{}, err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return ledger.MerchantRow{}, err
	}
	return ledger.MerchantRow{ID: m.ID, Name: m.Name, State: state, Managed: managed, Doc: string(raw)}, nil
}

// merchantOf opens a row: its secrets unsealed, or taken from the merchants
// file when the ledger holds their fingerprints.
func (s *Store) merchantOf(row ledger.MerchantRow, file *merchant.Directory) (*merchant.Merchant, error) {
	var d doc
	if err := json.Unmarshal([]byte(row.Doc), &d); err != nil {
		return nil, fmt.Errorf("merchant %s: its settings do not read: %w", row.ID, err)
	}
	m := &merchant.Merchant{
		ID: row.ID, Name: row.Name, State: row.State, Managed: row.Managed, Version: row.Version,
		Updated: row.Updated, UpdatedBy: row.UpdatedBy,
		ReturnOrigins: d.ReturnOrigins, FrameAncestors: d.FrameAncestors, Customization: d.Customization,
		IPVerification: d.IPVerification, APIRate: d.APIRate, PopularBanks: d.PopularBanks, WebhookURL: d.WebhookURL,
		RequireTwoStep: d.RequireTwoStep,
		LegalName:      d.LegalName, ContactEmail: d.ContactEmail, ContactPhone: d.ContactPhone, ContactURL: d.ContactURL,
		TermsURL: d.TermsURL, PrivacyURL: d.PrivacyURL, TimeZone: d.TimeZone,
		AccountName: d.AccountName, AccountIBAN: d.AccountIBAN, AccountBIC: d.AccountBIC, RefundApprovalOver: d.RefundApprovalOver,
	}
	for kid, made := range d.LinkKeysMade {
		if m.KeysMade == nil {
			m.KeysMade = map[string]time.Time{}
		}
		m.KeysMade[kid] = time.UnixMilli(made)
	}
	for kid, until := range d.LinkKeysUntil {
		if m.Retiring == nil {
			m.Retiring = map[string]time.Time{}
		}
		m.Retiring[kid] = time.UnixMilli(until)
	}
	var fromFile *merchant.Merchant
	if file != nil {
		fromFile, _ = file.Get(row.ID)
	}
	open := func(stored, place string, inFile func(*merchant.Merchant) string) (string, error) {
		switch {
		case strings.HasPrefix(stored, sealPrefix):
			if s.Keys == nil {
				return "", fmt.Errorf("merchant %s: %s is sealed, and SETTINGS_KEYS is not set: %w", row.ID, place, ErrUnknownKey)
			}
			v, err := s.Keys.Open(stored, place)
			if err != nil {
				return "", fmt.Errorf("merchant %s: %s: %w (SETTINGS_KEYS must hold the key it was sealed under)", row.ID, place, err)
			}
			return v, nil
		case strings.HasPrefix(stored, fingerprintPrefix):
			if fromFile != nil {
				if v := inFile(fromFile); fingerprint(v) == stored {
					return v, nil
				}
			}
			return "", fmt.Errorf("merchant %s: %s %w (the same MERCHANTS_FILE on every instance, or set SETTINGS_KEYS and run merchants import)", row.ID, place, errNotInFile)
		}
		return "", fmt.Errorf("merchant %s: %s is neither sealed nor a fingerprint", row.ID, place)
	}
	var err error
	if d.WebhookSecret != "" {
		if m.WebhookSecret, err = open(d.WebhookSecret, row.ID+"/webhook_secret", func(f *merchant.Merchant) string { return f.WebhookSecret }); err != nil {
			return nil, err
		}
	}
	if d.PISAPIKey != "" {
		if m.PISAPIKey, err = open(d.PISAPIKey, row.ID+"/pis_api_key", func(f *merchant.Merchant) string { return f.PISAPIKey }); err != nil {
			return nil, err
		}
	}
	if d.WebhookPrevious != "" {
		if m.PreviousWebhookSecret, err = open(d.WebhookPrevious, row.ID+"/webhook_previous_secret", func(*merchant.Merchant) string { return "" }); err != nil {
			return nil, err
		}
		m.PreviousUntil = time.UnixMilli(d.WebhookPreviousUntil)
	}
	if len(d.LinkKeys) > 0 {
		m.LinkKeys = make(map[string]string, len(d.LinkKeys))
		for kid, stored := range d.LinkKeys {
			if m.LinkKeys[kid], err = open(stored, row.ID+"/link_keys/"+kid, func(f *merchant.Merchant) string { return f.LinkKeys[kid] }); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Load reads the settings and makes them the running set. Merchants whose
// version did not move keep their place in memory, so that what is kept
// for them (rendered pages) stays good; a changed merchant is a new one.
func (s *Store) Load(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, err := s.Ledger.Settings(ctx)
	if err != nil {
		return err
	}
	if s.loaded && snap.Version == s.version.Load() {
		return nil
	}
	next, err := s.build(snap)
	if err != nil {
		return err
	}
	if s.Prepare != nil {
		if err := s.Prepare(next); err != nil {
			return err
		}
	}
	s.Dir.Replace(next)
	s.version.Store(snap.Version)
	s.loaded = true
	return nil
}

func (s *Store) build(snap ledger.SettingsSnapshot) (*merchant.Directory, error) {
	list := make([]*merchant.Merchant, 0, len(snap.Merchants))
	byID := make(map[string]*merchant.Merchant, len(snap.Merchants))
	for _, row := range snap.Merchants {
		m, kept := s.Dir.Get(row.ID)
		if !kept || m.Version != row.Version || (m.State != row.State && m.Unopened == "") || m.Managed != row.Managed || m.Unopened != "" {
			var err error
			if m, err = s.merchantOf(row, s.file); err != nil {
				m = s.unopened(row, err)
			}
		}
		list = append(list, m)
		byID[m.ID] = m
	}
	tokens := make([]merchant.Token, 0, len(snap.Tokens))
	for _, t := range snap.Tokens {
		m, ok := byID[t.MerchantID]
		raw, err := hex.DecodeString(t.Hash)
		if !ok || err != nil || len(raw) != sha256.Size {
			continue
		}
		tokens = append(tokens, merchant.Token{ID: t.ID, Hash: [32]byte(raw), Merchant: m, Expires: t.Expires})
	}
	byEmail := make(map[string]*merchant.ConsoleUser, len(snap.People))
	for _, p := range snap.People {
		u := &merchant.ConsoleUser{Email: p.Email, PasswordHash: p.PasswordHash, Managed: p.Managed, Operator: p.Operator, Language: p.Language}
		if p.TOTPSecret != "" {
			// A secret that does not open leaves two-step sign-in on with
			// no code right: the person signs in with a recovery code, or
			// an operator resets it. Nobody else is stopped.
			u.TwoStep = true
			if secret, err := s.openTOTP(p.Email, p.TOTPSecret); err != nil {
				s.warnOnce("totp "+p.Email+" "+p.TOTPSecret, "settings: a person's two-step secret does not open; only their recovery codes sign them in", "err", err)
			} else {
				u.TOTPSecret = secret
			}
		}
		u.Passkeys = p.Passkeys
		byEmail[p.Email] = u
	}
	for _, ms := range snap.Memberships {
		u, m := byEmail[ms.Email], byID[ms.MerchantID]
		role, ok := merchant.ParseRole(ms.Role)
		if u == nil || m == nil || !ok {
			continue
		}
		u.Memberships = append(u.Memberships, merchant.Membership{Merchant: m, Role: role})
	}
	people := make([]*merchant.ConsoleUser, 0, len(snap.People))
	for _, p := range snap.People {
		people = append(people, byEmail[p.Email])
	}
	d, err := merchant.Build(list, tokens, people)
	if err != nil {
		return nil, err
	}
	d.RequirePasskeysOfOperators(snap.OperatorsPasskeys)
	return d, nil
}

// errNotInFile means a secret the ledger keeps as a fingerprint of the
// merchants file's value is not in the file any more.
var errNotInFile = errors.New("is kept in the merchants file, which does not hold it")

// unopened is a merchant whose settings do not open: disabled, with the
// reason, logged once; its open payments are still followed, and every
// other merchant serves.
func (s *Store) unopened(row ledger.MerchantRow, err error) *merchant.Merchant {
	kind := merchant.UnopenedDamaged
	switch {
	case errors.Is(err, ErrUnknownKey):
		kind = merchant.UnopenedKey
	case errors.Is(err, errNotInFile):
		kind = merchant.UnopenedFile
	}
	s.warnOnce(fmt.Sprint("unopened ", row.ID, " ", row.Version, " ", err), "settings: a merchant's settings do not open: it is disabled, and every other merchant serves",
		"merchant", row.ID, "reason", err)
	return &merchant.Merchant{ID: row.ID, Name: row.Name, State: merchant.Disabled, Managed: row.Managed, Version: row.Version,
		Updated: row.Updated, UpdatedBy: row.UpdatedBy, Unopened: err.Error(), UnopenedKind: kind}
}

// warnOnce logs msg the first time key is seen; s.mu is held.
func (s *Store) warnOnce(key, msg string, args ...any) {
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	if s.warned[key] {
		return
	}
	s.warned[key] = true
	s.Log.Error(msg, args...)
}

// maskEmail shows enough of an e-mail to tell people apart in the log.
func maskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" {
		return "(not an e-mail)"
	}
	return string([]rune(local)[:1]) + "…@" + domain
}

// Unopened lists the merchants whose settings did not open, each with its
// reason, for /readyz and the operators' Merchants page.
func (s *Store) Unopened() []string {
	var out []string
	for _, m := range s.Dir.All() {
		if m.Unopened != "" {
			out = append(out, m.Unopened)
		}
	}
	return out
}

// ByStart is the actor of what a start of the app finds and writes down.
const ByStart = "app start"

// AuditUnopened writes to the audit log each merchant this start disabled
// because its settings do not open, with the reason's kind (never a
// secret): an operator sees when and why a merchant stopped being served.
func (s *Store) AuditUnopened(ctx context.Context) error {
	var list []*merchant.Merchant
	for _, m := range s.Dir.All() {
		if m.Unopened != "" {
			list = append(list, m)
		}
	}
	if len(list) == 0 {
		return nil
	}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		for _, m := range list {
			if err := tx.Audit(ctx, say(EventDisabledAtStart, ledger.Reason(m.UnopenedKind)).line(Actor{Name: ByStart}, m.ID)); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// Watch polls the settings version until ctx ends, and loads the settings
// when it moves. It first seals again, under the newest key, every secret
// sealed under an older one.
func (s *Store) Watch(ctx context.Context) {
	every := s.Every
	if every <= 0 {
		every = PollEvery
	}
	if s.Keys != nil {
		if n, err := s.Reseal(ctx); err != nil {
			s.Log.Warn("settings: sealing secrets under the newest SETTINGS_KEYS key", "err", err)
		} else if n > 0 {
			s.Log.Info("settings: secrets sealed again under the newest SETTINGS_KEYS key", "merchants", n)
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v, err := s.Ledger.SettingsVersion(ctx)
		if err == nil && v != s.version.Load() {
			err = s.Load(ctx)
		}
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			// Once per failure: the payments ledger's outage is told by
			// the app's own outage line too.
			failing = true
			s.Log.Error("settings: reading changes failed; the running settings stay", "err", err)
		case err == nil && failing:
			failing = false
			s.Log.Info("settings: reading changes again")
		}
	}
}

// Reseal seals again, under the newest key, every secret sealed under an
// older one: merchants' secrets and people's two-step secrets alike, so
// that the older key can then be removed from SETTINGS_KEYS. The values
// stay the same, so no version moves. A merchant or person whose secret
// does not open is left as it is (it is disabled, or its two-step sign-in
// refused, with the reason in the log) and the others are sealed again. It
// returns how many merchants and people it sealed again.
func (s *Store) Reseal(ctx context.Context) (int, error) {
	snap, err := s.Ledger.Settings(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var failed []error
	for _, row := range snap.Merchants {
		var d doc
		if err := json.Unmarshal([]byte(row.Doc), &d); err != nil {
			failed = append(failed, fmt.Errorf("merchant %s: %w", row.ID, err))
			continue
		}
		stale := false
		again := func(stored, place string) (string, error) {
			if !strings.HasPrefix(stored, sealPrefix) || s.Keys.Newest(stored) {
				return stored, nil
			}
			v, err := s.Keys.Open(stored, place)
			if err != nil {
				return "", fmt.Errorf("merchant %s: %s: %w", row.ID, place, err)
			}
			stale = true
			return s.Keys.Seal(v, place), nil
		}
		var errs []error
		var err error
		d.WebhookSecret, err = again(d.WebhookSecret, row.ID+"/webhook_secret")
		errs = append(errs, err)
		d.PISAPIKey, err = again(d.PISAPIKey, row.ID+"/pis_api_key")
		errs = append(errs, err)
		d.WebhookPrevious, err = again(d.WebhookPrevious, row.ID+"/webhook_previous_secret")
		errs = append(errs, err)
		for kid, stored := range d.LinkKeys {
			d.LinkKeys[kid], err = again(stored, row.ID+"/link_keys/"+kid)
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			failed = append(failed, err)
			continue
		}
		if !stale {
			continue
		}
		raw, err := json.Marshal(d)
		if err != nil {
			return n, err
		}
		done, err := s.Ledger.ResealMerchant(ctx, row.ID, row.Version, row.Doc, string(raw))
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	for _, p := range snap.People {
		if p.TOTPSecret == "" || s.Keys.Newest(p.TOTPSecret) {
			continue
		}
		secret, err := s.openTOTP(p.Email, p.TOTPSecret)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		done, err := s.Ledger.ResealTOTP(ctx, p.Email, p.TOTPSecret, s.Keys.Seal(secret, totpPlace(p.Email)))
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, errors.Join(failed...)
}

// changed names the settings that differ between a and b, as
// ledger.Fields takes them: secrets by name and what happened to them
// only ("name", "return_origins", "link_keys:rolled").
func changed(a, b *merchant.Merchant) []string {
	var names []string
	if a == nil {
		a = &merchant.Merchant{}
	}
	if a.Name != b.Name {
		names = append(names, "name")
	}
	da, _ := docOf(a, clear)
	db, _ := docOf(b, clear)
	ja, jb := fieldsOf(da), fieldsOf(db)
	union := maps.Clone(jb)
	maps.Copy(union, ja)
	keys := slices.Sorted(maps.Keys(union))
	for _, k := range keys {
		va, vb := ja[k], jb[k]
		if va == vb {
			continue
		}
		if k == "link_keys_made" {
			// Said by link_keys itself.
			continue
		}
		if !secretFields[k] {
			names = append(names, k)
			continue
		}
		switch {
		case va == "" || va == "null":
			names = append(names, k+":set")
		case vb == "" || vb == "null":
			names = append(names, k+":removed")
		default:
			names = append(names, k+":rolled")
		}
	}
	return names
}

func fieldsOf(d doc) map[string]string {
	raw, _ := json.Marshal(d)
	var fields map[string]json.RawMessage
	json.Unmarshal(raw, &fields)
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		out[k] = string(v)
	}
	return out
}

// Provision writes the merchants file's merchants, console users and
// operators into the ledger as managed by the file (at start and at each
// SIGHUP). A merchant that left the file is disabled, not forgotten: its
// open payments are still followed and told. Entries of merchants managed
// in the console (imported) are ignored, with a warning. Nothing is written
// when nothing changed. The running set is loaded afterwards.
func (s *Store) Provision(ctx context.Context, file *merchant.Directory) error {
	s.mu.Lock()
	s.file = file
	s.mu.Unlock()
	var ignored []string
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		rows, err := tx.Merchants(ctx)
		if err != nil {
			return err
		}
		inFile := map[string]bool{}
		for _, m := range file.All() {
			inFile[m.ID] = true
		}
		for _, row := range rows {
			if row.Managed != merchant.ManagedByFile || inFile[row.ID] || row.State == merchant.Disabled {
				continue
			}
			row.State = merchant.Disabled
			if _, err := tx.PutMerchant(ctx, row, ByFile); err != nil {
				return err
			}
			if err := tx.Audit(ctx, say(EventMerchantLeftFile).line(Actor{Name: ByFile}, row.ID)); err != nil {
				return err
			}
		}
		byID := map[string]ledger.MerchantRow{}
		for _, row := range rows {
			byID[row.ID] = row
		}
		for _, m := range file.All() {
			row, exists := byID[m.ID]
			if exists && row.Managed != merchant.ManagedByFile {
				ignored = append(ignored, m.ID)
				continue
			}
			if err := s.provisionMerchant(ctx, tx, file, m, row, exists); err != nil {
				return err
			}
		}
		return s.provisionPeople(ctx, tx, file)
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	for _, id := range ignored {
		if !s.warned[id] {
			s.warned[id] = true
			s.Log.Warn("merchants file: this merchant is managed in the console since it was imported; its entry in the file is ignored", "merchant", id)
		}
	}
	s.mu.Unlock()
	return s.Load(ctx)
}

// provisionMerchant writes one of the file's merchants when it differs
// from the ledger's, and its API token.
func (s *Store) provisionMerchant(ctx context.Context, tx *ledger.SettingsTx, file *merchant.Directory, m *merchant.Merchant, row ledger.MerchantRow, exists bool) error {
	var old *merchant.Merchant
	if exists {
		var err error
		if old, err = s.merchantOf(row, file); err != nil {
			// The ledger's copy does not open (a fingerprint of a value
			// the file no longer has): the file's is written over it.
			old = &merchant.Merchant{ID: row.ID, Name: row.Name}
		}
	}
	fields := changed(old, m)
	if !exists || len(fields) > 0 || row.State != merchant.Active {
		next, err := s.rowOf(m, merchant.Active, merchant.ManagedByFile)
		if err != nil {
			return err
		}
		next.Version = row.Version
		if _, err := tx.PutMerchant(ctx, next, ByFile); err != nil {
			return err
		}
		event := EventMerchantFileChanged
		switch {
		case !exists:
			event = EventMerchantFileAdded
		case row.State != merchant.Active:
			event = EventMerchantFileBack
		}
		if err := tx.Audit(ctx, say(event, ledger.Fields(fields...)).line(Actor{Name: ByFile}, m.ID)); err != nil {
			return err
		}
	}
	return s.provisionToken(ctx, tx, m.ID, m.APIToken, merchant.ManagedByFile, ByFile)
}

// provisionToken makes token the merchant's only token from the file:
// one the file held before is revoked.
func (s *Store) provisionToken(ctx context.Context, tx *ledger.SettingsTx, merchantID, token, managed, by string) error {
	hash := HashToken(token)
	tokens, err := tx.Tokens(ctx, merchantID)
	if err != nil {
		return err
	}
	have := false
	for _, t := range tokens {
		switch {
		case t.Hash == hash && t.Revoked.IsZero():
			have = true
		case t.Managed == merchant.ManagedByFile && t.Revoked.IsZero():
			if _, err := tx.RevokeToken(ctx, merchantID, t.ID); err != nil {
				return err
			}
			if err := tx.Audit(ctx, say(EventFileTokenRevoked, ledger.Text(t.Prefix)).line(Actor{Name: by}, merchantID)); err != nil {
				return err
			}
		}
	}
	if have {
		return nil
	}
	t := ledger.TokenRow{ID: newID("tok"), MerchantID: merchantID, Name: "from the merchants file", Hash: hash,
		Prefix: tokenPrefix(token), Managed: managed}
	if err := tx.AddToken(ctx, t); err != nil {
		return err
	}
	return tx.Audit(ctx, say(EventFileTokenAdded, ledger.Text(t.Prefix)).line(Actor{Name: by}, merchantID))
}

// provisionPeople writes the file's console users (with their role at
// their merchant) and operators, and removes what the file made that it no
// longer holds. People and memberships made in the console or on the
// command line are left alone; so are the people of a merchant that left
// the file, who still sign in to read what happened to its payments.
func (s *Store) provisionPeople(ctx context.Context, tx *ledger.SettingsTx, file *merchant.Directory) error {
	people, err := tx.People(ctx)
	if err != nil {
		return err
	}
	memberships, err := tx.Memberships(ctx)
	if err != nil {
		return err
	}
	have := map[string]ledger.PersonRow{}
	for _, p := range people {
		have[p.Email] = p
	}
	type place struct{ email, merchantID string }
	member := map[place]ledger.MembershipRow{}
	for _, m := range memberships {
		member[place{m.Email, m.MerchantID}] = m
	}
	audit := func(merchantID string, line said) error {
		return tx.Audit(ctx, line.line(Actor{Name: ByFile}, merchantID))
	}
	wantPerson, wantMember := map[string]bool{}, map[place]bool{}
	for _, u := range file.ConsoleUsers() {
		email := strings.ToLower(u.Email)
		wantPerson[email] = true
		old, exists := have[email]
		if exists && old.Managed != merchant.ManagedByFile {
			continue
		}
		if !exists || old.PasswordHash != u.PasswordHash || old.Operator != u.Operator {
			if err := tx.PutPerson(ctx, ledger.PersonRow{Email: email, Operator: u.Operator, PasswordHash: u.PasswordHash, Managed: merchant.ManagedByFile}); err != nil {
				return err
			}
			line := say(EventPersonAdded, ledger.Text(email))
			if u.Operator {
				line = say(EventOperatorAdded, ledger.Text(email))
			}
			if exists {
				line = say(EventPersonChanged, ledger.Text(email), ledger.Fields(personChanges(old, u)...))
			}
			if err := audit("", line); err != nil {
				return err
			}
		}
		for _, ms := range u.Memberships {
			at := place{email, ms.Merchant.ID}
			wantMember[at] = true
			if m, ok := member[at]; ok && (m.Managed != merchant.ManagedByFile || m.Role == string(ms.Role)) {
				continue
			}
			if err := tx.PutMembership(ctx, ledger.MembershipRow{Email: email, MerchantID: ms.Merchant.ID, Role: string(ms.Role), Managed: merchant.ManagedByFile}); err != nil {
				return err
			}
			if err := audit(ms.Merchant.ID, say(EventRoleChanged, ledger.Text(email), ledger.Role(string(ms.Role)))); err != nil {
				return err
			}
		}
	}
	// What the file made and no longer holds goes, but for the people of
	// a merchant that left the file.
	staying := map[string]bool{}
	for _, m := range memberships {
		at := place{m.Email, m.MerchantID}
		_, inFile := file.Get(m.MerchantID)
		switch {
		case m.Managed != merchant.ManagedByFile || wantMember[at]:
			staying[m.Email] = true
		case !inFile:
			staying[m.Email] = true
		default:
			if err := tx.RemoveMembership(ctx, m.Email, m.MerchantID); err != nil {
				return err
			}
			if err := audit(m.MerchantID, say(EventMemberRemoved, ledger.Text(m.Email))); err != nil {
				return err
			}
		}
	}
	for _, p := range people {
		if p.Managed != merchant.ManagedByFile || wantPerson[p.Email] || staying[p.Email] {
			continue
		}
		if err := tx.RemovePerson(ctx, p.Email); err != nil {
			return err
		}
		if err := audit("", say(EventPersonRemoved, ledger.Text(p.Email))); err != nil {
			return err
		}
	}
	return nil
}

// personChanges names what the merchants file changed of a person, as
// ledger.Fields takes them.
func personChanges(old ledger.PersonRow, u *merchant.ConsoleUser) []string {
	var f []string
	if old.Operator != u.Operator {
		f = append(f, "operator")
	}
	if old.PasswordHash != u.PasswordHash {
		f = append(f, "password:set")
	}
	return f
}

// HashToken is how the ledger keeps an API token: its SHA-256 in hex. A
// token is 32 random bytes or more, so a plain hash cannot be reversed.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenPrefix is the start of a token shown to tell tokens apart: the
// pbb_live_/pbb_test_ prefix and 4 characters, or a file's token's first 4.
func tokenPrefix(token string) string {
	for _, p := range []string{LivePrefix, TestPrefix} {
		if strings.HasPrefix(token, p) && len(token) > len(p)+4 {
			return token[:len(p)+4]
		}
	}
	if len(token) > 4 {
		return token[:4]
	}
	return ""
}

// Prefixes of the API tokens the app makes, so that secret scanners know
// them: live outside sandbox mode, test in it.
const (
	LivePrefix = "pbb_live_"
	TestPrefix = "pbb_test_"
)

// NewToken makes an API token: the prefix and 32 random bytes, base64url.
func (s *Store) NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	prefix := LivePrefix
	if s.Sandbox {
		prefix = TestPrefix
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func newID(kind string) string {
	b := make([]byte, 9)
	rand.Read(b)
	return kind + "_" + base64.RawURLEncoding.EncodeToString(b)
}

// newSecret is a link key's or webhook's secret: 32 random bytes.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
