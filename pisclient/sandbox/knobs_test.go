package sandbox_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

func setup(t *testing.T) (*sandbox.Sandbox, *pisclient.Client, string) {
	t.Helper()
	sb := sandbox.New(sandbox.Config{})
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	c, err := pisclient.New(srv.URL, sandbox.DefaultAPIKey, pisclient.WithRetry(2, time.Millisecond, 2*time.Millisecond), pisclient.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return sb, c, srv.URL
}

func TestKnobs(t *testing.T) {
	sb, c, _ := setup(t)
	ctx := context.Background()
	full, err := c.Institutions(ctx)
	if err != nil {
		t.Fatal(err)
	}

	sb.SetKnobs(sandbox.Knobs{MissingBanks: 0.5})
	part, err := c.Institutions(ctx)
	if err != nil || len(part) >= len(full) || len(part) == 0 {
		t.Errorf("missing banks: %d of %d, %v; want some but not all", len(part), len(full), err)
	}

	sb.SetKnobs(sandbox.Knobs{ErrorRate: 1})
	if _, err := c.Institutions(ctx); !errors.Is(err, pisclient.ErrUnavailable) {
		t.Errorf("error rate 1: %v, want ErrUnavailable", err)
	}

	sb.SetKnobs(sandbox.Knobs{MalformedRate: 1})
	if _, err := c.Institutions(ctx); !errors.Is(err, pisclient.ErrBadResponse) {
		t.Errorf("malformed: %v, want ErrBadResponse", err)
	}

	sb.SetKnobs(sandbox.Knobs{Latency: 2 * time.Second})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Institutions(short); err == nil {
		t.Error("latency beyond the deadline: no error")
	}
}

func TestKnobsFromEnv(t *testing.T) {
	env := map[string]string{sandbox.EnvLatency: "250ms", sandbox.EnvErrorRate: "0.1", sandbox.EnvSettleDelay: "1s"}
	k, err := sandbox.KnobsFromEnv(func(n string) string { return env[n] })
	if err != nil || k.Latency != 250*time.Millisecond || k.ErrorRate != 0.1 || k.SettleDelay != time.Second {
		t.Errorf("KnobsFromEnv = %+v, %v", k, err)
	}
	env[sandbox.EnvErrorRate] = "2"
	if _, err := sandbox.KnobsFromEnv(func(n string) string { return env[n] }); err == nil || !strings.Contains(err.Error(), sandbox.EnvErrorRate) {
		t.Errorf("a share of 2: %v, want an error naming %s", err, sandbox.EnvErrorRate)
	}
}

func TestHostedPageShowsPrefilledData(t *testing.T) {
	_, c, _ := setup(t)
	p, err := c.CreatePayment(context.Background(), pisclient.PaymentRequest{
		MerchantOrderID: "A-9", Amount: "12.30", Currency: "EUR", ReturnURL: "https://shop.example/done",
		InstitutionID: "credit-agricole", InstitutionCountryCode: "FR",
		Payer: &pisclient.Payer{Name: "<b>Zoé</b>", IBAN: "FR1420041010050500013M02606"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(p.Link)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	page := string(b)
	for _, want := range []string{"12.30 EUR", "Crédit Agricole", "FR1420041010050500013M02606", "&lt;b&gt;Zoé&lt;/b&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("hosted page lacks %q", want)
		}
	}
}

func TestRateLimitAndUnknownStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "ob-institutions") {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{"status":"PARTIALLY_REFUNDED"}`))
	}))
	defer srv.Close()
	c, _ := pisclient.New(srv.URL, "k", pisclient.WithRetry(2, time.Millisecond, time.Millisecond))
	if _, err := c.Institutions(context.Background()); !errors.Is(err, pisclient.ErrRateLimited) {
		t.Errorf("429: %v, want ErrRateLimited", err)
	}
	st, err := c.PaymentStatus(context.Background(), "A-1")
	if err != nil || st.Status != "PARTIALLY_REFUNDED" || st.Status.Final() {
		t.Errorf("unknown status: %v, %v; want it kept verbatim and not final", st, err)
	}
}

// A country of 2,000 banks: the sandbox tops the catalogue up with distinct
// generated banks that can be paid like any other.
func TestCountryBanks(t *testing.T) {
	k, err := sandbox.KnobsFromEnv(func(name string) string {
		return map[string]string{sandbox.EnvCountryBanks: "*:150,DE:2000"}[name]
	})
	if err != nil {
		t.Fatal(err)
	}
	sb, c, _ := setup(t)
	sb.SetKnobs(k)
	list, err := c.Institutions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	names := map[string]bool{}
	var generated pisclient.Institution
	for _, b := range list {
		if b.IsForTest {
			continue // test banks come on top of the count
		}
		per[b.CountryCode]++
		if b.CountryCode == "DE" {
			if names[b.Name] {
				t.Errorf("two banks named %q in DE", b.Name)
			}
			names[b.Name] = true
			if strings.HasPrefix(b.ID, "gen-") {
				generated = b
			}
		}
	}
	if per["DE"] != 2000 || per["FR"] != 150 || per["LU"] != 150 {
		t.Errorf("banks per country: DE %d, FR %d, LU %d; want 2000, 150, 150", per["DE"], per["FR"], per["LU"])
	}
	p, err := c.CreatePayment(context.Background(), pisclient.PaymentRequest{
		InstitutionID: generated.ID, InstitutionCountryCode: "DE", Amount: "1.00", Currency: "EUR",
		MerchantOrderID: "gen-1", ReturnURL: "http://localhost/back",
		Payer: &pisclient.Payer{IBAN: "DE89370400440532013000", PSUID: "user1"},
	})
	if err != nil || p.Link == "" {
		t.Errorf("paying generated bank %s: %v", generated.ID, err)
	}

	for _, bad := range []string{"DE", "DE:x", "de:10", "DE:99999", "DEU:10"} {
		env := func(name string) string { return map[string]string{sandbox.EnvCountryBanks: bad}[name] }
		if _, err := sandbox.KnobsFromEnv(env); err == nil {
			t.Errorf("%s=%q accepted", sandbox.EnvCountryBanks, bad)
		}
	}
}

// A failing bank cancels the payments its shoppers approve; an unlisted
// bank is gone from the list while a payment made with it still works.
func TestFailingAndUnlistedBanks(t *testing.T) {
	env := map[string]string{sandbox.EnvFailingBanks: "DE:commerzbank:1, FR:credit-agricole:0", sandbox.EnvUnlistedBanks: "DE:dkb"}
	k, err := sandbox.KnobsFromEnv(func(n string) string { return env[n] })
	if err != nil {
		t.Fatal(err)
	}
	if k.FailingBanks["DE:commerzbank"] != 1 || !k.UnlistedBanks["DE:dkb"] {
		t.Fatalf("knobs %+v", k)
	}
	sb, c, _ := setup(t)
	sb.SetKnobs(k)
	ctx := context.Background()
	list, err := c.Institutions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, b := range list {
		listed[b.CountryCode+":"+b.ID] = true
	}
	if listed["DE:dkb"] || !listed["DE:commerzbank"] {
		t.Errorf("DE:dkb listed %v, DE:commerzbank listed %v; want only commerzbank", listed["DE:dkb"], listed["DE:commerzbank"])
	}

	approve := func(order, country, bank string) pisclient.Status {
		t.Helper()
		p, err := c.CreatePayment(ctx, pisclient.PaymentRequest{
			MerchantOrderID: order, Amount: "5.00", Currency: "EUR", ReturnURL: "https://shop.example/done",
			InstitutionID: bank, InstitutionCountryCode: country,
			Payer: &pisclient.Payer{Name: "Zoé Martin", IBAN: "DE89370400440532013000", PSUID: "user1"},
		})
		if err != nil {
			t.Fatalf("paying %s:%s: %v", country, bank, err)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noRedirect.PostForm(p.Link, map[string][]string{"action": {"approve"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		st, err := c.PaymentStatus(ctx, order)
		if err != nil {
			t.Fatal(err)
		}
		return st.Status
	}
	if st := approve("fail-1", "DE", "commerzbank"); st != pisclient.StatusCanceled {
		t.Errorf("approved at a bank failing every payment: %s, want CANCELED", st)
	}
	if st := approve("unlisted-1", "DE", "dkb"); st != pisclient.StatusAccepted {
		t.Errorf("approved at an unlisted bank: %s, want it accepted", st)
	}
	if st := approve("ok-1", "FR", "credit-agricole"); st != pisclient.StatusAccepted {
		t.Errorf("approved at a bank failing none: %s, want it accepted", st)
	}

	for name, bad := range map[string]string{
		sandbox.EnvFailingBanks:  "DE:commerzbank",
		sandbox.EnvUnlistedBanks: "DE:no-such-bank",
	} {
		if _, err := sandbox.KnobsFromEnv(func(n string) string { return map[string]string{name: bad}[n] }); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v, want an error naming the variable", name, bad, err)
		}
	}
	if _, err := sandbox.KnobsFromEnv(func(n string) string {
		return map[string]string{sandbox.EnvFailingBanks: "DE:commerzbank:1.5"}[n]
	}); err == nil {
		t.Error("a share of 1.5 accepted")
	}
}
