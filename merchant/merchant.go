// Package merchant is the configuration of the shops a deployment serves:
// their link keys and API tokens, where shoppers may be sent back, who may
// frame the picker, how their checkout looks, their webhook, who is paid
// and the account their refunds are paid from, their state and who manages
// them, and the people of their teams with their roles. It holds
// the rules every merchant's settings keep (Check), the merchants file
// (MERCHANTS_FILE, described in docs/integrate.md) and the directory every
// request reads, swapped whole.
package merchant

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/rules"
)

// MinSecretLength is the shortest link key or API token accepted: shorter
// secrets can be guessed.
const MinSecretLength = 32

// MaxAPIRate bounds a merchant's api_rate (and API_RATE): past it, one
// token could take the whole instance.
const MaxAPIRate = 10000

// MaxIDLength bounds a merchant id, which prefixes every order id sent to
// the provider.
const MaxIDLength = 32

// Merchant is one shop.
type Merchant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// LinkKeys maps a key id (kid) to its secret. Several keys live side by
	// side so that a merchant can rotate without downtime.
	LinkKeys map[string]string `json:"link_keys"`
	// Retiring are the link keys retired in the console, with the time
	// until which links signed with each still work.
	Retiring map[string]time.Time `json:"-"`
	// KeysMade are when each link key made in the console was made: the
	// last made signs new links. Keys of the merchants file have none.
	KeysMade map[string]time.Time `json:"-"`
	// APIToken is the bearer token of the merchant's server-to-server calls.
	APIToken string `json:"api_token"`
	// APIRate is how many API requests a second the merchant's token may
	// make on average, with bursts of twice that; the deployment's API_RATE
	// when zero.
	APIRate float64 `json:"api_rate"`
	// PISAPIKey is the provider key used for this merchant's payments; the
	// deployment's PIS_API_KEY when empty.
	PISAPIKey string `json:"pis_api_key"`
	// ReturnOrigins are the origins a return_url may point to.
	ReturnOrigins []string `json:"return_origins"`
	// FrameAncestors are the origins that may embed the picker.
	FrameAncestors []string             `json:"frame_ancestors"`
	Customization  *rules.Customization `json:"customization"`
	IPVerification bool                 `json:"ip_verification"`
	// WebhookURL receives every change of an order's status
	// (docs/integrate.md), signed with WebhookSecret; none when empty.
	WebhookURL    string `json:"webhook_url"`
	WebhookSecret string `json:"webhook_secret"`
	// PreviousWebhookSecret signs deliveries beside WebhookSecret until
	// PreviousUntil, while the merchant's server moves to the new one.
	PreviousWebhookSecret string    `json:"-"`
	PreviousUntil         time.Time `json:"-"`
	// PopularBanks pins the banks shown first on the bank page, by country
	// code: {"DE": ["sparkasse-berlin", "ing"]}. Without pins, the banks
	// most paid with in the last 30 days come first.
	PopularBanks map[string][]string `json:"popular_banks"`
	// ConsoleUsers are the people who sign in to the console to see this
	// merchant's payments, and only this merchant's.
	ConsoleUsers []*ConsoleUser `json:"console_users"`
	// RequireTwoStep takes every person of the team who signs in without
	// two-step sign-in to set it up before anything else.
	RequireTwoStep bool `json:"require_two_step"`

	// Who is paid: the payee as payers' pages and receipts name it, and
	// how payers reach the shop. Each is optional; the URLs are https.
	LegalName    string `json:"legal_name"`
	ContactEmail string `json:"contact_email"`
	ContactPhone string `json:"contact_phone"`
	ContactURL   string `json:"contact_url"`
	TermsURL     string `json:"terms_url"`
	PrivacyURL   string `json:"privacy_url"`
	// TimeZone is the IANA name of the zone the shop's times are said in
	// (DefaultTimeZone when empty): read it through Location.
	TimeZone string `json:"time_zone"`

	// The shop's own bank account, the debtor of its refunds' transfers:
	// the holder's name and the IBAN go together, the BIC is optional.
	// AccountIBAN is kept as Check writes it back: without spaces, in
	// upper case. It is no secret, but only the people who may change the
	// settings see it whole (MaskIBAN for the others).
	AccountName string `json:"account_name"`
	AccountIBAN string `json:"account_iban"`
	AccountBIC  string `json:"account_bic"`
	// RefundApprovalOver is the amount in euros above which a refund needs
	// the approval of an owner other than the person who made it; nil for
	// never. A pointer rather than a zero amount, so that "never" cannot
	// be mistaken for "every refund". The merchants file writes it as a
	// decimal string ("500.00"), read as ParseRefundApprovalOver reads a
	// person's.
	RefundApprovalOver *decimal.Decimal `json:"refund_approval_over"`

	// State is MerchantActive or MerchantDisabled: a disabled merchant's
	// links and API calls are refused, while its open payments are still
	// followed and told. A merchant read from a file is active.
	State string `json:"-"`
	// Managed says where the merchant is changed: ManagedByFile (read-only
	// in the console) or ManagedByConsole.
	Managed string `json:"-"`
	// Version counts the merchant's saved changes (0 for one only read
	// from a file): a save names the version it was made from.
	Version int64 `json:"-"`
	// Updated and UpdatedBy say when and by whom it was last changed.
	Updated   time.Time `json:"-"`
	UpdatedBy string    `json:"-"`
	// Unopened says why the merchant's settings could not be opened (a
	// secret sealed under a key no longer held, one the merchants file no
	// longer carries): the merchant is then disabled, and every other one
	// serves. UnopenedKind is UnopenedKey, UnopenedFile or UnopenedDamaged.
	Unopened     string `json:"-"`
	UnopenedKind string `json:"-"`
}

// Why a merchant's settings did not open.
const (
	UnopenedKey     = "key"
	UnopenedFile    = "file"
	UnopenedDamaged = "damaged"
)

// States and managers of a merchant.
const (
	Active           = "active"
	Disabled         = "disabled"
	ManagedByFile    = "file"
	ManagedByConsole = "console"
)

// Disabled reports whether the merchant refuses new links and API calls.
func (m *Merchant) Disabled() bool { return m.State == Disabled }

// ReadOnly reports whether the merchant is managed by the merchants file,
// and so cannot be changed in the console.
func (m *Merchant) ReadOnly() bool { return m.Managed == ManagedByFile }

// ConsoleUser is one person who signs in to the console.
type ConsoleUser struct {
	Email string `json:"email"`
	// PasswordHash is an argon2id PHC string (`go run . console-password`).
	PasswordHash string `json:"password_hash"`
	// Role is a file's console user's role at its merchant; owner when the
	// file says none.
	Role Role `json:"role"`
	// Operator sees and changes every merchant.
	Operator bool `json:"-"`
	// TwoStep is on when the person signs in with a code after their
	// password; TOTPSecret is then the secret of their codes (RFC 6238).
	TwoStep    bool   `json:"-"`
	TOTPSecret string `json:"-"`
	// Passkeys counts the person's passkeys: each signs them in alone, and
	// meets a team's requirement of two-step sign-in.
	Passkeys int `json:"-"`
	// Memberships are the merchants the person belongs to, with their
	// role at each.
	Memberships []Membership `json:"-"`
	// Managed says where the person was made: the merchants file, the
	// console or the command line (operator add).
	Managed string `json:"-"`
	// Language is the console's language the person chose; empty while
	// they follow their browser's.
	Language string `json:"-"`
	hashed   password.Hashed
}

// Membership is a person's role at one merchant.
type Membership struct {
	Merchant *Merchant
	Role     Role
}

// RoleAt is the person's role at merchant id, if they belong to it.
func (u *ConsoleUser) RoleAt(id string) (Role, bool) {
	for _, m := range u.Memberships {
		if m.Merchant.ID == id {
			return m.Role, true
		}
	}
	return "", false
}

// Matches reports whether pw is the user's password.
func (u *ConsoleUser) Matches(pw string) bool { return u.hashed.Matches(pw) }

// Hashed is the user's parsed hash.
func (u *ConsoleUser) Hashed() password.Hashed { return u.hashed }

// checkConsoleUsers reads the hashes of a list of console users (field names
// the list in errors) and refuses an e-mail seen before.
func (d *set) checkConsoleUsers(field string, users []*ConsoleUser, m *Merchant) error {
	for i, u := range users {
		if u == nil {
			return fmt.Errorf("%s[%d]: not an object with email and password_hash", field, i)
		}
		addr, err := mail.ParseAddress(u.Email)
		if err != nil || addr.Address != u.Email || addr.Name != "" {
			return fmt.Errorf("%s[%d].email: %q is not a plain e-mail address like ops@shop.example", field, i, u.Email)
		}
		key := strings.ToLower(u.Email)
		if seen, dup := d.users[key]; dup {
			// One person on several merchants' teams: one password, a
			// membership at each.
			if _, twice := seen.RoleAt(idOf(m)); m == nil || seen.Operator || twice || seen.PasswordHash != u.PasswordHash {
				return fmt.Errorf("%s[%d].email: %s is listed twice: a person may be on several merchants' teams, once each, with one password_hash", field, i, u.Email)
			}
			role := u.Role
			if role == "" {
				role = Owner
			}
			if _, ok := ParseRole(string(role)); !ok {
				return fmt.Errorf("%s[%d].role (%s): %q is not one of %s", field, i, u.Email, role, RoleNames())
			}
			seen.Memberships = append(seen.Memberships, Membership{Merchant: m, Role: role})
			continue
		}
		if u.hashed, err = password.Parse(u.PasswordHash); err != nil {
			return fmt.Errorf("%s[%d].password_hash (%s): %w", field, i, u.Email, err)
		}
		u.Managed = ManagedByFile
		switch {
		case m == nil && u.Role != "":
			return fmt.Errorf("%s[%d].role (%s): operators have no role: they may do everything", field, i, u.Email)
		case m == nil:
			u.Operator = true
		case u.Role == "":
			u.Role = Owner
		}
		if m != nil {
			if _, ok := ParseRole(string(u.Role)); !ok {
				return fmt.Errorf("%s[%d].role (%s): %q is not one of %s", field, i, u.Email, u.Role, RoleNames())
			}
			u.Memberships = []Membership{{Merchant: m, Role: u.Role}}
		}
		d.users[key] = u
	}
	return nil
}

func idOf(m *Merchant) string {
	if m == nil {
		return ""
	}
	return m.ID
}

// ConsoleUser returns the console user with e-mail email (case ignored).
func (d *Directory) ConsoleUser(email string) (*ConsoleUser, bool) {
	u, ok := d.cur.Load().users[strings.ToLower(strings.TrimSpace(email))]
	return u, ok
}

// Person returns anyone the settings hold, on a team or not: a person
// whose last team removed them keeps their password and two-step sign-in,
// and is the same person when invited again.
func (d *Directory) Person(email string) (*ConsoleUser, bool) {
	key := strings.ToLower(strings.TrimSpace(email))
	if u, ok := d.cur.Load().users[key]; ok {
		return u, true
	}
	u, ok := d.cur.Load().away[key]
	return u, ok
}

// ConsoleUsers returns every console user, operators included.
func (d *Directory) ConsoleUsers() []*ConsoleUser {
	s := d.cur.Load()
	list := make([]*ConsoleUser, 0, len(s.users))
	for _, u := range s.users {
		list = append(list, u)
	}
	slices.SortFunc(list, func(a, b *ConsoleUser) int { return strings.Compare(a.Email, b.Email) })
	return list
}

// UpstreamOrderID is the merchant_order_id of an order's first attempt at
// the provider: the merchant's id, a colon, then the order id. Orders of
// different merchants never collide at the provider. A merchant's id is
// therefore part of every payment made: never rename one.
func (m *Merchant) UpstreamOrderID(orderID string) string {
	return m.AttemptID(orderID, 1)
}

// MaxAttempts bounds the attempts of one order, so that every attempt's id
// fits the provider's limit whenever the first one does.
const MaxAttempts = 9999

// attemptIDRoom is what later attempts add to the first one's id: "~9999".
const attemptIDRoom = 5

// AttemptID is the merchant_order_id of attempt seq (from 1) of an order:
// "<merchant>:<order>" for the first, "<merchant>~<seq>:<order>" after.
// Merchant ids hold neither "~" nor ":", so the part before the first colon
// names merchant and attempt alike and no two (order, attempt) pairs share
// an id.
func (m *Merchant) AttemptID(orderID string, seq int) string {
	if seq <= 1 {
		return m.ID + ":" + orderID
	}
	return m.ID + "~" + strconv.Itoa(seq) + ":" + orderID
}

// LongestAttemptID is the longest id any attempt of the order can have: the
// order id must leave room for it.
func (m *Merchant) LongestAttemptID(orderID string) string {
	return m.UpstreamOrderID(orderID) + strings.Repeat("0", attemptIDRoom)
}

// LinkKey returns the secret of kid.
func (m *Merchant) LinkKey(kid string) (string, bool) {
	s, ok := m.LinkKeys[kid]
	return s, ok
}

// OlderWebhookSecrets are the secrets deliveries are signed with at now
// beside WebhookSecret: the previous one while a roll overlaps.
func (m *Merchant) OlderWebhookSecrets(now time.Time) []string {
	if m.PreviousWebhookSecret != "" && now.Before(m.PreviousUntil) {
		return []string{m.PreviousWebhookSecret}
	}
	return nil
}

// LinkKeyAt returns the secret of kid while links signed with it are
// taken at now: always, or until the time a retired key was given.
func (m *Merchant) LinkKeyAt(kid string, now time.Time) (string, bool) {
	s, ok := m.LinkKeys[kid]
	if until, retiring := m.Retiring[kid]; ok && retiring && !now.Before(until) {
		return "", false
	}
	return s, ok
}

// NewestKID is the key id new links are signed with: the greatest one not
// retiring, so that ids like "2026-11" pick the latest key.
func (m *Merchant) NewestKID() string {
	var newest string
	for kid := range m.LinkKeys {
		if _, retiring := m.Retiring[kid]; !retiring && (newest == "" || m.newer(kid, newest)) {
			newest = kid
		}
	}
	return newest
}

// newer reports whether key a was made after key b: by when each was made
// in the console (a file's keys count as made before any), then by id.
func (m *Merchant) newer(a, b string) bool {
	ma, mb := m.KeysMade[a], m.KeysMade[b]
	if !ma.Equal(mb) {
		return ma.After(mb)
	}
	return a > b
}

// AllowsReturn reports whether shoppers may be sent back to u: it must be
// https (http only on the local machine) and its origin on the merchant's list.
func (m *Merchant) AllowsReturn(u *url.URL) bool {
	if u.Scheme != "https" && !(u.Scheme == "http" && isLocal(u.Hostname())) {
		return false
	}
	return slices.Contains(m.ReturnOrigins, Origin(u))
}

func isLocal(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Origin is scheme://host[:port] of u in lower case, as browsers compare it.
func Origin(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// Directory finds merchants by id. Replace swaps in another file's
// merchants at once: each call sees either the old file or the new one.
type Directory struct {
	cur atomic.Pointer[set]
}

// set is the merchants of one file, never changed once read.
type set struct {
	byID      map[string]*Merchant
	list      []*Merchant
	operators []*ConsoleUser
	// users are the console's users by lower-case e-mail.
	users map[string]*ConsoleUser
	// away are the people on no team and no operator: they cannot sign
	// in, but they are still themselves when invited again.
	away map[string]*ConsoleUser
	// byToken finds a merchant by the SHA-256 of an API token.
	byToken map[[32]byte]token
	// operatorsPasskeys is set when operators sign in with a passkey only.
	operatorsPasskeys bool
}

// OperatorsPasskeys reports whether the deployment's operators sign in with
// a passkey only.
func (d *Directory) OperatorsPasskeys() bool { return d.cur.Load().operatorsPasskeys }

// RequirePasskeysOfOperators sets OperatorsPasskeys of a directory Build
// made, before it is put to use.
func (d *Directory) RequirePasskeysOfOperators(on bool) { d.cur.Load().operatorsPasskeys = on }

// Replace makes next's merchants d's, for every holder of d.
func (d *Directory) Replace(next *Directory) { d.cur.Store(next.cur.Load()) }

// Get returns the merchant with id.
func (d *Directory) Get(id string) (*Merchant, bool) {
	m, ok := d.cur.Load().byID[id]
	return m, ok
}

// ByAPIToken returns the merchant one of whose API tokens is token, while
// the token has not expired. Tokens are found by their SHA-256 hash, as the
// ledger keeps them: a lookup tells nothing of the tokens held.
func (d *Directory) ByAPIToken(token string, now time.Time) (*Merchant, bool) {
	m, _, ok := d.APIToken(token, now)
	return m, ok
}

// APIToken is ByAPIToken that also names the token: its id in the ledger,
// or for a merchants file read without the ledger the merchant's id.
func (d *Directory) APIToken(token string, now time.Time) (*Merchant, string, bool) {
	if token == "" {
		return nil, "", false
	}
	t, ok := d.cur.Load().byToken[sha256.Sum256([]byte(token))]
	if !ok || !t.expires.IsZero() && !now.Before(t.expires) {
		return nil, "", false
	}
	if t.id == "" {
		return t.merchant, "merchant " + t.merchant.ID, true
	}
	return t.merchant, t.id, true
}

// Token is an API token as the directory knows it: its hash only.
type Token struct {
	// ID names the token in the ledger (its budget, its last use).
	ID string
	// Hash is the SHA-256 of the token.
	Hash     [32]byte
	Merchant *Merchant
	// Expires is when the token stops working; zero for never.
	Expires time.Time
}

type token struct {
	id       string
	merchant *Merchant
	expires  time.Time
}

// Build makes a directory of merchants, their tokens and the console's
// people as the ledger holds them; nothing is checked again, since every
// value was checked before it was saved. Each person's memberships must
// name merchants of list.
func Build(list []*Merchant, tokens []Token, people []*ConsoleUser) (*Directory, error) {
	d := &set{byID: make(map[string]*Merchant, len(list)), list: list, users: make(map[string]*ConsoleUser, len(people)),
		byToken: make(map[[32]byte]token, len(tokens))}
	for _, m := range list {
		d.byID[m.ID] = m
	}
	for _, t := range tokens {
		d.byToken[t.Hash] = token{id: t.ID, merchant: t.Merchant, expires: t.Expires}
	}
	for _, u := range people {
		var err error
		if u.hashed, err = password.Parse(u.PasswordHash); err != nil {
			return nil, fmt.Errorf("console person %s: %w", u.Email, err)
		}
		if !u.Operator && len(u.Memberships) == 0 {
			// Nothing to see: they cannot sign in.
			if d.away == nil {
				d.away = map[string]*ConsoleUser{}
			}
			d.away[strings.ToLower(u.Email)] = u
			continue
		}
		d.users[strings.ToLower(u.Email)] = u
		if u.Operator {
			d.operators = append(d.operators, u)
		}
	}
	dir := &Directory{}
	dir.cur.Store(d)
	return dir, nil
}

// Empty is a directory of no merchants, to be filled by Replace.
func Empty() *Directory {
	d, _ := Build(nil, nil, nil)
	return d
}

// Operators returns the people who see every merchant.
func (d *Directory) Operators() []*ConsoleUser { return d.cur.Load().operators }

// CheckProduction applies the rules that hold outside sandbox mode: a logo
// comes over https, since shoppers' browsers refuse mixed content and the
// provider shows it on its own https page.
func (d *Directory) CheckProduction() error {
	for _, m := range d.All() {
		if c := m.Customization; c != nil && c.LogoURL != "" && !strings.HasPrefix(c.LogoURL, "https://") {
			return fmt.Errorf("MERCHANTS_FILE: merchant %s: customization.logoUrl: must be an https URL outside sandbox mode", m.ID)
		}
	}
	return nil
}

// All returns every merchant in file order.
func (d *Directory) All() []*Merchant { return d.cur.Load().list }

// DemoID, DemoKID and DemoSecret are the published development merchant that
// `go run .` serves with no configuration. The secret is public, so the demo
// merchant exists only in sandbox mode.
const (
	DemoID     = "demo"
	DemoKID    = "demo"
	DemoSecret = "demo-link-secret-published-for-local-development-only"
	// DemoWebhookSecret signs the demo shop's webhooks; published too.
	DemoWebhookSecret = "demo-webhook-secret-published-for-local-development-only"
	// DemoWebhookPath is where the demo shop receives them, on the app.
	DemoWebhookPath = "/sandbox/shop/webhook"
	// DemoShopPath is the demo shop's return page, on the app.
	DemoShopPath = "/sandbox/shop/return"
)

// DemoConsoleEmail signs in to the console of `go run .` (sandbox mode
// only) as an operator, with a password made anew at each start.
const DemoConsoleEmail = "demo@shop.example"

// Demo returns the directory of the development merchant. baseURL is the
// app's public URL, whose origin the demo shop lives on; https://shop.example
// is allowed too, for links made by hand.
func Demo(baseURL string) (*Directory, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	m := &Merchant{
		ID:            DemoID,
		Name:          "Demo Shop",
		LinkKeys:      map[string]string{DemoKID: DemoSecret},
		APIToken:      "demo-api-token-published-for-local-development-only",
		ReturnOrigins: []string{Origin(u), "https://shop.example"},
		Customization: &rules.Customization{Title: "Demo Shop"},
	}
	if u.Scheme == "https" || loopbackName(u.Hostname()) {
		// The demo shop hears of its payments, as a merchant's server would.
		m.WebhookURL, m.WebhookSecret = strings.TrimRight(baseURL, "/")+DemoWebhookPath, DemoWebhookSecret
	}
	return newDirectory([]*Merchant{m}, nil)
}

// Load reads a MERCHANTS_FILE. Every error names the merchant and the field.
func Load(path string) (*Directory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MERCHANTS_FILE: %w", err)
	}
	return Parse(data)
}

// Parse reads the JSON of a MERCHANTS_FILE.
func Parse(data []byte) (*Directory, error) {
	var file struct {
		Merchants []*Merchant `json:"merchants"`
		// Operators sign in to the console and see every merchant.
		Operators []*ConsoleUser `json:"operators"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("MERCHANTS_FILE: %w", err)
	}
	if len(file.Merchants) == 0 {
		return nil, errors.New("MERCHANTS_FILE: no merchants")
	}
	return newDirectory(file.Merchants, file.Operators)
}

func newDirectory(list []*Merchant, operators []*ConsoleUser) (*Directory, error) {
	d := &set{byID: make(map[string]*Merchant), list: list, operators: operators, users: map[string]*ConsoleUser{},
		byToken: map[[32]byte]token{}}
	for i, m := range list {
		if m == nil {
			return nil, fmt.Errorf("MERCHANTS_FILE: merchant #%d: not an object", i+1)
		}
		err := m.check()
		if err == nil {
			err = d.checkConsoleUsers("console_users", m.ConsoleUsers, m)
		}
		if err != nil {
			name := m.ID
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return nil, fmt.Errorf("MERCHANTS_FILE: merchant %s: %w", name, err)
		}
		if _, dup := d.byID[m.ID]; dup {
			return nil, fmt.Errorf("MERCHANTS_FILE: merchant %s: id: used twice", m.ID)
		}
		hash := sha256.Sum256([]byte(m.APIToken))
		if _, dup := d.byToken[hash]; dup {
			return nil, fmt.Errorf("MERCHANTS_FILE: merchant %s: api_token: another merchant's token", m.ID)
		}
		m.State, m.Managed = Active, ManagedByFile
		d.byID[m.ID] = m
		d.byToken[hash] = token{merchant: m}
	}
	if err := d.checkConsoleUsers("operators", operators, nil); err != nil {
		return nil, fmt.Errorf("MERCHANTS_FILE: %w", err)
	}
	dir := &Directory{}
	dir.cur.Store(d)
	return dir, nil
}

// FieldError is a setting refused: Field names it as the file and the
// console's forms do (return_origins), Path where exactly
// (return_origins[2]).
//
// Reason is English, for the file's reader and the log. Key names the same
// refusal in the console's catalog ("console.reason." + Key) and Args the
// values it says, so that the console says it in its person's language;
// refusals only a file can meet have no Key.
type FieldError struct {
	Field  string
	Path   string
	Reason string
	Key    string
	Args   []any
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

// Refuse is a refusal of field, its reason in English.
func Refuse(field, format string, args ...any) *FieldError {
	return refuse(field, "", format, args...)
}

// Says names the refusal in the console's catalog, with the values it says.
func (e *FieldError) Says(key string, args ...any) *FieldError {
	e.Key, e.Args = key, args
	return e
}

func refuse(field, path, format string, args ...any) *FieldError {
	if path == "" {
		path = field
	}
	return &FieldError{Field: field, Path: path, Reason: fmt.Sprintf(format, args...)}
}

// check applies the merchants file's rules: what Check does, and a file's
// merchant brings its link keys and API token along.
func (m *Merchant) check() error {
	switch {
	case len(m.LinkKeys) == 0:
		return refuse("link_keys", "", "at least one key is required")
	case len(m.APIToken) < MinSecretLength:
		return refuse("api_token", "", "shorter than %d characters", MinSecretLength)
	}
	return m.Check()
}

// Check applies the rules every merchant's settings keep, wherever they are
// changed (the merchants file, the console): the first broken one, as a
// *FieldError. Origins, the IBAN and the BIC are written back as they are
// compared and kept.
func (m *Merchant) Check() error {
	if refused := m.Refusals(); len(refused) > 0 {
		return refused[0]
	}
	return nil
}

// Refusals are the rules m's settings break, the first broken of each
// field, in the order Check meets them: what a form says beside each of
// its fields at once. Values are written back as Check writes them.
func (m *Merchant) Refusals() []*FieldError {
	var refused []*FieldError
	said := map[string]bool{}
	add := func(fe *FieldError) {
		if fe != nil && !said[fe.Field] {
			said[fe.Field] = true
			refused = append(refused, fe)
		}
	}
	m.checkServing(add)
	m.checkPayee(add)
	m.checkAccount(add)
	m.checkApproval(add)
	return refused
}

// checkServing refuses what would break how the merchant is served: its
// id and name, the origins, keys, look, webhook and pins.
func (m *Merchant) checkServing(add func(*FieldError)) {
	switch {
	case m.ID == "":
		add(refuse("id", "", "required").Says("required"))
	case len(m.ID) > MaxIDLength || strings.ContainsFunc(m.ID, func(r rune) bool { return r <= ' ' || r == 0x7f || r == ':' || r == '~' }):
		// Said of an id typed: never "required" of one that is there.
		add(refuse("id", "", "at most %d characters, without spaces, colons or tildes", MaxIDLength).Says("id", MaxIDLength))
	}
	switch {
	case strings.TrimSpace(m.Name) == "":
		add(refuse("name", "", "required").Says("required"))
	case len(m.Name) > MaxNameLength:
		add(refuse("name", "", "at most %d characters", MaxNameLength).Says("tooLong", MaxNameLength))
	case rules.HasHidden(m.Name):
		// Shown on every payer's page: nothing in it may turn text around
		// or hide.
		add(refuse("name", "", "holds a control or invisible formatting character (like a right-to-left mark)").Says("hidden"))
	}
	if len(m.ReturnOrigins) == 0 {
		add(refuse("return_origins", "", "at least one origin is required").Says("originRequired"))
	}
	if m.APIRate != 0 && !(m.APIRate >= 1 && m.APIRate <= MaxAPIRate) {
		add(refuse("api_rate", "", "requests a second, from 1 to %d (or absent for API_RATE)", MaxAPIRate))
	}
	for kid, secret := range m.LinkKeys {
		switch {
		case strings.ContainsFunc(kid, func(r rune) bool { return r < ' ' || r == 0x7f }):
			add(refuse("link_keys", "", "key id %q holds a control character", kid))
		case kid == "":
			add(refuse("link_keys", "", "a key id is empty"))
		case len(secret) < MinSecretLength:
			add(refuse("link_keys", "link_keys["+kid+"]", "shorter than %d characters", MinSecretLength))
		}
	}
	for _, field := range []struct {
		name    string
		origins []string
	}{{"return_origins", m.ReturnOrigins}, {"frame_ancestors", m.FrameAncestors}} {
		for i, o := range field.origins {
			u, ok := rules.WebURL(o)
			if !ok || u.Path != "" || u.RawQuery != "" {
				add(refuse(field.name, fmt.Sprintf("%s[%d]", field.name, i), "%q is not an origin like https://shop.example", o).Says("origin", i+1, o))
				continue
			}
			field.origins[i] = Origin(u)
		}
	}
	if m.Customization != nil {
		if errs := m.Customization.Check(); len(errs) > 0 {
			add(refuse("customization", errs[0].Field, "%s", errs[0].Message))
		}
	}
	if m.WebhookURL != "" || m.WebhookSecret != "" {
		u, err := url.Parse(m.WebhookURL)
		switch {
		case err != nil || u.Host == "" || u.User != nil || u.Fragment != "" ||
			u.Scheme != "https" && !(u.Scheme == "http" && loopbackName(u.Hostname())):
			add(refuse("webhook_url", "", "an https URL (http only for localhost, 127.0.0.1 or [::1])").Says("webhookURL"))
		case len(m.WebhookSecret) < MinSecretLength:
			add(refuse("webhook_secret", "", "required with webhook_url, at least %d characters", MinSecretLength))
		}
	}
	for country, ids := range m.PopularBanks {
		if rules.CheckCountryCode("popular_banks", country) != nil {
			add(refuse("popular_banks", "", "%q is not a country code like DE", country).Says("pinCountry", country))
		}
		if len(ids) > MaxPopularBanks {
			add(refuse("popular_banks", "popular_banks["+country+"]", "at most %d banks", MaxPopularBanks).Says("pinTooMany", country, MaxPopularBanks))
		}
		for _, id := range ids {
			if strings.TrimSpace(id) == "" {
				add(refuse("popular_banks", "popular_banks["+country+"]", "an institution id is empty").Says("pinEmpty", country))
			}
		}
	}
}

// MaxNameLength bounds a merchant's name, shown on every shopper's page.
const MaxNameLength = 100

// MaxPopularBanks is how many banks a merchant may pin per country.
const MaxPopularBanks = 8

// loopbackName reports the host names a webhook may reach over plain http.
func loopbackName(host string) bool {
	return strings.EqualFold(host, "localhost") || host == "127.0.0.1" || host == "::1"
}
