package merchant_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
)

const good = `{"id":"shop1","name":"Shop One","link_keys":{"2026-11":"a-long-random-secret-for-shop1-0001"},
	"api_token":"another-long-random-secret-00000000","return_origins":["https://Shop.example"]}`

func TestParseRefusesABadFileNamingMerchantAndField(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"short key", `{"merchants":[{"id":"shop1","name":"S","link_keys":{"k":"short"},"api_token":"another-long-random-secret-00000000","return_origins":["https://a.example"]}]}`, "merchant shop1: link_keys[k]"},
		{"unknown key", `{"merchants":[` + strings.Replace(good, `"name"`, `"nmae"`, 1) + `]}`, "unknown field"},
		{"bad origin", `{"merchants":[` + strings.Replace(good, `https://Shop.example`, `https://shop.example/done`, 1) + `]}`, "merchant shop1: return_origins[0]"},
		{"bad colour", `{"merchants":[` + strings.Replace(good, `"name"`, `"customization":{"primaryColor":"blue"},"name"`, 1) + `]}`, "merchant shop1: customization.primaryColor"},
		{"twice", `{"merchants":[` + good + `,` + good + `]}`, "merchant shop1: id: used twice"},
		{"empty", `{"merchants":[]}`, "no merchants"},
		// "~" names a later payment of an order at the provider (shop1~2:A-1).
		{"popular banks of no country", `{"merchants":[` + strings.Replace(good, `"name"`, `"popular_banks":{"de":["ing"]},"name"`, 1) + `]}`, `merchant shop1: popular_banks: "de" is not a country code like DE`},
		{"too many popular banks", `{"merchants":[` + strings.Replace(good, `"name"`, `"popular_banks":{"DE":["a","b","c","d","e","f","g","h","i"]},"name"`, 1) + `]}`, "merchant shop1: popular_banks[DE]: at most 8 banks"},
		{"an empty popular bank", `{"merchants":[` + strings.Replace(good, `"name"`, `"popular_banks":{"DE":[" "]},"name"`, 1) + `]}`, "merchant shop1: popular_banks[DE]: an institution id is empty"},
		{"api rate below one a second", `{"merchants":[` + strings.Replace(good, `"name"`, `"api_rate":0.5,"name"`, 1) + `]}`, "merchant shop1: api_rate: requests a second, from 1 to 10000"},
		{"tilde in id", `{"merchants":[` + strings.Replace(good, `"id":"shop1"`, `"id":"shop1~2"`, 1) + `]}`, "id: at most 32 characters, without spaces, colons or tildes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := merchant.Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestAllowsReturn(t *testing.T) {
	d, err := merchant.Parse([]byte(`{"merchants":[` + good + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Get("shop1")
	for raw, want := range map[string]bool{
		"https://shop.example/done":      true,
		"https://SHOP.example/done?x=1":  true,
		"https://shop.example:8443/done": false,
		"http://shop.example/done":       false,
		"https://evil.example/done":      false,
		"https://shop.example.evil/done": false,
	} {
		u, _ := url.Parse(raw)
		if got := m.AllowsReturn(u); got != want {
			t.Errorf("AllowsReturn(%s) = %v, want %v", raw, got, want)
		}
	}
	demo, _ := merchant.Demo("http://localhost:8080")
	dm, _ := demo.Get(merchant.DemoID)
	for _, raw := range []string{"http://localhost:8080/sandbox/shop/return", "http://LOCALHOST:8080/sandbox/shop/return"} {
		u, _ := url.Parse(raw)
		if !dm.AllowsReturn(u) {
			t.Errorf("the demo merchant cannot return to the app's own demo shop at %s (host names ignore case)", raw)
		}
	}
}

func TestLogoMustBeHTTPSOutsideSandbox(t *testing.T) {
	withLogo := func(logo string) *merchant.Directory {
		d, err := merchant.Parse([]byte(`{"merchants":[` + strings.Replace(good, `"name"`, `"customization":{"logoUrl":"`+logo+`"},"name"`, 1) + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := withLogo("http://shop.example/logo.svg").CheckProduction(); err == nil || !strings.Contains(err.Error(), "merchant shop1: customization.logoUrl") {
		t.Errorf("an http logo outside sandbox mode: err = %v", err)
	}
	if err := withLogo("https://shop.example/logo.svg").CheckProduction(); err != nil {
		t.Errorf("an https logo: %v", err)
	}
	if _, err := merchant.Parse([]byte(`{"merchants":[` + strings.Replace(good, `"name"`, `"customization":{"logoUrl":"/logo.svg"},"name"`, 1) + `]}`)); err == nil {
		t.Error("a relative logo URL was accepted")
	}
}

// hashOf is a console password's hash at the lowest costs, for tests.
func hashOf(t *testing.T, pw string) string {
	t.Helper()
	phc, err := password.Hash(pw, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return phc
}

func TestConsoleUsersSignInToTheirMerchantOrAll(t *testing.T) {
	h := hashOf(t, "a long console password")
	file := `{"merchants":[` + strings.Replace(good, `"name"`, `"console_users":[{"email":"Ops@Shop.example","password_hash":"`+h+`"}],"name"`, 1) + `],
		"operators":[{"email":"root@psp.example","password_hash":"` + h + `"}]}`
	d, err := merchant.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := d.ConsoleUser(" ops@shop.EXAMPLE ")
	if _, inShop1 := u.RoleAt("shop1"); !ok || !inShop1 || len(u.Memberships) != 1 || u.Operator {
		t.Fatalf("the merchant's user, found by e-mail in any case: %+v, %v", u, ok)
	}
	if !u.Matches("a long console password") || u.Matches("another password!") {
		t.Error("the user's password is not checked against the hash in the file")
	}
	op, ok := d.ConsoleUser("root@psp.example")
	if !ok || !op.Operator || len(op.Memberships) != 0 {
		t.Errorf("an operator belongs to no merchant: %+v, %v", op, ok)
	}
	if _, ok := d.ConsoleUser("nobody@shop.example"); ok {
		t.Error("an unknown e-mail found a user")
	}
	if n := len(d.ConsoleUsers()); n != 2 {
		t.Errorf("ConsoleUsers lists %d users, want 2", n)
	}
}

func TestBadConsoleUsersStopStartUpNamingMerchantAndField(t *testing.T) {
	h := hashOf(t, "a long console password")
	with := func(users string) string {
		return `{"merchants":[` + strings.Replace(good, `"name"`, `"console_users":`+users+`,"name"`, 1) + `]}`
	}
	tests := []struct{ name, file, want string }{
		{"unreadable hash", with(`[{"email":"ops@shop.example","password_hash":"hunter2"}]`), "merchant shop1: console_users[0].password_hash (ops@shop.example): not a PHC string"},
		{"bcrypt", with(`[{"email":"ops@shop.example","password_hash":"$2b$12$abcdefghijklmnopqrstuv"}]`), "merchant shop1: console_users[0].password_hash"},
		{"not an e-mail", with(`[{"email":"Ops <ops@shop.example>","password_hash":"` + h + `"}]`), "merchant shop1: console_users[0].email"},
		{"twice", with(`[{"email":"ops@shop.example","password_hash":"` + h + `"},{"email":"OPS@shop.example","password_hash":"` + h + `"}]`), "console_users[1].email: OPS@shop.example is listed twice"},
		{"bad operator", `{"merchants":[` + good + `],"operators":[{"email":"root@psp.example","password_hash":"$argon2id$v=19$m=64,t=1,p=1$x$y"}]}`, "operators[0].password_hash (root@psp.example): the salt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := merchant.Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestOnePersonMayBeOnSeveralTeamsWithARoleAtEach(t *testing.T) {
	hash, err := password.Hash("a long console password", password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	shop := func(id, role string) string {
		return `{"id":"` + id + `","name":"` + id + `","link_keys":{"k":"a-long-random-secret-for-` + id + `-00001"},
			"api_token":"api-token-of-` + id + `-00000000000000000000","return_origins":["https://` + id + `.example"],
			"console_users":[{"email":"both@shops.example","password_hash":"` + hash + `","role":"` + role + `"}]}`
	}
	dir, err := merchant.Parse([]byte(`{"merchants":[` + shop("one", "viewer") + `,` + shop("two", "") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := dir.ConsoleUser("both@shops.example")
	if r, _ := u.RoleAt("one"); r != merchant.Viewer {
		t.Errorf("role at one: %q", r)
	}
	if r, _ := u.RoleAt("two"); r != merchant.Owner {
		t.Errorf("role at two (none in the file): %q, want owner", r)
	}
	if _, err := merchant.Parse([]byte(`{"merchants":[` + shop("one", "admin") + `]}`)); err == nil || !strings.Contains(err.Error(), `"admin" is not one of owner, developer, designer, support, viewer`) {
		t.Errorf("an unknown role: %v", err)
	}
}
