// Package app wires the checkout together: it reads the configuration,
// builds the ledger, the settings, the provider clients, the handlers and
// the background work, and serves until it is told to stop. The commands
// (package command) start it; tests start it the same way.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/handlers/console"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/settings"
	"github.com/paybybank/checkout/statements"
	"github.com/paybybank/checkout/static"
	"github.com/paybybank/checkout/telemetry"
	"github.com/paybybank/checkout/webhook"
)

// Serve runs the app until ctx ends: it listens on ADDR, builds every part
// from cfg, runs the background work, provisions the merchants file again
// at each SIGHUP, and says on stdout where it serves (in sandbox mode, with
// a demo link and the demo sign-in). Requests in flight then finish within
// ShutdownGrace, the background work within WorkersGrace.
func Serve(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("ADDR: %w", err)
	}
	cfg = cfg.WithListener(ln.Addr())
	a, err := New(ctx, cfg, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer a.ledger.Close()

	srv := &http.Server{
		Handler:           a.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var work sync.WaitGroup
	for _, run := range a.workers {
		work.Go(func() { run(workCtx) })
	}
	reloads := make(chan os.Signal, 1)
	signal.Notify(reloads, syscall.SIGHUP)
	defer signal.Stop(reloads)
	work.Go(func() {
		for {
			select {
			case <-workCtx.Done():
				return
			case <-reloads:
				a.reload(workCtx, cfg, log)
			}
		}
	})
	defer func() {
		stopWork()
		ended := make(chan struct{})
		go func() { work.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(WorkersGrace):
			// What was under way is claimed again by another instance, or
			// by this one at its next start, once its lease ends.
			log.Warn("background work did not end in time; stopping anyway", "waited", WorkersGrace)
		}
	}()

	provider := "provider " + cfg.PISBaseURL
	if cfg.SandboxMode() {
		provider = "the built-in sandbox provider"
	}
	fmt.Fprintf(stdout, "Pay by bank checkout on %s (listening on %s), using %s\n", cfg.BaseURL, ln.Addr(), provider)
	if cfg.SandboxMode() {
		if demo, ok := a.merchants.Get(merchant.DemoID); ok {
			link, err := order.DemoLinkOf(cfg.BaseURL, demo, order.NewDemoOrder(), order.DemoTTL, time.Now(), nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Demo payment link: %s\n", link)
		}
		if a.consolePassword != "" {
			fmt.Fprintf(stdout, "Demo console: %s/console (sign in as %s with password %s, new at each start)\n",
				cfg.BaseURL, merchant.DemoConsoleEmail, a.consolePassword)
		}
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ShutdownGrace is how long requests in flight may finish after SIGTERM;
// WorkersGrace how long the background work may then take to end. An
// orchestrator's grace period covers both (deploy/kubernetes).
const (
	ShutdownGrace = 20 * time.Second
	WorkersGrace  = 10 * time.Second
)

// App is the wired program.
type App struct {
	echo      *echo.Echo
	merchants *merchant.Directory
	sandbox   *sandbox.Sandbox
	banks     *banks.Cache
	metrics   *telemetry.Metrics
	ledger    *ledger.Ledger
	// requests keeps merchants' recent API requests, in the background.
	requests *ledger.RequestLog
	// settings keeps merchants in the ledger and a.merchants in step.
	settings  *settings.Store
	orders    *payment.Service
	providers *providers
	// health reads how each bank's payments end, in the background.
	health *bankhealth.Keeper
	// consolePassword signs the demo shop's people in to the console in
	// sandbox mode; empty otherwise.
	consolePassword string
	// webhooks sends merchants' events; the console sends through it too.
	webhooks *webhook.Dispatcher
	// workers follow payments and send webhooks in the background.
	workers []func(context.Context)
	// opens counts payment links' payers, added in the background.
	opens *links.Opens
	// refunds erases payers' accounts and addresses in the background;
	// statements forgets the parties of old statement entries.
	refunds    *refunds.Service
	statements *statements.Service
}

// newWorkers are the background work of an instance: the follower, which
// reads open payments until they are final, the webhook dispatcher, the
// folding of the console's counts and the reading of bank health.
// Leases in the ledger let any number of instances run them together.
func newWorkers(a *App, cfg Config, log *slog.Logger) []func(context.Context) {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	owner := fmt.Sprintf("%s-%d-%x", host, os.Getpid(), b)
	watch := a.metrics.WatchPayments(func() telemetry.Backlog {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var withWebhook []string
		for _, m := range a.merchants.All() {
			if m.WebhookURL != "" {
				withWebhook = append(withWebhook, m.ID)
			}
		}
		b, err := a.ledger.Backlog(ctx, withWebhook)
		if err != nil {
			log.Warn("measuring the backlog", "err", err)
		}
		return telemetry.Backlog{FollowLag: b.FollowLag, OldestUndelivered: b.OldestUndelivered}
	})
	follower := &payment.Follower{Service: a.orders, Merchant: a.merchants.Get, Owner: owner,
		Checked: watch.Followed, Log: log}
	dispatcher := &webhook.Dispatcher{Ledger: a.ledger, Merchants: a.merchants, Owner: owner,
		Client: webhook.NewClient(cfg.SandboxMode()), Delivered: watch.Delivered, Log: log}
	a.webhooks = dispatcher
	keepCounts := func(ctx context.Context) { a.ledger.KeepCounts(ctx, log) }
	retention := ledger.Retention{Events: cfg.EventRetention, Every: 10 * time.Minute, Batch: 500, Pause: 50 * time.Millisecond,
		Removed: func(p ledger.Pruned) {
			watch.Pruned("events", p.Events)
			watch.Pruned("deliveries", p.Deliveries)
			watch.Pruned("handoffs", p.Handoffs)
		}}
	prune := func(ctx context.Context) { a.ledger.KeepPruned(ctx, retention, log) }
	keepRequests := func(ctx context.Context) { a.requests.Run(ctx, log) }
	a.opens = &links.Opens{Ledger: a.ledger, Log: log}
	eraseRefunds := func(ctx context.Context) { a.refunds.Run(ctx, 10*time.Minute) }
	forgetParties := func(ctx context.Context) { a.statements.Run(ctx, time.Hour) }
	return []func(context.Context){follower.Run, dispatcher.Run, keepCounts, a.health.Run, prune, a.settings.Watch, keepRequests, a.opens.Run,
		eraseRefunds, forgetParties}
}

// New builds every part of the app from the configuration. The caller
// closes a.ledger.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	a := &App{merchants: merchant.Empty()}
	var file *merchant.Directory
	var err error
	if cfg.MerchantsFile != "" {
		if file, err = merchant.Load(cfg.MerchantsFile); err != nil {
			return nil, err
		}
		if !cfg.SandboxMode() {
			if err := file.CheckProduction(); err != nil {
				return nil, err
			}
		}
	}
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if a.ledger, err = ledger.Connect(connectCtx, cfg.DatabaseURL); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	log.Info("payments ledger ready", "database", a.ledger.Where)
	closeOnError := func(err error) (*App, error) {
		a.ledger.Close()
		return nil, err
	}
	if err := checkMode(ctx, cfg, a.ledger); err != nil {
		return closeOnError(err)
	}
	settingsKeys, err := SealingKeys(cfg, log)
	if err != nil {
		return closeOnError(err)
	}
	a.settings = &settings.Store{Ledger: a.ledger, Keys: settingsKeys, Dir: a.merchants, Sandbox: cfg.SandboxMode(), Log: log}
	if cfg.StudioTokenSet {
		log.Warn("STUDIO_TOKEN is ignored: the studio is now the console's Branding page (/console/branding), for each merchant's owners and designers; /studio leads there")
	}
	keys := cfg.SessionKeys
	if len(keys) == 0 {
		key := make([]byte, 32)
		rand.Read(key)
		keys = [][]byte{key}
		log.Warn("SESSION_KEYS is not set: using a random key, so checkouts under way break on restart and instances cannot share them (fine for development only)")
	}
	sealer, err := order.NewSealer(keys...)
	if err != nil {
		return closeOnError(err)
	}
	store, err := shopper.NewSessionStore(keys, strings.HasPrefix(cfg.BaseURL, "https://"))
	if err != nil {
		return closeOnError(err)
	}

	var sandboxHandler http.Handler
	a.metrics = telemetry.New()
	var clientOpts []pisclient.Option
	transport := http.DefaultTransport
	baseURL := cfg.PISBaseURL
	if cfg.SandboxMode() {
		a.sandbox = sandbox.New(sandbox.Config{
			APIKey: cfg.PISAPIKey, PublicURL: cfg.BaseURL + handlers.SandboxPrefix, Knobs: cfg.Knobs,
		})
		sandboxHandler = a.sandbox
		baseURL = "http://sandbox.internal"
		transport = a.sandbox
	}
	transport = a.metrics.Transport(transport)
	if cfg.Tracing {
		transport = telemetry.TraceTransport(transport)
	}
	clientOpts = append(clientOpts, pisclient.WithHTTPClient(&http.Client{Transport: transport}))
	clientOpts = append(clientOpts, pisclient.WithLogger(log))
	providers, err := newProviders(baseURL, cfg.PISAPIKey, a.merchants, cfg.SandboxMode(), log, clientOpts...)
	if err != nil {
		return closeOnError(err)
	}
	a.providers = providers
	client := providers.deployment
	// The clients of merchants' own provider keys are made before a new
	// set of settings serves its first request.
	a.settings.Prepare = func(next *merchant.Directory) error {
		clients, err := providers.clients(next)
		if err == nil {
			providers.byMerchant.Store(&clients)
		}
		return err
	}
	if err := a.loadSettings(ctx, cfg, file); err != nil {
		return closeOnError(err)
	}
	a.orders = &payment.Service{
		Ledger: a.ledger, Log: log,
		ProviderFor: func(m *merchant.Merchant) payment.Provider { return providers.For(m) },
		Budget:      &payment.Budget{Ledger: a.ledger, Rate: cfg.FollowRate},
	}
	a.health = &bankhealth.Keeper{Source: a.ledger, Thresholds: cfg.BankHealth, Every: cfg.BankHealthEvery, Log: log}
	a.metrics.WatchBankHealth(a.health.Snapshot)
	a.requests = ledger.NewRequestLog(a.ledger, 4096)
	a.workers = newWorkers(a, cfg, log)
	a.banks = banks.NewCache(client, cfg.InstitutionsTTL, cfg.SandboxMode(), log)
	a.metrics.WatchCache(a.banks.Stats)

	// One outage for every audience: logged once, whoever meets it first.
	outage := &web.Outage{Ledger: a.ledger, Where: a.ledger.Where, Log: log}
	bounds := cfg.MailBounds
	bounds.Ledger = a.ledger
	paymentLinks := &links.Store{Ledger: a.ledger, Keys: settingsKeys, BaseURL: cfg.BaseURL, Bounds: &bounds, Opens: a.opens}
	refundsService := &refunds.Service{Ledger: a.ledger, Keys: settingsKeys, BaseURL: cfg.BaseURL, Bounds: &bounds}
	if cfg.Mailer != nil {
		paymentLinks.Mail = cfg.Mailer
		refundsService.Mail = cfg.Mailer
	}
	a.refunds = refundsService
	a.statements = &statements.Service{Ledger: a.ledger}
	h := handlers.New(handlers.Config{
		Config: shopper.Config{
			BaseURL:        cfg.BaseURL,
			Outage:         outage,
			Merchants:      a.merchants,
			Sealer:         sealer,
			Banks:          a.banks,
			Orders:         a.orders,
			Links:          paymentLinks,
			Refunds:        refundsService,
			Health:         a.health,
			LogoClient:     logoClient(cfg, a.sandbox),
			Sessions:       store,
			Sandbox:        cfg.SandboxMode(),
			ProviderOrigin: providerOrigin(cfg),
			Assets:         static.Assets(),
			Log:            log,
		},
		TrustedProxies: cfg.TrustedProxies,
		Metrics:        a.metrics,
		APIRate:        cfg.APIRate,
		APIRequests:    a.requests,
	})
	con, err := console.New(console.Config{
		BaseURL: cfg.BaseURL, Ledger: a.ledger, Merchants: a.merchants, Settings: a.settings, Orders: a.orders, Webhooks: a.webhooks,
		Mail: mailerOf(cfg), Links: paymentLinks, Refunds: refundsService,
		Statements: a.statements, ReceivedWithin: cfg.ReceivedWithin,
		Banks: a.banks, Health: a.health, SessionKeys: keys, Assets: static.Assets(), Log: log, Outage: outage,
		Previews: h.Previews(), Sandbox: cfg.SandboxMode(),
	})
	if err != nil {
		return closeOnError(err)
	}
	h.Console = con
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	if cfg.Tracing {
		e.Use(telemetry.TraceRequests)
	}
	h.Routes(e, static.Handler(), sandboxHandler)
	a.echo = e
	return a, nil
}

// reload reads MERCHANTS_FILE again (at SIGHUP) and provisions it into
// the ledger: every instance then swaps in the new settings within a
// second, whether it was signalled or not. A file that fails any start-up
// check is refused, with the reason in the log, and the running settings
// stay.
func (a *App) reload(ctx context.Context, cfg Config, log *slog.Logger) {
	if cfg.MerchantsFile == "" {
		log.Warn("SIGHUP: there is no MERCHANTS_FILE to provision; merchants are managed in the console")
		return
	}
	next, err := merchant.Load(cfg.MerchantsFile)
	if err == nil && !cfg.SandboxMode() {
		err = next.CheckProduction()
	}
	if err == nil {
		err = a.settings.Provision(ctx, next)
	}
	if err != nil {
		a.metrics.Reloaded(false)
		log.Error("merchants file refused; the running settings stay", "file", cfg.MerchantsFile, "err", err)
		return
	}
	a.metrics.Reloaded(true)
	log.Info("merchants file provisioned", "file", cfg.MerchantsFile, "merchants", len(next.All()), "settings_version", a.settings.Version())
}

// loadSettings brings the ledger's settings into memory at start: the
// merchants file provisioned first when there is one, the demo merchant
// made in sandbox mode without one.
func (a *App) loadSettings(ctx context.Context, cfg Config, file *merchant.Directory) error {
	var err error
	switch {
	case file != nil:
		err = a.settings.Provision(ctx, file)
	case cfg.SandboxMode():
		// The demo sign-in, an operator, gets a password for this start
		// only.
		a.consolePassword = rand.Text()
		var phc string
		if phc, err = password.Hash(a.consolePassword, password.Default); err == nil {
			err = a.settings.SeedDemo(ctx, cfg.BaseURL, phc)
		}
	default:
		err = a.settings.Load(ctx)
	}
	if err != nil {
		return fmt.Errorf("merchants' settings: %w", err)
	}
	// A merchant whose settings do not open is disabled with its reason
	// (logged, on /readyz and the operators' Merchants page); every other
	// one serves.
	if err := a.settings.AuditUnopened(ctx); err != nil {
		return fmt.Errorf("merchants' settings: %w", err)
	}
	if !cfg.SandboxMode() {
		return a.merchants.CheckProduction()
	}
	return nil
}

// checkMode refuses a start whose mode is not the ledger's: a ledger a
// sandbox start made (its demo merchant, its test payments) never goes
// live unawares, and a live ledger is never given the demo merchant. The
// refusal says what to do instead.
func checkMode(ctx context.Context, cfg Config, l *ledger.Ledger) error {
	mode := ledger.ModeLive
	if cfg.SandboxMode() {
		mode = ledger.ModeSandbox
	}
	held, err := l.ClaimMode(ctx, mode)
	switch {
	case err != nil:
		return fmt.Errorf("DATABASE_URL: %w", err)
	case held == mode:
		return nil
	case held == ledger.ModeSandbox:
		return fmt.Errorf("DATABASE_URL: the ledger at %s was made by a sandbox start (go run . without PIS_BASE_URL), with its demo merchant and test payments: "+
			"it does not go live. Point DATABASE_URL at a fresh database for live mode (for SQLite, another file, such as sqlite:data/live.db), "+
			"then bring your merchants there with MERCHANTS_FILE or `checkout merchants import FILE`", l.Where)
	}
	return fmt.Errorf("DATABASE_URL: the ledger at %s is a live one: a sandbox start would add its demo merchant to it. "+
		"Run the sandbox on another DATABASE_URL (for SQLite, another file, such as sqlite:data/sandbox.db), or set PIS_BASE_URL to start live", l.Where)
}

// mailerOf is SMTP_URL's mailer, or none: a nil *mailer.Mailer must not
// become a non-nil interface.
func mailerOf(cfg Config) console.Mail {
	if cfg.Mailer == nil {
		return nil
	}
	return cfg.Mailer
}
