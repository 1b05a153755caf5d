package console

import (
	"context"
	"encoding/csv"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
	consoleviews "github.com/paybybank/checkout/views/console"
	linkviews "github.com/paybybank/checkout/views/console/links"
)

// Routes of payment links: a stored request for money a person makes
// here and shares by address, QR code or e-mail.
const (
	RouteLinks      = "/console/links"
	RouteLinksCSV   = "/console/links.csv"
	RouteLink       = "/console/links/:id"
	RouteLinkCancel = "/console/links/:id/cancel"
	RouteLinkSend   = "/console/links/:id/send"
	RouteLinkSVG    = "/console/links/:id/qr.svg"
	RouteLinkPNG    = "/console/links/:id/qr.png"
)

// linkRoutes registers the payment links' routes: everyone reads; those
// who operate (owner, developer, support) make, send and cancel.
func (c *Console) linkRoutes(in func(method, path string, action merchant.Action, h echo.HandlerFunc)) {
	in(http.MethodGet, RouteLinks, merchant.Read, c.showLinks)
	in(http.MethodPost, RouteLinks, merchant.Operate, c.makeLink)
	in(http.MethodGet, RouteLinksCSV, merchant.Read, c.exportLinks)
	in(http.MethodGet, RouteLink, merchant.Read, c.showLink)
	in(http.MethodPost, RouteLinkCancel, merchant.Operate, c.cancelLink)
	in(http.MethodPost, RouteLinkSend, merchant.Operate, c.sendLink)
	in(http.MethodGet, RouteLinkSVG, merchant.Read, c.linkQR(false))
	in(http.MethodGet, RouteLinkPNG, merchant.Read, c.linkQR(true))
}

// linkScope is the merchant whose links a request is about: the person's
// own, or the one an operator asks for (the first when none); options are
// an operator's choices.
func (c *Console) linkScope(ec echo.Context, asked string) (*merchant.Merchant, []consoleviews.ConsoleOption, error) {
	id, options, err := c.scope(ec, asked, "")
	if err != nil {
		return nil, nil, err
	}
	if id == "" && len(options) > 0 {
		id = options[0].Value
		options[0].Selected = true
	}
	m, ok := c.Merchants.Get(id)
	if !ok {
		return nil, nil, errNotFound
	}
	return m, options, nil
}

// linkQuery is the query of an operator's address about m; "" for a
// merchant's person.
func linkQuery(m *merchant.Merchant, options []consoleviews.ConsoleOption, extra url.Values) string {
	q := merchantQuery(m, options, extra)
	if q == "" {
		return ""
	}
	return "?" + q
}

// stateOf is a link's state in the person's language.
func linkStateWord(ec echo.Context, state string) string { return t(ec, "console.links.state."+state) }

// showLinks answers GET /console/links: the form, and the merchant's links
// newest first, filtered by state and searched in descriptions and
// references.
func (c *Console) showLinks(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	return c.linksPage(ec, m, options, http.StatusOK, c.emptyForm(ec, m, options))
}

// emptyForm is the form as it first shows: 30 days, single-use, in the
// payer's own language (their browser's).
func (c *Console) emptyForm(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption) linkviews.Form {
	f := linkviews.Form{ExpiresDays: "30", Kind: ledger.LinkSingle}
	if options != nil {
		f.Merchant = m.ID
	}
	return f
}

func (c *Console) linksPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, status int, form linkviews.Form) error {
	l := localizerOf(ec)
	s := sessionOf(ec)
	q := strings.TrimSpace(ec.QueryParam("q"))
	state := ec.QueryParam("state")
	page := linkviews.List{ConsolePage: c.frame(ec, t(ec, "console.links"), "links"), Merchants: options,
		MayMake: s.may(merchant.Operate), Query: q, Searched: q != "" || state != ""}
	page.Scripts = []string{c.Assets.CopyJS}
	if options != nil {
		page.Merchant = m.ID
	}
	form.MailReady = c.Links.CanMail()
	if form.Errors == nil {
		form.Errors = map[string]string{}
	}
	form.Languages = append(form.Languages, consoleviews.ConsoleOption{Value: "", Label: t(ec, "console.links.langBrowser"), Selected: form.Lang == ""})
	for _, ch := range i18n.Choices {
		form.Languages = append(form.Languages, consoleviews.ConsoleOption{Value: ch.Code, Label: ch.Name, Selected: ch.Code == form.Lang})
	}
	page.Form = form
	known := false
	for _, st := range ledger.LinkStates {
		page.States = append(page.States, consoleviews.ConsoleOption{Value: st, Label: linkStateWord(ec, st), Selected: st == state})
		known = known || st == state
	}
	if state != "" && !known {
		page.StateError, state = t(ec, "console.filters.badStatus"), ""
	}
	filter := url.Values{}
	for k, v := range map[string]string{"q": q, "state": state} {
		if v != "" {
			filter.Set(k, v)
		}
	}
	if options != nil {
		filter.Set("merchant", m.ID)
	}
	page.CSV = templ.SafeURL(RouteLinksCSV + "?" + filter.Encode())
	after, err := ledger.ParseCursor(ec.QueryParam("after"))
	if err != nil {
		after = ledger.Cursor{}
	}
	list, err := c.Ledger.ListLinks(ec.Request().Context(), ledger.LinkFilter{Merchant: m.ID, State: state, Query: q}, after, pageSize+1)
	if err != nil {
		return err
	}
	if len(list) > pageSize {
		list = list[:pageSize]
		last := list[len(list)-1]
		next := url.Values{}
		for k, v := range filter {
			next[k] = v
		}
		next.Set("after", ledger.Cursor{At: last.Created, ID: last.ID}.String())
		page.Next = templ.SafeURL(RouteLinks + "?" + next.Encode())
	}
	if after.ID != "" {
		page.First = templ.SafeURL(RouteLinks + "?" + filter.Encode())
	}
	now := c.Now()
	for _, p := range list {
		st := p.State(now)
		row := linkviews.Row{URL: templ.SafeURL(RouteLinks + "/" + p.ID + linkQuery(m, options, nil)), Reference: p.Reference,
			Description: p.Description, Amount: amount(l, p.Amount, p.Currency), State: st, StateWord: linkStateWord(ec, st),
			Kind: t(ec, "console.links.kind."+p.Kind), Payments: l.Number(int64(p.Payments)), Created: whenBare(l, p.Created), Expires: when(l, p.Expires)}
		page.Rows = append(page.Rows, row)
	}
	return render(ec, status, linkviews.ListPage(page))
}

// makeLink answers POST /console/links: the link is made and its page
// shown, or the form comes back with every refusal beside its field and
// everything typed.
func (c *Console) makeLink(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	if m.Disabled() {
		return settings.ErrDisabled
	}
	form := linkviews.Form{Amount: ec.FormValue("amount"), Description: ec.FormValue("description"), Reference: ec.FormValue("reference"),
		Email: ec.FormValue("email"), Lang: ec.FormValue("lang"), ExpiresDays: ec.FormValue("expires_in_days"),
		ExpiresHours: ec.FormValue("expires_in_hours"), Kind: ec.FormValue("kind"), MaxPayments: ec.FormValue("max_payments"),
		Errors: map[string]string{}}
	if options != nil {
		form.Merchant = m.ID
	}
	d := links.Draft{Amount: form.Amount, Description: form.Description, Reference: form.Reference, Email: form.Email,
		Lang: form.Lang, Kind: form.Kind, MaxPayments: form.MaxPayments}
	if !c.Links.CanMail() {
		d.Email = ""
	}
	var refused []*merchant.FieldError
	switch hours, days := strings.TrimSpace(form.ExpiresHours), strings.TrimSpace(form.ExpiresDays); {
	case hours != "":
		// Checked before any arithmetic: a huge number of hours must not
		// wrap around to a short link.
		n, err := strconv.Atoi(hours)
		d.ExpiryField = "expires_in_hours"
		if err != nil || n < 1 || time.Duration(n) > links.MaxExpiry/time.Hour {
			refused = append(refused, merchant.Refuse("expires_in_hours", "from 1 hour to 365 days").Says("expiry"))
		} else {
			d.Expiry = time.Duration(n) * time.Hour
		}
	case days != "":
		n, err := strconv.Atoi(days)
		d.ExpiryField = "expires_in_days"
		if err != nil || n < 1 || time.Duration(n) > links.MaxExpiry/(24*time.Hour) {
			refused = append(refused, merchant.Refuse("expires_in_days", "from 1 hour to 365 days").Says("expiry"))
		} else {
			d.Expiry = time.Duration(n) * 24 * time.Hour
		}
	}
	made, err := links.Made{}, error(nil)
	if len(refused) == 0 {
		made, err = c.Links.Make(ec.Request().Context(), actor(ec), m, d)
	}
	var refusal *links.Refusal
	var taken *ledger.ReferenceTakenError
	var limit *mailer.LimitError
	status := http.StatusUnprocessableEntity
	switch {
	case len(refused) > 0:
		if _, cerr := links.Check(d, c.Now()); errors.As(cerr, &refusal) {
			refusal.Fields = append(refusal.Fields, refused...)
		} else {
			refusal = &links.Refusal{Fields: refused}
		}
	case errors.As(err, &refusal):
	case errors.As(err, &limit):
		// Nothing was made: the form comes back as typed, saying why.
		status = http.StatusTooManyRequests
		refusal = &links.Refusal{}
		form.Errors["email"] = c.mailLimit(ec, limit)
		form.Summary = append(form.Summary, linkviews.FieldError{ID: "email", Message: t(ec, "console.links.email") + ": " + form.Errors["email"]})
	case errors.As(err, &taken):
		status = http.StatusConflict
		refusal = &links.Refusal{Fields: []*merchant.FieldError{merchant.Refuse("reference", "taken").Says("referenceTaken", strings.TrimSpace(form.Reference))}}
		form.Taken = templ.SafeURL(RouteLinks + "/" + taken.LinkID + linkQuery(m, options, nil))
		if taken.OrderID != "" {
			form.Taken = c.orderURL(m.ID, taken.OrderID, options != nil)
		}
	case err != nil:
		return err
	default:
		q := url.Values{"made": {"1"}}
		switch {
		case made.Emailed:
			q.Set("emailed", "1")
		case made.MailErr != nil:
			c.log(ec).Warn("console: a payment link's e-mail failed", "merchant", m.ID, "link", made.Link.ID, "err", made.MailErr)
			q.Set("emailed", "0")
		}
		c.log(ec).Info("console: payment link made", "merchant", m.ID, "link", made.Link.ID, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, RouteLinks+"/"+made.Link.ID+linkQuery(m, options, q))
	}
	for _, f := range formFields {
		if fe := refusal.Field(f.name); fe != nil {
			msg := reasonOf(ec, fe)
			form.Errors[f.name] = msg
			form.Summary = append(form.Summary, linkviews.FieldError{ID: f.name, Message: t(ec, f.label) + ": " + msg})
		}
	}
	return c.linksPage(ec, m, options, status, form)
}

// formFields are the form's fields in its order, with their labels: the
// error summary names each refusal by its field's label.
var formFields = []struct{ name, label string }{
	{"amount", "console.links.amount"}, {"reference", "console.links.reference"}, {"description", "console.links.description"},
	{"kind", "console.links.kind"}, {"max_payments", "console.links.max"}, {"lang", "console.links.lang"},
	{"expires_in_days", "console.links.days"}, {"expires_in_hours", "console.links.hours"}, {"email", "console.links.email"},
}

// theLink is the link a request names, of the person's merchant, or for an
// operator of whichever merchant has it.
func (c *Console) theLink(ec echo.Context) (ledger.PaymentLink, *merchant.Merchant, []consoleviews.ConsoleOption, error) {
	id := ec.Param("id")
	if !links.ValidID(id) {
		return ledger.PaymentLink{}, nil, nil, errNotFound
	}
	ctx := ec.Request().Context()
	s := sessionOf(ec)
	var p ledger.PaymentLink
	var err error
	if s.merchant != nil {
		p, err = c.Ledger.Link(ctx, s.merchant.ID, id)
	} else {
		p, err = c.Ledger.LinkByID(ctx, id)
	}
	if errors.Is(err, ledger.ErrLinkNotFound) {
		return p, nil, nil, errNotFound
	}
	if err != nil {
		return p, nil, nil, err
	}
	m, options, err := c.linkScope(ec, p.MerchantID)
	if err != nil {
		return p, nil, nil, err
	}
	return p, m, options, nil
}

// showLink answers GET /console/links/{id}: the link's address to copy,
// its QR code, state and facts, Send and Cancel, its funnel and orders.
func (c *Console) showLink(ec echo.Context) error {
	p, m, options, err := c.theLink(ec)
	if err != nil {
		return err
	}
	page, err := c.linkPage(ec, p, m, options)
	if err != nil {
		return err
	}
	switch {
	case ec.QueryParam("made") == "1" && ec.QueryParam("emailed") == "1":
		page.Notice = t(ec, "console.link.madeEmailed")
	case ec.QueryParam("made") == "1" && ec.QueryParam("emailed") == "0":
		page.Notice, page.NoticeError = t(ec, "console.link.madeNotEmailed"), true
	case ec.QueryParam("made") == "1":
		page.Notice = t(ec, "console.link.made")
	case ec.QueryParam("sent") == "1":
		page.Notice = t(ec, "console.link.sent")
	case ec.QueryParam("cancelled") == "1":
		page.Notice = t(ec, "console.link.cancelled")
	}
	return render(ec, http.StatusOK, linkviews.LinkPage(page))
}

// maxLinkOrders bounds the orders a link's page lists.
const maxLinkOrders = 100

func (c *Console) linkPage(ec echo.Context, p ledger.PaymentLink, m *merchant.Merchant, options []consoleviews.ConsoleOption) (linkviews.Link, error) {
	l := localizerOf(ec)
	ctx := ec.Request().Context()
	now := c.Now()
	st := p.State(now)
	base := RouteLinks + "/" + p.ID
	query := linkQuery(m, options, nil)
	page := linkviews.Link{ConsolePage: c.frame(ec, t(ec, "console.link.heading", p.Reference), "links"), Reference: p.Reference,
		Address: c.Links.URL(p.ID), State: st, StateWord: linkStateWord(ec, st), Reusable: p.Kind == ledger.LinkReusable,
		Payments: l.Number(int64(p.Payments)), Paid: amount(l, p.PaidAmount(), p.Currency),
		QRSVG: templ.SafeURL(base + "/qr.svg" + query), QRPNG: templ.SafeURL(base + "/qr.png" + query),
		MayAct: sessionOf(ec).may(merchant.Operate), Open: st == ledger.LinkOpen, MailReady: c.Links.CanMail(),
		Cancel: templ.SafeURL(base + "/cancel"), Send: templ.SafeURL(base + "/send"), Back: templ.SafeURL(RouteLinks + query)}
	page.Scripts = []string{c.Assets.CopyJS}
	if options != nil {
		page.Merchant = m.ID
	}
	page.SendTo = t(ec, "console.link.sendToNone")
	if email := c.Links.Email(p); email != "" {
		page.SendTo = t(ec, "console.link.sendToKept", maskEmail(email))
	}
	lang := p.Lang
	if lang == "" {
		lang = t(ec, "console.links.langBrowser")
	}
	for _, ch := range i18n.Choices {
		if ch.Code == p.Lang {
			lang = ch.Name
		}
	}
	page.Terms = []linkviews.Term{
		{Label: t(ec, "console.col.amount"), Value: amount(l, p.Amount, p.Currency)},
		{Label: t(ec, "console.links.description"), Value: p.Description},
		{Label: t(ec, "console.links.kind"), Value: t(ec, "console.links.kind."+p.Kind)},
		{Label: t(ec, "console.links.lang"), Value: lang},
		{Label: t(ec, "console.col.created"), Value: whenBare(l, p.Created) + " · " + p.CreatedBy},
		{Label: t(ec, "console.link.expires"), Value: when(l, p.Expires)},
	}
	if p.Kind == ledger.LinkReusable && p.MaxPayments > 0 {
		page.Terms = append(page.Terms, linkviews.Term{Label: t(ec, "console.links.max"), Value: l.Number(int64(p.MaxPayments))})
	}
	if !p.Cancelled.IsZero() {
		page.Terms = append(page.Terms, linkviews.Term{Label: t(ec, "console.link.cancelledAt"), Value: when(l, p.Cancelled) + " · " + p.CancelledBy})
	}
	if p.EmailsSent > 0 {
		page.Terms = append(page.Terms, linkviews.Term{Label: t(ec, "console.link.emails"), Value: l.Number(int64(p.EmailsSent)) + " · " + when(l, p.Emailed)})
	}
	if options != nil {
		page.Terms = append([]linkviews.Term{{Label: t(ec, "console.merchant"), Value: m.Name + " (" + m.ID + ")"}}, page.Terms...)
	}
	f, err := c.Ledger.Funnel(ctx, m.ID, p.ID)
	if err != nil {
		return page, err
	}
	for _, s := range []struct {
		key string
		n   int
	}{{"opened", f.Opened}, {"bankChosen", f.BankChosen}, {"atBank", f.AtBank}, {"paid", f.Paid}} {
		page.Funnel = append(page.Funnel, linkviews.Step{Label: t(ec, "console.link.funnel."+s.key), Count: l.Number(int64(s.n))})
	}
	orders, err := c.Ledger.LinkOrders(ctx, m.ID, p.ID, maxLinkOrders)
	if err != nil {
		return page, err
	}
	for _, o := range orders {
		page.Orders = append(page.Orders, linkviews.Order{ID: o.OrderID, URL: c.orderURL(m.ID, o.OrderID, options != nil),
			Amount: amount(l, o.Amount, o.Currency), Status: statusOf(l, o.Status), Paid: yesNo(l, !o.Paid.IsZero()), Created: whenBare(l, o.Created)})
	}
	return page, nil
}

var errLinkEnded = &consoleError{status: http.StatusConflict, key: "console.error.linkEnded", err: ledger.ErrLinkEnded}

// cancelLink answers POST /console/links/{id}/cancel, once confirmed: no
// payment starts from the link any more, on any instance.
func (c *Console) cancelLink(ec echo.Context) error {
	p, m, options, err := c.theLink(ec)
	if err != nil {
		return err
	}
	back := RouteLinks + "/" + p.ID + linkQuery(m, options, nil)
	ok, err := c.confirmed(ec, t(ec, "console.link.cancel"), t(ec, "console.link.cancelQuestion", p.Reference),
		t(ec, "console.link.cancelHint"), t(ec, "console.link.cancel"), back)
	if !ok {
		return err
	}
	if _, err := c.Links.Cancel(ec.Request().Context(), actor(ec), m.ID, p.ID); errors.Is(err, ledger.ErrLinkEnded) {
		return errLinkEnded
	} else if err != nil {
		return err
	}
	c.log(ec).Info("console: payment link cancelled", "merchant", m.ID, "link", p.ID, "email", maskEmail(sessionOf(ec).user.Email))
	return ec.Redirect(http.StatusSeeOther, RouteLinks+"/"+p.ID+linkQuery(m, options, url.Values{"cancelled": {"1"}}))
}

// sendLink answers POST /console/links/{id}/send: the e-mail again, to the
// address typed or the one kept.
func (c *Console) sendLink(ec echo.Context) error {
	p, m, options, err := c.theLink(ec)
	if err != nil {
		return err
	}
	if !c.Links.CanMail() {
		return &consoleError{status: http.StatusConflict, key: "console.error.noMail", err: links.ErrNoMail}
	}
	email := ec.FormValue("email")
	err = c.Links.Send(ec.Request().Context(), actor(ec), m, p, email, sessionOf(ec).may(merchant.Manage))
	var refusal *links.Refusal
	var limit *mailer.LimitError
	problem := ""
	status := http.StatusUnprocessableEntity
	switch {
	case err == nil:
		c.log(ec).Info("console: payment link sent by e-mail", "merchant", m.ID, "link", p.ID, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, RouteLinks+"/"+p.ID+linkQuery(m, options, url.Values{"sent": {"1"}}))
	case errors.Is(err, ledger.ErrLinkEnded):
		return errLinkEnded
	case errors.As(err, &refusal):
		problem = reasonOf(ec, refusal.Fields[0])
	case errors.Is(err, links.ErrNoAddress):
		problem = t(ec, "console.link.noAddress")
	case errors.Is(err, links.ErrOwnersChangeAddress):
		status = http.StatusForbidden
		problem = t(ec, "console.link.ownersChangeAddress", maskEmail(c.Links.Email(p)))
	case errors.As(err, &limit):
		status = http.StatusTooManyRequests
		problem = c.mailLimit(ec, limit)
	default:
		c.log(ec).Warn("console: a payment link's e-mail failed", "merchant", m.ID, "link", p.ID, "err", err)
		problem = t(ec, "console.link.sendFailed")
	}
	page, perr := c.linkPage(ec, p, m, options)
	if perr != nil {
		return perr
	}
	page.SendEmail, page.SendError = email, problem
	return render(ec, status, linkviews.LinkPage(page))
}

// mailLimit says which mail bound was reached, and from when the e-mail
// may go out, in the person's language; the answer says when in
// Retry-After.
func (c *Console) mailLimit(ec echo.Context, limit *mailer.LimitError) string {
	ec.Response().Header().Set("Retry-After", strconv.Itoa(int(limit.RetryAfter.Seconds())))
	at := localizerOf(ec).DateTime(c.Now().Add(limit.RetryAfter)) + " UTC"
	return t(ec, "console.mail.limit."+limit.Bound, limit.Limit, at)
}

// linkQR answers GET /console/links/{id}/qr.svg and qr.png: the link's
// address as a QR code, to print or put on a counter.
func (c *Console) linkQR(png bool) echo.HandlerFunc {
	return func(ec echo.Context) error {
		p, _, _, err := c.theLink(ec)
		if err != nil {
			return err
		}
		h := ec.Response().Header()
		h.Set("Cache-Control", "private, max-age=3600")
		name := "payment-link-" + p.ID
		if png {
			b, err := web.QRPNG(c.Links.URL(p.ID), 512)
			if err != nil {
				return err
			}
			h.Set("Content-Disposition", `inline; filename="`+name+`.png"`)
			return ec.Blob(http.StatusOK, "image/png", b)
		}
		svg, err := web.QRSVG(c.Links.URL(p.ID))
		if err != nil {
			return err
		}
		h.Set("Content-Disposition", `inline; filename="`+name+`.svg"`)
		return ec.Blob(http.StatusOK, "image/svg+xml", []byte(svg))
	}
}

// exportLinks answers GET /console/links.csv: every link the filters
// select, as RFC 4180 CSV in English, cells guarded like the payments'.
func (c *Console) exportLinks(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	f := ledger.LinkFilter{Merchant: m.ID, Query: strings.TrimSpace(ec.QueryParam("q")), State: ec.QueryParam("state")}
	english := i18n.Staff("en")
	h := ec.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="payment-links-`+c.Now().UTC().Format("2006-01-02")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	ec.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(ec.Response())
	w.UseCRLF = true
	header := []string{"id", "url", "reference", "description", "amount", "currency", "kind", "state", "max_payments", "payments", "paid_amount",
		"created_at", "created_by", "expires_at", "cancelled_at"}
	if options != nil {
		header = append([]string{"merchant_id"}, header...)
	}
	w.Write(header)
	now := c.Now()
	var after ledger.Cursor
	// The first rows go out as a page of the list would, so that the
	// download starts at once; then in batches.
	batch := pageSize
	// A batch is read to its end even when the browser has gone: a query
	// cut short costs the pool its connection, and the next request a new
	// one. The loop stops before the next batch instead.
	read := context.WithoutCancel(ec.Request().Context())
	for {
		list, err := c.Ledger.ListLinks(read, f, after, batch)
		if err != nil {
			c.log(ec).Error("console: links CSV stopped", "err", err)
			break
		}
		for _, p := range list {
			row := []string{p.ID, c.Links.URL(p.ID), p.Reference, p.Description, p.Amount, p.Currency, p.Kind, p.State(now),
				strconv.Itoa(p.MaxPayments), strconv.Itoa(p.Payments), p.PaidAmount(), whenBare(english, p.Created), p.CreatedBy,
				whenBare(english, p.Expires), whenBare(english, p.Cancelled)}
			if options != nil {
				row = append([]string{p.MerchantID}, row...)
			}
			for i := range row {
				row[i] = safeCell(row[i])
			}
			w.Write(row)
		}
		if len(list) < batch {
			break
		}
		last := list[len(list)-1]
		after, batch = ledger.Cursor{At: last.Created, ID: last.ID}, csvBatch
		w.Flush()
		ec.Response().Flush()
		if w.Error() != nil || ec.Request().Context().Err() != nil {
			// The person's browser went away: read no more.
			break
		}
	}
	w.Flush()
	return w.Error()
}
