package i18n

import (
	"strings"

	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// amountDigits writes amounts' digits as one language does (its decimal
// mark and grouping, as x/text prints them from CLDR), without going
// through x/text on every call: the order summary of every shopper's page
// shows one, and x/text's printer was a twentieth of the bank page's work.
// The marks are read once from x/text's own print of a probe, and kept
// only when the fast way agrees with x/text on a set of amounts; a
// language it does not is printed by x/text.
type amountDigits struct {
	printer *message.Printer
	// decimal and group are the language's marks; empty when the fast
	// way is not used.
	decimal, group string
}

func newAmountDigits(p *message.Printer) amountDigits {
	d := amountDigits{printer: p}
	probe := d.slow(1234567.89)
	// "1,234,567.89": the mark after the 1 groups, the one before 89 is
	// the decimal mark.
	rest := strings.TrimPrefix(probe, "1")
	group, rest, ok1 := strings.Cut(rest, "234")
	head, frac, ok2 := strings.Cut(rest, "567")
	if !ok1 || !ok2 || head != group || !strings.HasSuffix(frac, "89") {
		return d
	}
	d.group, d.decimal = group, strings.TrimSuffix(frac, "89")
	for _, a := range amountProbes {
		if fast, ok := d.fast(a); !ok || fast != d.slow(parseProbe(a)) {
			d.group, d.decimal = "", ""
			return d
		}
	}
	return d
}

// amountProbes are the amounts the fast way must print as x/text does
// before it is used: each length of the whole part, zeros, and cents.
var amountProbes = []string{"0.00", "0.05", "0.50", "1.00", "9.99", "10.10", "99.90", "100.00", "999.99", "1000.00",
	"1234.50", "9999.99", "10000.00", "12345.67", "15000.00", "99999.99", "100000.00", "123456.78", "999999.99", "1234567.89"}

func parseProbe(a string) float64 {
	whole, frac, _ := strings.Cut(a, ".")
	v := 0.0
	for _, r := range whole + frac {
		v = v*10 + float64(r-'0')
	}
	return v / 100
}

// slow is x/text's print of v with two decimals.
func (d amountDigits) slow(v float64) string {
	return d.printer.Sprint(number.Decimal(v, number.Scale(2)))
}

// maxWhole bounds the digits of an amount's whole part the fast way
// prints: a float64 carries them and their cents exactly.
const maxWhole = 9

// fast prints amount, a number of up to maxWhole digits with at most two
// decimals ("49.9", "0049.90"), with the language's marks; ok is false
// for anything else, or when the language is not printed the fast way.
func (d amountDigits) fast(amount string) (string, bool) {
	whole, frac, dotted := strings.Cut(amount, ".")
	if d.decimal == "" || whole == "" || dotted && frac == "" || !allDigits(whole) || !allDigits(frac) || len(frac) > 2 {
		return "", false
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if len(whole) > maxWhole {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(whole) + len(whole)/3*len(d.group) + len(d.decimal) + 2)
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(d.group)
		}
		b.WriteByte(whole[i])
	}
	b.WriteString(d.decimal)
	b.WriteString(frac)
	b.WriteString("00"[:2-len(frac)])
	return b.String(), true
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
