package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/telemetry"
)

type figures []ledger.BankFigures

func (f figures) RecentBankHealth(context.Context, time.Time) ([]ledger.BankFigures, error) {
	return f, nil
}
func (f figures) BankHealth(context.Context, time.Time) ([]ledger.BankFigures, error) { return f, nil }
func (f figures) MostPaid(context.Context, time.Time, int) (map[string][]string, error) {
	return nil, nil
}

// Germany has 60 banks with payments, France 3: the metric names the 50
// busiest German banks and every French one, no more.
func TestBankHealthMetricsNameTheBusiestFiftyBanksPerCountry(t *testing.T) {
	var all figures
	for i := range 60 {
		// bank-00 is the busiest; bank-00 to bank-11 fail every payment.
		completed := int64(0)
		if i >= 12 {
			completed = 100 - int64(i)
		}
		all = append(all, ledger.BankFigures{Country: "DE", BankID: fmt.Sprintf("bank-%02d", i),
			AttemptCounts: ledger.AttemptCounts{Started: 200 - int64(i), Completed: completed, Canceled: 100 - int64(i) - completed}})
	}
	for _, id := range []string{"bnp", "sg", "lcl"} {
		all = append(all, ledger.BankFigures{Country: "FR", BankID: id, AttemptCounts: ledger.AttemptCounts{Started: 3, Completed: 3}})
	}
	k := &bankhealth.Keeper{Source: all, Thresholds: bankhealth.DefaultThresholds}
	if err := k.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := telemetry.New()
	m.WatchBankHealth(k.Snapshot)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	series := map[string]int{}
	for line := range strings.Lines(string(body)) {
		if name, _, ok := strings.Cut(line, "{"); ok && strings.HasPrefix(name, "checkout_bank") {
			series[name+" "+strings.Split(strings.Split(line, `country="`)[1], `"`)[0]]++
		}
	}
	// Two windows each.
	want := map[string]int{
		"checkout_bank_success_ratio DE": 100, "checkout_bank_success_ratio FR": 6,
		"checkout_bank_finished_payments DE": 100, "checkout_bank_finished_payments FR": 6,
		"checkout_banks_degraded DE": 1, "checkout_banks_degraded FR": 1,
	}
	for k, n := range want {
		if series[k] != n {
			t.Errorf("%s: %d series, want %d", k, series[k], n)
		}
	}
	if !strings.Contains(string(body), `checkout_bank_success_ratio{bank="bank-49",country="DE",window="1h"}`) ||
		strings.Contains(string(body), `bank="bank-50"`) {
		t.Error("the series are not the 50 busiest German banks")
	}
	if !strings.Contains(string(body), `checkout_banks_degraded{country="DE"} 12`) {
		t.Errorf("degraded count missing:\n%s", body)
	}
}
