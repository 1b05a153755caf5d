package console

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
	consoleviews "github.com/paybybank/checkout/views/console"
	refundviews "github.com/paybybank/checkout/views/console/refunds"
)

// pageSize is how many payments a page of the list shows.
const pageSize = 50

// statuses are the statuses the list can be filtered by, in the order a
// payment passes through them.
var statuses = []pisclient.Status{pisclient.StatusNotFound, pisclient.StatusInProgress, pisclient.StatusAccepted,
	pisclient.StatusCompleted, pisclient.StatusCanceled}

func when(l *i18n.Localizer, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return l.DateTime(t) + " UTC"
}

// whenBare is when without its zone, where the column, the sentence or the
// file says it: "Created (UTC)", "until %s (UTC)", a CSV's cells.
func whenBare(l *i18n.Localizer, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return l.DateTime(t)
}

// amount is an order's amount as the language writes it.
func amount(l *i18n.Localizer, value, currency string) string {
	if currency == rules.Currency {
		return l.Amount(value)
	}
	return value + " " + currency
}

// listQuery is the list's filters as the request gave them: kept as typed,
// so that the form shows them back even when wrong.
type listQuery struct {
	q, status, received, bank, country, from, to, merchant, after string
}

func listQueryOf(ec echo.Context) listQuery {
	get := func(k string) string { return strings.TrimSpace(ec.QueryParam(k)) }
	return listQuery{q: get("q"), status: get("status"), received: get("received"), bank: get("bank"), country: get("country"),
		from: get("from"), to: get("to"), merchant: get("merchant"), after: get("after")}
}

// values are the filters as a URL's query, without the cursor.
func (q listQuery) values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"q": q.q, "status": q.status, "received": q.received, "bank": q.bank, "country": q.country,
		"from": q.from, "to": q.to, "merchant": q.merchant} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v
}

// filter reads the query into the ledger's filter, with a message for
// each field that cannot be read.
func (q listQuery) filter(ec echo.Context, merchantID string) (ledger.OrderFilter, ledger.OrderCursor, map[string]string) {
	f := ledger.OrderFilter{Merchant: merchantID, Prefix: q.q, BankID: q.bank}
	errs := map[string]string{}
	if q.status != "" {
		if !slices.Contains(statuses, pisclient.Status(q.status)) {
			errs["status"] = t(ec, "console.filters.badStatus")
		}
		f.Status = q.status
	}
	if q.received != "" {
		if q.received != "yes" && q.received != "no" {
			errs["received"] = t(ec, "console.filters.badReceived")
		}
		f.Received = q.received
	}
	if q.country != "" {
		if rules.CheckCountryCode("country", q.country) != nil {
			errs["country"] = t(ec, "console.filters.badCountry")
		}
		f.Country = q.country
	}
	day := func(field, s, label string) time.Time {
		if s == "" {
			return time.Time{}
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			errs[field] = t(ec, "console.filters.badDate", label)
		}
		return d
	}
	f.From = day("from", q.from, t(ec, "console.filters.from"))
	if to := day("to", q.to, t(ec, "console.filters.to")); !to.IsZero() {
		f.To = to.Add(24 * time.Hour)
		if !f.From.IsZero() && f.To.Before(f.From.Add(time.Nanosecond)) && errs["from"] == "" {
			errs["to"] = t(ec, "console.filters.badRange")
		}
	}
	after, err := ledger.ParseOrderCursor(q.after)
	if err != nil {
		errs["after"] = t(ec, "console.filters.badCursor")
	}
	return f, after, errs
}

// showPayments answers GET /console/payments: the orders newest change
// first, pageSize at a time, narrowed by the filters.
func (c *Console) showPayments(ec echo.Context) error {
	q := listQueryOf(ec)
	merchantID, options, err := c.scope(ec, q.merchant, "")
	if err != nil {
		return err
	}
	if options == nil {
		q.merchant = ""
	}
	ctx := ec.Request().Context()
	f, after, errs := q.filter(ec, merchantID)
	list := c.bankList(ctx)
	m := consoleviews.ConsolePayments{
		ConsolePage: c.frame(ec, t(ec, "console.payments"), "payments"),
		Action:      templ.SafeURL(RoutePayments), Query: q.q, From: q.from, To: q.to, Merchants: options,
		Operator: options != nil, Errors: errs, Searched: len(q.values()) > 0,
	}
	for _, s := range statuses {
		m.Statuses = append(m.Statuses, consoleviews.ConsoleOption{Value: string(s), Label: statusOf(localizerOf(ec), string(s)).Word, Selected: q.status == string(s)})
	}
	for _, r := range []string{"yes", "no"} {
		m.Received = append(m.Received, consoleviews.ConsoleOption{Value: r, Label: t(ec, "console.filters.received."+r), Selected: q.received == r})
	}
	seen, err := c.Ledger.BanksSeen(ctx, merchantID, c.Now().Add(-90*24*time.Hour))
	if err != nil {
		return err
	}
	countries := map[string]bool{}
	for _, b := range seen {
		bank := bankOf(list, b.Country, b.BankID)
		m.Banks = append(m.Banks, consoleviews.ConsoleOption{Value: b.BankID, Label: bank.Name + " (" + b.Country + ")", Selected: q.bank == b.BankID})
		countries[b.Country] = true
	}
	if q.bank != "" && !slices.ContainsFunc(m.Banks, func(o consoleviews.ConsoleOption) bool { return o.Value == q.bank }) {
		m.Banks = append(m.Banks, consoleviews.ConsoleOption{Value: q.bank, Label: q.bank, Selected: true})
	}
	if q.country != "" {
		countries[q.country] = true
	}
	for _, code := range slices.Sorted(maps.Keys(countries)) {
		m.Countries = append(m.Countries, consoleviews.ConsoleOption{Value: code, Label: code, Selected: q.country == code})
	}
	if len(errs) > 0 {
		return render(ec, http.StatusUnprocessableEntity, consoleviews.ConsolePaymentsPage(m))
	}
	orders, err := c.Ledger.ListOrders(ctx, f, after, pageSize+1)
	if err != nil {
		return err
	}
	base := q.values()
	if len(orders) > pageSize {
		orders = orders[:pageSize]
		last := orders[len(orders)-1]
		next := q.values()
		next.Set("after", ledger.OrderCursor{At: last.Updated, MerchantID: last.MerchantID, OrderID: last.OrderID}.String())
		m.Next = templ.SafeURL(RoutePayments + "?" + next.Encode())
	}
	if q.after != "" {
		m.First = templ.SafeURL(RoutePayments + "?" + base.Encode())
	}
	m.CSV = templ.SafeURL(RouteCSV + "?" + base.Encode())
	for _, o := range orders {
		row := consoleviews.ConsolePaymentRow{
			OrderID: o.OrderID, URL: c.orderURL(o.MerchantID, o.OrderID, options != nil), Amount: amount(localizerOf(ec), o.Amount, o.Currency),
			Status: statusOf(localizerOf(ec), o.Status), Paid: yesNo(localizerOf(ec), !o.Paid.IsZero()), Bank: bankOf(list, o.Country, o.BankID), Country: o.Country,
			Created: whenBare(localizerOf(ec), o.Created), Updated: whenBare(localizerOf(ec), o.Updated), Refunded: sayRefunded(localizerOf(ec), o),
			Received: o.ReceivedOn,
		}
		if options != nil {
			row.Merchant = o.MerchantID
		}
		m.Rows = append(m.Rows, row)
	}
	return render(ec, http.StatusOK, consoleviews.ConsolePaymentsPage(m))
}

// orderURL is an order's console page; an operator's names the merchant.
func (c *Console) orderURL(merchantID, orderID string, operator bool) templ.SafeURL {
	u := RoutePayments + "/" + url.PathEscape(orderID)
	if operator {
		u += "?" + url.Values{"merchant": {merchantID}}.Encode()
	}
	return templ.SafeURL(u)
}

func yesNo(l *i18n.Localizer, b bool) string {
	if b {
		return l.T("console.yes")
	}
	return l.T("console.no")
}

// statusOf is a status as a badge: its word and colour.
func statusOf(l *i18n.Localizer, status string) consoleviews.ConsoleStatus {
	s := consoleviews.ConsoleStatus{Code: status, Word: l.T("console.status." + status)}
	switch pisclient.Status(status) {
	case "":
		s.Word, s.Tone, s.Code = l.T("console.status.none"), "processing", "–"
	case pisclient.StatusNotFound, pisclient.StatusInProgress:
		s.Tone = "pending"
	case pisclient.StatusAccepted:
		s.Tone = "accepted"
	case pisclient.StatusCompleted:
		s.Tone = "paid"
	case pisclient.StatusCanceled:
		s.Tone = "canceled"
	default:
		s.Word, s.Tone = l.T("console.status.other", status), "processing"
	}
	return s
}

// csvBatch is how many orders an export reads at a time.
const csvBatch = 1000

// exportPayments answers GET /console/payments.csv: every order the
// filters select, as RFC 4180 CSV. A cell that a spreadsheet would run as a
// formula is prefixed with a quote.
func (c *Console) exportPayments(ec echo.Context) error {
	q := listQueryOf(ec)
	merchantID, options, err := c.scope(ec, q.merchant, "")
	if err != nil {
		return err
	}
	f, _, errs := q.filter(ec, merchantID)
	if len(errs) > 0 {
		return ec.Redirect(http.StatusSeeOther, RoutePayments+"?"+q.values().Encode())
	}
	ctx := ec.Request().Context()
	list := c.bankList(ctx)
	// A CSV file is read by programs: English and ISO times, whatever the
	// person's language.
	english := i18n.Staff("en")
	h := ec.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="payments-`+c.Now().UTC().Format("2006-01-02")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	ec.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(ec.Response())
	w.UseCRLF = true
	header := []string{"order_id", "amount", "currency", "status", "paid", "paid_at", "bank_id", "bank_name", "country", "created_at", "updated_at",
		"refunded_amount", "received_at"}
	if options != nil {
		header = append([]string{"merchant_id"}, header...)
	}
	w.Write(header)
	var after ledger.OrderCursor
	for {
		orders, err := c.Ledger.ListOrders(ctx, f, after, csvBatch)
		if err != nil {
			// The answer has begun: the file stops short; the log says why.
			c.log(ec).Error("console: CSV export stopped", "err", err)
			break
		}
		for _, o := range orders {
			row := []string{o.OrderID, o.Amount, o.Currency, o.Status, yesNo(english, !o.Paid.IsZero()), whenBare(english, o.Paid),
				o.BankID, bankOf(list, o.Country, o.BankID).Name, o.Country, whenBare(english, o.Created), whenBare(english, o.Updated),
				o.Refunded(), o.ReceivedOn}
			if options != nil {
				row = append([]string{o.MerchantID}, row...)
			}
			for i := range row {
				row[i] = safeCell(row[i])
			}
			w.Write(row)
		}
		if len(orders) < csvBatch {
			break
		}
		last := orders[len(orders)-1]
		after = ledger.OrderCursor{At: last.Updated, MerchantID: last.MerchantID, OrderID: last.OrderID}
		w.Flush()
	}
	w.Flush()
	return w.Error()
}

// safeCell keeps a spreadsheet from running a cell as a formula: one that
// starts with =, +, -, @ (or a tab or carriage return, which some read past)
// gets a leading quote.
func safeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// orderIDOf reads the order id from the escaped path after the payments
// route, decoded exactly once, with suffix (an action) removed.
func orderIDOf(ec echo.Context, suffix string) (string, bool) {
	raw := strings.TrimPrefix(ec.Request().URL.EscapedPath(), RoutePayments+"/")
	if suffix != "" {
		var ok bool
		if raw, ok = strings.CutSuffix(raw, suffix); !ok {
			return "", false
		}
	}
	id, err := url.PathUnescape(raw)
	if err != nil || rules.CheckOrderID(id) != nil {
		return "", false
	}
	return id, true
}

// orderMerchant is the merchant whose order the request names: the user's
// own, or for an operator the one asked for, or else the only merchant with
// an order of that id. several is set when more merchants have one: the
// operator has to choose.
func (c *Console) orderMerchant(ec echo.Context, orderID, asked string) (m *merchant.Merchant, several bool, err error) {
	if own := sessionOf(ec).merchant; own != nil {
		return own, false, nil
	}
	if asked == "" {
		ids, err := c.Ledger.MerchantsWithOrder(ec.Request().Context(), orderID)
		if err != nil {
			return nil, false, err
		}
		if len(ids) > 1 {
			return nil, true, nil
		}
		if len(ids) == 1 {
			asked = ids[0]
		}
	}
	m, ok := c.Merchants.Get(asked)
	if !ok {
		return nil, false, errNotFound
	}
	return m, false, nil
}

// showOrder answers GET /console/payments/{order id}: the order, each
// payment with its status history, its refunds, each event with every
// delivery try.
func (c *Console) showOrder(ec echo.Context) error {
	id, ok := orderIDOf(ec, "")
	if !ok {
		return errNotFound
	}
	m, several, err := c.orderMerchant(ec, id, ec.QueryParam("merchant"))
	if several {
		// The list tells the merchants' orders apart.
		return ec.Redirect(http.StatusSeeOther, RoutePayments+"?"+url.Values{"q": {id}}.Encode())
	}
	if err != nil {
		return err
	}
	page, err := c.orderView(ec, m, id, nil, "")
	if err != nil {
		return err
	}
	switch ec.QueryParam("checked") {
	case "known":
		page.Notice = t(ec, "console.order.checked", page.Status.Word)
	case "unknown":
		page.Notice, page.NoticeError = t(ec, "console.order.checkedUnknown"), true
	}
	if ec.QueryParam("busy") == "1" {
		page.Notice = t(ec, "console.order.busy")
	}
	return render(ec, http.StatusOK, consoleviews.ConsoleOrderPage(page))
}

// orderView is an order's page: the order, its payments, its refunds and
// its events. The refund form is closed unless asked for (?refund=1), or
// comes back as typed (form) with why it was refused (problem).
func (c *Console) orderView(ec echo.Context, m *merchant.Merchant, id string, form *refundviews.Form, problem string) (consoleviews.ConsoleOrder, error) {
	ctx := ec.Request().Context()
	o, attempts, err := c.Ledger.Order(ctx, m.ID, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return consoleviews.ConsoleOrder{}, errNotFound
	}
	if err != nil {
		return consoleviews.ConsoleOrder{}, err
	}
	ids := make([]string, len(attempts))
	for i, a := range attempts {
		ids[i] = a.UpstreamID
	}
	history, err := c.Ledger.History(ctx, ids)
	if err != nil {
		return consoleviews.ConsoleOrder{}, err
	}
	events, err := c.Ledger.OrderEvents(ctx, m.ID, id)
	if err != nil {
		return consoleviews.ConsoleOrder{}, err
	}
	operator := sessionOf(ec).user.Operator
	v := payment.Describe(o, attempts)
	page := consoleviews.ConsoleOrder{
		ConsolePage: c.frame(ec, t(ec, "console.order.heading", id), "payments"),
		OrderID:     id, Amount: amount(localizerOf(ec), o.Amount, o.Currency), Status: statusOf(localizerOf(ec), string(v.Status)),
		Paid: yesNo(localizerOf(ec), v.Paid), Final: yesNo(localizerOf(ec), v.Final()), Created: whenBare(localizerOf(ec), o.Created), Updated: whenBare(localizerOf(ec), o.Updated),
		Check: templ.SafeURL(RoutePayments + "/" + url.PathEscape(id) + "/check"), Back: templ.SafeURL(RoutePayments),
	}
	if v.Attempt == nil {
		page.Status = statusOf(localizerOf(ec), "")
	}
	switch {
	case o.ReceivedOn != "":
		page.Received, page.ReceivedAfter = around(ec, "console.order.receivedOn")
		page.ReceivedOn = o.ReceivedOn
	case v.Paid:
		page.Received = t(ec, "console.order.notReceived")
	}
	if !v.Known {
		page.Status = consoleviews.ConsoleStatus{Word: t(ec, "console.status.unknown"), Tone: "processing", Code: string(v.Status)}
	}
	if operator {
		page.Merchant, page.MerchantID = m.Name+" ("+m.ID+")", m.ID
	}
	list := c.bankList(ctx)
	for _, a := range attempts {
		ca := consoleviews.ConsoleAttempt{Seq: strconv.Itoa(a.Seq), Bank: bankOf(list, a.Country, a.BankID), UpstreamID: a.UpstreamID,
			Amount: amount(localizerOf(ec), a.Amount, a.Currency), Status: statusOf(localizerOf(ec), a.Status)}
		for _, s := range history[a.UpstreamID] {
			ca.History = append(ca.History, consoleviews.ConsoleStep{At: whenBare(localizerOf(ec), s.At), State: string(s.State), Status: s.Status})
		}
		page.Attempts = append(page.Attempts, ca)
	}
	redelivered := ec.QueryParam("redelivered")
	for _, e := range events {
		ce := consoleviews.ConsoleEvent{ID: e.ID, Type: e.Type, Created: whenBare(localizerOf(ec), e.Created), Delivery: t(ec, "console.delivery."+e.Delivery),
			Redeliver: templ.SafeURL("/console/events/" + url.PathEscape(e.ID) + "/redeliver"), Highlight: e.ID == redelivered}
		var body struct {
			Data struct {
				Status string `json:"status"`
			} `json:"data"`
		}
		if json.Unmarshal(e.Body, &body) == nil {
			ce.Status = body.Data.Status
		}
		for _, d := range e.Deliveries {
			ce.Tries = append(ce.Tries, tryOf(ec, d))
		}
		if ce.Highlight && len(e.Deliveries) > 0 {
			last := tryOf(ec, e.Deliveries[len(e.Deliveries)-1])
			page.Notice, page.NoticeError = t(ec, "console.order.redelivered", last.Code, last.Duration), !last.OK
			if !last.OK {
				page.Notice = t(ec, "console.order.redeliverFailed", last.Error)
			}
		}
		page.Events = append(page.Events, ce)
	}
	section, err := c.orderRefunds(ec, m, o, operator, ec.QueryParam("refund") == "1", form)
	if err != nil {
		return page, err
	}
	section.Problem = problem
	// An order never paid has nothing to refund, and says nothing of it
	// unless asked.
	if section.Refunded != "" || len(section.Rows) > 0 || form != nil {
		page.Refunds = refundviews.OrderSection(section)
	}
	return page, nil
}

// tryOf is a delivery try as the page shows it.
func tryOf(ec echo.Context, d ledger.Delivery) consoleviews.ConsoleTry {
	tr := consoleviews.ConsoleTry{N: strconv.Itoa(d.Try), At: whenBare(localizerOf(ec), d.At), Duration: duration(localizerOf(ec), d.Duration), Error: d.Error,
		OK: d.Code >= 200 && d.Code <= 299, Code: strconv.Itoa(d.Code)}
	if d.Code == 0 {
		tr.Code = "–"
		if tr.Error == "" {
			tr.Error = t(ec, "console.delivery.noAnswer")
		}
	}
	return tr
}

// orderAction answers a POST under an order's address, each allowed by
// its own action: /refunds makes a refund, /check is Check status now.
func (c *Console) orderAction(ec echo.Context) error {
	action, do := merchant.Operate, c.checkOrder
	if strings.HasSuffix(ec.Request().URL.EscapedPath(), refundsSuffix) {
		action, do = merchant.Refund, c.makeRefund
	}
	if s := sessionOf(ec); !s.may(action) {
		return errRole(ec, action, s.role)
	}
	return do(ec)
}

// checkOrder answers POST /console/payments/{order id}/check: one read
// from the provider, recorded and notified as the follower would, then
// the order's page again.
func (c *Console) checkOrder(ec echo.Context) error {
	id, ok := orderIDOf(ec, "/check")
	if !ok {
		return errNotFound
	}
	m, several, err := c.orderMerchant(ec, id, ec.FormValue("merchant"))
	if several {
		// The order page's form always names the merchant.
		return errNotFound
	}
	if err != nil {
		return err
	}
	v, err := c.Orders.Status(ec.Request().Context(), m, id)
	if errors.Is(err, payment.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	checked := "known"
	if !v.Known {
		checked = "unknown"
	}
	c.log(ec).Info("console: status checked", "merchant", m.ID, "email", maskEmail(sessionOf(ec).user.Email), "status", v.Status)
	return ec.Redirect(http.StatusSeeOther, c.orderPage(m.ID, id, url.Values{"checked": {checked}}))
}

// orderPage is an order's page with query values added (an operator's
// names the merchant).
func (c *Console) orderPage(merchantID, orderID string, q url.Values) string {
	if q == nil {
		q = url.Values{}
	}
	q.Set("merchant", merchantID)
	return RoutePayments + "/" + url.PathEscape(orderID) + "?" + q.Encode()
}

// redeliver answers POST /console/events/{id}/redeliver: a new try of the
// event now, recorded like every other, then the order's page showing it.
func (c *Console) redeliver(ec echo.Context) error {
	id := ec.Param("id")
	var m *merchant.Merchant
	if own := sessionOf(ec).merchant; own != nil {
		m = own
	} else if found, ok := c.Merchants.Get(ec.FormValue("merchant")); ok {
		m = found
	} else {
		return errNotFound
	}
	ctx := ec.Request().Context()
	e, err := c.Ledger.Event(ctx, m.ID, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	back := url.Values{"redelivered": {e.ID}}
	if m.WebhookURL == "" {
		back = url.Values{}
	} else {
		claimed, err := c.Ledger.ClaimEvent(ctx, m.ID, id, c.Webhooks.Owner, time.Minute)
		switch {
		case errors.Is(err, ledger.ErrEventBusy):
			back = url.Values{"busy": {"1"}}
		case err != nil:
			return err
		default:
			d := c.Webhooks.SendNow(ctx, m, claimed)
			c.log(ec).Info("console: event redelivered", "merchant", m.ID, "event", e.ID, "code", d.Code,
				"email", maskEmail(sessionOf(ec).user.Email))
		}
	}
	return ec.Redirect(http.StatusSeeOther, c.orderPage(m.ID, e.OrderID, back)+"#event-"+url.PathEscape(e.ID))
}
