// Package sandbox is a stand-in for the payment initiation provider
// (docs/provider.md): the three endpoints behind x-api-key, a hosted checkout
// page and bank logos, all in one http.Handler. It is faithful to every rule
// the provider's document states and slightly hostile where it leaves things
// open, so that the client and the app are tested against a provider that
// misbehaves. Knobs make it slower, failing or forgetful on purpose.
package sandbox

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultAPIKey is the only x-api-key the sandbox accepts unless configured otherwise.
const DefaultAPIKey = "sandbox"

// Knobs make the sandbox misbehave, for tests and manual runs. The zero value
// is a well-behaved provider.
type Knobs struct {
	// Latency delays every API answer.
	Latency time.Duration
	// ErrorRate is the share (0..1) of API requests answered 503.
	ErrorRate float64
	// MissingBanks is the share (0..1) of banks left out of the list; which
	// ones changes every minute, as when upstream banks come and go.
	MissingBanks float64
	// MalformedRate is the share (0..1) of API answers whose body is cut off.
	// A creation is stored before its answer is spoiled, as when a provider
	// fails after doing the work.
	MalformedRate float64
	// SettleDelay is how long an approved payment stays
	// ACCEPTED_SETTLEMENT_IN_PROCESS before it is COMPLETED.
	SettleDelay time.Duration
	// CountryBanks tops countries up with generated banks to a count:
	// {"DE": 2000} lists 2,000 banks in Germany; "*" stands for every
	// country of the catalogue.
	CountryBanks map[string]int
	// FailingBanks make banks cancel a share (0..1) of their payments
	// when the shopper approves, as a bank with an outage does: keyed
	// "DE:commerzbank".
	FailingBanks map[string]float64
	// UnlistedBanks are left out of the list while their payments still
	// work, as when the provider drops a bank for a while: keys
	// "DE:dkb".
	UnlistedBanks map[string]bool
}

// BankKey names a bank in FailingBanks and UnlistedBanks: "DE:commerzbank".
func BankKey(country, id string) string { return country + ":" + id }

// DefaultSettleDelay is the SettleDelay of a sandbox with no knobs set.
const DefaultSettleDelay = 3 * time.Second

// abandonAfter is how long an opened payment may wait for the shopper before
// the provider cancels it, as the real provider cancels a payment not
// confirmed within 30 minutes (docs/provider.md).
const abandonAfter = 30 * time.Minute

// Environment variables read by KnobsFromEnv.
const (
	EnvLatency       = "SANDBOX_LATENCY"
	EnvErrorRate     = "SANDBOX_ERROR_RATE"
	EnvMissingBanks  = "SANDBOX_MISSING_BANKS"
	EnvMalformedRate = "SANDBOX_MALFORMED_RATE"
	EnvSettleDelay   = "SANDBOX_SETTLE_DELAY"
	EnvCountryBanks  = "SANDBOX_COUNTRY_BANKS"
	EnvFailingBanks  = "SANDBOX_FAILING_BANKS"
	EnvUnlistedBanks = "SANDBOX_UNLISTED_BANKS"
)

// KnobsFromEnv reads the knobs from the environment: durations as Go writes
// them ("250ms"), shares as numbers from 0 to 1. An unset variable keeps the default.
func KnobsFromEnv(getenv func(string) string) (Knobs, error) {
	k := Knobs{SettleDelay: DefaultSettleDelay}
	durations := map[string]*time.Duration{EnvLatency: &k.Latency, EnvSettleDelay: &k.SettleDelay}
	for name, dst := range durations {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return Knobs{}, fmt.Errorf("%s: %q is not a duration like 250ms", name, v)
			}
			*dst = d
		}
	}
	shares := map[string]*float64{EnvErrorRate: &k.ErrorRate, EnvMissingBanks: &k.MissingBanks, EnvMalformedRate: &k.MalformedRate}
	for name, dst := range shares {
		if v := getenv(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return Knobs{}, fmt.Errorf("%s: %q is not a share from 0 to 1", name, v)
			}
			*dst = f
		}
	}
	if v := getenv(EnvCountryBanks); v != "" {
		counts, err := parseCountryBanks(v)
		if err != nil {
			return Knobs{}, fmt.Errorf("%s: %w", EnvCountryBanks, err)
		}
		k.CountryBanks = counts
	}
	all := banksFor(k)
	if v := getenv(EnvFailingBanks); v != "" {
		failing, err := parseFailingBanks(v, all)
		if err != nil {
			return Knobs{}, fmt.Errorf("%s: %w", EnvFailingBanks, err)
		}
		k.FailingBanks = failing
	}
	if v := getenv(EnvUnlistedBanks); v != "" {
		unlisted, err := parseUnlistedBanks(v, all)
		if err != nil {
			return Knobs{}, fmt.Errorf("%s: %w", EnvUnlistedBanks, err)
		}
		k.UnlistedBanks = unlisted
	}
	return k, nil
}

// parseFailingBanks reads SANDBOX_FAILING_BANKS: "DE:commerzbank:0.8,FR:bnp:1",
// each a bank of the sandbox's list and the share of its payments it
// cancels.
func parseFailingBanks(v string, all []bank) (map[string]float64, error) {
	out := map[string]float64{}
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		i := strings.LastIndex(part, ":")
		if i < 0 {
			return nil, fmt.Errorf("%q is not a country, a bank and a share, like DE:commerzbank:0.8", part)
		}
		share, err := strconv.ParseFloat(part[i+1:], 64)
		if err != nil || share < 0 || share > 1 {
			return nil, fmt.Errorf("%q: %q is not a share from 0 to 1", part, part[i+1:])
		}
		key, err := sandboxBank(part[:i], all)
		if err != nil {
			return nil, err
		}
		out[key] = share
	}
	return out, nil
}

// parseUnlistedBanks reads SANDBOX_UNLISTED_BANKS: "DE:dkb,FR:boursorama".
func parseUnlistedBanks(v string, all []bank) (map[string]bool, error) {
	out := map[string]bool{}
	for part := range strings.SplitSeq(v, ",") {
		key, err := sandboxBank(strings.TrimSpace(part), all)
		if err != nil {
			return nil, err
		}
		out[key] = true
	}
	return out, nil
}

// sandboxBank checks that "DE:dkb" names a bank of the sandbox's list.
func sandboxBank(key string, all []bank) (string, error) {
	country, id, ok := strings.Cut(key, ":")
	if !ok {
		return "", fmt.Errorf("%q is not a country and a bank, like DE:dkb", key)
	}
	if _, found := findBank(all, id, country); !found {
		return "", fmt.Errorf("%q is not a bank of the sandbox's list (a country code, a colon and the bank's institution_id)", key)
	}
	return BankKey(country, id), nil
}

// Config sets up a Sandbox.
type Config struct {
	// APIKey is the only x-api-key accepted; DefaultAPIKey when empty.
	APIKey string
	// PublicURL is where browsers reach the sandbox (payment links and logos
	// are built on it), e.g. "http://localhost:8080/sandbox". When empty it is
	// taken from each request's Host.
	PublicURL string
	Knobs     Knobs
	// Now tells the time; time.Now when nil. Tests move it to settle payments.
	Now func() time.Time
}

// Stats counts what the sandbox was asked, for tests and the load command.
type Stats struct {
	InstitutionsCalls int
	CreateCalls       int
	StatusCalls       int
	Payments          int
}

// Sandbox is the provider stand-in. Build it with New.
type Sandbox struct {
	apiKey    string
	publicURL string
	now       func() time.Time
	mux       *http.ServeMux

	mu    sync.Mutex
	knobs Knobs
	// banks is the catalogue as the knobs make it, made when they change:
	// 2,000 generated banks are not made again for every request.
	banks    []bank
	stats    Stats
	payments map[string]*payment // by merchant_order_id
	byToken  map[string]*payment // by the token in the payment link
}

// payment is one created payment and where it stands.
type payment struct {
	req        PaymentRequest
	bankName   string
	token      string
	openedAt   time.Time
	approvedAt time.Time
	rejected   bool
}

// New returns a sandbox with the embedded catalogue.
func New(cfg Config) *Sandbox {
	s := &Sandbox{
		apiKey:    cfg.APIKey,
		publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		now:       cfg.Now,
		knobs:     cfg.Knobs,
		payments:  make(map[string]*payment),
		byToken:   make(map[string]*payment),
	}
	if s.apiKey == "" {
		s.apiKey = DefaultAPIKey
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.knobs.SettleDelay == 0 {
		s.knobs.SettleDelay = DefaultSettleDelay
	}
	s.banks = banksFor(s.knobs)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/pis/payment/ob-institutions", s.api(s.listInstitutions))
	mux.HandleFunc("POST /api/v2/pis/payment", s.api(s.createPayment))
	mux.HandleFunc("GET /api/v2/pis/payment/{id}", s.api(s.paymentStatus))
	mux.HandleFunc("GET /logos/{file}", s.logo)
	mux.HandleFunc("GET /checkout/{token}", s.showCheckout)
	mux.HandleFunc("POST /checkout/{token}", s.finishCheckout)
	s.mux = mux
	return s
}

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetKnobs changes the knobs of a running sandbox.
func (s *Sandbox) SetKnobs(k Knobs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k.SettleDelay == 0 {
		k.SettleDelay = DefaultSettleDelay
	}
	s.knobs = k
	s.banks = banksFor(k)
}

// listed is the banks the sandbox lists, with the knobs in force.
func (s *Sandbox) listed() []bank {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.banks
}

// Knobs returns the knobs in force.
func (s *Sandbox) Knobs() Knobs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knobs
}

// Stats returns what the sandbox was asked so far.
func (s *Sandbox) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Received returns the creation request stored for an order, as the provider
// saw it, so tests can check what the app sent.
func (s *Sandbox) Received(merchantOrderID string) (PaymentRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[merchantOrderID]
	if !ok {
		return PaymentRequest{}, false
	}
	return p.req, true
}

// apiError is the JSON error body the sandbox answers with.
type apiError struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors,omitempty"`
}

type fieldError struct {
	Field   string `json:"field"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// apiAnswer is what an API handler decides; api() writes it, spoiled by the knobs.
type apiAnswer struct {
	status int
	body   any
}

// api wraps an API endpoint with the key check and the knobs.
func (s *Sandbox) api(h func(*http.Request) apiAnswer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k := s.Knobs()
		if k.Latency > 0 {
			t := time.NewTimer(k.Latency)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		got := r.Header.Get("x-api-key")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.apiKey)) != 1 {
			writeJSON(w, http.StatusUnauthorized, apiError{Code: "UNAUTHORIZED", Message: "missing or invalid x-api-key"})
			return
		}
		if k.ErrorRate > 0 && mathrand.Float64() < k.ErrorRate {
			writeJSON(w, http.StatusServiceUnavailable, apiError{Code: "UPSTREAM_UNAVAILABLE", Message: "the bank gateway is temporarily unavailable"})
			return
		}
		a := h(r)
		if k.MalformedRate > 0 && mathrand.Float64() < k.MalformedRate {
			b, _ := json.Marshal(a.body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			w.Write(b[:len(b)/2])
			return
		}
		writeJSON(w, a.status, a.body)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// institutionJSON is one list entry as the sandbox sends it. The logo goes
// under either documented name, extraFields may be absent, and a BIC, which
// the specification does not list, comes along where known.
type institutionJSON struct {
	InstitutionID   string    `json:"institution_id"`
	InstitutionName string    `json:"institution_name"`
	CountryCode     string    `json:"country_code"`
	LogoLink        string    `json:"logo_link,omitempty"`
	LogoURL         string    `json:"logoUrl,omitempty"`
	ExtraFields     *[]string `json:"extraFields,omitempty"`
	BIC             string    `json:"bic,omitempty"`
	IsForTest       bool      `json:"is_for_test,omitempty"`
}

func (s *Sandbox) listInstitutions(r *http.Request) apiAnswer {
	s.mu.Lock()
	s.stats.InstitutionsCalls++
	missing := s.knobs.MissingBanks
	unlisted := s.knobs.UnlistedBanks
	all := s.banks
	s.mu.Unlock()
	window := s.now().Unix() / 60
	base := s.base(r)
	list := make([]institutionJSON, 0, len(all))
	for _, b := range all {
		if missing > 0 && hidden(b.ID, window, missing) || unlisted[BankKey(b.Country, b.ID)] {
			continue
		}
		e := institutionJSON{
			InstitutionID: b.ID, InstitutionName: b.Name, CountryCode: b.Country,
			IsForTest: b.IsForTest,
		}
		if b.ExtraFields != nil {
			fields := b.ExtraFields
			e.ExtraFields = &fields
		}
		if b.Logo {
			logo := base + "/logos/" + b.ID + ".svg"
			if b.LogoKey == "logoUrl" {
				e.LogoURL = logo
			} else {
				e.LogoLink = logo
			}
		}
		if b.BIC != "" && !b.IsForTest {
			e.BIC = b.BIC
		}
		list = append(list, e)
	}
	return apiAnswer{http.StatusOK, list}
}

// hidden decides whether a bank is missing from the list in this minute.
func hidden(id string, window int64, share float64) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", id, window)
	return float64(h.Sum64()%10000)/10000 < share
}

// maxCreateBody bounds a creation request.
const maxCreateBody = 64 << 10

func (s *Sandbox) createPayment(r *http.Request) apiAnswer {
	s.mu.Lock()
	s.stats.CreateCalls++
	s.mu.Unlock()
	var req PaymentRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxCreateBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return apiAnswer{http.StatusBadRequest, apiError{Code: "BAD_REQUEST", Message: "body is not a valid payment request: " + err.Error()}}
	}
	fields := validate(req)
	bankName := ""
	if req.InstitutionID != "" {
		b, ok := findBank(s.listed(), req.InstitutionID, req.InstitutionCountryCode)
		if !ok {
			fields = append(fields, fieldError{"institution_id", "unknown", "no such institution in that country"})
		}
		bankName = b.Name
	}
	if len(fields) > 0 {
		return apiAnswer{http.StatusBadRequest, apiError{Code: "VALIDATION_ERROR", Message: "the payment request is invalid", Errors: fields}}
	}
	token := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.payments[req.MerchantOrderID]; dup {
		return apiAnswer{http.StatusConflict, apiError{Code: "DUPLICATE_MERCHANT_ORDER_ID", Message: "a payment with this merchant_order_id already exists"}}
	}
	p := &payment{req: req, bankName: bankName, token: token}
	s.payments[req.MerchantOrderID] = p
	s.byToken[token] = p
	s.stats.Payments++
	return apiAnswer{http.StatusCreated, map[string]string{
		"merchant_order_id": req.MerchantOrderID,
		"payment_link":      s.base(r) + "/checkout/" + token,
	}}
}

func (s *Sandbox) paymentStatus(r *http.Request) apiAnswer {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.StatusCalls++
	p, ok := s.payments[id]
	if !ok {
		return apiAnswer{http.StatusNotFound, apiError{Code: "NOT_FOUND", Message: "no payment with this merchant_order_id"}}
	}
	return apiAnswer{http.StatusOK, map[string]string{
		"merchant_order_id": id,
		"status":            s.statusOf(p),
		"payment_amount":    p.req.Amount,
		"payment_currency":  p.req.Currency,
	}}
}

// statusOf moves a payment through the provider's statuses as time passes.
// Callers hold s.mu.
func (s *Sandbox) statusOf(p *payment) string {
	now := s.now()
	switch {
	case p.rejected:
		return statusCanceled
	case !p.approvedAt.IsZero() && now.Sub(p.approvedAt) >= s.knobs.SettleDelay:
		return statusCompleted
	case !p.approvedAt.IsZero():
		return statusAccepted
	case !p.openedAt.IsZero() && now.Sub(p.openedAt) > abandonAfter:
		return statusCanceled
	case !p.openedAt.IsZero():
		return statusInProgress
	}
	return statusNotFound
}

func findBank(all []bank, id, country string) (bank, bool) {
	for _, b := range all {
		if b.ID == id && b.Country == country {
			return b, true
		}
	}
	return bank{}, false
}

// base is the sandbox's public URL, from the configuration or the request.
func (s *Sandbox) base(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func randomToken() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// RoundTrip serves a client's request in process. The app uses the sandbox
// it mounts this way, so it never needs to reach its own public address.
func (s *Sandbox) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}
