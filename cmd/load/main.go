// Command load drives a running checkout (in sandbox mode, with the demo
// merchant) with many shoppers loading one bank list at once, and prints
// throughput, latency, the provider calls the run caused and the page's
// compressed weight.
//
//	go run ./cmd/load -url http://localhost:8080 -c 64 -d 20s
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paybybank/checkout/order"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// run is the command, with its surroundings passed in.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stdout)
	base := fs.String("url", "http://localhost:8080", "the running app's BASE_URL")
	conns := fs.Int("c", 64, "concurrent connections")
	duration := fs.Duration("d", 20*time.Second, "how long to run")
	country := fs.String("country", "FR", "the bank list to load")
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

	before, err := institutionsCalls(client, *base)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range *conns {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for ctx.Err() == nil {
				t0 := time.Now()
				ok := get(ctx, client, page)
				if ctx.Err() != nil {
					break
				}
				if ok {
					mine = append(mine, time.Since(t0))
				} else {
					bad++
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failures += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := institutionsCalls(client, *base)
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	fmt.Fprintf(stdout, "bank list (%s) at %d connections for %s\n", *country, *conns, elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "  requests: %d ok, %d failed\n", len(latencies), failures)
	fmt.Fprintf(stdout, "  throughput: %.0f requests/s\n", float64(len(latencies))/elapsed.Seconds())
	fmt.Fprintf(stdout, "  latency: p50 %s, p99 %s\n", pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond))
	fmt.Fprintf(stdout, "  provider institutions calls during the run: %d\n", after-before)

	weights, err := pageWeight(client, page)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  page weight, gzip: %s\n", weights)
	return nil
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
	res, err := client.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), `checkout_upstream_duration_seconds_count{endpoint="institutions"} `); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, nil
}

// pageWeight sums the compressed bytes of a page and of the CSS and scripts
// it loads (logos aside).
func pageWeight(client *http.Client, page string) (string, error) {
	html, body, err := fetchGzip(client, page)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(page)
	var css, js int
	for _, attr := range []string{`href="`, `src="`} {
		for _, part := range strings.Split(body, attr)[1:] {
			ref, _, _ := strings.Cut(part, `"`)
			ref = strings.ReplaceAll(ref, "&amp;", "&")
			if !strings.HasPrefix(ref, "/static/") {
				continue
			}
			n, _, err := fetchGzip(client, u.Scheme+"://"+u.Host+ref)
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
	return fmt.Sprintf("HTML %.1f KB + CSS %.1f KB + JS %.1f KB = %.1f KB (budget 30 KB, logos aside)",
		kib(html), kib(css), kib(js), kib(html+css+js)), nil
}

func kib(n int) float64 { return float64(n) / 1024 }

// fetchGzip returns the compressed size of u and its uncompressed text.
func fetchGzip(client *http.Client, u string) (int, string, error) {
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
	if res.Header.Get("Content-Encoding") != "gzip" {
		return 0, "", errors.New("load: " + u + " is not served compressed")
	}
	zr, err := gzip.NewReader(strings.NewReader(string(raw)))
	if err != nil {
		return 0, "", err
	}
	text, err := io.ReadAll(zr)
	return len(raw), string(text), err
}
