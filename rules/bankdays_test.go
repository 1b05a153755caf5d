package rules_test

import (
	"testing"
	"time"

	"github.com/paybybank/checkout/rules"
)

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestBankDaysAreTARGET2Days: weekends and the six TARGET2 holidays,
// Easter's moving with the year, are no bank days.
func TestBankDaysAreTARGET2Days(t *testing.T) {
	for day, want := range map[string]bool{
		"2026-12-07": true,  // a Monday
		"2026-12-05": false, // a Saturday
		"2026-12-25": false, "2026-12-26": false, "2027-01-01": false, "2027-05-01": false,
		"2026-04-03": false, "2026-04-06": false, // Good Friday and Easter Monday 2026
		"2027-03-26": false, "2027-03-29": false, // and 2027
		"2026-04-02": true, "2026-04-07": true,
	} {
		if got := rules.BankDay(date(day)); got != want {
			t.Errorf("%s: bank day %v, want %v", day, got, want)
		}
	}
	for _, c := range []struct {
		from string
		n    int
		want string
	}{
		{"2026-12-07", 3, "2026-12-02"}, // Monday: back past the weekend
		{"2026-12-29", 3, "2026-12-23"}, // past Christmas
		{"2026-04-08", 2, "2026-04-02"}, // past Easter
		{"2026-12-09", 0, "2026-12-09"},
	} {
		if got := rules.BankDaysBefore(date(c.from).Add(15*time.Hour), c.n); !got.Equal(date(c.want)) {
			t.Errorf("%d bank days before %s: %s, want %s", c.n, c.from, got.Format(time.DateOnly), c.want)
		}
	}
}
