package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

// runFollowShared is `load follow -instances N`: N instances of the app on
// one PostgreSQL database (a database of its own, made on the server -db
// names and dropped at the end) and one provider, the sandbox served by
// this command, which notes every status read as the provider sees it.
// Shoppers make `open` payments across the instances, opening the bank's
// page for a share of them and paying none, so that every one stays open;
// then the run goes on for its length while the instances follow them on
// one FOLLOW_RATE. It prints the provider's reads a second (over the run,
// and in its busiest second and ten seconds) and, for every payment, each
// wait between two of its reads against its stage's bound.
func runFollowShared(ctx context.Context, dir string, o followOptions, stdout io.Writer) error {
	if !strings.HasPrefix(o.db, "postgres://") && !strings.HasPrefix(o.db, "postgresql://") {
		return errors.New("-instances: several instances need -db postgres://… (a server where a database may be made)")
	}
	databaseURL, drop, err := scratchDatabase(ctx, o.db)
	if err != nil {
		return err
	}
	defer drop()

	provider, err := serveProvider()
	if err != nil {
		return err
	}
	defer provider.Close()

	apps, err := startInstances(ctx, dir, o.instances, nil, map[string]string{"DATABASE_URL": databaseURL,
		"FOLLOW_RATE": o.followRate, "PIS_BASE_URL": provider.url, "PIS_API_KEY": sandbox.DefaultAPIKey, "SESSION_KEYS": rand.Text() + rand.Text()})
	if err != nil {
		return err
	}
	defer stopAll(apps)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	fmt.Fprintf(stdout, "follow: %d instances on one PostgreSQL database and one provider, FOLLOW_RATE=%s; %d payments made at %.0f a second, %.0f%% opened at the bank, none paid, followed for %s\n",
		o.instances, o.followRate, o.open, o.perSecond, 100*o.opened, o.duration)
	start := time.Now()
	made, failed := makeOpenPayments(ctx, client, apps, o, start.Unix())
	if rest := time.Until(start.Add(o.duration)); rest > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rest):
		}
	}
	end := time.Now()
	followed := 0.0
	for _, a := range apps {
		n, _ := metricFloat(client, a.base, "checkout_attempts_followed_total ")
		followed += n
	}
	reads := provider.readsSince(start)
	elapsed := end.Sub(start)
	fmt.Fprintf(stdout, "  payments made: %d in %s, %d failed checkouts\n", len(made), elapsed.Round(time.Second), failed)
	printProviderReads(stdout, reads, elapsed, followed)
	judgeWaits(made, reads, end).print(stdout, len(made))
	return nil
}

// makeOpenPayments makes o.open payments at o's rate across the instances,
// opening the bank's page for a share o.opened of them and paying none. It
// returns when each was made, by the order id the provider knows, and how many
// checkouts failed.
func makeOpenPayments(ctx context.Context, client *http.Client, apps []*appProcess, o followOptions, runID int64) (map[string]time.Time, int64) {
	var (
		mu     sync.Mutex
		made   = map[string]time.Time{}
		failed atomic.Int64
		next   atomic.Int64
	)
	makeCtx, stopMaking := context.WithCancel(ctx)
	defer stopMaking()
	atRate(makeCtx, o.perSecond, func(i int) {
		if int(next.Add(1)) > o.open {
			stopMaking()
			return
		}
		sh := &shoppers{client: client, base: apps[i%len(apps)].base}
		id := fmt.Sprintf("S-%d-%05d", runID, i)
		at := time.Now()
		link, err := sh.checkout(ctx, id, i)
		if err == nil && float64(i%100) < 100*o.opened {
			// The shopper opens the bank's page and stays there.
			var res *http.Response
			if res, err = client.Get(link); err == nil {
				res.Body.Close()
			}
		}
		if err != nil {
			failed.Add(1)
			return
		}
		mu.Lock()
		made["demo:"+id] = at
		mu.Unlock()
	})
	return made, failed.Load()
}

// printProviderReads says how many status reads the provider answered over
// the run, in its busiest second and its busiest ten seconds, and how many
// of them the followers made.
func printProviderReads(stdout io.Writer, reads map[string][]providerRead, elapsed time.Duration, followed float64) {
	stamps := make([]time.Time, 0)
	for _, list := range reads {
		for _, r := range list {
			stamps = append(stamps, r.at)
		}
	}
	slices.SortFunc(stamps, time.Time.Compare)
	busiest := func(window time.Duration) int {
		most := 0
		for i, at := range stamps {
			j, _ := slices.BinarySearchFunc(stamps, at.Add(window), time.Time.Compare)
			most = max(most, j-i)
		}
		return most
	}
	fmt.Fprintf(stdout, "  provider status reads: %d, %.1f a second over the run; the busiest second %d, the busiest 10 s %d (%.1f a second); %.0f by the followers, the rest by shoppers' pages\n",
		len(stamps), float64(len(stamps))/elapsed.Seconds(), busiest(time.Second), busiest(10*time.Second), float64(busiest(10*time.Second))/10, followed)
}

// boundsKept is every payment's waits between reads judged against its
// stage's bound.
type boundsKept struct {
	// within counts the payments whose every wait kept its bound.
	within, waits int
	// worst is the longest a wait went past its bound, worstOf whose it was.
	worst   time.Duration
	worstOf string
	byStage map[payment.Stage]sample
}

// judgeWaits judges each wait between two reads of each payment made, up
// to end, against the bound of the stage it waited in.
func judgeWaits(made map[string]time.Time, reads map[string][]providerRead, end time.Time) boundsKept {
	k := boundsKept{byStage: map[payment.Stage]sample{}}
	for id, at := range made {
		ok := true
		for _, w := range readWaits(at, reads[id], end) {
			k.waits++
			s := k.byStage[w.stage]
			s.latencies = append(s.latencies, w.wait)
			k.byStage[w.stage] = s
			if over := w.wait - w.stage.Bound(); over > 0 {
				ok = false
				if over > k.worst {
					k.worst, k.worstOf = over, fmt.Sprintf("%s (%s)", id, w.stage)
				}
			}
		}
		if ok {
			k.within++
		}
	}
	return k
}

// print says how many of payments kept every bound, the longest past one,
// and each stage's waits.
func (k boundsKept) print(stdout io.Writer, payments int) {
	fmt.Fprintf(stdout, "  every payment read within its stage's bound: %d of %d payments (%d waits between reads)", k.within, payments, k.waits)
	if k.worst > 0 {
		fmt.Fprintf(stdout, "; the longest past its bound: %s, %s", k.worst.Round(10*time.Millisecond), k.worstOf)
	}
	fmt.Fprintln(stdout)
	for stage := payment.StageNew; stage <= payment.StageQuiet; stage++ {
		if s, ok := k.byStage[stage]; ok {
			fmt.Fprintf(stdout, "    %-12s bound %-6s waits: %5d, p50 %s, p99 %s, max %s\n", stage.String()+":", stage.Bound(), len(s.latencies),
				s.pct(0.5).Round(10*time.Millisecond), s.pct(0.99).Round(10*time.Millisecond), s.pct(1).Round(10*time.Millisecond))
		}
	}
}

// wait is the time a payment went unread in one stage: from a read (or its
// making) to the next read, or to the end of the run.
type wait struct {
	stage payment.Stage
	wait  time.Duration
}

// readWaits are a payment's waits between reads, each in the stage its
// last read left it in, judged as the app judges it (payment.StageOf).
func readWaits(made time.Time, reads []providerRead, end time.Time) []wait {
	a := ledger.Attempt{State: ledger.Open, Created: made, Updated: made}
	last := made
	var out []wait
	for _, r := range reads {
		out = append(out, wait{stage: payment.StageOf(a, last), wait: r.at.Sub(last)})
		if string(r.status) != a.Status {
			a.Status, a.Updated = string(r.status), r.at
		}
		if r.status != pisclient.StatusNotFound && a.Began.IsZero() {
			a.Began = r.at
		}
		if r.status.Final() {
			return out
		}
		last = r.at
	}
	return append(out, wait{stage: payment.StageOf(a, last), wait: end.Sub(last)})
}

// providerRead is one status read the provider answered.
type providerRead struct {
	at     time.Time
	status pisclient.Status
}

// sharedProvider is the sandbox, served by this command to every instance,
// noting each status read as it answers it.
type sharedProvider struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	reads map[string][]providerRead
}

func serveProvider() (*sharedProvider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &sharedProvider{url: "http://" + ln.Addr().String(), reads: map[string][]providerRead{}}
	sb := sandbox.New(sandbox.Config{PublicURL: p.url})
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, isStatus := strings.CutPrefix(r.URL.Path, "/api/v2/pis/payment/")
		if r.Method != http.MethodGet || !isStatus || id == "ob-institutions" {
			sb.ServeHTTP(w, r)
			return
		}
		at := time.Now()
		rec := &recorded{ResponseWriter: w}
		sb.ServeHTTP(rec, r)
		status := pisclient.StatusNotFound
		var body struct{ Status pisclient.Status }
		if rec.code == http.StatusOK && json.Unmarshal(rec.body.Bytes(), &body) == nil {
			status = body.Status
		}
		p.mu.Lock()
		p.reads[id] = append(p.reads[id], providerRead{at: at, status: status})
		p.mu.Unlock()
	})}
	go p.srv.Serve(ln)
	return p, nil
}

func (p *sharedProvider) Close() { p.srv.Close() }

// readsSince are the reads made from start on, by payment.
func (p *sharedProvider) readsSince(start time.Time) map[string][]providerRead {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string][]providerRead, len(p.reads))
	for id, list := range p.reads {
		for _, r := range list {
			if !r.at.Before(start) {
				out[id] = append(out[id], r)
			}
		}
	}
	return out
}

// recorded keeps what a handler answered, as it passes it on.
type recorded struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (r *recorded) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorded) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
