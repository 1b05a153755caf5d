package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// env is a fake environment for run. Without a DATABASE_URL of its own each
// run gets a fresh SQLite ledger in a temporary folder, never data/ in the
// working tree.
func env(vars map[string]string) func(string) string {
	db := "sqlite:" + filepath.Join(testDir, fmt.Sprintf("ledger-%d.db", testDBs.Add(1)))
	return func(name string) string {
		if v, ok := vars[name]; ok || name != "DATABASE_URL" {
			return v
		}
		return db
	}
}

var (
	testDir string
	testDBs atomic.Int64
)

func TestMain(m *testing.M) {
	// The tests read the repository's files (node_modules, devtools/load) as
	// the program's folder holds them.
	if err := os.Chdir("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "checkout-main-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestLinkCommandPrintsASignedLink(t *testing.T) {
	var out strings.Builder
	args := []string{"link", "-merchant", "demo", "-order", "A-1", "-amount", "49.90", "-return-url", "https://shop.example/done"}
	if err := run(context.Background(), args, env(nil), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(strings.TrimSpace(out.String()))
	if err != nil || u.Host != "localhost:8080" || u.Path != "/checkout" {
		t.Fatalf("printed %q", out.String())
	}
	q := u.Query()
	if !order.Verify(merchant.DemoSecret, q) || q.Get("order") != "A-1" || q.Get("amount") != "49.90" || q.Get("kid") != merchant.DemoKID {
		t.Errorf("link %s is not a signed demo link for A-1", u)
	}

	out.Reset()
	err = run(context.Background(), []string{"link", "-order", "A-1", "-amount", "0.50"}, env(nil), &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "amount") {
		t.Errorf("an amount below the minimum: err = %v", err)
	}
}

func TestEventRetentionIsWrittenInDaysOrHours(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 90 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "36h": 36 * time.Hour} {
		c, err := loadConfig(func(k string) string { return map[string]string{"EVENT_RETENTION": v}[k] })
		if err != nil || c.EventRetention != want {
			t.Errorf("EVENT_RETENTION=%q: %v, %v; want %v", v, c.EventRetention, err, want)
		}
	}
	for _, v := range []string{"30m", "-1d", "5000d"} {
		if _, err := loadConfig(func(k string) string { return map[string]string{"EVENT_RETENTION": v}[k] }); err == nil {
			t.Errorf("EVENT_RETENTION=%q accepted", v)
		}
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"INSTITUTIONS_TTL":         {"INSTITUTIONS_TTL": "often"},
		"SESSION_KEYS":             {"SESSION_KEYS": "short"},
		"MERCHANTS_FILE":           {"PIS_BASE_URL": "https://pis.example"},
		"BASE_URL":                 {"BASE_URL": "localhost:8080"},
		"ADDR":                     {"ADDR": "8080"},
		"SANDBOX_LATENCY":          {"SANDBOX_LATENCY": "slow"},
		"DATABASE_URL":             {"DATABASE_URL": "mysql://db.example/checkout"},
		"BANK_HEALTH_MIN_FINISHED": {"BANK_HEALTH_MIN_FINISHED": "0"},
		"BANK_HEALTH_MIN_SUCCESS":  {"BANK_HEALTH_MIN_SUCCESS": "50%"},
		"SANDBOX_FAILING_BANKS":    {"SANDBOX_FAILING_BANKS": "DE:nobank:0.5"},
		"SANDBOX_UNLISTED_BANKS":   {"SANDBOX_UNLISTED_BANKS": "dkb"},
		"BANK_HEALTH_REFRESH":      {"BANK_HEALTH_REFRESH": "2h"},
		"EVENT_RETENTION":          {"EVENT_RETENTION": "ninety days"},
		"FOLLOW_RATE":              {"FOLLOW_RATE": "0"},
		"API_RATE":                 {"API_RATE": "0.5"},
	} {
		err := run(context.Background(), nil, env(vars), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: err = %v, want it to name %s", vars, err, name)
		}
	}
}

// server is the app started as `go run .` starts it.
type server struct {
	base, demoLink string
	// consoleEmail and consolePassword sign in to the demo shop's console.
	consoleEmail, consolePassword string
}

// demoConsole is the line that tells how to sign in to the demo console.
var demoConsole = regexp.MustCompile(`^Demo console: \S+/console \(sign in as (\S+) with password (\S+), new at each start\)$`)

// start runs the app on a free loopback port with vars added to an empty
// environment, and stops it when the test ends.
func start(t *testing.T, vars map[string]string) server {
	t.Helper()
	return startLogging(t, vars, io.Discard)
}

// startLogging is start with the app's log written to logs.
func startLogging(t *testing.T, vars map[string]string, logs io.Writer) server {
	t.Helper()
	all := map[string]string{"ADDR": "127.0.0.1:0"}
	for k, v := range vars {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(all), w, logs); w.Close() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	// The demo merchant, and its link, exist only without a merchants file.
	demo := all["MERCHANTS_FILE"] == "" && all["PIS_BASE_URL"] == ""
	var s server
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		if rest, ok := strings.CutPrefix(line, "Pay by bank checkout on "); ok {
			s.base, _, _ = strings.Cut(rest, " ")
		}
		if link, ok := strings.CutPrefix(line, "Demo payment link: "); ok {
			s.demoLink = link
		}
		if m := demoConsole.FindStringSubmatch(line); m != nil {
			s.consoleEmail, s.consolePassword = m[1], m[2]
		}
		if s.base != "" && (s.demoLink != "" && s.consolePassword != "" || !demo) {
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if s.base == "" || (demo && s.demoLink == "") {
		t.Fatalf("the app printed no address and demo link: %v", lines.Err())
	}
	return s
}

func TestStartPrintsAWorkingDemoLink(t *testing.T) {
	s := start(t, nil)
	if !strings.HasPrefix(s.demoLink, s.base+"/checkout?") {
		t.Errorf("demo link %q is not on %q", s.demoLink, s.base)
	}
	u, _ := url.Parse(s.demoLink)
	if !order.Verify(merchant.DemoSecret, u.Query()) {
		t.Error("the demo link does not verify")
	}
	res, err := http.Get(s.demoLink)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "Where is your bank?") {
		t.Errorf("following the demo link: %d\n%s", res.StatusCode, body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/sandbox/logos/ing.svg"} {
		res, err := http.Get(s.base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
}

func TestBadMerchantsFileStopsStartUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "merchants.json")
	file := `{"merchants":[{"id":"shop1","name":"Shop One","link_keys":{"2026-11":"too-short"},
		"api_token":"another-long-random-secret-00000000","return_origins":["https://shop.example"]}]}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), nil, env(map[string]string{"ADDR": "127.0.0.1:0", "MERCHANTS_FILE": path}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "merchant shop1: link_keys[2026-11]") {
		t.Errorf("err = %v, want it to name merchant shop1 and link_keys[2026-11]", err)
	}
	if strings.Contains(fmt.Sprint(err), "too-short") {
		t.Error("the error shows the secret")
	}
}

func TestMetricsShowRequestsUpstreamAndCache(t *testing.T) {
	s := start(t, nil)
	res, err := http.Get(s.demoLink) // entry, then the country page: one institutions fetch
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimPrefix(res.Request.URL.Path, "/c/") // the checkout the shopper holds
	if token == "" || token == res.Request.URL.Path {
		t.Fatalf("the demo link led to %s, not to a checkout", res.Request.URL)
	}
	res.Body.Close()
	res, err = http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	text := string(body)
	for _, want := range []string{
		`checkout_request_duration_seconds_count{code="200",method="GET",route="/c/:token"} 1`,
		`checkout_request_duration_seconds_count{code="303",method="GET",route="/checkout"} 1`,
		`checkout_upstream_duration_seconds_count{endpoint="institutions"} 1`,
		"checkout_banks_cache_fetches_total 1",
		"checkout_banks_cache_misses_total 1",
		"checkout_banks_cache_stale_total 0",
		"checkout_attempts_followed_total 0",
		"checkout_follow_lag_seconds 0",
		"checkout_events_oldest_undelivered_seconds 0",
		"checkout_webhook_delivery_latency_seconds_count 0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q in\n%s", want, grepLines(text, "checkout_"))
		}
	}
	if strings.Contains(text, token) || strings.Contains(text, s.demoLink) || strings.Contains(text, "sig=") {
		t.Error("/metrics shows a checkout token or a signed link")
	}
}

func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	vars := map[string]string{"ADDR": "127.0.0.1:0", "SANDBOX_LATENCY": "700ms"}
	go func() { done <- run(ctx, nil, env(vars), w, io.Discard); w.Close() }()
	lines := bufio.NewScanner(stdout)
	var link string
	for lines.Scan() {
		if l, ok := strings.CutPrefix(lines.Text(), "Demo payment link: "); ok {
			link = l
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if link == "" {
		t.Fatal("no demo link")
	}
	got := make(chan int, 1)
	go func() {
		res, err := http.Get(link) // the country page waits on the slow provider
		if err != nil {
			got <- 0
			return
		}
		res.Body.Close()
		got <- res.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // let the request start
	cancel()
	if status := <-got; status != http.StatusOK {
		t.Errorf("the request in flight at shutdown got %d, want 200", status)
	}
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestLoadCommandReportsTheRun(t *testing.T) {
	s := start(t, nil)
	// The load generator is a developer's program of its own (devtools/load),
	// run as docs/performance.md says.
	out, err := exec.Command("go", "run", "./devtools/load", "-url", s.base, "-c", "4", "-d", "500ms").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	report := string(out)
	for _, want := range []string{"0 failed", "requests/s", "p99", "static:", "ratio:  throughput", "provider institutions calls during the run (first page included): 1", "page weight, gzip: HTML", "0 images or scripts from outside"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

// payAtSandboxBank submits the details form of checkout for Deutsche Bank
// (with header), approves the payment at the sandbox bank and returns the
// address the bank sends the shopper back to.
func payAtSandboxBank(t *testing.T, client *http.Client, checkout string, header http.Header) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, checkout+"/pay", strings.NewReader(url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %v %v", res, err)
	}
	res.Body.Close()
	res, err = client.PostForm(res.Header.Get("Location"), url.Values{"action": {"approve"}})
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %v %v", res, err)
	}
	res.Body.Close()
	return res.Header.Get("Location")
}

// demoOrderLink is a signed link of the demo merchant on the app at base,
// paid back to the demo shop; change edits the order before signing.
func demoOrderLink(t *testing.T, base, id, lang string, change func(*order.Link)) string {
	t.Helper()
	u, err := order.DemoLink(base, order.Order{ID: id, Amount: "1249.90", Lang: lang}, time.Hour, time.Now(), change)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTheDemoShopShowsTheWebhooksItReceived(t *testing.T) {
	s := start(t, map[string]string{"SANDBOX_SETTLE_DELAY": "1ms"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(s.demoLink)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	payAtSandboxBank(t, client, s.base+res.Header.Get("Location"), nil)
	link, _ := url.Parse(s.demoLink)
	shopPage := s.base + "/sandbox/shop/return?merchant_order_id=" + url.QueryEscape(link.Query().Get("order"))
	// The shopper never goes back: the follower reads the payment (first
	// after 5 s) and the dispatcher tells the demo shop.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(shopPage)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if doc.Find(`[data-testid="shop-webhook-status"]`).Text() == "COMPLETED" {
			if got := doc.Find(`[data-testid="shop-webhook-signature"]`).Text(); got != "verified" {
				t.Errorf("the demo shop's webhook signature: %q", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no COMPLETED webhook at the demo shop after 30 s; the page says %q", doc.Find("main").Text())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestSIGHUPReloadsTheMerchantsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "merchants.json")
	shop := func(id, name, kid, secret, extra string) string {
		return `{"id":"` + id + `","name":"` + name + `","link_keys":{"` + kid + `":"` + secret + `"},
			"api_token":"` + id + `-api-token-0000000000000000000000","return_origins":["https://` + id + `.example"]` + extra + `}`
	}
	write := func(merchants ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(`{"merchants":[`+strings.Join(merchants, ",")+`]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const (
		oldSecret = "the-first-secret-of-the-shop-000001"
		newSecret = "the-rotated-secret-of-the-shop-0002"
		stay      = "the-secret-of-the-shop-that-stays-1"
		added     = "the-secret-of-the-shop-added-later1"
	)
	write(shop("shop", "Shop Before", "2026-10", oldSecret, ""), shop("stays", "Stays", "k", stay, ""))
	var logs syncBuffer
	s := startLogging(t, map[string]string{"MERCHANTS_FILE": path}, &logs)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	link := func(id, kid, secret, orderID string) string {
		m := &merchant.Merchant{ID: id, LinkKeys: map[string]string{kid: secret}}
		u, err := order.Link{Order: order.Order{ID: orderID, Amount: "10.00", Currency: "EUR",
			ReturnURL: "https://" + id + ".example/done", KID: kid}, TTL: time.Hour}.URL(s.base, m, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	enters := func(u string) bool {
		t.Helper()
		res, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode == http.StatusSeeOther
	}
	page := func(u string) string {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	reloaded := func(result string, want int) {
		t.Helper()
		line := `checkout_config_reloads_total{result="` + result + `"} ` + strconv.Itoa(want)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(page(s.base+"/metrics"), line) {
				return
			}
		}
		t.Fatalf("no %s within 10 s", line)
	}
	if !enters(link("shop", "2026-10", oldSecret, "A-1")) || enters(link("newshop", "k", added, "N-1")) {
		t.Fatal("before the reload: the shop's link should enter and the unknown shop's should not")
	}
	// The shop's pages are rendered, and kept, with its first name.
	if before := page(link("shop", "2026-10", oldSecret, "A-0")); !strings.Contains(before, "Shop Before") {
		t.Fatal("the shop's page does not show its name")
	}

	// Shoppers of the shop that stays keep arriving through the reloads:
	// not one of their requests may fail.
	stop := make(chan struct{})
	var dropped, served atomic.Int64
	var shoppers sync.WaitGroup
	for range 4 {
		shoppers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := client.Get(link("stays", "k", stay, fmt.Sprintf("S-%d", i)))
				if err != nil || res.StatusCode != http.StatusSeeOther {
					dropped.Add(1)
				} else {
					served.Add(1)
				}
				if res != nil {
					res.Body.Close()
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond)

	write(shop("shop", "Shop After", "2026-11", newSecret, `,"customization":{"title":"Shop After","primaryColor":"#8A1538"}`),
		shop("stays", "Stays", "k", stay, ""), shop("newshop", "New Shop", "k", added, ""))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	reloaded("applied", 1)
	t.Run("new merchants, rotated keys and themes serve at once", func(t *testing.T) {
		if enters(link("shop", "2026-10", oldSecret, "A-2")) {
			t.Error("a link signed with the key taken out of the file still enters")
		}
		if !enters(link("shop", "2026-11", newSecret, "A-3")) {
			t.Error("a link signed with the key added to the file does not enter")
		}
		if !enters(link("newshop", "k", added, "N-2")) {
			t.Error("the merchant added to the file is unknown")
		}
		body := page(link("shop", "2026-11", newSecret, "A-4"))
		if !strings.Contains(body, "Shop After") || strings.Contains(body, "Shop Before") || !strings.Contains(strings.ToLower(body), "8a1538") {
			t.Error("the shop's new name and theme are not on its page")
		}
	})

	t.Run("a bad file is refused and the running one stays", func(t *testing.T) {
		write(shop("shop", "Shop Broken", "2026-12", "too-short", ""))
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		reloaded("refused", 1)
		if !enters(link("newshop", "k", added, "N-3")) || !enters(link("shop", "2026-11", newSecret, "A-5")) {
			t.Error("after a refused file the running merchants no longer serve")
		}
		if !strings.Contains(logs.String(), "link_keys[2026-12]") {
			t.Errorf("the log does not say why the file was refused:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), "too-short") {
			t.Error("the log shows a secret of the refused file")
		}
	})

	close(stop)
	shoppers.Wait()
	if dropped.Load() != 0 || served.Load() == 0 {
		t.Errorf("during the reloads %d shoppers' requests failed and %d were served, want none failed", dropped.Load(), served.Load())
	}
	t.Logf("during two reloads: %d requests served, %d failed", served.Load(), dropped.Load())
}

// syncBuffer is a bytes.Buffer written by the app and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// spanSeen is one span the OTLP receiver of a test got.
type spanSeen struct {
	name, traceID, spanID, parentID string
	attrs                           map[string]string
}

// otlpReceiver is an OTLP/HTTP trace receiver on loopback.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []spanSeen
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rcv := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("OTLP body: %v", err)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
			t.Errorf("an OTLP export to %s that is not protobuf traces", r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					seen := spanSeen{name: sp.Name, traceID: hex.EncodeToString(sp.TraceId), spanID: hex.EncodeToString(sp.SpanId),
						parentID: hex.EncodeToString(sp.ParentSpanId), attrs: map[string]string{}}
					for _, kv := range sp.Attributes {
						seen.attrs[kv.Key] = kv.Value.String()
					}
					rcv.spans = append(rcv.spans, seen)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	rcv.url = srv.URL
	return rcv
}

// find waits up to 20 s for a span that match accepts.
func (r *otlpReceiver) find(t *testing.T, what string, match func(spanSeen) bool) spanSeen {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		for _, s := range r.spans {
			if match(s) {
				r.mu.Unlock()
				return s
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no span %s within 20 s", what)
	return spanSeen{}
}

func TestTracesFollowACheckoutThroughTheProviderTheLedgerAndTheWebhook(t *testing.T) {
	rcv := newOTLPReceiver(t)
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.url, "OTEL_BSP_SCHEDULE_DELAY": "50", "SANDBOX_SETTLE_DELAY": "1ms"}
	for k, v := range vars {
		t.Setenv(k, v) // the exporter reads the standard variables itself
	}
	var logs syncBuffer
	s := startLogging(t, vars, &logs)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	res, err := client.Get(s.demoLink)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	token := strings.TrimPrefix(res.Header.Get("Location"), "/c/")
	orderID := mustParse(t, s.demoLink).Query().Get("order")
	// The merchant's trace goes on through the checkout.
	const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	back := payAtSandboxBank(t, client, s.base+"/c/"+token, http.Header{"Traceparent": {"00-" + parentTrace + "-00f067aa0ba902b7-01"}})
	if res, err = client.Get(back); err != nil { // back at the app: the status is read
		t.Fatal(err)
	}
	res.Body.Close()

	pay := rcv.find(t, "for the details form's POST", func(s spanSeen) bool { return s.name == "POST /c/:token/pay" })
	if pay.traceID != parentTrace || pay.attrs["http.route"] == "" || pay.attrs["http.response.status_code"] == "" {
		t.Errorf("the request's span %+v: want the caller's trace, its route and its status", pay)
	}
	rcv.find(t, "for the provider's create call inside the request", func(s spanSeen) bool {
		return s.name == "provider create" && s.traceID == pay.traceID
	})
	rcv.find(t, "for a ledger transaction inside the request", func(s spanSeen) bool {
		return strings.HasPrefix(s.name, "ledger ") && s.traceID == pay.traceID && s.attrs["db.system.name"] != ""
	})
	rcv.find(t, "for the webhook's delivery", func(s spanSeen) bool {
		return s.name == "webhook payment.status_changed" && s.attrs["merchant.id"] != ""
	})

	t.Run("no token, order id, secret or personal data in a span", func(t *testing.T) {
		secrets := []string{token, orderID, merchant.DemoWebhookSecret, "127.0.0.1"}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for _, sp := range rcv.spans {
			for _, secret := range secrets {
				if strings.Contains(sp.name, secret) {
					t.Errorf("span name %q holds %q", sp.name, secret)
				}
				for k, v := range sp.attrs {
					if strings.Contains(v, secret) {
						t.Errorf("span %s: attribute %s=%s holds %q", sp.name, k, v, secret)
					}
				}
			}
		}
	})

	t.Run("the request's log lines carry its trace id", func(t *testing.T) {
		// Request lines are written out within a tenth of a second.
		logged(t, &logs, `"route":"/c/:token/pay"`)
		found := false
		for line := range strings.Lines(logs.String()) {
			var entry map[string]any
			if json.Unmarshal([]byte(line), &entry) != nil || entry["route"] != "/c/:token/pay" {
				continue
			}
			found = true
			if entry["trace_id"] != pay.traceID {
				t.Errorf("the log line %s has trace_id %v, want %s", strings.TrimSpace(line), entry["trace_id"], pay.traceID)
			}
		}
		if !found {
			t.Error("no log line of the details form's POST")
		}
	})
}

func TestTracesAreOffWithoutAnEndpoint(t *testing.T) {
	var logs syncBuffer
	s := startLogging(t, nil, &logs)
	res, err := http.Get(s.demoLink)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	logged(t, &logs, `"route":"/checkout"`)
	if strings.Contains(logs.String(), "trace_id") || strings.Contains(logs.String(), "traces on") {
		t.Errorf("traces without OTEL_EXPORTER_OTLP_ENDPOINT:\n%s", logs.String())
	}
}

// logged waits until the app's log holds text: lines below a warning are
// written out in bunches, a tenth of a second apart.
func logged(t *testing.T, logs *syncBuffer, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %s:\n%s", text, logs.String())
		}
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTheStudioTokenIsIgnoredWithAWarningNamingTheConsole(t *testing.T) {
	var logs syncBuffer
	s := startLogging(t, map[string]string{"STUDIO_TOKEN": "a-studio-token-from-an-older-deployment"}, &logs)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(s.base + "/studio")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/console/branding" {
		t.Errorf("/studio answers %d → %q, want 308 to /console/branding", res.StatusCode, res.Header.Get("Location"))
	}
	if log := logs.String(); !strings.Contains(log, "STUDIO_TOKEN is ignored") || !strings.Contains(log, "/console/branding") {
		t.Errorf("no warning naming the console for STUDIO_TOKEN:\n%s", log)
	}
}
