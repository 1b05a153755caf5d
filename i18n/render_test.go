package i18n_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/views/checkout"
	"github.com/paybybank/checkout/views/console"
)

var update = flag.Bool("update", false, "rewrite testdata/render with what every language reads now")

// counts are the numbers each sentence with a %d is read with: every CLDR
// plural category the 26 languages have for whole numbers, and a million,
// which French, Italian, Portuguese and Spanish count apart.
var counts = []int{0, 1, 2, 3, 5, 7, 11, 21, 22, 25, 101, 102, 111, 1000000}

var verb = regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)

// TestEveryLanguageReadsAsBefore renders, in each language, every string of
// the shopper's pages and of the console (each sentence with a count at
// every number of counts), the amounts, numbers, dates and country names,
// and a handful of pages, and compares them with testdata/render: what
// anyone reads changes only where those files change with it. After a
// wanted change, `go test ./i18n/ -run TestEveryLanguageReadsAsBefore
// -update` rewrites them, and their diff shows what pages now say.
func TestEveryLanguageReadsAsBefore(t *testing.T) {
	for _, c := range i18n.Choices {
		t.Run(c.Code, func(t *testing.T) {
			got := reading(t, c.Code)
			path := filepath.Join("testdata", "render", c.Code+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run the test with -update to write it)", err)
			}
			compare(t, string(want), got)
		})
	}
}

// compare reports the lines of got that differ from want's, by label.
func compare(t *testing.T, want, got string) {
	t.Helper()
	wanted := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
		label, text, _ := strings.Cut(l, "\t")
		wanted[label] = text
	}
	bad := 0
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		label, text, _ := strings.Cut(l, "\t")
		old, ok := wanted[label]
		delete(wanted, label)
		if ok && old == text {
			continue
		}
		if bad++; bad <= 20 {
			t.Errorf("%s\n  was %s\n  now %s", label, old, text)
		}
	}
	for label := range wanted {
		if bad++; bad <= 20 {
			t.Errorf("%s is no longer rendered", label)
		}
	}
	if bad > 20 {
		t.Errorf("and %d more", bad-20)
	}
}

// reading is everything rendered in lang, a line per label.
func reading(t *testing.T, lang string) string {
	var b strings.Builder
	line := func(label, text string) { fmt.Fprintf(&b, "%s\t%s\n", label, strconv.Quote(text)) }
	shopper, staff := i18n.New(lang), i18n.Staff(lang)
	for _, c := range []struct {
		name       string
		l, english *i18n.Localizer
		keys       []string
	}{
		{"shopper", shopper, i18n.New("en"), i18n.Keys()},
		{"console", staff, i18n.Staff("en"), i18n.StaffKeys()},
	} {
		for _, key := range c.keys {
			// Without arguments, T gives the sentence itself.
			verbs := slices.DeleteFunc(verb.FindAllString(c.english.T(key), -1), func(v string) bool { return v == "%%" })
			if len(verbs) == 0 {
				line(c.name+" "+key, c.l.T(key))
				continue
			}
			args := make([]any, len(verbs))
			for i, v := range verbs {
				switch v {
				case "%d":
					args[i] = 7
				case "%q":
					args[i] = "q" + strconv.Itoa(i+1)
				default:
					args[i] = "s" + strconv.Itoa(i+1)
				}
			}
			n := slices.Index(verbs, "%d")
			if n < 0 {
				line(c.name+" "+key, c.l.T(key, args...))
				continue
			}
			for _, count := range counts {
				args[n] = count
				line(fmt.Sprintf("%s %s %d", c.name, key, count), c.l.T(key, args...))
			}
		}
		line(c.name+" no.such.key", c.l.T("no.such.key"))
	}

	line("lang", shopper.Lang()+" "+staff.Lang())
	line("name", i18n.Name(lang))
	for _, a := range []string{"0", "0.5", "49.9", "1234.5", "15000", "x"} {
		line("amount "+a, shopper.Amount(a))
	}
	for _, n := range []int64{0, 7, 1234, 12345, 1234567} {
		line("number "+strconv.FormatInt(n, 10), staff.Number(n))
	}
	for _, p := range []float64{0, 0.001, 0.25, 0.1234, 1} {
		line("percent "+strconv.FormatFloat(p, 'f', -1, 64), staff.Percent(p))
	}
	line("datetime", staff.DateTime(time.Date(2026, 11, 24, 9, 5, 7, 0, time.FixedZone("CET", 3600))))
	for _, code := range []string{"DE", "MT", "GB", "IE", "GR", "XK", "ZZ", "DEU"} {
		line("country "+code, shopper.Country(code))
	}
	names := []string{"Zürich", "Åland", "Ärzte", "Bank", "Čapek", "Chata", "Öresund", "Łódź", "Oslo", "Ísafjörður", "Ħamrun"}
	slices.SortFunc(names, shopper.Collator().CompareString)
	line("collation", strings.Join(names, " | "))

	for _, p := range pages(shopper, staff) {
		var buf bytes.Buffer
		if err := p.c.Render(i18n.With(context.Background(), p.l), &buf); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range words(doc.Selection, nil) {
			line(fmt.Sprintf("page %s %03d", p.name, i), w)
		}
	}
	return b.String()
}

// words are the texts of a page a person reads or hears, in order.
func words(s *goquery.Selection, out []string) []string {
	s.Contents().Each(func(_ int, c *goquery.Selection) {
		switch goquery.NodeName(c) {
		case "#text":
			if text := strings.Join(strings.Fields(c.Text()), " "); text != "" {
				out = append(out, text)
			}
		case "script", "style", "svg":
		default:
			for _, a := range []string{"lang", "title", "alt", "placeholder", "aria-label", "data-all", "data-some", "data-none"} {
				if v, ok := c.Attr(a); ok && v != "" {
					out = append(out, "@"+a+" "+v)
				}
			}
			out = words(c, out)
		}
	})
	return out
}

type page struct {
	name string
	l    *i18n.Localizer
	c    templ.Component
}

// pages are a handful of the shopper's and the console's pages with fixed
// models, their texts made as the handlers make them.
func pages(l, staff *i18n.Localizer) []page {
	summary := checkout.Summary{Merchant: "Shop", Amount: l.Amount("49.9"), OrderID: "A-1"}
	frame := func(title string) views.Page { return views.Page{Title: title, Merchant: "Shop"} }
	var switcher views.LanguageSwitch
	for _, c := range i18n.Choices {
		switcher.Languages = append(switcher.Languages, views.Option{Value: c.Code, Label: c.Name, Selected: c.Code == l.Lang()})
	}
	countries := frame(l.T("country.title"))
	countries.Switch = switcher
	bank := func(name string) checkout.BankRow {
		return checkout.BankRow{ID: name, Name: name, Initials: views.Initials(name), URL: "pay?bank=" + templ.SafeURL(name)}
	}
	degraded := bank("Sparkasse")
	degraded.Degraded, degraded.KnownAs = true, "Spk"
	return []page{
		{"countries", l, checkout.Countries(checkout.CountryPage{Page: countries, Summary: checkout.OrderSummary(summary), Countries: []checkout.CountryOption{
			{Code: "DE", Name: l.Country("DE"), URL: "banks?country=DE", Suggested: true},
			{Code: "MT", Name: l.Country("MT"), URL: "banks?country=MT"},
		}})},
		{"banks", l, checkout.Banks(checkout.BanksPage{
			Page:      frame(l.T("banks.title")),
			Top:       checkout.BanksHead(checkout.BanksTop{Summary: summary, CountryName: l.Country("DE"), ChangeCountryURL: "country"}),
			LastUsed:  checkout.LastUsedBank(bank("Volksbank")),
			Country:   "DE",
			Popular:   []checkout.BankRow{bank("Commerzbank")},
			Banks:     []checkout.BankRow{bank("Commerzbank"), degraded},
			Matches:   2,
			Total:     21,
			Elsewhere: []checkout.Elsewhere{{Country: "AT", CountryName: l.Country("AT"), Count: 3, URL: "banks?country=AT"}},
			Stale:     true,
		})},
		{"pay", l, checkout.Pay(checkout.PayPage{
			Page: frame(l.T("pay.title", "Sparkasse")), Summary: summary, BankName: "Sparkasse", BankInitials: "S", Degraded: true,
			Fields: []views.Field{
				{Kind: views.KindText, Name: "name", ID: "name", Label: l.T("field.name"), Hint: l.T("field.name.hint"), Required: true,
					Error: l.T("invalid.tooLong", l.T("field.name"), 140)},
				{Kind: views.KindText, Name: "iban", ID: "iban", Label: l.T("field.iban"), Hint: l.T("field.iban.hint", "DE89 3704 0044 0532 0130 00"), Error: l.T("invalid.ibanChecksum")},
				{Kind: views.KindSelect, Name: "country", ID: "country", Label: l.T("field.country"), Options: []views.Option{{Value: "DE", Label: l.Country("DE")}}},
				{Kind: views.KindRadio, Name: "login", ID: "login", Label: l.T("field.login"), Options: []views.Option{
					{Value: "personal", Label: l.T("field.login.personal")}, {Value: "business", Label: l.T("field.login.business")}}},
			},
			Errors:  []views.FieldError{{ID: "name", Message: l.T("invalid.tooLong", l.T("field.name"), 140)}, {ID: "iban", Message: l.T("invalid.ibanChecksum")}},
			Problem: l.T("problem.busy"),
		})},
		{"status", l, checkout.Status(checkout.StatusPage{Page: frame(l.T("status.pending")), Summary: summary, Kind: checkout.StatusPending,
			Heading: l.T("status.pending"), Message: l.T("status.pending.text"), Refresh: 5, RefreshURL: "status", WayBackURL: "back"})},
		{"paid", l, checkout.Status(checkout.StatusPage{Page: frame(l.T("status.paid")), Summary: summary, Kind: checkout.StatusPaid,
			Heading: l.T("status.paid"), Message: l.T("status.paid.text", "Shop"), WayBackURL: "back"})},
		{"error", l, checkout.Error(checkout.ErrorPage{Page: frame(l.T("title.error", l.T("error.linkExpired"))), Status: 410,
			Heading: l.T("error.linkExpired"), Message: l.T("error.linkExpired.text"), WayBackURL: "back", ShopName: "Shop"})},
		{"console-login", staff, console.ConsoleLoginPage(console.ConsoleLogin{ConsolePage: console.ConsolePage{Title: staff.T("console.login.heading")},
			Error: staff.T("console.code.paused", staff.DateTime(time.Date(2026, 11, 24, 9, 5, 7, 0, time.UTC)))})},
		{"console-overview", staff, console.ConsoleOverviewPage(console.ConsoleOverview{
			ConsolePage: console.ConsolePage{Title: staff.T("console.overview"), User: "ann@shop.example", Whose: staff.T("console.operator"), Nav: "overview",
				Operator: true, MayManage: true, MayAudit: true, MayDevelop: true, MayBrand: true},
			Funnel: []console.ConsoleStage{{Label: staff.T("console.funnel.opened"), Count: staff.Number(12345), Share: staff.Percent(1), Percent: 100}},
			Health: console.ConsoleHealth{
				Note: staff.T("console.health.note", staff.T("console.health.24h.long"), int64(10), "50 %", staff.T("console.health.ago", 42)),
				More: staff.T("console.health.more", 20),
				Rows: []console.ConsoleHealthRow{{Bank: console.ConsoleBank{Name: "Sparkasse", Country: "DE"}, Started: staff.Number(1234),
					Success: staff.Percent(0.4), Median: staff.T("console.duration.days", 2), Degraded: true}},
			},
		})},
	}
}
