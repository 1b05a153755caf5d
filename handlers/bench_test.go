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
	"github.com/paybybank/checkout/webhook"
)

// BenchmarkBanksPage is the whole request path of the bank list through
// Echo (middleware, token, cache, rendering, gzip), the cache warm.
func BenchmarkBanksPage(b *testing.B) {
	a := setup(b, options{})
	checkout := a.enter("B-1", nil)
	a.get(checkout + "/banks?country=FR")
	handler := a.handler
	path := checkout[len(a.url):] + "/banks?country=FR"
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
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
	d := &webhook.Dispatcher{Ledger: a.ledger, Merchants: a.merchants.All(), Owner: "bench", Client: webhook.NewClient(true), Poll: 10 * time.Millisecond, Log: log}
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
