package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient/sandbox"
	"github.com/paybybank/checkout/webhook"
)

// BenchmarkBanksPage is the whole request path of the bank list through
// Echo (middleware, token, cache, rendering, gzip), the cache warm, for a
// country of 150 banks and one of 2,000 (the sandbox tops them up), each
// beside a baseline measured in the same run: the same response bytes
// written from memory by a bare handler, as a static file server would.
func BenchmarkBanksPage(b *testing.B) {
	a := setup(b, options{knobs: sandbox.Knobs{CountryBanks: map[string]int{"FR": 150, "DE": 2000}}})
	checkout := a.enter("B-1", nil)
	for _, country := range []string{"FR", "DE"} {
		path := checkout[len(a.url):] + "/banks?country=" + country
		first := serve(b, a.handler, path)
		if len(first) < 2 || first[0] != 0x1f || first[1] != 0x8b {
			b.Fatal("the bank page is not served gzip'd")
		}
		static := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(first)
		})
		name := map[string]string{"FR": "150-banks", "DE": "2000-banks"}[country]
		b.Run(name+"/static", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, static, path)
			}
		})
		b.Run(name+"/page", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, a.handler, path)
			}
			b.ReportMetric(float64(len(first)), "gzip-bytes")
		})
	}
}

// serve answers one gzip-accepting GET of path and returns the body.
func serve(b *testing.B, h http.Handler, path string) []byte {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d", rec.Code)
	}
	return rec.Body.Bytes()
}

// BenchmarkFollowAndDeliver follows a backlog of b.N approved payments whose
// shoppers never came back, the follower bound to followRate status reads per
// second, and delivers each event to a merchant endpoint on this machine. It
// reports payments followed per second (against the bound, in the same run)
// and the delay from a status change to its event reaching the endpoint.
// Run it with -benchtime 500x: the backlog is made before the clock starts.
func BenchmarkFollowAndDeliver(b *testing.B) {
	const followRate = 100
	shop := newShopServer(b)
	a := setup(b, options{knobs: settleNow, webhook: shop.url, burst: 1 << 20})
	for i := range b.N {
		a.payAndApprove(fmt.Sprintf("B-%d", i))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &payment.Follower{Service: a.orders, Merchant: a.merchants.Get, Owner: "bench", Rate: followRate, Idle: 10 * time.Millisecond, Log: log}
	d := &webhook.Dispatcher{Ledger: a.ledger, Merchants: a.merchants, Owner: "bench", Client: webhook.NewClient(true), Poll: 10 * time.Millisecond, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ResetTimer()
	start := time.Now()
	go f.Run(ctx)
	go d.Run(ctx)
	limit := start.Add(time.Duration(3*b.N/followRate)*time.Second + 10*time.Second)
	for shop.handledCount() < b.N {
		if time.Now().After(limit) {
			b.Fatalf("%d of %d events delivered by the time limit", shop.handledCount(), b.N)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	shop.mu.Lock()
	defer shop.mu.Unlock()
	var took []time.Duration
	for _, d := range shop.took {
		took = append(took, d)
	}
	slices.Sort(took)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "payments/s")
	b.ReportMetric(float64(b.N)/elapsed.Seconds()/followRate, "of-bound")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
