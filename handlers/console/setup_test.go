package console_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/bankhealth"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/statements"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/webhook"
)

var ctx = context.Background()

// The console's people in the tests' merchants file.
const (
	shop1User = "ops@shop1.example"
	shop2User = "ops@shop2.example"
	operator  = "root@psp.example"
	secret    = "a long console password"
)

// twoTeams is on shop1's team as a viewer and shop2's as an owner.
const twoTeams = "both@shops.example"

// roleUser is the person of shop1's team with role r (shop1User is its
// owner).
func roleUser(r merchant.Role) string {
	if r == merchant.Owner {
		return shop1User
	}
	return string(r) + "@shop1.example"
}

// fakeBanks lists two German banks with logos.
type fakeBanks struct{}

func (fakeBanks) Warm() bool { return true }

func (fakeBanks) List(context.Context) (*banks.List, error) {
	return banks.NewList([]pisclient.Institution{
		{ID: "ing", Name: "ING Deutschland", CountryCode: "DE", LogoURL: "https://cdn.example/ing.svg"},
		{ID: "dkb", Name: "DKB", CountryCode: "DE"},
	}, false, time.Now()), nil
}

// provider answers every status read with the status set last.
type provider struct {
	mu     sync.Mutex
	status pisclient.Status
	reads  int
}

func (p *provider) CreatePayment(context.Context, pisclient.PaymentRequest) (*pisclient.Payment, error) {
	panic("the console creates no payment")
}

func (p *provider) PaymentStatus(_ context.Context, id string) (*pisclient.PaymentStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads++
	return &pisclient.PaymentStatus{MerchantOrderID: id, Status: p.status}, nil
}

// endpoint is a merchant's webhook endpoint that answers with code.
type endpoint struct {
	mu     sync.Mutex
	code   int
	bodies []string
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bodies = append(e.bodies, string(b))
	w.WriteHeader(e.code)
}

func (e *endpoint) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.bodies...)
}

// env is a console on a fresh ledger with two merchants and an operator.
type env struct {
	t        testing.TB
	url      string
	ledger   *ledger.Ledger
	provider *provider
	hook     *endpoint
	logs     *strings.Builder
	logMu    *sync.Mutex
	// health is the bank health the overview shows, read when a test
	// refreshes it; a bank is degraded from 2 payments finished.
	health *bankhealth.Keeper
	// skew moves the console's clock ahead of the real one.
	skew atomic.Int64
	// frozen, when not 0, is the console's clock (unix milliseconds).
	frozen atomic.Int64
	// settings are the merchants' settings, provisioned from the tests'
	// merchants file.
	settings *settings.Store
	// mail receives the console's e-mails.
	mail *fakeMail
	// gate bounds the passwords hashed at once, and counts them.
	gate *password.Gate
	// console is the console under test.
	console *console.Console
	// links makes the payment links; its Mail is nil (no SMTP_URL) unless
	// a test sets one before its first request.
	links *links.Store
	// refunds makes and moves refunds; its Mail is nil (no SMTP_URL)
	// unless a test sets one before its first request.
	refunds *refunds.Service
}

// fakeMail keeps the e-mails sent, or fails each when failing is set.
type fakeMail struct {
	mu      sync.Mutex
	sent    []string
	failing bool
}

func (m *fakeMail) Send(_ context.Context, to, subject, body string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failing {
		return errors.New("the mail server refused: 554 no")
	}
	m.sent = append(m.sent, "To: "+to+"\nSubject: "+subject+"\n\n"+body)
	return nil
}

func setup(t *testing.T) *env {
	t.Helper()
	return setupOn(t, ledgertest.SQLiteURL(t))
}

// setupOn is setup on the ledger at databaseURL.
func setupOn(t testing.TB, databaseURL string) *env {
	t.Helper()
	// Far more slots than the tests' passwords need at once, and time to
	// wait for one: only the test of the gate itself is turned away.
	return setupGated(t, databaseURL, password.NewGate(16, time.Minute))
}

// setupGated is setupOn with the gate of password hashing given.
func setupGated(t testing.TB, databaseURL string, gate *password.Gate) *env {
	t.Helper()
	return setupAt(t, databaseURL, gate, "http://127.0.0.1")
}

// setupAt is setupGated with the app's BASE_URL given: passkeys are bound
// to its host name (the tests' usual 127.0.0.1 has them off).
func setupAt(t testing.TB, databaseURL string, gate *password.Gate, baseURL string) *env {
	t.Helper()
	return setupWith(t, databaseURL, gate, baseURL, "")
}

// setupShop1 is setupOn with settings of shop1's added to the tests'
// merchants file (shop1 is a JSON object's fields, each followed by a
// comma).
func setupShop1(t testing.TB, databaseURL, shop1 string) *env {
	t.Helper()
	return setupWith(t, databaseURL, password.NewGate(16, time.Minute), "http://127.0.0.1", shop1)
}

// setupWith is setupAt with shop1's settings added (see setupShop1).
func setupWith(t testing.TB, databaseURL string, gate *password.Gate, baseURL, shop1 string) *env {
	t.Helper()
	hash, err := password.Hash(secret, password.Params{Memory: 64, Time: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	hook := &endpoint{code: http.StatusNoContent}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)
	user := func(email string) string { return `[{"email":"` + email + `","password_hash":"` + hash + `"}]` }
	// shop1's team has one person of each role; shop1User is its owner.
	team := `[{"email":"` + shop1User + `","password_hash":"` + hash + `"}`
	for _, r := range merchant.Roles[1:] {
		team += `,{"email":"` + roleUser(r) + `","password_hash":"` + hash + `","role":"` + string(r) + `"}`
	}
	team += `,{"email":"` + twoTeams + `","password_hash":"` + hash + `","role":"viewer"}]`
	shop := func(id, email, extra string) string {
		users := `[{"email":"` + email + `","password_hash":"` + hash + `"},{"email":"` + twoTeams + `","password_hash":"` + hash + `"}]`
		if id == "shop1" {
			users = team
		}
		return `{"id":"` + id + `","name":"Shop ` + id + `","link_keys":{"k1":"a-long-random-secret-for-` + id + `-0001"},
			"api_token":"another-long-random-secret-` + id + `-00000","return_origins":["https://` + id + `.example"],` + extra + `
			"console_users":` + users + `}`
	}
	file, err := merchant.Parse([]byte(`{"merchants":[` +
		shop("shop1", shop1User, `"webhook_url":"`+hookSrv.URL+`","webhook_secret":"a-long-random-webhook-secret-of-shop1",`+shop1) + `,` +
		shop("shop2", shop2User, "") + `],"operators":` + user(operator) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	l := ledgertest.Open(t, databaseURL)
	// The file's merchants are provisioned into the ledger, as the app
	// does at start; the console serves the running set.
	keys, err := settings.ParseKeys("a-settings-key-of-32-characters-or-more")
	if err != nil {
		t.Fatal(err)
	}
	store := &settings.Store{Ledger: l, Keys: keys, Dir: merchant.Empty(), Sandbox: true, Log: slog.New(slog.DiscardHandler)}
	if err := store.Provision(ctx, file); err != nil {
		t.Fatal(err)
	}
	// As an instance does, the console follows changes other instances
	// make.
	store.Every = 10 * time.Millisecond
	watching, stopWatching := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { store.Watch(watching); close(watched) }()
	t.Cleanup(func() { stopWatching(); <-watched })
	dir := store.Dir
	p := &provider{status: pisclient.StatusInProgress}
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	orders := &payment.Service{Ledger: l, Log: log, ProviderFor: func(*merchant.Merchant) payment.Provider { return p }}
	hooks := &webhook.Dispatcher{Ledger: l, Merchants: dir, Owner: "console-test", Client: webhook.NewClient(true), Log: log}
	e := &env{t: t, ledger: l, provider: p, hook: hook, logs: &logs, logMu: &logMu,
		health: &bankhealth.Keeper{Source: l, Thresholds: bankhealth.Thresholds{MinFinished: 2, MinSuccess: 0.5}}}
	e.settings = store
	e.mail = &fakeMail{}
	e.gate = gate
	e.links = &links.Store{Ledger: l, Keys: keys, BaseURL: baseURL, Bounds: &mailer.Bounds{Ledger: l}}
	e.refunds = &refunds.Service{Ledger: l, Keys: keys, BaseURL: baseURL, Bounds: &mailer.Bounds{Ledger: l}}
	c, err := console.New(console.Config{Mail: e.mail, Links: e.links, Refunds: e.refunds, Statements: &statements.Service{Ledger: l}, Hashing: gate, BaseURL: baseURL, Ledger: l, Merchants: dir, Settings: store, Orders: orders, Webhooks: hooks,
		Banks: fakeBanks{}, Health: e.health, Sandbox: true,
		Previews: shopper.New(shopper.Config{BaseURL: "http://127.0.0.1", Merchants: dir, Banks: fakeBanks{}, Health: e.health,
			Assets: views.Assets{CSS: "/static/app.css"}, Log: log}), SessionKeys: [][]byte{[]byte("a-session-key-of-32-bytes-or-more!!")}, Assets: views.Assets{CSS: "/static/app.css"}, Log: log,
		Now: func() time.Time {
			if ms := e.frozen.Load(); ms != 0 {
				return time.UnixMilli(ms)
			}
			return time.Now().Add(time.Duration(e.skew.Load()))
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.console = c
	router := echo.New()
	c.Routes(router)
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// logText is the console's log so far, read under the writers' lock.
func (e *env) logText() string {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.logs.String()
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// browser is one person's cookie jar, redirects not followed.
type browser struct {
	e      *env
	client *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) get(path string) *http.Response {
	b.e.t.Helper()
	res, err := b.client.Get(b.e.url + path)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return res
}

func (b *browser) post(path string, form url.Values) *http.Response {
	b.e.t.Helper()
	return b.postFrom("", path, form)
}

// postFrom posts a form as if from address (X-Real-IP); "" for the test's own.
func (b *browser) postFrom(address, path string, form url.Values) *http.Response {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if address != "" {
		req.Header.Set("X-Real-IP", address)
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return res
}

// page reads an HTML answer, failing unless its status is want.
func page(t testing.TB, res *http.Response, want int) *goquery.Document {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != want {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("%s %s: status %d, want %d\n%.600s", res.Request.Method, res.Request.URL.Path, res.StatusCode, want, body)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// csrfOf is the token of the first form on a page.
func csrfOf(doc *goquery.Document) string {
	v, _ := doc.Find(`input[name="csrf"]`).First().Attr("value")
	return v
}

// signIn signs in as email and returns the CSRF token of the first page.
func (b *browser) signIn(email string) string {
	b.e.t.Helper()
	return b.signInWith(email, secret)
}

// signInWith signs in with a password of the person's own.
func (b *browser) signInWith(email, pw string) string {
	b.e.t.Helper()
	form := page(b.e.t, b.get("/console/login"), http.StatusOK)
	res := b.post("/console/login", url.Values{"email": {email}, "password": {pw}, "csrf": {csrfOf(form)}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console" {
		b.e.t.Fatalf("sign-in as %s: %d to %q", email, res.StatusCode, res.Header.Get("Location"))
	}
	return csrfOf(page(b.e.t, b.get("/console"), http.StatusOK))
}

// seed makes an order of merchantID with one payment at bank walked
// through statuses (a final one ends it), as the checkout would.
func (e *env) seed(merchantID, orderID, bank string, statuses ...pisclient.Status) {
	e.t.Helper()
	if _, err := e.ledger.OpenOrder(ctx, ledger.Order{MerchantID: merchantID, OrderID: orderID, Amount: "49.90", Currency: "EUR",
		ReturnURL: "https://" + merchantID + ".example/done"}); err != nil {
		e.t.Fatal(err)
	}
	if bank == "" {
		return
	}
	a := ledger.Attempt{UpstreamID: merchantID + ":" + orderID, MerchantID: merchantID, OrderID: orderID, Seq: 1,
		Amount: "49.90", Currency: "EUR", BankID: bank, Country: "DE"}
	if err := e.ledger.InsertAttempt(ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.ledger.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + orderID}); err != nil {
		e.t.Fatal(err)
	}
	for _, s := range statuses {
		ch := ledger.Change{Status: string(s)}
		if s.Final() {
			ch.State = ledger.Final
		}
		if _, err := e.ledger.Move(ctx, a.UpstreamID, ledger.Open, ch); err != nil {
			e.t.Fatal(err)
		}
	}
}
