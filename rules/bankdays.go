package rules

import "time"

// BankDay reports whether day (its date, in UTC) is a TARGET2 business
// day, when SEPA credit transfers settle: not a Saturday or Sunday, New
// Year's Day, Good Friday, Easter Monday, 1 May, or 25 or 26 December.
func BankDay(day time.Time) bool {
	day = day.UTC()
	switch day.Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	m, d := day.Month(), day.Day()
	switch {
	case m == time.January && d == 1, m == time.May && d == 1, m == time.December && (d == 25 || d == 26):
		return false
	}
	easter := easterSunday(day.Year())
	return !sameDay(day, easter.AddDate(0, 0, -2)) && !sameDay(day, easter.AddDate(0, 0, 1))
}

// BankDaysBefore is the start (in UTC) of the day n bank days before t's.
func BankDaysBefore(t time.Time, n int) time.Time {
	d := time.Date(t.UTC().Year(), t.UTC().Month(), t.UTC().Day(), 0, 0, 0, 0, time.UTC)
	for n > 0 {
		d = d.AddDate(0, 0, -1)
		if BankDay(d) {
			n--
		}
	}
	return d
}

func sameDay(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

// easterSunday is Easter Sunday of the Gregorian year y (the anonymous
// Gregorian algorithm, "Meeus/Jones/Butcher").
func easterSunday(y int) time.Time {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}
