package console

import (
	"cmp"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/refunds"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/views"
	consoleviews "github.com/paybybank/checkout/views/console"
	refundviews "github.com/paybybank/checkout/views/console/refunds"
)

// Routes of refunds: money back from the shop's own account, made from an
// order's page (POST RoutePayments/{order}/refunds), paid from a transfer
// file or an EPC QR code.
const (
	RouteRefunds       = "/console/refunds"
	RouteRefund        = "/console/refunds/:id"
	RouteRefundAccount = "/console/refunds/:id/account"
	RouteRefundSend    = "/console/refunds/:id/send"
	RouteRefundApprove = "/console/refunds/:id/approve"
	RouteRefundCancel  = "/console/refunds/:id/cancel"
	RouteRefundSent    = "/console/refunds/:id/sent"
	RouteRefundBooked  = "/console/refunds/:id/booked"
	RouteRefundSVG     = "/console/refunds/:id/qr.svg"
	RouteRefundPNG     = "/console/refunds/:id/qr.png"
	RouteRefundPageQR  = "/console/refunds/:id/page-qr.svg"
	RouteTransfers     = "/console/refunds/transfers"
	// RouteTransfer is a transfer file, {id}.xml.
	RouteTransfer = "/console/refunds/transfers/:file"
	// refundsSuffix ends an order's address where its refunds are made.
	refundsSuffix = "/refunds"
)

// formKey is what a refund form's own key looks like (crypto/rand.Text).
var formKey = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// maxTransfer bounds the refunds of one transfer file: a page of the list
// holds far fewer.
const maxTransfer = 200

// refundRoutes registers the refunds' routes: everyone reads; owners and
// support make refunds, type the payer's account, send the payer's page and
// cancel; owners approve, pay (the transfer file, the QR code) and mark.
func (c *Console) refundRoutes(in func(method, path string, action merchant.Action, h echo.HandlerFunc)) {
	in(http.MethodGet, RouteRefunds, merchant.Read, c.showRefunds)
	in(http.MethodGet, RouteRefund, merchant.Read, c.showRefund)
	in(http.MethodPost, RouteRefundAccount, merchant.Refund, c.giveAccount)
	in(http.MethodPost, RouteRefundSend, merchant.Refund, c.sendRefundPage)
	in(http.MethodPost, RouteRefundCancel, merchant.Refund, c.cancelRefund)
	in(http.MethodGet, RouteRefundPageQR, merchant.Refund, c.payerPageQR)
	in(http.MethodPost, RouteRefundApprove, merchant.PayRefunds, c.approveRefund)
	in(http.MethodPost, RouteRefundSent, merchant.PayRefunds, c.markRefund(refundSent))
	in(http.MethodPost, RouteRefundBooked, merchant.PayRefunds, c.markRefund(refundBooked))
	in(http.MethodGet, RouteRefundSVG, merchant.PayRefunds, c.refundQR(false))
	in(http.MethodGet, RouteRefundPNG, merchant.PayRefunds, c.refundQR(true))
	in(http.MethodPost, RouteTransfers, merchant.PayRefunds, c.makeTransfer)
	in(http.MethodGet, RouteTransfers, merchant.Read, c.showTransfers)
	in(http.MethodGet, RouteTransfer, merchant.PayRefunds, c.downloadTransfer)
}

// refundState is a refund's state as a badge, in the person's language.
func refundState(ec echo.Context, state string) refundviews.State {
	tone := map[string]string{ledger.RefundAwaitingAccount: "pending", ledger.RefundAwaitingApproval: "pending",
		ledger.RefundReady: "accepted", ledger.RefundSent: "accepted", ledger.RefundBooked: "paid",
		ledger.RefundReturned: "canceled", ledger.RefundCancelled: "processing"}[state]
	return refundviews.State{Name: state, Word: t(ec, "console.refund.state."+state), Tone: tone}
}

// refundRow is a refund as a list shows it.
func (c *Console) refundRow(ec echo.Context, r ledger.Refund, m *merchant.Merchant, options []consoleviews.ConsoleOption) refundviews.Row {
	l := localizerOf(ec)
	return refundviews.Row{ID: r.ID, URL: templ.SafeURL(RouteRefunds + "/" + r.ID + linkQuery(m, options, nil)), Created: whenBare(l, r.Created),
		Order: r.OrderID, OrderURL: c.orderURL(m.ID, r.OrderID, options != nil), Amount: amount(l, r.Amount, r.Currency),
		State: refundState(ec, r.State), Account: r.AccountMasked,
		Choosable: r.State == ledger.RefundReady && sessionOf(ec).may(merchant.PayRefunds)}
}

// maxOrderRefunds bounds the refunds an order's page lists.
const maxOrderRefunds = 100

// orderRefunds is what an order's page shows of its refunds, with the
// form (open, or as typed when form is given) for those who may refund.
func (c *Console) orderRefunds(ec echo.Context, m *merchant.Merchant, o ledger.Order, operator, open bool, form *refundviews.Form) (refundviews.Order, error) {
	l := localizerOf(ec)
	s := sessionOf(ec)
	var options []consoleviews.ConsoleOption
	if operator {
		// An operator's addresses of the refunds name the merchant.
		options = []consoleviews.ConsoleOption{}
	}
	page := refundviews.Order{CSRF: s.csrf, Action: templ.SafeURL(RoutePayments + "/" + url.PathEscape(o.OrderID) + refundsSuffix)}
	if operator {
		page.Merchant = m.ID
	}
	list, err := c.Ledger.ListRefunds(ec.Request().Context(), ledger.RefundFilter{Merchant: m.ID, Order: o.OrderID}, ledger.Cursor{}, maxOrderRefunds)
	if err != nil {
		return page, err
	}
	for _, r := range list {
		row := c.refundRow(ec, r, m, options)
		row.Choosable = false
		page.Rows = append(page.Rows, row)
	}
	paid := !o.Paid.IsZero()
	total, err := decimal.NewFromString(o.Amount)
	if err != nil {
		return page, err
	}
	remaining := total.Sub(decimal.New(o.RefundedCents, -2))
	if paid || o.RefundedCents > 0 {
		page.Refunded = t(ec, "console.refund.refunded", amount(l, o.Refunded(), o.Currency), amount(l, o.Amount, o.Currency))
	}
	page.Remaining = amount(l, remaining.StringFixed(2), o.Currency)
	page.MayRefund = c.Refunds != nil && s.may(merchant.Refund) && paid && remaining.IsPositive()
	q := url.Values{}
	if operator {
		q.Set("merchant", m.ID)
	}
	page.CloseURL = templ.SafeURL(RoutePayments + "/" + url.PathEscape(o.OrderID) + queryOf(q))
	q.Set("refund", "1")
	page.OpenURL = templ.SafeURL(RoutePayments + "/" + url.PathEscape(o.OrderID) + "?" + q.Encode() + "#refund-form")
	page.Open = open && page.MayRefund || form != nil
	page.Form = refundviews.Form{Amount: remaining.StringFixed(2), Key: rand.Text()}
	if form != nil {
		page.Form = *form
	}
	return page, nil
}

// queryOf is q as an address's query, "" when empty.
func queryOf(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// refundFormFields are the refund form's fields in its order, with their
// labels: the error summary names each refusal by its field's label.
var refundFormFields = []struct{ name, label string }{
	{"amount", "console.refund.amount"}, {"reason", "console.refund.reason"}, {"account_name", "console.refund.accountName"},
	{"account_iban", "console.refund.iban"}, {"account_bic", "console.refund.bic"},
}

// makeRefund answers POST /console/payments/{order}/refunds: the refund is
// made and its page shown (the payer e-mailed their page where the order
// has their address and e-mail is set up), or the order's page comes back
// with the form as typed and every refusal beside its field.
func (c *Console) makeRefund(ec echo.Context) error {
	id, ok := orderIDOf(ec, refundsSuffix)
	if !ok || c.Refunds == nil {
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
	form := refundviews.Form{Amount: ec.FormValue("amount"), Reason: ec.FormValue("reason"), AccountName: ec.FormValue("account_name"),
		AccountIBAN: ec.FormValue("account_iban"), AccountBIC: ec.FormValue("account_bic"), Key: ec.FormValue("key"), Errors: map[string]string{}}
	ask := refunds.Ask{Amount: form.Amount, Reason: form.Reason, AccountBy: refunds.ByConsole}
	if formKey.MatchString(form.Key) {
		ask.IdempotencyKey = "console:" + form.Key
	} else {
		form.Key = rand.Text()
	}
	if strings.TrimSpace(form.AccountName+form.AccountIBAN+form.AccountBIC) != "" {
		ask.Account = &refunds.Account{Name: form.AccountName, IBAN: form.AccountIBAN, BIC: form.AccountBIC}
	}
	l := localizerOf(ec)
	r, made, err := c.Refunds.Make(ec.Request().Context(), actor(ec), m, id, ask)
	var refusal *refunds.Refusal
	var exceeds *refunds.ExceedsError
	status, problem := http.StatusUnprocessableEntity, ""
	switch {
	case errors.As(err, &refusal):
		for _, f := range refundFormFields {
			if fe := refusal.Field(f.name); fe != nil {
				form.Errors[f.name] = reasonOf(ec, fe)
			}
		}
	case errors.As(err, &exceeds):
		status = http.StatusConflict
		form.Errors["amount"] = t(ec, "console.refund.exceeds", amount(l, exceeds.Remaining, rules.Currency))
	case errors.Is(err, refunds.ErrNotPaid):
		problem = t(ec, "console.refund.notPaid")
	case errors.Is(err, ledger.ErrNotFound):
		return errNotFound
	case errors.Is(err, ledger.ErrIdempotencyReused), err == nil && !made:
		// The form was sent before: its refund is shown, none is made.
		return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, nil))
	case err != nil:
		return err
	default:
		q := url.Values{"made": {"1"}}
		if r.State == ledger.RefundAwaitingAccount {
			q.Set("emailed", c.sendAfterMaking(ec, m, r))
		}
		c.log(ec).Info("console: refund made", "merchant", m.ID, "refund", r.ID, "state", r.State, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, q))
	}
	page, err := c.orderView(ec, m, id, &form, problem)
	if err != nil {
		return err
	}
	for _, f := range refundFormFields {
		if msg := form.Errors[f.name]; msg != "" {
			page.Problems = append(page.Problems, views.FieldError{ID: f.name, Message: t(ec, f.label) + ": " + msg})
		}
	}
	return render(ec, status, consoleviews.ConsoleOrderPage(page))
}

// sendAfterMaking e-mails a new refund's payer their page where it can,
// and says what became of it: "1" sent, "off" (no e-mail here), "none"
// (the order has no address), "limit" (past a mail bound) or "0" (failed).
// The refund stands whichever it is.
func (c *Console) sendAfterMaking(ec echo.Context, m *merchant.Merchant, r ledger.Refund) string {
	if c.Refunds.Mail == nil {
		return "off"
	}
	err := c.Refunds.SendPage(ec.Request().Context(), actor(ec), m, r)
	var limit *mailer.LimitError
	switch {
	case err == nil:
		return "1"
	case errors.Is(err, refunds.ErrNoEmail):
		return "none"
	case errors.As(err, &limit):
		return "limit"
	}
	c.log(ec).Warn("console: a refund's e-mail failed", "merchant", m.ID, "refund", r.ID, "err", err)
	return "0"
}

// refundURL is a refund's page, with q; an operator's names the merchant.
func refundURL(ec echo.Context, m *merchant.Merchant, id string, q url.Values) string {
	if q == nil {
		q = url.Values{}
	}
	if sessionOf(ec).user.Operator {
		q.Set("merchant", m.ID)
	}
	return RouteRefunds + "/" + id + queryOf(q)
}

// theRefund is the refund a request names, of the person's merchant, or
// for an operator of whichever merchant has it.
func (c *Console) theRefund(ec echo.Context) (ledger.Refund, *merchant.Merchant, []consoleviews.ConsoleOption, error) {
	id := ec.Param("id")
	if !refunds.ValidID(id) || c.Refunds == nil {
		return ledger.Refund{}, nil, nil, errNotFound
	}
	ctx := ec.Request().Context()
	s := sessionOf(ec)
	var r ledger.Refund
	var err error
	if s.merchant != nil {
		r, err = c.Ledger.Refund(ctx, s.merchant.ID, id)
	} else {
		r, err = c.Ledger.RefundByID(ctx, id)
	}
	if errors.Is(err, ledger.ErrRefundNotFound) {
		return r, nil, nil, errNotFound
	}
	if err != nil {
		return r, nil, nil, err
	}
	m, options, err := c.linkScope(ec, r.MerchantID)
	if err != nil {
		return r, nil, nil, err
	}
	return r, m, options, nil
}

// showRefund answers GET /console/refunds/{id}: the refund, its timeline
// and what this person may do with it now.
func (c *Console) showRefund(ec echo.Context) error {
	r, m, options, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	page, err := c.refundPage(ec, r, m, options)
	if err != nil {
		return err
	}
	page.Notice, page.NoticeError = refundNotice(ec)
	return render(ec, http.StatusOK, refundviews.RefundPage(page))
}

// refundNotice is what the page says after an action led to it.
func refundNotice(ec echo.Context) (string, bool) {
	if ec.QueryParam("made") == "1" {
		switch ec.QueryParam("emailed") {
		case "1":
			return t(ec, "console.refund.madeEmailed"), false
		case "off":
			return t(ec, "console.refund.madeMailOff"), false
		case "none":
			return t(ec, "console.refund.madeNoAddress"), false
		case "limit", "0":
			return t(ec, "console.refund.madeNotEmailed"), true
		}
		return t(ec, "console.refund.made"), false
	}
	for _, done := range []string{"account", "emailed", "approved", "cancelled", "sent", "booked"} {
		if ec.QueryParam("done") == done {
			return t(ec, "console.refund.done."+done), false
		}
	}
	return "", false
}

// refundPage is a refund's page as this person may act on it.
func (c *Console) refundPage(ec echo.Context, r ledger.Refund, m *merchant.Merchant, options []consoleviews.ConsoleOption) (refundviews.Refund, error) {
	l := localizerOf(ec)
	s := sessionOf(ec)
	ctx := ec.Request().Context()
	base := RouteRefunds + "/" + r.ID
	query := linkQuery(m, options, nil)
	mayRefund, mayPay := s.may(merchant.Refund), s.may(merchant.PayRefunds)
	page := refundviews.Refund{ConsolePage: c.frame(ec, t(ec, "console.refund.heading", r.ID), "refunds"), ID: r.ID,
		Amount: amount(l, r.Amount, r.Currency), State: refundState(ec, r.State), Back: templ.SafeURL(RouteRefunds + query)}
	if options != nil {
		page.Merchant = m.ID
	}
	page.Terms = []refundviews.Term{
		{Label: t(ec, "console.col.order"), Value: r.OrderID, URL: c.orderURL(m.ID, r.OrderID, options != nil)},
		{Label: t(ec, "console.refund.reason"), Value: r.Reason},
		{Label: t(ec, "console.refund.madeBy"), Value: when(l, r.Created) + " · " + r.CreatedBy},
	}
	if options != nil {
		page.Terms = append([]refundviews.Term{{Label: t(ec, "console.merchant"), Value: m.Name + " (" + m.ID + ")"}}, page.Terms...)
	}
	account := t(ec, "console.refund.accountNone")
	if r.AccountMasked != "" {
		account = r.AccountMasked
		// The name is the payer's personal data: for those who deal
		// with the payer.
		if a, ok := c.Refunds.AccountOf(r); ok && mayRefund && a.Name != "" {
			account = a.Name + " · " + r.AccountMasked
		}
	}
	page.Terms = append(page.Terms, refundviews.Term{Label: t(ec, "console.refunds.account"), Value: account})
	if r.NeedsApproval {
		approval := t(ec, "console.refund.approvalNeeded")
		if r.ApprovedBy != "" {
			approval = t(ec, "console.refund.approvedBy", r.ApprovedBy)
		}
		page.Terms = append(page.Terms, refundviews.Term{Label: t(ec, "console.refund.approval"), Value: approval})
	}
	if r.TransferID != "" {
		term := refundviews.Term{Label: t(ec, "console.refunds.file"), Value: r.TransferID + ".xml"}
		if mayPay {
			term.URL = templ.SafeURL(RouteTransfers + "/" + r.TransferID + ".xml" + query)
		}
		page.Terms = append(page.Terms, term)
	}
	if r.BookedOn != "" {
		page.Terms = append(page.Terms, refundviews.Term{Label: t(ec, "console.refund.bookedOn"), Value: r.BookedOn})
	}
	if r.ReturnReason != "" {
		page.Terms = append(page.Terms, refundviews.Term{Label: t(ec, "console.refund.returnReason"), Value: returnReason(ec, r.ReturnReason)})
	}
	history, err := c.Ledger.RefundHistory(ctx, r.ID)
	if err != nil {
		return page, err
	}
	// Steps of one moment (made with its account, say) in the order a
	// refund passes through them.
	slices.SortStableFunc(history, func(a, b ledger.RefundStep) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(slices.Index(stepOrder, a.Step), slices.Index(stepOrder, b.Step)))
	})
	for _, step := range history {
		page.Timeline = append(page.Timeline, refundviews.Step{At: whenBare(l, step.At), What: sayStep(ec, r, step)})
	}
	if r.State == ledger.RefundAwaitingAccount && mayRefund {
		page.PayerPage, page.PageQR = c.Refunds.PageURL(r), templ.SafeURL(base+"/page-qr.svg"+query)
		page.Account, page.AccountAction = &refundviews.AccountForm{Errors: map[string]string{}}, templ.SafeURL(base+"/account")
		switch email, err := c.Refunds.PayerEmail(ctx, r); {
		case err != nil:
			return page, err
		case c.Refunds.Mail == nil:
			page.SendNote = t(ec, "console.refund.mailOff")
		case email == "":
			page.SendNote = t(ec, "console.refund.noAddress")
		default:
			page.Send, page.SendToAddress = templ.SafeURL(base+"/send"), maskEmail(email)
			page.SendTo, page.SendToAfter = around(ec, "console.refund.sendTo")
		}
	}
	waits := r.NeedsApproval && r.ApprovedBy == "" && (r.State == ledger.RefundAwaitingApproval || r.State == ledger.RefundAwaitingAccount)
	switch {
	case !waits:
	case !mayPay:
		page.ApproveNote = t(ec, "console.refund.waitsApproval")
	case strings.EqualFold(r.CreatedBy, actor(ec).Name):
		page.ApproveNote = t(ec, "console.refund.ownApproval")
	default:
		page.MayApprove, page.Approve = true, templ.SafeURL(base+"/approve")
		page.ApproveNote = t(ec, "console.refund.approveHint")
	}
	switch r.State {
	case ledger.RefundAwaitingAccount, ledger.RefundAwaitingApproval, ledger.RefundReady:
		if mayRefund {
			page.Cancel = templ.SafeURL(base + "/cancel")
		}
	}
	if mayPay {
		switch r.State {
		case ledger.RefundReady:
			page.MarkSent = templ.SafeURL(base + "/sent")
			if _, ok := c.Refunds.AccountOf(r); ok {
				page.QRSVG, page.QRPNG = templ.SafeURL(base+"/qr.svg"+query), templ.SafeURL(base+"/qr.png"+query)
				page.QRAlt = t(ec, "console.refund.qrAlt", r.ID)
			}
		case ledger.RefundSent:
			page.MarkBooked = templ.SafeURL(base + "/booked")
		}
	}
	return page, nil
}

// stepOrder is the order of a refund's steps.
var stepOrder = []string{ledger.StepMade, ledger.StepAccount, ledger.StepApproved, ledger.StepFile, ledger.StepSent, ledger.StepBooked,
	ledger.StepReturned, ledger.StepCancelled}

// sayStep is a step of a refund's timeline in the person's language.
func sayStep(ec echo.Context, r ledger.Refund, step ledger.RefundStep) string {
	who := sayActor(localizerOf(ec), step.Actor)
	switch step.Step {
	case ledger.StepAccount:
		by := r.AccountBy
		if step.Actor == refunds.ByPayer {
			by = refunds.ByPayer
		}
		switch by {
		case refunds.ByPayer, refunds.ByAPI:
			return t(ec, "console.refund.step.account."+by, who)
		}
		return t(ec, "console.refund.step.account.console", who)
	case ledger.StepFile:
		return t(ec, "console.refund.step.file", r.TransferID+".xml", who)
	case ledger.StepReturned:
		return t(ec, "console.refund.step.returned", r.ReturnReason)
	case ledger.StepMade, ledger.StepApproved, ledger.StepSent, ledger.StepBooked, ledger.StepCancelled:
		return t(ec, "console.refund.step."+step.Step, who)
	}
	return step.Step + " · " + who
}

var (
	errRefundMoved    = &consoleError{status: http.StatusConflict, key: "console.error.refundMoved", err: refunds.ErrMoved}
	errRefundNotReady = &consoleError{status: http.StatusConflict, key: "console.error.refundNotReady", err: refunds.ErrNoAccount}
	errRefundNoMail   = &consoleError{status: http.StatusConflict, key: "console.error.refundNoMail", err: links.ErrNoMail}
)

// moved says a change that found the refund elsewhere than it starts from.
func moved(err error) error {
	switch {
	case errors.Is(err, refunds.ErrMoved):
		return errRefundMoved
	case errors.Is(err, refunds.ErrNotFound):
		return errNotFound
	}
	return err
}

// giveAccount answers POST /console/refunds/{id}/account: the payer's
// account as they told it, checked as a bank would; refused, the page
// comes back with every reason beside its field and what was typed.
func (c *Console) giveAccount(ec echo.Context) error {
	r, m, options, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	typed := refunds.Account{Name: ec.FormValue("name"), IBAN: ec.FormValue("iban"), BIC: ec.FormValue("bic")}
	_, err = c.Refunds.GiveAccount(ec.Request().Context(), actor(ec), m, r.ID, typed, refunds.ByConsole)
	var refusal *refunds.Refusal
	if !errors.As(err, &refusal) {
		if err != nil {
			return moved(err)
		}
		c.log(ec).Info("console: a refund's account given", "merchant", m.ID, "refund", r.ID, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, url.Values{"done": {"account"}}))
	}
	page, err := c.refundPage(ec, r, m, options)
	if err != nil {
		return err
	}
	if page.Account == nil {
		return errRefundMoved
	}
	page.Account.Name, page.Account.IBAN, page.Account.BIC = typed.Name, typed.IBAN, typed.BIC
	for _, f := range []struct{ name, label string }{{"name", "console.refund.accountName"}, {"iban", "console.refund.iban"}, {"bic", "console.refund.bic"}} {
		if fe := refusal.Field("account_" + f.name); fe != nil {
			page.Account.Errors[f.name] = reasonOf(ec, fe)
			page.Problems = append(page.Problems, views.FieldError{ID: f.name, Message: t(ec, f.label) + ": " + page.Account.Errors[f.name]})
		}
	}
	return render(ec, http.StatusUnprocessableEntity, refundviews.RefundPage(page))
}

// sendRefundPage answers POST /console/refunds/{id}/send: the payer's page
// by e-mail again, to the order's address, within the mail bounds.
func (c *Console) sendRefundPage(ec echo.Context) error {
	r, m, options, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	err = c.Refunds.SendPage(ec.Request().Context(), actor(ec), m, r)
	var limit *mailer.LimitError
	status, problem := http.StatusUnprocessableEntity, ""
	switch {
	case err == nil:
		c.log(ec).Info("console: a refund's page sent by e-mail", "merchant", m.ID, "refund", r.ID, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, url.Values{"done": {"emailed"}}))
	case errors.Is(err, links.ErrNoMail):
		return errRefundNoMail
	case errors.Is(err, refunds.ErrMoved):
		return errRefundMoved
	case errors.Is(err, refunds.ErrNoEmail):
		problem = t(ec, "console.refund.noAddress")
	case errors.As(err, &limit):
		status = http.StatusTooManyRequests
		ec.Response().Header().Set("Retry-After", strconv.Itoa(int(limit.RetryAfter.Seconds())))
		at := localizerOf(ec).DateTime(c.Now().Add(limit.RetryAfter)) + " UTC"
		problem = t(ec, "console.refund.mailLimit."+limit.Bound, limit.Limit, at)
	default:
		c.log(ec).Warn("console: a refund's e-mail failed", "merchant", m.ID, "refund", r.ID, "err", err)
		problem = t(ec, "console.refund.sendFailed")
	}
	page, err := c.refundPage(ec, r, m, options)
	if err != nil {
		return err
	}
	page.SendError = problem
	return render(ec, status, refundviews.RefundPage(page))
}

// cancelRefund answers POST /console/refunds/{id}/cancel, once confirmed:
// nothing is sent, and the amount may be refunded again.
func (c *Console) cancelRefund(ec echo.Context) error {
	r, m, options, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	l := localizerOf(ec)
	back := RouteRefunds + "/" + r.ID + linkQuery(m, options, nil)
	ok, err := c.confirmed(ec, t(ec, "console.refund.cancel"), t(ec, "console.refund.cancelQuestion", r.ID, amount(l, r.Amount, r.Currency)),
		t(ec, "console.refund.cancelHint"), t(ec, "console.refund.cancel"), back)
	if !ok {
		return err
	}
	if _, err := c.Refunds.Cancel(ec.Request().Context(), actor(ec), m, r.ID); err != nil {
		return moved(err)
	}
	c.log(ec).Info("console: refund cancelled", "merchant", m.ID, "refund", r.ID, "email", maskEmail(sessionOf(ec).user.Email))
	return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, url.Values{"done": {"cancelled"}}))
}

// approveRefund answers POST /console/refunds/{id}/approve: a second
// owner's approval. The person who made the refund is told why theirs
// does not count.
func (c *Console) approveRefund(ec echo.Context) error {
	r, m, options, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	_, err = c.Refunds.Approve(ec.Request().Context(), actor(ec), m, r.ID)
	if errors.Is(err, refunds.ErrOwnApproval) {
		page, perr := c.refundPage(ec, r, m, options)
		if perr != nil {
			return perr
		}
		page.Notice, page.NoticeError = t(ec, "console.refund.ownApproval"), true
		return render(ec, http.StatusForbidden, refundviews.RefundPage(page))
	}
	if err != nil {
		return moved(err)
	}
	c.log(ec).Info("console: refund approved", "merchant", m.ID, "refund", r.ID, "email", maskEmail(sessionOf(ec).user.Email))
	return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, url.Values{"done": {"approved"}}))
}

// What a person marks a refund as.
const (
	refundSent   = "sent"
	refundBooked = "booked"
)

// markRefund answers POST /console/refunds/{id}/sent (paid by hand or by
// its QR code) and /booked (seen leaving the shop's account).
func (c *Console) markRefund(as string) echo.HandlerFunc {
	return func(ec echo.Context) error {
		r, m, _, err := c.theRefund(ec)
		if err != nil {
			return err
		}
		mark := c.Refunds.MarkSent
		if as == refundBooked {
			mark = c.Refunds.MarkBooked
		}
		if _, err := mark(ec.Request().Context(), actor(ec), m, r.ID); err != nil {
			return moved(err)
		}
		c.log(ec).Info("console: refund marked "+as, "merchant", m.ID, "refund", r.ID, "email", maskEmail(sessionOf(ec).user.Email))
		return ec.Redirect(http.StatusSeeOther, refundURL(ec, m, r.ID, url.Values{"done": {as}}))
	}
}

// refundQR answers GET /console/refunds/{id}/qr.svg and qr.png: a ready
// refund's EPC QR code, for the shop's banking app to scan. It holds the
// payer's IBAN: nothing keeps it.
func (c *Console) refundQR(png bool) echo.HandlerFunc {
	return func(ec echo.Context) error {
		r, _, _, err := c.theRefund(ec)
		if err != nil {
			return err
		}
		if r.State != ledger.RefundReady {
			return errRefundNotReady
		}
		payload, err := c.Refunds.QRPayload(r)
		if errors.Is(err, refunds.ErrNoAccount) {
			return errRefundNotReady
		}
		if err != nil {
			return err
		}
		h := ec.Response().Header()
		h.Set("Cache-Control", "no-store")
		name := "refund-" + r.ID
		if png {
			b, err := sepa.QRPNG(payload, 512)
			if err != nil {
				return err
			}
			h.Set("Content-Disposition", `inline; filename="`+name+`.png"`)
			return ec.Blob(http.StatusOK, "image/png", b)
		}
		svg, err := web.QRSVG(payload)
		if err != nil {
			return err
		}
		h.Set("Content-Disposition", `inline; filename="`+name+`.svg"`)
		return ec.Blob(http.StatusOK, "image/svg+xml", []byte(svg))
	}
}

// payerPageQR answers GET /console/refunds/{id}/page-qr.svg: the payer's
// page as a QR code to show them, while the refund awaits their account.
func (c *Console) payerPageQR(ec echo.Context) error {
	r, _, _, err := c.theRefund(ec)
	if err != nil {
		return err
	}
	if r.State != ledger.RefundAwaitingAccount {
		return errNotFound
	}
	svg, err := web.QRSVG(c.Refunds.PageURL(r))
	if err != nil {
		return err
	}
	h := ec.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `inline; filename="refund-page-`+r.ID+`.svg"`)
	return ec.Blob(http.StatusOK, "image/svg+xml", []byte(svg))
}

// showRefunds answers GET /console/refunds: the merchant's refunds newest
// first, filtered by state and searched in ids, orders and reasons.
func (c *Console) showRefunds(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	page, err := c.refundsPage(ec, m, options)
	if err != nil {
		return err
	}
	return render(ec, http.StatusOK, refundviews.ListPage(page))
}

// showTransfers answers GET /console/refunds/transfers: the files are
// listed under the refunds.
func (c *Console) showTransfers(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	return ec.Redirect(http.StatusSeeOther, RouteRefunds+linkQuery(m, options, nil)+"#transfers")
}

// maxTransfersListed bounds the transfer files the list shows.
const maxTransfersListed = 20

func (c *Console) refundsPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption) (refundviews.List, error) {
	l := localizerOf(ec)
	ctx := ec.Request().Context()
	q := strings.TrimSpace(ec.QueryParam("q"))
	state := ec.QueryParam("state")
	s := sessionOf(ec)
	page := refundviews.List{ConsolePage: c.frame(ec, t(ec, "console.refunds"), "refunds"), Merchants: options, Query: q,
		Searched: q != "" || state != "", MayPay: s.may(merchant.PayRefunds)}
	if options != nil {
		page.Merchant = m.ID
	}
	known := false
	for _, st := range ledger.RefundStates {
		page.States = append(page.States, consoleviews.ConsoleOption{Value: st, Label: t(ec, "console.refund.state."+st), Selected: st == state})
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
	after, err := ledger.ParseCursor(ec.QueryParam("after"))
	if err != nil {
		after = ledger.Cursor{}
	}
	if c.Refunds == nil {
		return page, nil
	}
	list, err := c.Ledger.ListRefunds(ctx, ledger.RefundFilter{Merchant: m.ID, State: state, Query: q}, after, pageSize+1)
	if err != nil {
		return page, err
	}
	if len(list) > pageSize {
		list = list[:pageSize]
		last := list[len(list)-1]
		next := url.Values{}
		for k, v := range filter {
			next[k] = v
		}
		next.Set("after", ledger.Cursor{At: last.Created, ID: last.ID}.String())
		page.Next = templ.SafeURL(RouteRefunds + "?" + next.Encode())
	}
	if after.ID != "" {
		page.First = templ.SafeURL(RouteRefunds + queryOf(filter))
	}
	for _, r := range list {
		row := c.refundRow(ec, r, m, options)
		page.Rows, page.Choosable = append(page.Rows, row), page.Choosable || row.Choosable
	}
	if page.MayPay {
		_, has := m.ShopAccount()
		page.NoShopAccount, page.Settings = !has, templ.SafeURL(RouteSettings+linkQuery(m, options, nil))
		files, err := c.Ledger.Transfers(ctx, m.ID, maxTransfersListed)
		if err != nil {
			return page, err
		}
		for _, f := range files {
			page.Transfers = append(page.Transfers, refundviews.Transfer{ID: f.ID, URL: templ.SafeURL(RouteTransfers + "/" + f.ID + ".xml" + linkQuery(m, options, nil)),
				Created: whenBare(l, f.Created), By: f.CreatedBy, Count: l.Number(int64(f.Refunds)), Total: amount(l, f.Total(), rules.Currency)})
		}
	}
	return page, nil
}

// makeTransfer answers POST /console/refunds/transfers: a transfer file
// of the ready refunds chosen (field id, repeated), which become sent;
// then the file itself. A refund that is no longer ready makes no file.
func (c *Console) makeTransfer(ec echo.Context) error {
	if c.Refunds == nil {
		return errNotFound
	}
	m, options, err := c.linkScope(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	form, err := ec.FormParams()
	if err != nil {
		return err
	}
	ids := form["id"]
	status, problem := http.StatusConflict, ""
	switch {
	case len(ids) == 0:
		status, problem = http.StatusUnprocessableEntity, t(ec, "console.refunds.chooseSome")
	case len(ids) > maxTransfer:
		status, problem = http.StatusUnprocessableEntity, t(ec, "console.refunds.tooMany", maxTransfer)
	}
	if problem == "" {
		tr, err := c.Refunds.Transfer(ec.Request().Context(), actor(ec), m, ids)
		switch {
		case err == nil:
			c.log(ec).Info("console: transfer file made", "merchant", m.ID, "transfer", tr.ID, "refunds", tr.Refunds,
				"email", maskEmail(sessionOf(ec).user.Email))
			return ec.Redirect(http.StatusSeeOther, RouteTransfers+"/"+tr.ID+".xml"+linkQuery(m, options, nil))
		case errors.Is(err, refunds.ErrNoShopAccount):
			problem = t(ec, "console.refunds.noShopAccount")
		case errors.Is(err, refunds.ErrMoved), errors.Is(err, refunds.ErrNoAccount), errors.Is(err, refunds.ErrNotFound):
			problem = t(ec, "console.refunds.notReady")
		default:
			return err
		}
	}
	page, err := c.refundsPage(ec, m, options)
	if err != nil {
		return err
	}
	page.Notice, page.NoticeError = problem, true
	return render(ec, status, refundviews.ListPage(page))
}

// downloadTransfer answers GET /console/refunds/transfers/{id}.xml: the
// transfer file as it was made, byte for byte, to upload to the bank. It
// holds the payers' IBANs: nothing keeps it.
func (c *Console) downloadTransfer(ec echo.Context) error {
	id, ok := strings.CutSuffix(ec.Param("file"), ".xml")
	rest, isTransfer := strings.CutPrefix(id, "tr_")
	if !ok || !isTransfer || !refunds.ValidPageID(rest) {
		return errNotFound
	}
	m, _, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	tr, err := c.Ledger.TransferFile(ec.Request().Context(), m.ID, id)
	if errors.Is(err, ledger.ErrRefundNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	h := ec.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="pay-by-bank-refunds-`+tr.ID+`.xml"`)
	return ec.Blob(http.StatusOK, "application/xml", tr.File)
}

// sayRefunded is what was refunded of an order, for the list and its CSV.
func sayRefunded(l *i18n.Localizer, o ledger.Order) string {
	if o.RefundedCents == 0 {
		return ""
	}
	return amount(l, o.Refunded(), o.Currency)
}

// returnReason is a return's reason code with what it means, in the
// person's language; a code no bank list names is shown as it came.
func returnReason(ec echo.Context, code string) string {
	if _, known := sepa.ReturnReasons[code]; !known {
		return code
	}
	return t(ec, "console.refund.returnCode", code, t(ec, "console.returnReason."+code))
}
