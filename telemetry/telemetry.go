// Package telemetry lets operators see inside the app: Prometheus metrics of
// requests, of the provider, of the banks cache, of following payments and
// delivering webhooks, and of bank health; OpenTelemetry traces when the
// OTEL_* variables ask for them; and logs that never carry a whole IBAN.
package telemetry

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
)

// Metrics holds the app's metrics in a registry of its own.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
	// observers are requests' series, by requestSeries: found by a map
	// lookup instead of hashing the labels on every request.
	observers sync.Map
	upstream  *prometheus.HistogramVec
	failures  *prometheus.CounterVec
	reloads   *prometheus.CounterVec
}

// New returns the metrics, with Go runtime and process metrics included.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "checkout_request_duration_seconds",
			Help:    "Time to answer a request, by route, method and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "code"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "checkout_upstream_duration_seconds",
			Help:    "Time of one call to the payment provider, by endpoint.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"endpoint"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checkout_upstream_errors_total",
			Help: "Failed calls to the payment provider, by endpoint and kind (network, 4xx, 5xx).",
		}, []string{"endpoint", "kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checkout_config_reloads_total",
			Help: "Reloads of MERCHANTS_FILE at SIGHUP, by result (applied, refused).",
		}, []string{"result"}),
	}
	for _, result := range []string{"applied", "refused"} {
		m.reloads.WithLabelValues(result)
	}
	m.registry.MustRegister(m.requests, m.upstream, m.failures, m.reloads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Reloaded counts a reload of the merchants file: applied, or refused.
func (m *Metrics) Reloaded(applied bool) {
	result := "refused"
	if applied {
		result = "applied"
	}
	m.reloads.WithLabelValues(result).Inc()
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	// The app compresses every answer with a body already
	// (handlers/compress.go).
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{DisableCompression: true})
}

// Middleware times every request by its route pattern (never its path, which
// holds tokens).
func (m *Metrics) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		code := c.Response().Status
		if he, ok := err.(*echo.HTTPError); ok && !c.Response().Committed {
			code = he.Code
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		m.requestSeries(route, c.Request().Method, code).Observe(time.Since(start).Seconds())
		return err
	}
}

// requestSeries is the series of the requests of a route, method and code.
// Routes are the app's patterns and methods and codes few, so the series
// stay few.
func (m *Metrics) requestSeries(route, method string, code int) prometheus.Observer {
	key := seriesKey{route, method, code}
	if o, ok := m.observers.Load(key); ok {
		return o.(prometheus.Observer)
	}
	o := m.requests.WithLabelValues(route, method, strconv.Itoa(code))
	m.observers.Store(key, o)
	return o
}

type seriesKey struct {
	route, method string
	code          int
}

// Transport measures the calls a provider client makes through next.
func (m *Metrics) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		endpoint := Endpoint(r)
		start := time.Now()
		res, err := next.RoundTrip(r)
		m.upstream.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		switch {
		case err != nil:
			m.failures.WithLabelValues(endpoint, "network").Inc()
		case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests:
			m.failures.WithLabelValues(endpoint, "5xx").Inc()
		case res.StatusCode >= 400 && res.StatusCode != http.StatusNotFound:
			m.failures.WithLabelValues(endpoint, "4xx").Inc()
		}
		return res, err
	})
}

// Endpoint names a provider call: the banks list, a creation or a status
// read (docs/provider.md).
func Endpoint(r *http.Request) string {
	switch {
	case strings.HasSuffix(r.URL.Path, "/ob-institutions"):
		return "institutions"
	case r.Method == http.MethodPost:
		return "create"
	default:
		return "status"
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WatchCache publishes the banks cache's counters.
func (m *Metrics) WatchCache(stats func() banks.Stats) {
	counter := func(name, help string, read func(banks.Stats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(read(stats())) })
	}
	m.registry.MustRegister(
		counter("checkout_banks_cache_hits_total", "Banks list requests served from the cache.", func(s banks.Stats) int64 { return s.Hits }),
		counter("checkout_banks_cache_misses_total", "Banks list requests that found no cached list.", func(s banks.Stats) int64 { return s.Misses }),
		counter("checkout_banks_cache_stale_total", "Banks list requests served the last good list while the provider failed.", func(s banks.Stats) int64 { return s.StaleServes }),
		counter("checkout_banks_cache_fetches_total", "Banks list fetches from the provider.", func(s banks.Stats) int64 { return s.Fetches }),
		counter("checkout_banks_cache_failures_total", "Banks list fetches that failed.", func(s banks.Stats) int64 { return s.Failures }),
		counter("checkout_banks_cache_refreshes_total", "Banks list fetches started in the background while requests were served the list at hand.", func(s banks.Stats) int64 { return s.Refreshes }),
	)
}

// Payments are the metrics of following payments and telling merchants.
type Payments struct {
	followed   prometheus.Counter
	pastBound  prometheus.Counter
	lateness   prometheus.Histogram
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
	pruned     *prometheus.CounterVec
}

// Backlog is what waits, as WatchPayments reads it at each scrape.
type Backlog struct {
	// FollowLag is how far past its stage's bound the most overdue
	// payment's read is; 0 while every payment is read in time.
	FollowLag, OldestUndelivered time.Duration
}

// WatchPayments registers the follower's and the webhooks' metrics; backlog
// is read at each scrape (it asks the ledger).
func (m *Metrics) WatchPayments(backlog func() Backlog) *Payments {
	p := &Payments{
		followed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "checkout_attempts_followed_total",
			Help: "Payment statuses read from the provider by the follower.",
		}),
		pastBound: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "checkout_follow_reads_past_bound_total",
			Help: "Status reads by the follower that came later than their stage's bound allows (FOLLOW_RATE is short).",
		}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "checkout_follow_read_lateness_seconds",
			Help:    "How long past its schedule each status read by the follower came.",
			Buckets: []float64{.1, .5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 900},
		}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checkout_retention_deleted_total",
			Help: "Rows removed by retention (EVENT_RETENTION), by table.",
		}, []string{"table"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checkout_webhook_deliveries_total",
			Help: "Tries at sending an event to a merchant, by outcome (delivered, retry, failed).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "checkout_webhook_delivery_latency_seconds",
			Help:    "Time from an order's status change to its event's delivery.",
			Buckets: []float64{.01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600},
		}),
	}
	m.registry.MustRegister(p.followed, p.pastBound, p.lateness, p.deliveries, p.latency, p.pruned, backlogCollector{read: backlog})
	return p
}

// Followed counts one status read by the follower, late past its schedule
// and pastBound past its bound.
func (p *Payments) Followed(late, pastBound time.Duration) {
	p.followed.Inc()
	p.lateness.Observe(late.Seconds())
	if pastBound > 0 {
		p.pastBound.Inc()
	}
}

// Pruned counts rows removed from a table by retention.
func (p *Payments) Pruned(table string, n int64) {
	if n > 0 {
		p.pruned.WithLabelValues(table).Add(float64(n))
	}
}

// Delivered counts one try at an event.
func (p *Payments) Delivered(outcome string, sinceEvent time.Duration) {
	p.deliveries.WithLabelValues(outcome).Inc()
	if outcome == "delivered" {
		p.latency.Observe(sinceEvent.Seconds())
	}
}

// backlogCollector reports the backlog's gauges from one reading per
// scrape (reading it asks the ledger).
type backlogCollector struct{ read func() Backlog }

var (
	followLagDesc = prometheus.NewDesc("checkout_follow_lag_seconds",
		"How far past its stage's bound the most overdue status read of a payment is (0 while every payment is read in time).", nil, nil)
	oldestUndeliveredDesc = prometheus.NewDesc("checkout_events_oldest_undelivered_seconds",
		"Age of the oldest event not yet delivered to a merchant's webhook.", nil, nil)
)

func (backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- followLagDesc
	ch <- oldestUndeliveredDesc
}

func (c backlogCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.read()
	ch <- prometheus.MustNewConstMetric(followLagDesc, prometheus.GaugeValue, b.FollowLag.Seconds())
	ch <- prometheus.MustNewConstMetric(oldestUndeliveredDesc, prometheus.GaugeValue, b.OldestUndelivered.Seconds())
}

// maxBanksPerCountry bounds the per-bank series: the busiest banks of each
// country over the last day.
const maxBanksPerCountry = 50

var (
	bankSuccessDesc = prometheus.NewDesc("checkout_bank_success_ratio",
		"Share of a bank's finished payments that completed, over every merchant, by window (1h, 24h); the 50 busiest banks of each country.",
		[]string{"country", "bank", "window"}, nil)
	bankFinishedDesc = prometheus.NewDesc("checkout_bank_finished_payments",
		"A bank's finished payments (completed, canceled or abandoned), over every merchant, by window (1h, 24h); the 50 busiest banks of each country.",
		[]string{"country", "bank", "window"}, nil)
	banksDegradedDesc = prometheus.NewDesc("checkout_banks_degraded",
		"Banks degraded right now (failing more often than BANK_HEALTH_MIN_SUCCESS over the last hour), by country.",
		[]string{"country"}, nil)
)

// WatchBankHealth publishes bank health from the last reading in memory:
// a scrape never asks the ledger.
func (m *Metrics) WatchBankHealth(snapshot func() *bankhealth.Snapshot) {
	m.registry.MustRegister(bankHealthCollector{snapshot})
}

type bankHealthCollector struct{ snapshot func() *bankhealth.Snapshot }

func (bankHealthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- bankSuccessDesc
	ch <- bankFinishedDesc
	ch <- banksDegradedDesc
}

func (c bankHealthCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.snapshot()
	if len(s.Windows) < 2 {
		return
	}
	// The busiest banks by the day's payments; the day's figures come by
	// country, busiest first.
	shown := map[string]bool{}
	perCountry := map[string]int{}
	for _, b := range s.Windows[1].Banks {
		if perCountry[b.Country] < maxBanksPerCountry {
			perCountry[b.Country]++
			shown[b.Country+"\x00"+b.BankID] = true
		}
	}
	for _, f := range s.Windows[:2] {
		for _, b := range f.Banks {
			if !shown[b.Country+"\x00"+b.BankID] {
				continue
			}
			ch <- prometheus.MustNewConstMetric(bankFinishedDesc, prometheus.GaugeValue, float64(b.Finished()), b.Country, b.BankID, f.Window.Name)
			if rate, ok := b.SuccessRate(); ok {
				ch <- prometheus.MustNewConstMetric(bankSuccessDesc, prometheus.GaugeValue, rate, b.Country, b.BankID, f.Window.Name)
			}
		}
	}
	degraded := map[string]int{}
	for _, b := range s.Windows[0].Banks {
		if b.Degraded {
			degraded[b.Country]++
		}
	}
	for country := range perCountry {
		ch <- prometheus.MustNewConstMetric(banksDegradedDesc, prometheus.GaugeValue, float64(degraded[country]), country)
	}
}
