package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// runLinks measures a shop's server making payment links through the API
// from one token at a steady rate, as a shop with that many checkouts a
// second would: it builds and starts the app with the deployment's API
// budget (API_RATE), and prints how each call was answered and how fast.
//
//	go run ./devtools/load links -rate 25 -d 20s
func runLinks(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load links", flag.ContinueOnError)
	fs.SetOutput(stdout)
	perSecond := fs.Float64("rate", 25, "links a second")
	duration := fs.Duration("d", 20*time.Second, "how long to make links")
	apiRate := fs.String("api-rate", "", "the app's API_RATE (default: the app's own default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "load-links-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := map[string]string{}
	if *apiRate != "" {
		env["API_RATE"] = *apiRate
	}
	app, err := startApp(ctx, dir, "", env)
	if err != nil {
		return err
	}
	defer app.stop()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	fmt.Fprintf(stdout, "links: %.0f a second for %s from one API token\n", *perSecond, *duration)

	var (
		mu       sync.Mutex
		byStatus = map[int]int{}
		calls    sample
		policy   string
	)
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	start := time.Now()
	atRate(runCtx, *perSecond, func(i int) {
		body := fmt.Sprintf(`{"order":"L-%d-%06d","amount":"49.90","return_url":"%s/done"}`, start.Unix(), i, app.base)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, app.base+"/api/v1/links", strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+loadAPIToken)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		res, err := client.Do(req)
		took := time.Since(t0)
		status := 0
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			status = res.StatusCode
		}
		mu.Lock()
		defer mu.Unlock()
		byStatus[status]++
		calls.latencies = append(calls.latencies, took)
		if err == nil && res.Header.Get("RateLimit-Policy") != "" {
			policy = res.Header.Get("RateLimit-Policy")
		}
	})
	calls.elapsed = time.Since(start)
	round := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	var answers []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		name := fmt.Sprintf("HTTP %d", status)
		if status == 0 {
			name = "no answer"
		}
		answers = append(answers, fmt.Sprintf("%d %s", byStatus[status], name))
	}
	fmt.Fprintf(stdout, "  calls: %d in %s (%.1f a second): %s\n", len(calls.latencies), calls.elapsed.Round(time.Second),
		calls.throughput(), strings.Join(answers, ", "))
	fmt.Fprintf(stdout, "  latency: p50 %s, p99 %s, max %s; the token's policy: %s\n", round(calls.pct(0.5)), round(calls.pct(0.99)), round(calls.pct(1)), policy)
	return nil
}
