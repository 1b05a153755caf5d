package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// TestABackupTakenWhilePaymentsAreMadeRestoresWithItsKey backs up the
// ledger of a running app (sandbox mode, its key in the file beside the
// ledger) while shoppers pay, restores the copy with the key into a fresh
// folder, and starts the app on it: the same people sign in, the same
// merchant's links and token work, and every payment made before the
// backup began is there.
func TestABackupTakenWhilePaymentsAreMadeRestoresWithItsKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(dir, "checkout.db")}
	getenv := env(vars)
	const email, pw = "root@psp.example", "a long operator password"
	if err := operatorAdd(ctx, []string{"add", email}, getenv, strings.NewReader(pw+"\n"), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := start(t, vars)
	shop := createMerchant(t, signIn(t, s.base, email, pw), "shopb")

	// Shoppers pay while the backup is taken: at most 300 payments, for
	// at most a minute, on loopback.
	var (
		mu      sync.Mutex
		paid    []string
		failed  error
		ended   bool
		stop    = make(chan struct{})
		writers sync.WaitGroup
	)
	writers.Go(func() {
		defer func() { mu.Lock(); ended = true; mu.Unlock() }()
		deadline := time.Now().Add(time.Minute)
		for i := 0; i < 300 && time.Now().Before(deadline); i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("B-%d", i)
			if err := makePayment(s.base, shop, id); err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
			mu.Lock()
			paid = append(paid, id)
			mu.Unlock()
		}
	})
	within(t, "20 payments made", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(paid) >= 20 || ended
	})
	mu.Lock()
	before := append([]string(nil), paid...)
	mu.Unlock()
	backup := filepath.Join(t.TempDir(), "checkout-backup.db")
	var out strings.Builder
	err := run(ctx, []string{"backup", backup}, env(vars), &out, io.Discard)
	close(stop)
	writers.Wait()
	if err != nil {
		t.Fatalf("backup while payments are made: %v", err)
	}
	if failed != nil {
		t.Fatalf("a payment failed while the backup was taken: %v", failed)
	}
	if len(before) < 20 {
		t.Fatalf("only %d payments were made before the backup", len(before))
	}
	t.Logf("%d payments made before the backup began, %d by the time it ended\n%s", len(before), len(paid), out.String())

	keyFile := filepath.Join(dir, "settings.key")
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the command says where the copy and the key are, never the key", func(t *testing.T) {
		said := out.String()
		for _, want := range []string{backup, "KB", keyFile, "Keep it too, and apart from the copy", "none of its merchants' secrets"} {
			if !strings.Contains(said, want) {
				t.Errorf("the backup command does not say %q:\n%s", want, said)
			}
		}
		if strings.Contains(said, strings.TrimSpace(string(key))) {
			t.Error("the backup command printed the sealing key")
		}
	})

	t.Run("the copy is a whole database", func(t *testing.T) {
		db, err := sql.Open("sqlite", "file:"+backup+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var result string
		if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&result); err != nil || result != "ok" {
			t.Errorf("integrity_check of the copy: %q, %v", result, err)
		}
	})

	restored := t.TempDir()
	copyFile(t, backup, filepath.Join(restored, "checkout.db"))
	copyFile(t, keyFile, filepath.Join(restored, "settings.key"))
	restoredURL := "sqlite:" + filepath.Join(restored, "checkout.db")
	r := start(t, map[string]string{"DATABASE_URL": restoredURL})

	t.Run("the same people sign in and see the same merchants", func(t *testing.T) {
		status, body := signIn(t, r.base, email, pw).get("/console/merchants")
		if status != http.StatusOK || !strings.Contains(body, "Shop shopb") || !strings.Contains(body, "Demo Shop") {
			t.Errorf("the operator's Merchants page on the restored ledger: %d\n%.600s", status, body)
		}
	})
	t.Run("the merchant's sealed link key and its token work", func(t *testing.T) {
		if status := linkStatus(t, r.base, shop.id, shop.kid, shop.secret); status != http.StatusSeeOther {
			t.Errorf("the merchant's link on the restored ledger: %d, want 303", status)
		}
		if status := apiStatus(t, r.base, shop.token); status != http.StatusOK {
			t.Errorf("the merchant's API token on the restored ledger: %d, want 200", status)
		}
	})
	t.Run("every payment made before the backup is there", func(t *testing.T) {
		listed := listedOrders(t, r.base, shop.token)
		l := ledgertest.Open(t, restoredURL)
		for _, id := range before {
			if !listed[id] {
				t.Errorf("order %s, made before the backup, is not in the API's list", id)
				continue
			}
			if _, attempts, err := l.Order(ctx, shop.id, id); err != nil || len(attempts) == 0 {
				t.Errorf("order %s: %d payments in the restored ledger (%v), want its payment", id, len(attempts), err)
			}
		}
	})
}

// TestABackupRestoredWithoutItsKeyDoesNotStart restores a backup whose
// merchants' secrets are sealed, without the key they are sealed under:
// the app refuses to start and names the key, whether it was the file
// beside the ledger or SETTINGS_KEYS.
func TestABackupRestoredWithoutItsKeyServesNoneOfItsSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		// keys is SETTINGS_KEYS at the backup, and then at the restore.
		keys, otherKeys string
	}{
		{name: "the key file beside the ledger"},
		{name: "SETTINGS_KEYS", keys: testSettingsKey, otherKeys: "another-settings-key-of-another-place-0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(dir, "checkout.db"), "SETTINGS_KEYS": tc.keys}
			getenv := env(vars)
			file := writeFile(t, `{"merchants":[{"id":"shopk","name":"Shop K","link_keys":{"k1":"a-long-random-secret-for-shopk-0001"},
				"api_token":"shopk-api-token-0000000000000000000","return_origins":["https://shopk.example"]}]}`)
			if err := merchantsImport(ctx, []string{"import", file}, getenv, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			backup := filepath.Join(t.TempDir(), "backup.db")
			var out strings.Builder
			if err := run(ctx, []string{"backup", backup}, env(vars), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			key := tc.keys
			wantNamed := "the SETTINGS_KEYS you run with"
			if tc.keys == "" {
				raw, err := os.ReadFile(filepath.Join(dir, "settings.key"))
				if err != nil {
					t.Fatal(err)
				}
				key, wantNamed = strings.TrimSpace(string(raw)), filepath.Join(dir, "settings.key")
			}
			if !strings.Contains(out.String(), wantNamed) || strings.Contains(out.String(), key) {
				t.Errorf("the backup command should name %q and never print the key:\n%s", wantNamed, out.String())
			}

			restored := t.TempDir()
			copyFile(t, backup, filepath.Join(restored, "checkout.db"))
			// The app starts (one merchant never stops the others), and
			// says which merchant it could not open and why.
			s := start(t, map[string]string{"SETTINGS_KEYS": tc.otherKeys, "DATABASE_URL": "sqlite:" + filepath.Join(restored, "checkout.db")})
			res, err := http.Get(s.base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "shopk") || !strings.Contains(string(body), "SETTINGS_KEYS") {
				t.Errorf("/readyz of a ledger restored without its key: %d %q; want shopk named as disabled, with SETTINGS_KEYS", res.StatusCode, body)
			}
		})
	}
}

func TestBackupNeverWritesOverAFile(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(dir, "checkout.db")}
	ledgertest.Open(t, vars["DATABASE_URL"])
	target := filepath.Join(t.TempDir(), "last-nights-backup.db")
	if err := os.WriteFile(target, []byte("last night's backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run(context.Background(), []string{"backup", target}, env(vars), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a backup onto an existing file: err = %v, want a refusal saying it exists", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "last night's backup" {
		t.Errorf("the existing file now holds %q", got)
	}
	if left, _ := os.ReadDir(filepath.Dir(target)); len(left) != 1 {
		t.Errorf("the refused backup left files behind: %v", left)
	}
	if out.Len() > 0 {
		t.Errorf("a refused backup printed %q", out.String())
	}
}

func TestBackupOfALedgerThatIsNotThereSaysSo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "elsewhere", "checkout.db")
	err := run(context.Background(), []string{"backup", filepath.Join(t.TempDir(), "copy.db")},
		env(map[string]string{"DATABASE_URL": "sqlite:" + missing}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no ledger at "+missing) || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("a backup of a ledger that is not there: err = %v, want it to name the path and DATABASE_URL", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("the backup command made an empty ledger where there was none")
	}
}

// TestAPostgreSQLBackupIsAPgDumpWithItsKey follows docs/operate.md
// on PostgreSQL: the command points to pg_dump, and a dump restored with
// pg_restore into an empty database serves the merchant with the same
// SETTINGS_KEYS.
func TestAPostgreSQLBackupIsAPgDumpWithItsKey(t *testing.T) {
	ctx := context.Background()
	db := ledgertest.PostgresURL(t)
	vars := map[string]string{"DATABASE_URL": db, "SETTINGS_KEYS": testSettingsKey}
	getenv := env(vars)
	const linkSecret = "a-long-random-secret-for-shopp-0001"
	file := writeFile(t, `{"merchants":[{"id":"shopp","name":"Shop P","link_keys":{"k1":"`+linkSecret+`"},
		"api_token":"shopp-api-token-0000000000000000000","return_origins":["https://shopp.example"]}]}`)
	if err := merchantsImport(ctx, []string{"import", file}, getenv, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "checkout.dump")
	err := run(ctx, []string{"backup", dump}, env(vars), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `pg_dump -Fc -f `+dump+` "$DATABASE_URL"`) || !strings.Contains(err.Error(), "pg_restore") {
		t.Errorf("backup of a PostgreSQL ledger: err = %v, want the pg_dump command", err)
	}

	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the dump and restore of docs/operate.md are not tried", tool)
		}
	}
	if out, err := exec.Command("pg_dump", "-Fc", "-f", dump, db).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	restored := ledgertest.PostgresURL(t)
	if out, err := exec.Command("pg_restore", "--no-owner", "--no-privileges", "-d", restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	r := start(t, map[string]string{"DATABASE_URL": restored, "SETTINGS_KEYS": testSettingsKey})
	if status := linkStatus(t, r.base, "shopp", "k1", linkSecret); status != http.StatusSeeOther {
		t.Errorf("the merchant's link on the restored database: %d, want 303", status)
	}
	if status := apiStatus(t, r.base, "shopp-api-token-0000000000000000000"); status != http.StatusOK {
		t.Errorf("the merchant's token on the restored database: %d, want 200", status)
	}
}

// makePayment opens a new order's link of shop on the app at base and
// sends its details form for a bank: once both answered, the order and its
// payment are in the ledger.
func makePayment(base string, shop created, orderID string) error {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	m := &merchant.Merchant{ID: shop.id, LinkKeys: map[string]string{shop.kid: shop.secret}}
	link, err := order.Link{Order: order.Order{ID: orderID, Amount: "10.00", Currency: "EUR",
		ReturnURL: "https://" + shop.id + ".example/done", KID: shop.kid}, TTL: time.Hour}.URL(base, m, time.Now())
	if err != nil {
		return err
	}
	res, err := client.Get(link)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("order %s: its link answered %d", orderID, res.StatusCode)
	}
	res, err = client.PostForm(base+res.Header.Get("Location")+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("order %s: its details form answered %d", orderID, res.StatusCode)
	}
	return nil
}

// listedOrders are the order ids the API lists to token on base, every
// page of them.
func listedOrders(t *testing.T, base, token string) map[string]bool {
	t.Helper()
	listed := map[string]bool{}
	cursor := ""
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/payments?limit=200&cursor="+url.QueryEscape(cursor), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Payments []struct {
				ID string `json:"merchant_order_id"`
			} `json:"payments"`
			NextCursor string `json:"next_cursor"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("the API's payments list: %d, %v", res.StatusCode, err)
		}
		for _, p := range page.Payments {
			listed[p.ID] = true
		}
		if page.NextCursor == "" {
			return listed
		}
		cursor = page.NextCursor
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// cancelOnWrite ends a run at its first word on standard output: the app
// has started.
type cancelOnWrite context.CancelFunc

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c()
	return len(p), nil
}
