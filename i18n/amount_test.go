package i18n

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The quick way of writing amounts writes each as x/text does, in every
// language: every cent up to 300 €, a thousand amounts up to 15,000 €,
// and the shapes links carry (one decimal, none, leading zeros); what it
// cannot write (more decimals, a sign, an exponent, a comma) is left to
// x/text, and what neither reads to the "EUR" fallback.
func TestAmountsAreWrittenAsXTextWritesThem(t *testing.T) {
	var amounts []string
	for cents := range 30001 {
		amounts = append(amounts, fmt.Sprintf("%d.%02d", cents/100, cents%100))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		cents := r.IntN(1500001)
		amounts = append(amounts, fmt.Sprintf("%d.%02d", cents/100, cents%100))
	}
	amounts = append(amounts, "49.9", "15000", "0049.90", "0", "00.5", "123456789.12", "1234567890.12",
		"49.999", "-5.00", "1e3", "49,90", ".5", "49.", "", "abc", " 49.90")
	for _, c := range Choices {
		l := New(c.Code)
		if l.amounts.decimal == "" {
			t.Errorf("%s: amounts are not written the quick way", c.Code)
		}
		slow := &Localizer{lang: l.lang, amounts: amountDigits{printer: l.digits}}
		for _, a := range amounts {
			if got, want := l.Amount(a), slow.Amount(a); got != want {
				t.Errorf("%s %q: written %q, x/text writes %q", c.Code, a, got, want)
			}
		}
	}
}
