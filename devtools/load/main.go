// Command load drives a running checkout (in sandbox mode, with the demo
// merchant) with many shoppers loading one bank list at once, and measures it
// against the machine's limit for that page: a server in this command handing
// out the page's own bytes, gzip'd, from memory. The two are measured in
// turns within one run, so that a busy machine slows both alike, and the
// command prints the throughput, p99 and slowest answer of each, the
// ratios of throughput and p99, the provider calls the run caused, the
// page's compressed weight and the app's resident memory.
//
//	go run ./devtools/load -url http://localhost:8080 -c 64 -d 20s -country FR
//
// `load follow` measures following payments instead (see runFollow); it
// builds and starts the app itself, and with -instances several of them on
// one PostgreSQL database and one provider (see runFollowShared):
//
//	go run ./devtools/load follow -rate 50 -d 10m -approve 0.5 -follow-rate 60
//	go run ./devtools/load follow -instances 3 -open 600 -rate 50 -d 3m -follow-rate 60 -db postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//
// `load links` measures a shop's server making links through the API from
// one token (see runLinks):
//
//	go run ./devtools/load links -rate 25 -d 20s
//
// `load paylinks` measures opening a payment link against opening a
// signed link (see runPayLinks):
//
//	go run ./devtools/load paylinks -c 16 -d 40s
//
// `load settings` measures changes of merchants' settings reaching three
// instances on one PostgreSQL, and the bank page while they land (see
// runSettings):
//
//	go run ./devtools/load settings -db postgres://postgres@127.0.0.1:5432/test?sslmode=disable
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/order"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == staticFlag {
		if err := runStatic(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "load: static server:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	command := run
	args := os.Args[1:]
	switch {
	case len(args) > 0 && args[0] == "follow":
		command, args = runFollow, args[1:]
	case len(args) > 0 && args[0] == "links":
		command, args = runLinks, args[1:]
	case len(args) > 0 && args[0] == "settings":
		command, args = runSettings, args[1:]
	case len(args) > 0 && args[0] == "paylinks":
		command, args = runPayLinks, args[1:]
	}
	if err := command(ctx, args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// rounds is how many turns each side gets: enough that a passing burst of
// other work on the machine lands on both.
const rounds = 4

// run is the command, with its surroundings passed in: it loads the bank
// page and a static server's copy of its bytes in turns, then says what
// each side measured.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stdout)
	base := fs.String("url", "http://localhost:8080", "the running app's BASE_URL")
	conns := fs.Int("c", 64, "concurrent connections")
	duration := fs.Duration("d", 20*time.Second, "how long to run, both sides together")
	country := fs.String("country", "FR", "the bank list to load")
	warm := fs.Bool("warm", false, "first load every country's bank list in every language, as a busy instance would have them cached")
	appPID := fs.Int("pid", 0, "the app's process id: its processor time per request is printed beside the static server's (Linux)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	client := &http.Client{
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	target, err := checkoutOf(client, *base)
	if err != nil {
		return err
	}
	page := target + "/banks?country=" + url.QueryEscape(*country)
	// From here on every call to the provider counts: the first page loads
	// the banks list, and none after should until INSTITUTIONS_TTL ends.
	before, err := institutionsCalls(client, *base)
	if err != nil {
		return err
	}
	if *warm {
		n, err := warmUp(client, target)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "warmed: %d bank lists (every country, every language)\n", n)
	}
	body, err := fetch(client, page)
	if err != nil {
		return err
	}
	static, err := serveStatic(body)
	if err != nil {
		return err
	}
	defer static.Close()
	turns, err := takeTurns(ctx, client, page, static, *conns, *duration, *appPID)
	if err != nil {
		return err
	}
	after, err := institutionsCalls(client, *base)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bank list (%s) at %d connections, %s each side in %d turns\n", *country, *conns, (turns.turn * rounds).Round(time.Millisecond), rounds)
	turns.print(stdout)
	fmt.Fprintf(stdout, "  provider institutions calls during the run (first page included): %d\n", after-before)
	return printPageAndMemory(stdout, client, page, *base)
}

// bankPageTurns is what the turns of the app's bank page and of the static
// server measured, and the processor time each side cost.
type bankPageTurns struct {
	turn              time.Duration
	app, static       sample
	appCPU, staticCPU *cpuMeter
}

// takeTurns loads page from the app and the static server's copy of it
// from conns connections, in turns of equal length over duration, so that
// a busy machine slows both alike. Without an appPID the app's processor
// time is left out: there is no process 0 to read (cpuMeter.turn).
func takeTurns(ctx context.Context, client *http.Client, page string, static *staticServer, conns int, duration time.Duration, appPID int) (bankPageTurns, error) {
	self := pid("this command", os.Getpid())
	t := bankPageTurns{
		turn:      duration / (2 * rounds),
		appCPU:    newCPUMeter(pid("app", appPID), self),
		staticCPU: newCPUMeter(pid("static", static.cmd.Process.Pid), self),
	}
	for range rounds {
		t.appCPU.turn(func() { t.app.add(measure(ctx, client, page, conns, t.turn)) })
		t.staticCPU.turn(func() { t.static.add(measure(ctx, client, static.url+"/page", conns, t.turn)) })
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
	}
	return t, nil
}

// print says each side's figures, their ratios and, where it could be
// read, the processor time each side spent per request.
func (t *bankPageTurns) print(stdout io.Writer) {
	fmt.Fprintf(stdout, "  app:    %s\n", t.app)
	fmt.Fprintf(stdout, "  static: %s  (the same bytes, gzip'd, from memory, in a process of its own)\n", t.static)
	fmt.Fprintf(stdout, "  ratio:  throughput %.0f%% of static, p99 %.1fx static\n",
		100*t.app.throughput()/t.static.throughput(), float64(t.app.pct(0.99))/float64(t.static.pct(0.99)))
	if a, s := t.appCPU.per(t.app.made(), time.Microsecond), t.staticCPU.per(t.static.made(), time.Microsecond); a != "" && s != "" {
		fmt.Fprintf(stdout, "  processor time per request: %s; against the static server: %s\n", a, s)
	}
}

// printPageAndMemory says what the page weighs, gzip'd with its CSS and
// scripts, and the app's resident memory after the run.
func printPageAndMemory(stdout io.Writer, client *http.Client, page, base string) error {
	weights, err := pageWeight(client, page)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  page weight, gzip: %s\n", weights)
	if rss, err := residentMemory(client, base); err == nil {
		fmt.Fprintf(stdout, "  app resident memory after the run: %.0f MB\n", rss/1e6)
	}
	return nil
}

// sample is what one side's turns measured.
type sample struct {
	latencies []time.Duration
	failures  int
	// firstFailure is why the first failure failed, said with the figures.
	firstFailure error
	elapsed      time.Duration
}

func (s *sample) add(o sample) {
	s.latencies = append(s.latencies, o.latencies...)
	s.failures += o.failures
	if s.firstFailure == nil {
		s.firstFailure = o.firstFailure
	}
	s.elapsed += o.elapsed
}

// made is how many were made: those that failed too.
func (s *sample) made() int { return len(s.latencies) + s.failures }

func (s *sample) throughput() float64 { return float64(len(s.latencies)) / s.elapsed.Seconds() }

func (s *sample) pct(p float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	slices.Sort(s.latencies)
	return s.latencies[min(len(s.latencies)-1, int(p*float64(len(s.latencies))))]
}

func (s sample) String() string {
	return fmt.Sprintf("%6.0f requests/s, p50 %s, p99 %s, max %s (%d ok, %d failed)", s.throughput(),
		s.pct(0.50).Round(10*time.Microsecond), s.pct(0.99).Round(10*time.Microsecond), s.pct(1).Round(10*time.Microsecond),
		len(s.latencies), s.failures)
}

// measure loads u from conns connections for d.
func measure(ctx context.Context, client *http.Client, u string, conns int, d time.Duration) sample {
	return measureEach(ctx, conns, d, func(ctx context.Context, _, _ int) error {
		if !get(ctx, client, u) {
			return errors.New("load: not 200")
		}
		return nil
	})
}

// measureEach runs one from conns workers, over and over, for d and times
// each run; one is told its worker and its run's number.
func measureEach(ctx context.Context, conns int, d time.Duration, one func(ctx context.Context, worker, n int) error) sample {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu  sync.Mutex
		out sample
		wg  sync.WaitGroup
	)
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			var why error
			for n := 0; ctx.Err() == nil; n++ {
				t0 := time.Now()
				err := one(ctx, w, n)
				if ctx.Err() != nil {
					break
				}
				if err == nil {
					mine = append(mine, time.Since(t0))
				} else {
					bad++
					why = cmp.Or(why, err)
				}
			}
			mu.Lock()
			out.latencies = append(out.latencies, mine...)
			out.failures += bad
			out.firstFailure = cmp.Or(out.firstFailure, why)
			mu.Unlock()
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

// staticServer hands out one page's bytes from memory, gzip'd ahead, as a
// static file server would. It runs as a process of its own, as the app
// does (and as nginx would): in this command's process it would share the
// load generator's runtime and be spared the cost of a second one on the
// same two cores.
type staticServer struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser // held open while the server should live
}

func (s *staticServer) Close() {
	s.stdin.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// staticFlag makes this command the static server of a file of page bytes.
const staticFlag = "-serve-static"

func serveStatic(page []byte) (*staticServer, error) {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(page)
	zw.Close()
	f, err := os.CreateTemp("", "load-page-*.gz")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(gz.Bytes()); err != nil {
		return nil, err
	}
	f.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, staticFlag, f.Name())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The server lives as long as this pipe: when this command ends,
	// however it ends, the server reads its end and stops.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The server says its address once it has read the file.
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("load: the static server did not start: %w", err)
	}
	return &staticServer{url: "http://" + strings.TrimSpace(addr), cmd: cmd, stdin: stdin}, nil
}

// runStatic is the static server's process: it serves the gzip'd file's
// bytes on a loopback port it prints, until killed.
func runStatic(file string) error {
	compressed, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(compressed)))
		w.Write(compressed)
	}), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// fetch returns the page's uncompressed bytes.
func fetch(client *http.Client, u string) ([]byte, error) {
	_, text, err := fetchSent(client, u)
	return []byte(text), err
}

// warmUp loads every country's bank list in every language and returns how
// many it loaded.
func warmUp(client *http.Client, target string) (int, error) {
	countries, err := countriesOf(client, target)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, cc := range countries {
		for _, l := range i18n.Choices {
			// A language chosen in the link's address is remembered in a
			// new checkout token: follow the redirect once.
			res, err := client.Get(target + "/banks?country=" + cc + "&lang=" + l.Code)
			if err != nil {
				return n, err
			}
			res.Body.Close()
			if loc := res.Header.Get("Location"); loc != "" {
				u, _ := url.Parse(target)
				if _, _, err := fetchSent(client, u.Scheme+"://"+u.Host+loc); err != nil {
					return n, err
				}
			}
			n++
		}
	}
	return n, nil
}

// countriesOf reads the country page's choices.
func countriesOf(client *http.Client, target string) ([]string, error) {
	_, text, err := fetchSent(client, target+"?choose=1")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, part := range strings.Split(text, "country=")[1:] {
		cc := part[:2]
		if !slices.Contains(out, cc) && strings.ToUpper(cc) == cc {
			out = append(out, cc)
		}
	}
	return out, nil
}

// residentMemory reads the app's resident memory from its /metrics.
func residentMemory(client *http.Client, base string) (float64, error) {
	v, err := metric(client, base, "process_resident_memory_bytes ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

// checkoutOf opens a fresh demo checkout on the app and returns its address.
func checkoutOf(client *http.Client, base string) (string, error) {
	link, err := order.DemoLink(base, order.Order{ID: "LOAD-" + strconv.FormatInt(time.Now().UnixNano(), 36), Amount: "49.90"},
		time.Hour, time.Now(), nil)
	if err != nil {
		return "", err
	}
	res, err := client.Get(link)
	if err != nil {
		return "", fmt.Errorf("load: is the app running on %s? %w", base, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return "", fmt.Errorf("load: the demo link answered %d; the app must run in sandbox mode with the demo merchant", res.StatusCode)
	}
	return base + res.Header.Get("Location"), nil
}

func get(ctx context.Context, client *http.Client, u string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// institutionsCalls reads the provider calls for the banks list so far from
// the app's /metrics.
func institutionsCalls(client *http.Client, base string) (int, error) {
	v, err := metric(client, base, `checkout_upstream_duration_seconds_count{endpoint="institutions"} `)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.Atoi(v)
}

// metric is the value of the line of the app's /metrics that starts with
// prefix; "" when there is none.
func metric(client *http.Client, base, prefix string) (string, error) {
	res, err := client.Get(base + "/metrics")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), prefix); ok {
			return v, nil
		}
	}
	return "", lines.Err()
}

// pageWeight sums the compressed bytes of a page and of the CSS and scripts
// it loads (logos aside).
func pageWeight(client *http.Client, page string) (string, error) {
	html, body, err := fetchSent(client, page)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(page)
	var css, js, elsewhere int
	for _, attr := range []string{`href="`, `src="`} {
		for _, part := range strings.Split(body, attr)[1:] {
			ref, _, _ := strings.Cut(part, `"`)
			ref = strings.ReplaceAll(ref, "&amp;", "&")
			if attr == `src="` && (!strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "//")) {
				elsewhere++
			}
			if !strings.HasPrefix(ref, "/static/") {
				continue
			}
			n, _, err := fetchSent(client, u.Scheme+"://"+u.Host+ref)
			if err != nil {
				return "", err
			}
			if strings.Contains(ref, ".css") {
				css += n
			} else if strings.Contains(ref, ".js") {
				js += n
			}
		}
	}
	return fmt.Sprintf("HTML %.1f KB + CSS %.1f KB + JS %.1f KB = %.1f KB (budget 15 KB, logos aside); %d images or scripts from outside the app's own paths",
		kib(html), kib(css), kib(js), kib(html+css+js), elsewhere), nil
}

func kib(n int) float64 { return float64(n) / 1024 }

// fetchSent returns the size u is sent in to a browser that takes gzip,
// and its text: gzip'd, or plain when it is too short to gain by it (the
// app compresses answers made per request from a kilobyte on).
func fetchSent(client *http.Client, u string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", err
	}
	if res.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("load: %s: HTTP %d", u, res.StatusCode)
	}
	switch {
	case res.Header.Get("Content-Encoding") == "gzip":
	case len(raw) >= 1024:
		return 0, "", errors.New("load: " + u + " is not served compressed")
	default:
		return len(raw), string(raw), nil
	}
	text, err := gunzip(raw)
	return len(raw), string(text), err
}

// gunzip is the bytes a gzip'd answer's body unpacks to.
func gunzip(raw []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
