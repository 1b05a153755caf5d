package settings

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Developers' settings: a merchant's API tokens, made and revoked in the
// console.

// MaxTokenName bounds a token's name.
const MaxTokenName = 100

// ErrNoToken means the merchant has no live token of that id.
var ErrNoToken = errors.New("no such token")

// MadeToken is a new API token, in the clear this once.
type MadeToken struct {
	ID, Token, Name string
	Expires         time.Time
}

// ParseExpiry reads a token's expiry as a form gives it: empty for never,
// or a date (YYYY-MM-DD); the token works through that day (UTC). A date
// that is not after today is a *merchant.FieldError.
func ParseExpiry(field, value string, now time.Time) (time.Time, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return time.Time{}, nil
	}
	day, err := time.Parse("2006-01-02", value)
	if err != nil {
		return time.Time{}, merchant.Refuse(field, "%q is not a date like 2027-01-31", value).Says("expiryDate", value)
	}
	expires := day.AddDate(0, 0, 1)
	if !expires.After(now) {
		return time.Time{}, merchant.Refuse(field, "the date is past: choose today or a later day, or leave it empty for a token that does not expire").Says("expiryPast")
	}
	return expires, nil
}

// MakeToken makes an API token for a merchant managed in the console:
// pbb_live_… (pbb_test_… in sandbox mode) and 43 base64url characters,
// kept as its SHA-256 only, and shown once. A bad name is a
// *merchant.FieldError on "name".
func (s *Store) MakeToken(ctx context.Context, by Actor, merchantID, name string, expires time.Time) (MadeToken, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return MadeToken{}, merchant.Refuse("name", "required: a name says where the token is used, like \"shop server\"").Says("tokenName")
	case n > MaxTokenName:
		return MadeToken{}, merchant.Refuse("name", "at most %d characters; this one has %d", MaxTokenName, n).Says("tooLongHas", MaxTokenName, n)
	}
	made := MadeToken{ID: newID("tok"), Token: s.NewToken(), Name: name, Expires: expires}
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := changeableMerchant(ctx, tx, merchantID); err != nil {
			return err
		}
		t := ledger.TokenRow{ID: made.ID, MerchantID: merchantID, Name: name, Hash: HashToken(made.Token),
			Prefix: tokenPrefix(made.Token), Managed: merchant.ManagedByConsole, Expires: expires}
		if err := tx.AddToken(ctx, t); err != nil {
			return err
		}
		line := say(EventTokenMade, ledger.Text(name), ledger.Text(t.Prefix))
		if !expires.IsZero() {
			line = say(EventTokenMadeExpiring, ledger.Text(name), ledger.Text(t.Prefix), ledger.Moment(expires))
		}
		return tx.Audit(ctx, line.line(by, merchantID))
	})
	if err != nil {
		return MadeToken{}, err
	}
	return made, s.Load(ctx)
}

// RevokeToken revokes one of a merchant's tokens: every instance refuses
// it with its next settings load. It returns the token's name.
func (s *Store) RevokeToken(ctx context.Context, by Actor, merchantID, id string) (string, error) {
	var name string
	_, err := s.Ledger.ChangeSettings(ctx, func(tx *ledger.SettingsTx) error {
		if _, err := consoleMerchant(ctx, tx, merchantID); err != nil {
			return err
		}
		tokens, err := tx.Tokens(ctx, merchantID)
		if err != nil {
			return err
		}
		for _, t := range tokens {
			if t.ID != id || !t.Revoked.IsZero() {
				continue
			}
			if _, err := tx.RevokeToken(ctx, merchantID, id); err != nil {
				return err
			}
			name = t.Name
			return tx.Audit(ctx, say(EventTokenRevoked, ledger.Text(t.Name), ledger.Text(t.Prefix)).line(by, merchantID))
		}
		return ErrNoToken
	})
	if err != nil {
		return "", err
	}
	return name, s.Load(ctx)
}

// Errors of link keys.
var (
	// ErrNoLinkKey means the merchant has no such link key.
	ErrNoLinkKey = errors.New("no such link key")
	// ErrLastLinkKey refuses to retire the only key new links are signed
	// with: make a new one first.
	ErrLastLinkKey = errors.New("the only link key not retiring: make a new one first")
)

// LinkKeyRetire is how long a retired key's links work by default.
const LinkKeyRetire = 24 * time.Hour

// MadeLinkKey is a new link key: its id and its secret (32 random bytes),
// in the clear this once.
type MadeLinkKey struct {
	KID, Secret string
}

// MakeLinkKey adds a link key to a merchant managed in the console; new
// links are signed with it from then on (its id, the day's date, sorts
// after the others').
func (s *Store) MakeLinkKey(ctx context.Context, by Actor, merchantID string, now time.Time) (MadeLinkKey, error) {
	var made MadeLinkKey
	err := s.change(ctx, by, merchantID, 0, func(m *merchant.Merchant) (said, error) {
		kid := now.UTC().Format("2006-01-02")
		for n := 2; ; n++ {
			if _, taken := m.LinkKeys[kid]; !taken {
				break
			}
			kid = fmt.Sprintf("%s-%d", now.UTC().Format("2006-01-02"), n)
		}
		made = MadeLinkKey{KID: kid, Secret: newSecret()}
		m.LinkKeys[kid] = made.Secret
		m.KeysMade = maps.Clone(m.KeysMade)
		if m.KeysMade == nil {
			m.KeysMade = map[string]time.Time{}
		}
		// The last made signs new links, whatever its id.
		m.KeysMade[kid] = now
		return say(EventLinkKeyMade, ledger.Text(kid)), nil
	})
	return made, err
}

// RetireLinkKey keeps links signed with kid working until until, and
// refuses them after, as the links of an unknown key. The key signs no new
// link; the last key that is not retiring stays.
func (s *Store) RetireLinkKey(ctx context.Context, by Actor, merchantID, kid string, until time.Time) error {
	return s.change(ctx, by, merchantID, 0, func(m *merchant.Merchant) (said, error) {
		if _, ok := m.LinkKeys[kid]; !ok {
			return said{}, ErrNoLinkKey
		}
		live := 0
		for k := range m.LinkKeys {
			if _, retiring := m.Retiring[k]; !retiring && k != kid {
				live++
			}
		}
		if live == 0 {
			return said{}, ErrLastLinkKey
		}
		if m.Retiring == nil {
			m.Retiring = map[string]time.Time{}
		}
		m.Retiring[kid] = until
		return say(EventLinkKeyRetired, ledger.Text(kid), ledger.Moment(until)), nil
	})
}

// MaxOverlap bounds how long an old webhook secret signs beside the new.
const MaxOverlap = 72 * time.Hour

// SetWebhook points a console merchant's webhooks at url. A merchant
// without a secret gets one, returned in the clear this once; "" when it
// had one. A bad URL, or one CheckWebhookAddress refuses, is a
// *merchant.FieldError on webhook_url.
func (s *Store) SetWebhook(ctx context.Context, by Actor, merchantID, url string) (string, error) {
	if err := s.CheckWebhookAddress(url); err != nil {
		return "", err
	}
	var made string
	err := s.change(ctx, by, merchantID, 0, func(m *merchant.Merchant) (said, error) {
		m.WebhookURL = strings.TrimSpace(url)
		if m.WebhookSecret == "" {
			made = newSecret()
			m.WebhookSecret = made
			return say(EventWebhookSetWithSecret, ledger.Text(m.WebhookURL)), nil
		}
		return say(EventWebhookSet, ledger.Text(m.WebhookURL)), nil
	})
	return made, err
}

// CheckWebhookAddress refuses, outside sandbox mode, a webhook URL whose
// host is an IP address that is not rules.PublicAddress: no delivery could ever
// reach it, since the app is no way into the networks behind it, so saving
// it anyway would only hide that. A host name is not looked up here: one
// that does not resolve yet may be saved anyway, and each delivery checks
// the addresses it resolves to then. In sandbox mode the merchant's server
// may be on this machine.
func (s *Store) CheckWebhookAddress(rawURL string) error {
	if s.Sandbox {
		return nil
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		// Not a URL at all: merchant.Check refuses it, in its words.
		return nil
	}
	addr, err := netip.ParseAddr(u.Hostname())
	if err != nil || rules.PublicAddress(addr) {
		return nil
	}
	return merchant.Refuse("webhook_url", "%s is not a public address: webhooks are sent only to servers on the internet", addr).Says("webhookPublic", addr.String())
}

// RollWebhookSecret makes a new webhook secret, returned in the clear this
// once; the old one signs beside it for overlap (0 to MaxOverlap), so that
// the merchant's server can move without a failed delivery.
func (s *Store) RollWebhookSecret(ctx context.Context, by Actor, merchantID string, overlap time.Duration, now time.Time) (string, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return "", merchant.Refuse("overlap", "hours from 0 to %d", int(MaxOverlap/time.Hour)).Says("overlap", int(MaxOverlap/time.Hour))
	}
	secret := newSecret()
	err := s.change(ctx, by, merchantID, 0, func(m *merchant.Merchant) (said, error) {
		if m.WebhookURL == "" {
			return said{}, merchant.Refuse("overlap", "there is no webhook endpoint yet: set one first").Says("noEndpoint")
		}
		m.PreviousWebhookSecret, m.PreviousUntil = "", time.Time{}
		if overlap > 0 {
			m.PreviousWebhookSecret, m.PreviousUntil = m.WebhookSecret, now.Add(overlap)
		}
		m.WebhookSecret = secret
		if overlap == 0 {
			return say(EventWebhookRolledAtOnce), nil
		}
		return say(EventWebhookRolled, ledger.Duration(overlap)), nil
	})
	return secret, err
}

// EndOverlap stops the old webhook secret signing beside the new.
func (s *Store) EndOverlap(ctx context.Context, by Actor, merchantID string) error {
	return s.change(ctx, by, merchantID, 0, func(m *merchant.Merchant) (said, error) {
		m.PreviousWebhookSecret, m.PreviousUntil = "", time.Time{}
		return say(EventWebhookOverlapEnded), nil
	})
}
