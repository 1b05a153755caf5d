package handlers_test

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/handlers/api/contracttest"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/static"
)

// app is the checkout over real HTTP in front of a sandbox provider that is
// itself reached over real HTTP.
type app struct {
	t         testing.TB
	url       string
	sandbox   *sandbox.Sandbox
	upstream  *httptest.Server
	cache     *banks.Cache
	merchants *merchant.Directory
	// settings keep the merchants in the ledger; merchants is their
	// running set.
	settings *settings.Store
	shop     *merchant.Merchant
	client   *http.Client
	ledger   *ledger.Ledger
	orders   *payment.Service
	sealer   *order.Sealer
	// health reads bank health from the ledger when a test refreshes it.
	health *bankhealth.Keeper
	// handler is the app without a network, for benchmarks.
	handler http.Handler
	// links makes payment links, as the API does; opens counts their
	// payers, added when a test flushes it.
	links *links.Store
	opens *links.Opens
	// refunds makes and moves refunds, as the API does.
	refunds *refunds.Service
}

// settleNow makes approved sandbox payments complete at once.
var settleNow = sandbox.Knobs{SettleDelay: time.Nanosecond}

type options struct {
	ttl      time.Duration
	knobs    sandbox.Knobs
	upstream http.Handler  // a provider other than the sandbox
	trusted  []*net.IPNet  // TRUSTED_PROXIES
	sandbox  bool          // sandbox mode: preview themes honoured
	burst    int           // the POST rate limit's burst; high when 0
	timeout  time.Duration // the provider client's deadline per call
	// upstreamFor wraps the sandbox in a misbehaving provider.
	upstreamFor func(*sandbox.Sandbox) http.Handler
	// ledger is a payments ledger to share with other instances; a fresh
	// SQLite file when nil.
	ledger *ledger.Ledger
	// webhook is shop1's webhook_url (signed with webhookSecret).
	webhook string
	// logTo receives the app's log; discarded when nil.
	logTo io.Writer
	// health says when a bank is degraded; the defaults when zero.
	health bankhealth.Thresholds
	// apiRate is each API token's budget a second (API_RATE); the app's
	// default when 0.
	apiRate rate.Limit
	// file replaces the merchants file of the tests.
	file string
	// now is the app's clock; time.Now when nil.
	now func() time.Time
	// requests keeps merchants' API requests, written in the background.
	requests bool
	// mail sends payment links' e-mails (SMTP_URL); none when nil.
	mail links.Mail
}

// testSettingsKeys seal the tests' merchants' secrets in their ledgers.
var testSettingsKeys, _ = settings.ParseKeys("the-handler-tests-settings-key-0000000000")

// webhookSecret signs shop1's webhooks when options.webhook is set.
const webhookSecret = "a-long-random-webhook-secret-of-shop1"

// The merchants of every handler test: shop1 is mid-rotation (keys 2026-10
// and 2026-11) and embeds the picker; shop2 is another shop on the same
// deployment; shop3 has IP verification on.
const (
	secret        = "a-long-random-secret-for-shop1-0001"
	oldSecret     = "the-previous-secret-of-shop1-000001"
	shop1Token    = "shop1-api-token-0000000000000000000"
	shop2Token    = "shop2-api-token-0000000000000000000"
	shop2Secret   = "a-long-random-secret-for-shop2-0002"
	merchantsFile = `{"merchants":[
	{"id":"shop1","name":"Shop <One>",
		"link_keys":{"2026-10":"` + oldSecret + `","2026-11":"` + secret + `"},
		"api_token":"` + shop1Token + `",
		"return_origins":["https://shop.example"],
		"frame_ancestors":["https://shop.example","https://www.shop.example"],
		"customization":{"title":"Shop One","primaryColor":"#0B5FFF"}},
	{"id":"shop2","name":"Shop Two",
		"link_keys":{"k1":"` + shop2Secret + `"},
		"api_token":"` + shop2Token + `",
		"return_origins":["https://two.example"]},
	{"id":"shop3","name":"Shop Three",
		"link_keys":{"k1":"a-long-random-secret-for-shop3-0003"},
		"api_token":"shop3-api-token-0000000000000000000",
		"return_origins":["https://three.example"],
		"ip_verification":true}
	]}`
)

func setup(t testing.TB, opts options) *app {
	t.Helper()
	a := &app{t: t}
	a.sandbox = sandbox.New(sandbox.Config{Knobs: opts.knobs})
	upstream := opts.upstream
	switch {
	case opts.upstreamFor != nil:
		upstream = opts.upstreamFor(a.sandbox)
	case upstream == nil:
		upstream = a.sandbox
	}
	a.upstream = httptest.NewServer(upstream)
	t.Cleanup(a.upstream.Close)

	client, err := pisclient.New(a.upstream.URL, sandbox.DefaultAPIKey,
		pisclient.WithRetry(2, time.Millisecond, 2*time.Millisecond), pisclient.WithTimeout(cmp.Or(opts.timeout, 5*time.Second)),
		pisclient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if opts.ttl == 0 {
		opts.ttl = time.Minute
	}
	log := slog.New(slog.NewTextHandler(cmp.Or[io.Writer](opts.logTo, io.Discard), nil))
	a.cache = banks.NewCache(client, opts.ttl, false, log)
	file := cmp.Or(opts.file, merchantsFile)
	if opts.webhook != "" {
		file = strings.Replace(file, `"id":"shop1",`, `"id":"shop1","webhook_url":"`+opts.webhook+`","webhook_secret":"`+webhookSecret+`",`, 1)
	}
	parsed, err := merchant.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := order.NewSealer([]byte("test token key"))
	a.sealer = sealer
	store, err := shopper.NewSessionStore([][]byte{[]byte("test cookie key")}, false)
	if err != nil {
		t.Fatal(err)
	}

	a.ledger = opts.ledger
	if a.ledger == nil {
		a.ledger = ledgertest.Open(t, ledgertest.SQLiteURL(t))
	}
	// Payments are due for their first check at once, so that followers
	// started by tests need not wait.
	a.ledger.FirstCheck = 0
	// The file is provisioned into the ledger, as at the app's start, and
	// the pages serve the running set.
	a.settings = &settings.Store{Ledger: a.ledger, Keys: testSettingsKeys, Dir: merchant.Empty(), Sandbox: opts.sandbox, Log: log}
	if err := a.settings.Provision(context.Background(), parsed); err != nil {
		t.Fatal(err)
	}
	dir := a.settings.Dir
	a.merchants = dir
	a.shop, _ = dir.Get("shop1")
	a.orders = &payment.Service{Ledger: a.ledger, Log: log, CreateTimeout: cmp.Or(opts.timeout, 5*time.Second),
		ProviderFor: func(*merchant.Merchant) payment.Provider { return client },
		Budget:      &payment.Budget{Ledger: a.ledger, Rate: 1000}}

	thresholds := opts.health
	if thresholds == (bankhealth.Thresholds{}) {
		thresholds = bankhealth.DefaultThresholds
	}
	a.health = &bankhealth.Keeper{Source: a.ledger, Thresholds: thresholds}

	var requests *ledger.RequestLog
	if opts.requests {
		requests = ledger.NewRequestLog(a.ledger, 64)
		runCtx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { requests.Run(runCtx, log); close(done) }()
		t.Cleanup(func() { stop(); <-done })
	}
	e := echo.New()
	// Every API answer of the tests is held to the API's contract.
	srv := httptest.NewServer(contracttest.Wrap(t, e))
	t.Cleanup(srv.Close)
	a.url = srv.URL
	a.opens = &links.Opens{Ledger: a.ledger}
	a.links = &links.Store{Ledger: a.ledger, Keys: testSettingsKeys, BaseURL: srv.URL, Mail: opts.mail,
		Bounds: &mailer.Bounds{Ledger: a.ledger}, Opens: a.opens}
	a.refunds = &refunds.Service{Ledger: a.ledger, Keys: testSettingsKeys, BaseURL: srv.URL, Mail: opts.mail,
		Bounds: &mailer.Bounds{Ledger: a.ledger}}
	h := handlers.New(handlers.Config{
		Config: shopper.Config{
			BaseURL: srv.URL, Merchants: dir, Sealer: sealer, Banks: a.cache,
			Orders: a.orders, Health: a.health, Sessions: store,
			Links: a.links, Refunds: a.refunds,
			Assets: static.Assets(), Log: log, Sandbox: opts.sandbox, Now: opts.now,
			// The provider of the tests is on loopback.
			LogoClient: &http.Client{Timeout: 5 * time.Second},
		},
		TrustedProxies: opts.trusted,
		PostRate:       0.001, PostBurst: cmp.Or(opts.burst, 1000),
		APIRate: opts.apiRate, APIRequests: requests,
	})
	h.Routes(e, static.Handler(), nil)
	a.handler = e
	a.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return a
}

// link is a signed entry link of shop1 for order id; change edits it before
// signing.
func (a *app) link(id string, change func(*order.Link)) string {
	return a.linkOf("shop1", id, change)
}

// linkOf is a signed entry link of any merchant, to its first return origin
// with its newest key.
func (a *app) linkOf(merchantID, id string, change func(*order.Link)) string {
	m, _ := a.merchants.Get(merchantID)
	l := order.Link{Order: order.Order{ID: id, Amount: "49.90", Currency: "EUR",
		ReturnURL: m.ReturnOrigins[0] + "/done", KID: m.NewestKID()}, TTL: time.Hour}
	if change != nil {
		change(&l)
	}
	u, err := l.URL(a.url, m, time.Now())
	if err != nil {
		a.t.Fatal(err)
	}
	return u
}

// enter follows a link of shop1 to its /c/{token} address.
func (a *app) enter(id string, change func(*order.Link)) string {
	a.t.Helper()
	return a.follow(a.link(id, change))
}

// follow opens an entry link and returns the /c/{token} address it leads to.
func (a *app) follow(link string) string {
	a.t.Helper()
	res := a.get(link)
	if res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("entry: status %d, want 303", res.StatusCode)
	}
	return a.url + res.Header.Get("Location")
}

func (a *app) get(u string) *http.Response {
	a.t.Helper()
	return a.do(http.MethodGet, u, nil, nil)
}

func (a *app) post(u string, form url.Values) *http.Response {
	a.t.Helper()
	return a.do(http.MethodPost, u, form, nil)
}

func (a *app) do(method, u string, form url.Values, header http.Header) *http.Response {
	a.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { res.Body.Close() })
	return res
}

// page reads a response as a document and checks its status.
func page(t *testing.T, res *http.Response, status int) *goquery.Document {
	t.Helper()
	if res.StatusCode != status {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("%s: status %d, want %d\n%s", res.Request.URL.Path, res.StatusCode, status, body)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func text(doc *goquery.Document, selector string) string {
	return strings.Join(strings.Fields(doc.Find(selector).Text()), " ")
}

func testid(id string) string { return `[data-testid="` + id + `"]` }

type goqueryS = goquery.Selection

func goqueryDoc(res *http.Response) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(res.Body)
}

// resolve is the address a link or form action ref on the page at base
// leads to, as a browser resolves it.
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		panic(err)
	}
	return b.ResolveReference(r).String()
}
