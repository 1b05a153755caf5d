package settings_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/settings"
)

var ctx = context.Background()

const (
	key1 = "the-first-settings-key-of-32-characters"
	key2 = "the-second-settings-key-of-32-characters"
	// The secrets of the tests' merchants file: none may reach the ledger.
	linkSecret    = "link-secret-of-shop1-000000000000000001"
	apiToken      = "api-token-of-shop1-0000000000000000000001"
	webhookSecret = "webhook-secret-of-shop1-00000000000000001"
	providerKey   = "provider-key-of-shop1-000000000000000001"
)

func fileOf(t testing.TB, merchants ...string) *merchant.Directory {
	t.Helper()
	dir, err := merchant.Parse([]byte(`{"merchants":[` + strings.Join(merchants, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func shop1(name string) string {
	return `{"id":"shop1","name":"` + name + `","link_keys":{"k1":"` + linkSecret + `"},"api_token":"` + apiToken + `",
		"return_origins":["https://shop1.example"],"webhook_url":"https://shop1.example/hooks","webhook_secret":"` + webhookSecret + `",
		"pis_api_key":"` + providerKey + `"}`
}

const shop2 = `{"id":"shop2","name":"Shop 2","link_keys":{"k1":"link-secret-of-shop2-000000000000000001"},
	"api_token":"api-token-of-shop2-0000000000000000000001","return_origins":["https://shop2.example"]}`

// instance is one app's settings over a ledger: several on one database
// are several instances.
func instance(t testing.TB, l *ledger.Ledger, keys string) *settings.Store {
	t.Helper()
	s := &settings.Store{Ledger: l, Dir: merchant.Empty(), Sandbox: true, Log: slog.New(slog.DiscardHandler)}
	if keys != "" {
		k, err := settings.ParseKeys(keys)
		if err != nil {
			t.Fatal(err)
		}
		s.Keys = k
	}
	return s
}

func TestTheFileProvisionsTheLedgerAndEveryInstanceLoadsIt(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		a, b := instance(t, l, key1), instance(t, l, key1)
		if err := a.Provision(ctx, fileOf(t, shop1("Shop 1"), shop2)); err != nil {
			t.Fatal(err)
		}
		v1 := a.Version()
		// Provisioning the same file again changes nothing: no version,
		// no audit line.
		if err := a.Provision(ctx, fileOf(t, shop1("Shop 1"), shop2)); err != nil {
			t.Fatal(err)
		}
		if a.Version() != v1 {
			t.Errorf("the same file provisioned twice moved the version from %d to %d", v1, a.Version())
		}
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		m, ok := b.Dir.Get("shop1")
		switch {
		case !ok:
			t.Fatal("another instance does not know shop1")
		case m.LinkKeys["k1"] != linkSecret || m.WebhookSecret != webhookSecret || m.PISAPIKey != providerKey:
			t.Errorf("another instance opened shop1's secrets wrong: %+v", m)
		case !m.ReadOnly() || m.Disabled():
			t.Errorf("shop1 is managed %q, state %q; want the file's and active", m.Managed, m.State)
		}
		if got, ok := b.Dir.ByAPIToken(apiToken, time.Now()); !ok || got.ID != "shop1" {
			t.Errorf("another instance does not take shop1's API token")
		}
		// A changed file: a new version, seen by the other instance, with
		// the old token refused.
		changedFile := strings.Replace(shop1("Shop One"), apiToken, "a-new-api-token-of-shop1-00000000000000001", 1)
		if err := a.Provision(ctx, fileOf(t, changedFile, shop2)); err != nil {
			t.Fatal(err)
		}
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if m, _ := b.Dir.Get("shop1"); m.Name != "Shop One" {
			t.Errorf("the other instance still calls shop1 %q", m.Name)
		}
		if _, ok := b.Dir.ByAPIToken(apiToken, time.Now()); ok {
			t.Error("the file's old token is still taken after the file changed it")
		}
		// An unchanged merchant stays the same in memory, so that what is
		// kept for it stays good; the changed one is new.
		before, _ := b.Dir.Get("shop2")
		if err := a.Provision(ctx, fileOf(t, strings.Replace(changedFile, "Shop One", "Shop Uno", 1), shop2)); err != nil {
			t.Fatal(err)
		}
		b.Load(ctx)
		if after, _ := b.Dir.Get("shop2"); after != before {
			t.Error("a change of shop1 made shop2 anew: every page kept for shop2 would be dropped")
		}
		lines, err := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 || lines[0].Actor != settings.ByFile || lines[0].Event != settings.EventMerchantFileChanged || len(lines[0].Args) != 1 || lines[0].Args[0] != ledger.Fields("name") {
			t.Errorf("the audit log's newest line for shop1 is %+v; want the file changing its name", lines)
		}
	})
}

func TestAMerchantThatLeavesTheFileIsDisabledNotForgotten(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		s := instance(t, l, key1)
		if err := s.Provision(ctx, fileOf(t, shop1("Shop 1"), shop2)); err != nil {
			t.Fatal(err)
		}
		if err := s.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatal(err)
		}
		m, ok := s.Dir.Get("shop2")
		if !ok {
			t.Fatal("shop2 was forgotten when it left the file: its open payments could no longer be followed")
		}
		if !m.Disabled() || m.LinkKeys["k1"] == "" {
			t.Errorf("shop2 after leaving the file: state %q, link keys %v; want disabled with its keys", m.State, m.LinkKeys)
		}
		lines, _ := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop2", Limit: 1})
		if len(lines) != 1 || lines[0].Event != settings.EventMerchantLeftFile || lines[0].Actor != settings.ByFile {
			t.Errorf("audit of shop2 leaving the file: %+v", lines)
		}
		// Back in the file, it is active again.
		if err := s.Provision(ctx, fileOf(t, shop1("Shop 1"), shop2)); err != nil {
			t.Fatal(err)
		}
		if m, _ := s.Dir.Get("shop2"); m.Disabled() {
			t.Error("shop2 stays disabled after coming back into the file")
		}
	})
}

func TestNoUsableSecretReachesTheLedger(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		s := instance(t, l, key1)
		if err := s.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatal(err)
		}
		created, err := s.CreateMerchant(ctx, settings.Actor{Name: "root@psp.example"}, "shop3", "Shop 3", []string{"https://shop3.example"})
		if err != nil {
			t.Fatal(err)
		}
		assertNotInDump(t, l, linkSecret, apiToken, webhookSecret, providerKey, created.Token, created.LinkSecret, key1)
		if !strings.HasPrefix(created.Token, settings.TestPrefix) || len(created.Token) != len(settings.TestPrefix)+43 {
			t.Errorf("a new token is %q: want pbb_test_ and 43 base64url characters in sandbox mode", created.Token)
		}
		// Without keys, a file's merchant keeps its secrets in the file:
		// the ledger holds their fingerprints only.
		plain := instance(t, ledgertest.Open(t, ledgertest.SQLiteURL(t)), "")
		if err := plain.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatal(err)
		}
		assertNotInDump(t, plain.Ledger, linkSecret, apiToken, webhookSecret, providerKey)
		if m, _ := plain.Dir.Get("shop1"); m.LinkKeys["k1"] != linkSecret {
			t.Error("without SETTINGS_KEYS a file's merchant lost its link key")
		}
		if _, err := plain.CreateMerchant(ctx, settings.Actor{Name: "root@psp.example"}, "shop4", "Shop 4", []string{"https://shop4.example"}); !errors.Is(err, settings.ErrNoKeys) {
			t.Errorf("a console merchant made without SETTINGS_KEYS: err = %v, want ErrNoKeys", err)
		}
	})
}

// assertNotInDump reads every value of every table and looks for secrets.
func assertNotInDump(t *testing.T, l *ledger.Ledger, secrets ...string) {
	t.Helper()
	tables, err := l.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for table, values := range tables {
		for _, v := range values {
			for _, secret := range secrets {
				if strings.Contains(v, secret) {
					t.Errorf("table %s holds a secret in the clear (%.12s…)", table, secret)
				}
			}
		}
	}
}

func TestANewFirstKeySealsEverySecretAgain(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		old := instance(t, l, key1)
		if err := old.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatal(err)
		}
		// An operator signs in with two steps: their secret is sealed too.
		phc, err := password.Hash("an operator's long password", password.Params{Memory: 64, Time: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.AddOperator(ctx, "op@psp.example", phc); err != nil {
			t.Fatal(err)
		}
		setup, err := old.BeginTwoStep(ctx, "op@psp.example")
		if err != nil {
			t.Fatal(err)
		}
		code, _ := totp.GenerateCode(setup.Secret, time.Now())
		if _, err := old.ConfirmTwoStep(ctx, "op@psp.example", code, time.Now()); err != nil {
			t.Fatal(err)
		}
		v := old.Version()
		rotated := instance(t, l, key2+","+key1)
		n, err := rotated.Reseal(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Reseal = %d, %v; want shop1 and the operator's two-step secret sealed again", n, err)
		}
		if again, _ := rotated.Reseal(ctx); again != 0 {
			t.Errorf("a second pass sealed %d merchants again; want none", again)
		}
		// The old key can go: the new one alone opens everything.
		newOnly := instance(t, l, key2)
		newOnly.Provision(ctx, fileOf(t, shop1("Shop 1")))
		if err := newOnly.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if m, _ := newOnly.Dir.Get("shop1"); m.WebhookSecret != webhookSecret {
			t.Error("the newest key alone does not open the webhook secret after resealing")
		}
		if u, ok := newOnly.Dir.ConsoleUser("op@psp.example"); !ok || u.TOTPSecret != setup.Secret {
			t.Error("the newest key alone does not open the operator's two-step secret after resealing")
		}
		if newOnly.Version() != v {
			t.Errorf("resealing moved the settings version from %d to %d: nothing changed for the instances", v, newOnly.Version())
		}
		// A key that never sealed anything opens nothing, and says so: the
		// merchant is disabled with the reason, and the app goes on.
		stranger := instance(t, l, "a-third-settings-key-of-32-characters")
		if err := stranger.Load(ctx); err != nil {
			t.Fatalf("loading under a foreign key stopped the app: %v", err)
		}
		if m, _ := stranger.Dir.Get("shop1"); !m.Disabled() || m.UnopenedKind != merchant.UnopenedKey || !strings.Contains(m.Unopened, "SETTINGS_KEYS") {
			t.Errorf("shop1 under a foreign key: disabled %v, reason %q", m.Disabled(), m.Unopened)
		}
		if why := stranger.Unopened(); len(why) != 1 {
			t.Errorf("the merchants that did not open: %q", why)
		}
	})
}

// A two-step secret that does not open (a key gone from SETTINGS_KEYS)
// leaves the person's second step on with no code right: the code of an
// empty key, which anyone can compute, is refused like any other.
func TestATwoStepSecretThatDoesNotOpenLetsNoCodeThrough(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		sealer := instance(t, l, key1)
		phc, err := password.Hash("an operator's long password", password.Params{Memory: 64, Time: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sealer.AddOperator(ctx, "op@psp.example", phc); err != nil {
			t.Fatal(err)
		}
		setup, err := sealer.BeginTwoStep(ctx, "op@psp.example")
		if err != nil {
			t.Fatal(err)
		}
		code, _ := totp.GenerateCode(setup.Secret, time.Now())
		if _, err := sealer.ConfirmTwoStep(ctx, "op@psp.example", code, time.Now()); err != nil {
			t.Fatal(err)
		}
		other := instance(t, l, key2)
		if err := other.Load(ctx); err != nil {
			t.Fatalf("a two-step secret that does not open stopped the load: %v", err)
		}
		u, ok := other.Dir.ConsoleUser("op@psp.example")
		if !ok || !u.TwoStep {
			t.Fatalf("the operator under a foreign key: known %v, two-step %v", ok, ok && u.TwoStep)
		}
		now := time.Now()
		for _, secret := range []string{"", setup.Secret} {
			guess, err := totp.GenerateCodeCustom(secret, now, totp.ValidateOpts{Period: 30, Digits: 6, Algorithm: 0})
			if err != nil {
				continue
			}
			if _, err := other.CheckCode(ctx, u, guess, now); !errors.Is(err, settings.ErrWrongCode) {
				t.Errorf("a code of the key %q passed where the secret does not open: %v", secret, err)
			}
		}
	})
}

func TestAMerchantWhoseSecretsDoNotOpenIsDisabledAndTheOthersServe(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		// Outside sandbox mode without SETTINGS_KEYS, the file's secrets
		// stay in the file: a merchant that leaves the file takes them.
		first := instance(t, l, "")
		if err := first.Provision(ctx, fileOf(t, shop1("Shop 1"), shop2)); err != nil {
			t.Fatal(err)
		}
		// The next start has shop1 in its file and no longer shop2, and
		// forgets shop1's secrets too: neither stops the start.
		next := instance(t, l, "")
		if err := next.Load(ctx); err != nil {
			t.Fatalf("a start whose file lost merchants' secrets stopped: %v", err)
		}
		for _, id := range []string{"shop1", "shop2"} {
			m, ok := next.Dir.Get(id)
			if !ok || !m.Disabled() || m.UnopenedKind != merchant.UnopenedFile || !strings.Contains(m.Unopened, "MERCHANTS_FILE") {
				t.Errorf("%s without its file: disabled %v, reason %q", id, ok && m.Disabled(), m.Unopened)
			}
		}
		if err := next.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatalf("provisioning the file with shop1 only: %v", err)
		}
		if m, _ := next.Dir.Get("shop1"); m.Disabled() || m.WebhookSecret != webhookSecret {
			t.Errorf("shop1 back in the file: disabled %v", m.Disabled())
		}
		if m, _ := next.Dir.Get("shop2"); !m.Disabled() {
			t.Error("shop2, gone from the file, serves")
		}
	})
}

func TestTwoSavesOfOneMerchantNeverOverwriteSilently(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		a, b := instance(t, l, key1), instance(t, l, key1)
		by := settings.Actor{Name: "ann@psp.example", RequestID: "req-1"}
		if _, err := a.CreateMerchant(ctx, by, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
			t.Fatal(err)
		}
		b.Load(ctx)
		m, _ := b.Dir.Get("shop3")
		if err := a.Update(ctx, by, "shop3", m.Version, func(m *merchant.Merchant) { m.Name = "Ann's name" }); err != nil {
			t.Fatal(err)
		}
		err := b.Update(ctx, settings.Actor{Name: "bob@psp.example"}, "shop3", m.Version, func(m *merchant.Merchant) { m.Name = "Bob's name" })
		ce, ok := settings.IsConflict(err)
		if !ok || ce.By != "ann@psp.example" || ce.Newer.Name != "Ann's name" {
			t.Fatalf("the second save: err = %v; want a conflict naming Ann and her values", err)
		}
		// A bad value is refused with the file's rule, naming the field.
		err = a.Update(ctx, by, "shop3", ce.Newer.Version, func(m *merchant.Merchant) { m.ReturnOrigins = []string{"ftp://x"} })
		var fe *merchant.FieldError
		if !errors.As(err, &fe) || fe.Field != "return_origins" {
			t.Errorf("a bad origin: err = %v, want a field error on return_origins", err)
		}
		lines, _ := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop3"})
		if len(lines) != 2 || lines[0].Event != settings.EventSettingsChanged || len(lines[0].Args) != 1 || lines[0].Args[0] != ledger.Fields("name") || lines[0].RequestID != "req-1" {
			t.Errorf("audit of shop3: %+v", lines)
		}
	})
}

func TestConsoleChangesToAFilesMerchantAreRefused(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := instance(t, l, key1)
	if err := s.Provision(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
		t.Fatal(err)
	}
	by := settings.Actor{Name: "root@psp.example"}
	if err := s.SetState(ctx, by, "shop1", merchant.Disabled); !errors.Is(err, settings.ErrManagedByFile) {
		t.Errorf("disabling a file's merchant: err = %v", err)
	}
	if err := s.Update(ctx, by, "shop1", 1, func(m *merchant.Merchant) { m.Name = "x" }); !errors.Is(err, settings.ErrManagedByFile) {
		t.Errorf("changing a file's merchant: err = %v", err)
	}
}

func TestImportMovesAFilesMerchantsToTheConsoleOnce(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		s := instance(t, l, key1)
		file := fileOf(t, shop1("Shop 1"), shop2)
		if err := s.Provision(ctx, file); err != nil {
			t.Fatal(err)
		}
		imported, skipped, err := s.Import(ctx, file)
		if err != nil || !slices.Equal(imported, []string{"shop1", "shop2"}) || len(skipped) != 0 {
			t.Fatalf("Import = %v, %v, %v", imported, skipped, err)
		}
		if _, skipped, _ := s.Import(ctx, file); len(skipped) != 2 {
			t.Errorf("a second import skipped %v; want both", skipped)
		}
		// The file still provisioned afterwards: its entries are ignored,
		// a change there is not written over the console's.
		if err := s.Provision(ctx, fileOf(t, shop1("Renamed in the file"))); err != nil {
			t.Fatal(err)
		}
		m, _ := s.Dir.Get("shop1")
		if m.ReadOnly() || m.Name != "Shop 1" {
			t.Errorf("after import, shop1 is managed %q and named %q; want the console's, unchanged by the file", m.Managed, m.Name)
		}
		if m2, _ := s.Dir.Get("shop2"); m2.Disabled() {
			t.Error("an imported merchant missing from the file was disabled")
		}
		if got, ok := s.Dir.ByAPIToken(apiToken, time.Now()); !ok || got.ID != "shop1" {
			t.Error("shop1's token from the file stopped working at import")
		}
		if err := s.Update(ctx, settings.Actor{Name: "root@psp.example"}, "shop1", m.Version, func(m *merchant.Merchant) { m.Name = "Shop Uno" }); err != nil {
			t.Errorf("changing an imported merchant in the console: %v", err)
		}
	})
}

func TestOperatorAddWritesAnOperatorAndANewPasswordEndsTheOld(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := instance(t, l, key1)
	weak := password.Params{Memory: 64, Time: 1, Threads: 1}
	first, _ := password.Hash("the first password", weak)
	if existed, err := s.AddOperator(ctx, "Root@PSP.example", first); err != nil || existed {
		t.Fatalf("AddOperator = %v, %v", existed, err)
	}
	s.Load(ctx)
	u, ok := s.Dir.ConsoleUser("root@psp.example")
	if !ok || !u.Operator || !u.Matches("the first password") {
		t.Fatalf("the operator is %+v", u)
	}
	second, _ := password.Hash("the second password", weak)
	if existed, err := s.AddOperator(ctx, "root@psp.example", second); err != nil || !existed {
		t.Fatalf("AddOperator again = %v, %v", existed, err)
	}
	s.Load(ctx)
	u, _ = s.Dir.ConsoleUser("root@psp.example")
	if u.Matches("the first password") || !u.Matches("the second password") {
		t.Error("the old password still signs in")
	}
	lines, _ := l.Audit(ctx, ledger.AuditQuery{})
	if len(lines) != 2 || lines[0].Actor != settings.ByCommand || lines[0].Event != settings.EventOperatorPassword ||
		fmt.Sprint(lines[0].Args) != fmt.Sprint([]ledger.AuditArg{ledger.Text("root@psp.example")}) {
		t.Errorf("audit of operator add: %+v", lines)
	}
}

func TestAKeyFileIsMadeOnceWithMode0600(t *testing.T) {
	dir := t.TempDir()
	k1, path, made, err := settings.SandboxKeys(dir)
	if err != nil || !made {
		t.Fatalf("SandboxKeys = %v, %v", made, err)
	}
	sealed := k1.Seal("a secret", "place")
	k2, _, made, err := settings.SandboxKeys(dir)
	if err != nil || made {
		t.Fatalf("second SandboxKeys = %v, %v", made, err)
	}
	if v, err := k2.Open(sealed, "place"); err != nil || v != "a secret" {
		t.Errorf("the key file's second reading does not open what the first sealed: %v", err)
	}
	if _, err := k2.Open(sealed, "another place"); err == nil {
		t.Error("a sealed value opened in another place")
	}
	info, err := statMode(path)
	if err != nil || info != 0o600 {
		t.Errorf("key file mode %o, %v; want 600", info, err)
	}
}

func statMode(path string) (os.FileMode, error) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return info.Mode().Perm(), nil
}

func TestOperatorAddIsTheWayBackInForALockedOutOperator(t *testing.T) {
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	s := instance(t, l, key1)
	weak := password.Params{Memory: 64, Time: 1, Threads: 1}
	first, _ := password.Hash("the first password", weak)
	s.AddOperator(ctx, "root@psp.example", first)
	setup, err := s.BeginTwoStep(ctx, "root@psp.example")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	code, _ := totp.GenerateCode(setup.Secret, now)
	if _, err := s.ConfirmTwoStep(ctx, "root@psp.example", code, now); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.Dir.ConsoleUser("root@psp.example"); !u.TwoStep {
		t.Fatal("two-step sign-in is not on")
	}
	second, _ := password.Hash("the second password", weak)
	if _, err := s.AddOperator(ctx, "root@psp.example", second); err != nil {
		t.Fatal(err)
	}
	s.Load(ctx)
	if u, _ := s.Dir.ConsoleUser("root@psp.example"); u.TwoStep || !u.Matches("the second password") {
		t.Errorf("after operator add: two-step %v; want off, with the new password", u.TwoStep)
	}
}

// A link key made in the console signs new links, whatever its id: an
// imported merchant's "k1" sorts after "2026-11-25", and used to stay the
// newest, contradicting the page's own hint.
func TestTheLinkKeyMadeLastSignsNewLinks(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		s := instance(t, ledgertest.Open(t, url), key1)
		if _, _, err := s.Import(ctx, fileOf(t, shop1("Shop 1"))); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		by := settings.Actor{Name: "dev@shop1.example"}
		made, err := s.MakeLinkKey(ctx, by, "shop1", now)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := s.Dir.Get("shop1"); m.NewestKID() != made.KID {
			t.Errorf("after making %s the newest key is %s", made.KID, m.NewestKID())
		}
		// Ten keys in a day: the tenth is newer than the ninth.
		var last settings.MadeLinkKey
		for i := range 10 {
			if last, err = s.MakeLinkKey(ctx, by, "shop1", now.Add(time.Duration(i+1)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		m, _ := s.Dir.Get("shop1")
		if m.NewestKID() != last.KID {
			t.Errorf("after making %s the newest key is %s", last.KID, m.NewestKID())
		}
		// Known on another instance too, and in no audit line as a field.
		other := instance(t, s.Ledger, key1)
		if err := other.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if m, _ := other.Dir.Get("shop1"); m.NewestKID() != last.KID {
			t.Errorf("another instance takes %s for the newest, not %s", m.NewestKID(), last.KID)
		}
	})
}

// TestWhoIsPaidAndTheAccountAreProvisionedAndChangedLikeEverySetting: the
// merchants file's new fields reach every instance as the file has them
// (the IBAN without its spaces); a change in the console names the fields
// it changed in the audit log, never their values, and a bad value is
// refused naming its field.
func TestWhoIsPaidAndTheAccountAreProvisionedAndChangedLikeEverySetting(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		a, b := instance(t, l, key1), instance(t, l, key1)
		payee := strings.Replace(shop1("Shop 1"), `"return_origins"`, `"legal_name":"Shop One GmbH","contact_email":"help@shop1.example",
			"contact_phone":"+49 30 1234567","contact_url":"https://shop1.example/contact","terms_url":"https://shop1.example/terms",
			"privacy_url":"https://shop1.example/privacy","time_zone":"Europe/Berlin","account_name":"Shop One GmbH",
			"account_iban":"DE89 3704 0044 0532 0130 00","account_bic":"COBADEFFXXX","refund_approval_over":"500.00","return_origins"`, 1)
		if err := a.Provision(ctx, fileOf(t, payee, shop2)); err != nil {
			t.Fatal(err)
		}
		if err := b.Load(ctx); err != nil {
			t.Fatal(err)
		}
		m, _ := b.Dir.Get("shop1")
		if m.LegalName != "Shop One GmbH" || m.ContactEmail != "help@shop1.example" || m.ContactPhone != "+49 30 1234567" ||
			m.ContactURL != "https://shop1.example/contact" || m.TermsURL != "https://shop1.example/terms" ||
			m.PrivacyURL != "https://shop1.example/privacy" || m.Location().String() != "Europe/Berlin" ||
			m.AccountName != "Shop One GmbH" || m.AccountIBAN != "DE89370400440532013000" || m.AccountBIC != "COBADEFFXXX" ||
			m.RefundApprovalOver == nil || m.RefundApprovalOver.StringFixed(2) != "500.00" {
			t.Errorf("another instance reads shop1 as %+v", m)
		}
		// The same file again, its amount written otherwise: no change.
		v := a.Version()
		if err := a.Provision(ctx, fileOf(t, strings.Replace(payee, `"500.00"`, `500`, 1), shop2)); err != nil {
			t.Fatal(err)
		}
		if a.Version() != v {
			t.Error("the same amount written as 500 instead of \"500.00\" moved the settings version")
		}
		if m, _ := b.Dir.Get("shop2"); m.LegalName != "" || m.RefundApprovalOver != nil || m.Location().String() != merchant.DefaultTimeZone {
			t.Errorf("shop2, which names none of them, reads as %+v", m)
		}

		by := settings.Actor{Name: "ann@psp.example"}
		if _, err := a.CreateMerchant(ctx, by, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
			t.Fatal(err)
		}
		err := a.Update(ctx, by, "shop3", 0, func(m *merchant.Merchant) {
			m.LegalName, m.AccountName, m.AccountIBAN = "Shop Three SRL", "Shop Three SRL", "be68 5390 0754 7034"
			over := decimal.RequireFromString("250")
			m.RefundApprovalOver = &over
		})
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop3"})
		if len(lines) == 0 || lines[0].Event != settings.EventSettingsChanged || len(lines[0].Args) != 1 ||
			lines[0].Args[0] != ledger.Fields("account_iban", "account_name", "legal_name", "refund_approval_over") {
			t.Errorf("the audit log's newest line for shop3 is %+v", lines[0])
		}
		for _, line := range lines {
			for _, arg := range line.Args {
				if strings.Contains(arg.Value, "BE68") || strings.Contains(arg.Value, "SRL") {
					t.Errorf("the audit log says a value: %+v", line)
				}
			}
		}
		if m, _ := a.Dir.Get("shop3"); m.AccountIBAN != "BE68539007547034" {
			t.Errorf("shop3's IBAN is kept as %q", m.AccountIBAN)
		}
		err = a.Update(ctx, by, "shop3", 0, func(m *merchant.Merchant) { m.AccountIBAN = "BE68 5390 0754 7035" })
		var fe *merchant.FieldError
		if !errors.As(err, &fe) || fe.Field != "account_iban" {
			t.Errorf("a mistyped IBAN: err = %v, want a refusal of account_iban", err)
		}
	})
}
