package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/webhook"
)

// loadAPIToken is the API token of the merchant of a run.
const loadAPIToken = "load-follow-api-token-for-this-run-only"

// hookSecret signs the webhooks the follow mode's merchant receives.
const hookSecret = "load-follow-webhook-secret-for-this-run-only"

// runFollow is `load follow`: it starts the app (sandbox, its own ledger)
// with a merchant whose webhook is this command, drives whole checkouts at
// a steady rate (link, bank page, details, submit, and for a share an
// approval at the sandbox bank; the shopper never comes back, so only the
// follower can find the payment), and measures how long an approval takes
// to reach the merchant's webhook, how many status reads each payment
// cost, the provider's reads a second and how late the follower read.
// Then it measures, in alternating turns, how many whole checkouts a
// second the app serves against the same ledger writes made bare against
// the same database.
func runFollow(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFollowFlags(args, stdout)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "load-follow-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.instances > 1 {
		return runFollowShared(ctx, dir, o, stdout)
	}
	if o.db == "" {
		o.db = "sqlite:" + filepath.Join(dir, "ledger.db")
	}

	hooks := newHookSink()
	hookSrv, hookURL, err := hooks.serve()
	if err != nil {
		return err
	}
	defer hookSrv.Close()
	app, err := startApp(ctx, dir, hookURL, map[string]string{"DATABASE_URL": o.db, "FOLLOW_RATE": o.followRate})
	if err != nil {
		return err
	}
	defer app.stop()
	client := &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	sh := &shoppers{client: client, base: app.base}

	fmt.Fprintf(stdout, "follow: %.0f new payments a second for %s, %.0f%% approved right after the submit, FOLLOW_RATE=%s, %s\n",
		o.perSecond, o.duration, 100*o.approve, o.followRate, redacted(o.db))
	start := followPayments(ctx, o, sh, hooks, stdout)
	if o.turn <= 0 {
		return nil
	}
	return compareCheckouts(ctx, o, app, sh, start, stdout)
}

// followOptions are the flags of `load follow`.
type followOptions struct {
	perSecond, approve, opened float64
	duration, turn             time.Duration
	followRate, db             string
	conns, instances, open     int
}

func parseFollowFlags(args []string, stdout io.Writer) (followOptions, error) {
	fs := flag.NewFlagSet("load follow", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var o followOptions
	fs.Float64Var(&o.perSecond, "rate", 10, "new payments a second")
	fs.DurationVar(&o.duration, "d", 3*time.Minute, "how long to make payments (with -instances: how long the run lasts)")
	fs.Float64Var(&o.approve, "approve", 0.5, "share of payments approved at the bank right after the submit")
	fs.StringVar(&o.followRate, "follow-rate", "20", "the app's FOLLOW_RATE")
	fs.StringVar(&o.db, "db", "", "the app's DATABASE_URL (default: a SQLite file of this run); with -instances, a PostgreSQL server where a database may be made")
	fs.DurationVar(&o.turn, "capacity", 10*time.Second, "length of each turn of the capacity comparison (0: none)")
	fs.IntVar(&o.conns, "c", 8, "concurrent shoppers in the capacity comparison")
	fs.IntVar(&o.instances, "instances", 1, "instances of the app; more than one share one PostgreSQL database and one provider served by this command (see runFollowShared)")
	fs.IntVar(&o.open, "open", 600, "with -instances: payments made and left open")
	fs.Float64Var(&o.opened, "opened", 0.5, "with -instances: share of the payments whose bank page the shopper opens")
	return o, fs.Parse(args)
}

// statusReads is the metric line of the app's status reads at the provider.
const statusReads = `checkout_upstream_duration_seconds_count{endpoint="status"} `

// followPayments makes payments at o's rate for o's length, approving a
// share at the bank, gives every approval's webhook a minute to come, and
// prints what was made, how soon each approval was told and how the
// follower kept up. It returns when it began making payments.
func followPayments(ctx context.Context, o followOptions, sh *shoppers, hooks *hookSink, stdout io.Writer) time.Time {
	readsBefore, _ := metricFloat(sh.client, sh.base, statusReads)
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	mostLag := watchLag(runCtx, sh.client, sh.base)
	start := time.Now()
	made := &paymentsMade{approved: map[string]time.Time{}}
	atRate(runCtx, o.perSecond, func(i int) {
		made.one(ctx, sh, fmt.Sprintf("F-%d-%06d", start.Unix(), i), i, o.approve)
	})
	maxLag := mostLag()
	elapsed := time.Since(start)
	hooks.await(ctx, made.approved)
	readsAfter, _ := metricFloat(sh.client, sh.base, statusReads)
	waits := sample{latencies: hooks.waits(made.approved)}
	pct := func(p float64) time.Duration { return waits.pct(p).Round(10 * time.Millisecond) }
	reads := readsAfter - readsBefore
	fmt.Fprintf(stdout, "  payments made: %d in %s (%.1f a second), %d approved, %d failed checkouts\n",
		made.made.Load(), elapsed.Round(time.Second), float64(made.made.Load())/elapsed.Seconds(), len(made.approved), made.failed.Load())
	if n, m := sh.wayBack.Load(), sh.lost.Load(); n+m > 0 {
		fmt.Fprintf(stdout, "  shoppers answered 5xx: %d with 503, Retry-After and a way back to the shop; %d otherwise\n", n, m)
	}
	fmt.Fprintf(stdout, "  webhooks with a bad signature: %d\n", hooks.badCount())
	fmt.Fprintf(stdout, "  approval to the merchant's paid webhook: p50 %s, p99 %s, max %s (%d of %d arrived)\n",
		pct(0.50), pct(0.99), pct(1), len(waits.latencies), len(made.approved))
	fmt.Fprintf(stdout, "  provider status reads: %.0f, %.1f a second over the run and its drain, %.2f per payment\n",
		reads, reads/time.Since(start).Seconds(), reads/float64(max(1, made.made.Load())))
	late, _ := lateness(sh.client, sh.base)
	fmt.Fprintf(stdout, "  follower: most overdue read at any second %.1f s; reads past their schedule: %s\n", maxLag, late)
	return start
}

// watchLag reads the follower's lag every second until ctx ends; the
// function it returns waits for that end and says the most it read.
func watchLag(ctx context.Context, client *http.Client, base string) func() float64 {
	var most float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if v, err := metricFloat(client, base, "checkout_follow_lag_seconds "); err == nil {
					most = max(most, v)
				}
			}
		}
	}()
	return func() float64 {
		<-done
		return most
	}
}

// paymentsMade is what the shoppers of the follow phase did: the
// checkouts made and failed, and when each approved order was approved.
type paymentsMade struct {
	made, failed atomic.Int64
	mu           sync.Mutex
	approved     map[string]time.Time
}

// one makes the checkout of order id as shopper who and, for a share
// approve of the payments, approves it at the bank.
func (p *paymentsMade) one(ctx context.Context, sh *shoppers, id string, who int, approve float64) {
	link, err := sh.checkout(ctx, id, who)
	if err != nil {
		p.failed.Add(1)
		return
	}
	p.made.Add(1)
	if rand.Float64() >= approve {
		return
	}
	at, err := sh.approve(ctx, link, who)
	if err != nil {
		p.failed.Add(1)
		return
	}
	p.mu.Lock()
	p.approved[id] = at
	p.mu.Unlock()
}

// compareCheckouts measures, in two alternating turns of each side, whole
// checkouts through the app against the same ledger writes made bare from
// this command against the same database, and prints both.
func compareCheckouts(ctx context.Context, o followOptions, app *appProcess, sh *shoppers, start time.Time, stdout io.Writer) error {
	l, err := ledger.Connect(ctx, o.db)
	if err != nil {
		return err
	}
	defer l.Close()
	var t checkoutTurns
	// Each checkout comes from an address of its own, as shoppers come:
	// one address making a hundred submits a second is what the app's
	// limits are there to stop.
	var address atomic.Int64
	t.appCPU, t.bareCPU = checkoutMeters(app, o.db)
	for r := range 2 {
		t.appCPU.turn(func() {
			t.app.add(measureEach(ctx, o.conns, o.turn, func(ctx context.Context, w, n int) error {
				_, err := sh.checkout(ctx, fmt.Sprintf("C-%d-%d-%d-%d", start.Unix(), r, w, n), int(address.Add(1))&0xffffff)
				return err
			}))
		})
		t.bareCPU.turn(func() {
			t.bare.add(measureEach(ctx, o.conns, o.turn, func(ctx context.Context, w, n int) error {
				return bareCheckout(ctx, l, fmt.Sprintf("B-%d-%d-%d-%d", start.Unix(), r, w, n))
			}))
		})
	}
	fmt.Fprintf(stdout, "whole checkouts at %d shoppers, %s each side in 2 turns\n", o.conns, 2*o.turn)
	t.print(stdout)
	return nil
}

// checkoutMeters meter the processor time of the app's side (the app, this
// command and, on PostgreSQL, the database's server processes) and of the
// bare side (this command and the database's server processes).
func checkoutMeters(app *appProcess, databaseURL string) (appCPU, bareCPU *cpuMeter) {
	self := pid("this command", os.Getpid())
	var database []process
	if strings.HasPrefix(databaseURL, "postgres") {
		database = []process{postgresServer}
	}
	return newCPUMeter(append([]process{pid("app", app.cmd.Process.Pid), self}, database...)...),
		newCPUMeter(append([]process{self}, database...)...)
}

// checkoutTurns is what the turns of whole checkouts and of their bare
// ledger writes measured, and the processor time each side cost.
type checkoutTurns struct {
	app, bare       sample
	appCPU, bareCPU *cpuMeter
}

// print says both sides' rates, their ratio, the processor time each spent
// per checkout where it could be read, and each side's first failure.
func (t *checkoutTurns) print(stdout io.Writer) {
	per := func(s sample) string {
		return fmt.Sprintf("%6.0f checkouts/s, p50 %s, p99 %s (%d ok, %d failed)", s.throughput(),
			s.pct(0.50).Round(10*time.Microsecond), s.pct(0.99).Round(10*time.Microsecond), len(s.latencies), s.failures)
	}
	fmt.Fprintf(stdout, "  app:   %s  (link, bank page, details, submit: 4 requests and a create call)\n", per(t.app))
	fmt.Fprintf(stdout, "  bare:  %s  (the same ledger writes, from this process)\n", per(t.bare))
	fmt.Fprintf(stdout, "  ratio: %.0f%% of the bare writes' rate\n", 100*t.app.throughput()/t.bare.throughput())
	if a, b := t.appCPU.per(t.app.made(), time.Millisecond), t.bareCPU.per(t.bare.made(), time.Millisecond); a != "" && b != "" {
		fmt.Fprintf(stdout, "  processor time per checkout: %s; bare: %s\n", a, b)
	}
	for _, s := range []struct {
		side string
		sample
	}{{"app", t.app}, {"bare", t.bare}} {
		if s.firstFailure != nil {
			fmt.Fprintf(stdout, "  %s: the first failure: %v\n", s.side, s.firstFailure)
		}
	}
}

// atRate calls one perSecond times a second, each call on a goroutine of
// its own and told its number, until ctx ends; then it waits for the calls
// under way. The i-th call is due i/perSecond after the start: calls a busy
// machine delayed are made as soon as it can, so the rate holds over the
// run (a ticker would drop them).
func atRate(ctx context.Context, perSecond float64, one func(i int)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	start := time.Now()
	interval := time.Duration(float64(time.Second) / perSecond)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; ; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		wg.Go(func() { one(i) })
	}
}

// shoppers drive checkouts through the app, each from an address of its
// own (the app trusts this command's X-Forwarded-For), as real shoppers
// come from many.
type shoppers struct {
	client *http.Client
	base   string
	// wayBack counts the answers of 503 that said when to try again and
	// led back to the shop (the page of a moment's trouble); lost the
	// other 5xx answers.
	wayBack, lost atomic.Int64
}

func (s *shoppers) do(ctx context.Context, method, u string, form url.Values, who int) (*http.Response, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", who>>16&255, who>>8&255, who&255))
	// A browser takes gzip, as here, and unpacks what it shows. This
	// command reads every byte sent but unpacks only the page it looks
	// into: unpacking pages it throws away was a third of its processor
	// time, taken from the app on the same two cores.
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode < 500 {
		io.Copy(io.Discard, res.Body)
		return res, nil
	}
	// Read whole, for the connection to serve the next request even when
	// the page does not unpack.
	page, _ := io.ReadAll(res.Body)
	if res.Header.Get("Content-Encoding") == "gzip" {
		page, _ = gunzip(page)
	}
	if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" && bytes.Contains(page, []byte(`data-testid="way-back"`)) {
		s.wayBack.Add(1)
	} else {
		s.lost.Add(1)
	}
	return res, nil
}

// checkout opens order id's link, the bank page and the details step, and
// submits; it returns the payment link.
func (s *shoppers) checkout(ctx context.Context, id string, who int) (string, error) {
	link, err := order.DemoLink(s.base, order.Order{ID: id, Amount: "49.90"}, time.Hour, time.Now(), nil)
	if err != nil {
		return "", err
	}
	res, err := s.do(ctx, http.MethodGet, link, nil, who)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return "", orStatus(err, res, "link")
	}
	checkout := s.base + res.Header.Get("Location")
	for _, step := range []string{"/banks?country=DE", "/pay?country=DE&bank=deutsche-bank"} {
		if res, err := s.do(ctx, http.MethodGet, checkout+step, nil, who); err != nil || res.StatusCode != http.StatusOK {
			return "", orStatus(err, res, step)
		}
	}
	res, err = s.do(ctx, http.MethodPost, checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}, who)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return "", orStatus(err, res, "submit")
	}
	return res.Header.Get("Location"), nil
}

// approve approves a payment at the sandbox bank and does not follow the
// way back: the shopper closed the tab. It returns when the bank took it.
func (s *shoppers) approve(ctx context.Context, link string, who int) (time.Time, error) {
	res, err := s.do(ctx, http.MethodPost, link, url.Values{"action": {"approve"}}, who)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return time.Time{}, orStatus(err, res, "approve")
	}
	return time.Now(), nil
}

func orStatus(err error, res *http.Response, step string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s: HTTP %d", step, res.StatusCode)
}

// bareCheckout makes the ledger writes of one checkout (the link opened,
// the order recorded at the submit, the attempt inserted and opened with
// its link) straight against the database.
func bareCheckout(ctx context.Context, l *ledger.Ledger, id string) error {
	o := ledger.Order{MerchantID: merchant.DemoID, OrderID: id, Amount: "49.90", Currency: "EUR", ReturnURL: "http://127.0.0.1/"}
	if _, err := l.OpenOrder(ctx, o); err != nil {
		return err
	}
	if _, err := l.RecordOrder(ctx, o); err != nil {
		return err
	}
	a := ledger.Attempt{UpstreamID: "bare~" + id, MerchantID: o.MerchantID, OrderID: id, Seq: 1, Amount: o.Amount, Currency: o.Currency,
		BankID: "deutsche-bank", Country: "DE"}
	if err := l.InsertAttempt(ctx, a); err != nil {
		return err
	}
	_, err := l.Move(ctx, a.UpstreamID, ledger.Creating, ledger.Change{State: ledger.Open, Link: "https://bank.example/" + id})
	return err
}

// hookSink is the merchant's server: it checks each webhook's signature
// and notes when each order was first said to be paid.
type hookSink struct {
	mu     sync.Mutex
	paidAt map[string]time.Time
	bad    int
}

func newHookSink() *hookSink { return &hookSink{paidAt: map[string]time.Time{}} }

func (h *hookSink) serve() (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		body, _ := io.ReadAll(r.Body)
		var e ledger.EventBody
		if webhook.Verify(hookSecret, r.Header.Get(webhook.Header), body, now, 5*time.Minute) != nil || json.Unmarshal(body, &e) != nil {
			h.mu.Lock()
			h.bad++
			h.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if e.Data.Paid {
			h.mu.Lock()
			if _, seen := h.paidAt[e.Data.MerchantOrderID]; !seen {
				h.paidAt[e.Data.MerchantOrderID] = now
			}
			h.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String() + "/hooks", nil
}

func (h *hookSink) badCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bad
}

func (h *hookSink) paid(id string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.paidAt[id]
	return at, ok
}

// await gives every order of approved a minute to be told paid.
func (h *hookSink) await(ctx context.Context, approved map[string]time.Time) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
		if h.paidOf(approved) == len(approved) {
			break
		}
	}
}

// waits are, for each order of approved told paid, the time from its
// approval to its paid webhook.
func (h *hookSink) waits(approved map[string]time.Time) []time.Duration {
	var waits []time.Duration
	for id, at := range approved {
		if paid, ok := h.paid(id); ok {
			waits = append(waits, paid.Sub(at))
		}
	}
	return waits
}

func (h *hookSink) paidOf(ids map[string]time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for id := range ids {
		if _, ok := h.paidAt[id]; ok {
			n++
		}
	}
	return n
}

// appProcess is the app, built from this module and run for the load.
type appProcess struct {
	base string
	cmd  *exec.Cmd
}

func (a *appProcess) stop() {
	a.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
}

// startApp builds the app in the current directory (the module's root),
// gives it a merchants file with the demo merchant sending its webhooks
// to hookURL (none when empty), and runs it on a free loopback port with env added.
func startApp(ctx context.Context, dir, hookURL string, env map[string]string) (*appProcess, error) {
	bin := filepath.Join(dir, "checkout")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the app (run this from the repository's root): %w", err)
	}
	addr := env["ADDR"]
	if addr == "" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	base := "http://" + addr
	file := env["MERCHANTS_FILE"]
	if file == "" {
		file = filepath.Join(dir, "merchants.json")
		if err := writeMerchants(file, hookURL, []string{base}, nil); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ADDR="+addr, "BASE_URL="+base, "MERCHANTS_FILE="+file, "TRUSTED_PROXIES=127.0.0.1/32")
	for k, v := range env {
		if k != "ADDR" && k != "MERCHANTS_FILE" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	// The app logs every request: its log goes to a file beside the
	// ledger, not over the figures.
	logFile, err := os.Create(filepath.Join(dir, "app.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &appProcess{base: base, cmd: cmd}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return a, nil
			}
		}
		if time.Now().After(deadline) {
			a.stop()
			return nil, errors.New("the app did not become ready in 30 s")
		}
	}
}

// startInstances starts n instances of the app on free loopback ports,
// each in a folder of its own under dir, with one merchants file naming
// every instance among the demo shop's return origins, operators beside it
// (none when nil), and env added. On an error it stops those it started.
func startInstances(ctx context.Context, dir string, n int, operators []any, env map[string]string) ([]*appProcess, error) {
	var addrs, origins []string
	for range n {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		addrs, origins = append(addrs, addr), append(origins, "http://"+addr)
	}
	file := filepath.Join(dir, "merchants.json")
	if err := writeMerchants(file, "", origins, operators); err != nil {
		return nil, err
	}
	var apps []*appProcess
	for i, addr := range addrs {
		own := filepath.Join(dir, fmt.Sprintf("instance-%d", i+1))
		if err := os.Mkdir(own, 0o700); err != nil {
			stopAll(apps)
			return nil, err
		}
		a, err := startApp(ctx, own, "", with(env, map[string]string{"ADDR": addr, "MERCHANTS_FILE": file}))
		if err != nil {
			stopAll(apps)
			return nil, err
		}
		apps = append(apps, a)
	}
	return apps, nil
}

// stopAll stops every one of apps.
func stopAll(apps []*appProcess) {
	for _, a := range apps {
		a.stop()
	}
}

// with is env with more set beside it.
func with(env, more map[string]string) map[string]string {
	out := maps.Clone(env)
	maps.Copy(out, more)
	return out
}

// freeAddr is a loopback address no one listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// writeMerchants writes a merchants file with the demo merchant, sending
// its webhooks to hookURL (none when empty), returning to origins, and
// operators (objects with email and password_hash) beside it.
func writeMerchants(file, hookURL string, origins []string, operators []any) error {
	demo := map[string]any{
		"id": merchant.DemoID, "name": "Demo Shop", "link_keys": map[string]string{merchant.DemoKID: merchant.DemoSecret},
		"api_token": loadAPIToken, "return_origins": origins,
	}
	if hookURL != "" {
		demo["webhook_url"], demo["webhook_secret"] = hookURL, hookSecret
	}
	content := map[string]any{"merchants": []any{demo}}
	if operators != nil {
		content["operators"] = operators
	}
	raw, _ := json.Marshal(content)
	return os.WriteFile(file, raw, 0o600)
}

// metricFloat is the value of the app's metric line that starts with prefix.
func metricFloat(client *http.Client, base, prefix string) (float64, error) {
	v, err := metric(client, base, prefix)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

// lateness reads the follower's lateness histogram: the share of reads
// within each bound and the largest bound any read reached.
func lateness(client *http.Client, base string) (string, error) {
	bounds := []string{"1", "5", "10", "30", "60", "+Inf"}
	var counts []float64
	for _, le := range bounds {
		v, err := metricFloat(client, base, `checkout_follow_read_lateness_seconds_bucket{le="`+le+`"} `)
		if err != nil {
			return "", err
		}
		counts = append(counts, v)
	}
	total := counts[len(counts)-1]
	if total == 0 {
		return "none", nil
	}
	var parts []string
	for i, le := range bounds[:len(bounds)-1] {
		parts = append(parts, fmt.Sprintf("%.1f%% within %s s", 100*counts[i]/total, le))
	}
	return fmt.Sprintf("%s (of %.0f reads)", strings.Join(parts, ", "), total), nil
}

// redacted is a DATABASE_URL without its password.
func redacted(databaseURL string) string {
	if u, err := url.Parse(databaseURL); err == nil && u.User != nil {
		return u.Redacted()
	}
	return databaseURL
}
