package console

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/logos"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/rules"
	consoleviews "github.com/paybybank/checkout/views/console"
)

// window is a period the overview sums.
type window struct {
	param string
	span  time.Duration
	step  time.Duration
}

var windows = []window{
	{"24h", 24 * time.Hour, time.Hour},
	{"7d", 7 * 24 * time.Hour, 24 * time.Hour},
	{"30d", 30 * 24 * time.Hour, 24 * time.Hour},
}

// topBanks is how many banks the conversion chart shows.
const topBanks = 10

// scope is whose figures a request sees: the user's own merchant, or for
// an operator the merchant asked for by ?merchant= ("" for every one).
// options is the operator's merchant picker (with allLabel first when
// every merchant may be shown); nil for a merchant's user.
func (c *Console) scope(ec echo.Context, asked, allLabel string) (merchantID string, options []consoleviews.ConsoleOption, err error) {
	s := sessionOf(ec)
	if s.merchant != nil {
		return s.merchant.ID, nil, nil
	}
	if asked != "" {
		if _, ok := c.Merchants.Get(asked); !ok {
			return "", nil, errNotFound
		}
	}
	if allLabel != "" {
		options = append(options, consoleviews.ConsoleOption{Value: "", Label: allLabel, Selected: asked == ""})
	}
	for _, m := range c.Merchants.All() {
		options = append(options, consoleviews.ConsoleOption{Value: m.ID, Label: m.Name + " (" + m.ID + ")", Selected: m.ID == asked})
	}
	return asked, options, nil
}

// showOverview answers GET /console: the funnel, figures and charts of the
// last 24 hours, 7 or 30 days, summed from the ledger's hourly rollups.
func (c *Console) showOverview(ec echo.Context) error {
	w := windows[0]
	for _, x := range windows {
		if ec.QueryParam("range") == x.param {
			w = x
		}
	}
	merchantID, options, err := c.scope(ec, ec.QueryParam("merchant"), t(ec, "console.allMerchants"))
	if err != nil {
		return err
	}
	ctx := ec.Request().Context()
	now := c.Now()
	since := now.Add(-w.span)
	ov, err := c.Ledger.Overview(ctx, merchantID, since, w.step, topBanks)
	if err != nil {
		return err
	}
	l := localizerOf(ec)
	m := consoleviews.ConsoleOverview{
		ConsolePage: c.frame(ec, t(ec, "console.overview"), "overview"),
		Range:       t(ec, "console.range."+w.param+".long"),
		RangeValue:  w.param,
		Merchants:   options,
		Chart:       chart(ov.Buckets, since, now, w.step, l),
		Banks:       c.bankChart(ctx, ov.Banks, l),
	}
	for _, x := range windows {
		q := url.Values{"range": {x.param}}
		if merchantID != "" && options != nil {
			q.Set("merchant", merchantID)
		}
		m.Ranges = append(m.Ranges, consoleviews.ConsoleLink{Label: t(ec, "console.range."+x.param),
			URL: templ.SafeURL(RouteOverview + "?" + q.Encode()), Current: x == w})
	}
	f := ov.Funnel
	for _, s := range []struct {
		key string
		n   int64
	}{{"opened", f.Opened}, {"sent", f.Sent}, {"began", f.Began}, {"paid", f.Paid}} {
		m.Funnel = append(m.Funnel, consoleviews.ConsoleStage{Label: t(ec, "console.funnel."+s.key), Count: count(l, s.n),
			Share: t(ec, "console.funnel.share", percent(l, s.n, f.Opened)), Percent: int(math.Round(share(s.n, f.Opened) * 100))})
	}
	a := ov.Attempts
	m.Figures = []consoleviews.ConsoleFigure{
		{Label: t(ec, "console.fig.conversion"), Value: percent(l, f.Paid, f.Opened), Hint: t(ec, "console.fig.conversion.hint"), TestID: "conversion"},
		{Label: t(ec, "console.fig.canceled"), Value: count(l, a.Canceled), Hint: t(ec, "console.fig.canceled.hint"), TestID: "canceled"},
		{Label: t(ec, "console.fig.abandoned"), Value: count(l, a.Abandoned), Hint: t(ec, "console.fig.abandoned.hint"), TestID: "abandoned"},
		{Label: t(ec, "console.fig.median"), Value: medianPaid(l, ov.PaidTimes), Hint: t(ec, "console.fig.median.hint"), TestID: "median"},
	}
	m.Health = c.health(ctx, ec.QueryParam("health"), func(q url.Values) {
		q.Set("range", w.param)
		if merchantID != "" && options != nil {
			q.Set("merchant", merchantID)
		}
	}, l)
	if merchantID != "" {
		if m.Account, err = c.accountSection(ec, merchantID, options != nil); err != nil {
			return err
		}
	}
	return render(ec, 200, consoleviews.ConsoleOverviewPage(m))
}

// unreceivedSpan is how far back the overview looks for paid orders not
// seen on the shop's account: older ones are the statements page's.
const unreceivedSpan = 90 * 24 * time.Hour

// accountSection is what the overview says of the money on a merchant's
// account, once it uploaded a statement (nil before): orders paid over
// ReceivedWithin bank days ago, since the first day a statement showed
// (in the last unreceivedSpan), not yet seen in one, and refunds sent as
// long ago not yet seen leaving.
func (c *Console) accountSection(ec echo.Context, merchantID string, operator bool) (*consoleviews.ConsoleAccount, error) {
	ctx := ec.Request().Context()
	first, err := c.Ledger.FirstBooked(ctx, merchantID)
	if err != nil || first == "" {
		// No statement yet: nothing is known of the account.
		return nil, err
	}
	now := c.Now()
	from := now.Add(-unreceivedSpan)
	if day, err := time.Parse(time.DateOnly, first); err == nil && day.After(from) {
		from = day
	}
	before := rules.BankDaysBefore(now, cmp.Or(c.ReceivedWithin, 3))
	orders, refunds, err := c.Ledger.Unreceived(ctx, merchantID, from, before)
	if err != nil {
		return nil, err
	}
	l := localizerOf(ec)
	// An operator's addresses name the merchant.
	with := func(q url.Values) string {
		if operator {
			q.Set("merchant", merchantID)
		}
		return queryOf(q)
	}
	within := cmp.Or(c.ReceivedWithin, 3)
	return &consoleviews.ConsoleAccount{
		Unreceived:    t(ec, "console.account.unreceived", l.Number(int64(within)), count(l, int64(orders))),
		Unbooked:      t(ec, "console.account.unbooked", count(l, int64(refunds))),
		Quiet:         orders == 0 && refunds == 0,
		StatementsURL: templ.SafeURL(RouteStatements + with(url.Values{})),
		PaymentsURL:   templ.SafeURL(RoutePayments + with(url.Values{"received": {"no"}})),
		RefundsURL:    templ.SafeURL(RouteRefunds + with(url.Values{"state": {ledger.RefundSent}})),
	}, nil
}

// healthRows is how many of the busiest banks the bank health table
// shows, degraded banks beyond them added.
const healthRows = 20

// health is the bank health table in the window asked for (?health=,
// the last hour by default), from the reading kept in memory; keep adds the
// rest of the overview's query to the window links.
func (c *Console) health(ctx context.Context, asked string, keep func(url.Values), l *i18n.Localizer) consoleviews.ConsoleHealth {
	w, ok := bankhealth.WindowNamed(asked)
	if !ok {
		w = bankhealth.Windows[0]
	}
	var h consoleviews.ConsoleHealth
	for _, x := range bankhealth.Windows {
		q := url.Values{"health": {x.Name}}
		keep(q)
		h.Windows = append(h.Windows, consoleviews.ConsoleLink{Label: l.T("console.health." + x.Name),
			URL: templ.SafeURL(RouteOverview + "?" + q.Encode() + "#health-heading"), Current: x == w})
	}
	s := c.Health.Snapshot()
	if s.At.IsZero() {
		h.Note, h.Empty = l.T("console.health.notYet"), l.T("console.health.notYet")
		return h
	}
	th := c.Health.Thresholds
	h.Note = l.T("console.health.note", l.T("console.health."+w.Name+".long"), th.MinFinished,
		strconv.FormatFloat(th.MinSuccess*100, 'f', -1, 64)+" %", l.T("console.health.ago", int(c.Now().Sub(s.At).Seconds())))
	figures := slices.Clone(s.Figures(w).Banks)
	if len(figures) == 0 {
		h.Empty = l.T("console.health.none")
		return h
	}
	// The busiest first, over every country; degraded banks always.
	slices.SortStableFunc(figures, func(a, b bankhealth.Bank) int { return cmp.Compare(b.Started, a.Started) })
	list := c.bankList(ctx)
	for i, b := range figures {
		if i >= healthRows && !b.Degraded {
			continue
		}
		row := consoleviews.ConsoleHealthRow{Bank: bankOf(list, b.Country, b.BankID), Started: count(l, b.Started),
			Completed: count(l, b.Completed), Canceled: count(l, b.Canceled), Abandoned: count(l, b.Abandoned),
			Open: count(l, b.Open()), Success: percent(l, b.Completed, b.Finished()), Median: l.T("console.fig.none"), Degraded: b.Degraded}
		if b.Completed > 0 && b.MedianToPaid > 0 {
			row.Median = duration(l, b.MedianToPaid)
		}
		h.Rows = append(h.Rows, row)
	}
	if len(figures) > len(h.Rows) {
		h.More = l.T("console.health.more", healthRows)
	}
	return h
}

// share is n ÷ of, 0 when of is 0.
func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// percent is n ÷ of as a percentage with one decimal; a dash when of is 0.
func percent(l *i18n.Localizer, n, of int64) string {
	if of == 0 {
		return l.T("console.fig.none")
	}
	return l.Percent(share(n, of))
}

// count is a count as the reader's language writes it: 12,345 in
// English, 12 345 in Polish.
func count(l *i18n.Localizer, n int64) string { return l.Number(n) }

// medianPaid reads the median time from submit to paid off the rollup's
// buckets, within about 12 % of the true median.
func medianPaid(l *i18n.Localizer, buckets map[int]int64) string {
	if d, ok := ledger.MedianPaid(buckets); ok {
		return duration(l, d)
	}
	return l.T("console.fig.none")
}

// duration is a time span as a person reads it: 850 ms, 42 s, 3 min 5 s,
// 2 h 10 min in the SI's symbols, which every language of the console
// reads; whole days in the reader's words, "3 days", "3 dni".
func duration(l *i18n.Localizer, d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return l.T("console.duration.days", int(d.Hours()/24))
}

// Geometry of the payments chart, in the SVG's own units.
const (
	chartWidth  = 1000.0
	chartBottom = 200.0
	chartTop    = 20.0
)

// chart lays out the payments per step from since to now as stacked bars,
// one per step, empty steps included.
func chart(buckets []ledger.Bucket, since, now time.Time, step time.Duration, l *i18n.Localizer) consoleviews.ConsoleChart {
	c := consoleviews.ConsoleChart{Caption: l.T("console.chart.perHour"), Unit: l.T("console.chart.hour")}
	layout := "15:00"
	if step >= 24*time.Hour {
		c.Caption, c.Unit, layout = l.T("console.chart.perDay"), l.T("console.chart.day"), "Jan 2"
	}
	byStart := map[int64]ledger.Bucket{}
	for _, b := range buckets {
		byStart[b.At.UnixMilli()] = b
	}
	first := since.UTC().Truncate(step)
	var starts []time.Time
	for at := first; !at.After(now); at = at.Add(step) {
		starts = append(starts, at)
	}
	for _, at := range starts {
		c.Max = max(c.Max, byStart[at.UnixMilli()].Started)
	}
	scale := max(c.Max, 1)
	w := chartWidth / float64(len(starts))
	every := max(1, len(starts)/6)
	for i, at := range starts {
		b := byStart[at.UnixMilli()]
		canceled := b.Canceled + b.Abandoned
		bar := consoleviews.ConsoleBar{
			Label: at.Format("2006-01-02 " + layout), Paid: b.Completed, Canceled: canceled, Open: b.Open(),
			X: float64(i)*w + w*0.1, W: w * 0.8,
			PaidN: count(l, b.Completed), CanceledN: count(l, canceled), OpenN: count(l, b.Open()),
		}
		if step >= 24*time.Hour {
			bar.Label = at.Format("2006-01-02")
		}
		height := func(n int64) float64 { return float64(n) / float64(scale) * (chartBottom - chartTop) }
		y := chartBottom
		bar.HPaid = height(bar.Paid)
		y -= bar.HPaid
		bar.YPaid = y
		bar.HCanceled = height(bar.Canceled)
		y -= bar.HCanceled
		bar.YCanceled = y
		bar.HOpen = height(bar.Open)
		y -= bar.HOpen
		bar.YOpen = y
		c.Bars = append(c.Bars, bar)
		if i%every == 0 {
			c.Ticks = append(c.Ticks, consoleviews.ConsoleTick{X: float64(i)*w + w/2, Label: at.Format(layout)})
		}
	}
	return c
}

// bankChart is conversion per bank (paid ÷ payments made) for the busiest
// banks, named as the banks list names them.
func (c *Console) bankChart(ctx context.Context, counts []ledger.BankCounts, l *i18n.Localizer) consoleviews.ConsoleBankChart {
	chart := consoleviews.ConsoleBankChart{Caption: l.T("console.banks.heading")}
	list := c.bankList(ctx)
	for i, b := range counts {
		conv := share(b.Completed, b.Started)
		chart.Rows = append(chart.Rows, consoleviews.ConsoleBankRow{
			Bank: bankOf(list, b.Country, b.BankID), Attempts: count(l, b.Started), Paid: count(l, b.Completed),
			Canceled: count(l, b.Canceled), Abandoned: count(l, b.Abandoned), Conversion: percent(l, b.Completed, b.Started),
			Percent: int(math.Round(conv * 100)), Y: float64(i) * 28,
		})
	}
	return chart
}

// bankList is the banks list if it can be had now; nil otherwise (banks
// are then named by their ids).
func (c *Console) bankList(ctx context.Context) *banks.List {
	if c.Banks == nil {
		return nil
	}
	list, err := c.Banks.List(ctx)
	if err != nil {
		return nil
	}
	return list
}

// bankOf is a bank's name and logo; its id when the list does not know it.
func bankOf(list *banks.List, country, id string) consoleviews.ConsoleBank {
	if id == "" {
		return consoleviews.ConsoleBank{}
	}
	b := consoleviews.ConsoleBank{Name: id, Country: country}
	if list != nil {
		if bank, ok := list.Bank(country, id); ok {
			b.Name = bank.Name
			b.LogoURL = logos.BankPath(bank.LogoURL)
		} else if name, ok := list.Name(country, id); ok {
			// A bank the provider dropped from its list.
			b.Name = name
		}
	}
	return b
}
