package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/statements"
	consoleviews "github.com/paybybank/checkout/views/console"
	statementviews "github.com/paybybank/checkout/views/console/statements"
)

// RouteStatements is the bank statements: GET lists them, POST (multipart,
// field file) uploads one.
const RouteStatements = "/console/statements"

// MaxStatementForm is the largest request the statement upload takes: a
// file well past statements.MaxFile still comes in (to a temporary file,
// not memory), so that the page can say how big it is; a bigger one is
// refused with 413 unread.
const MaxStatementForm = 3 * statements.MaxFile

// uploadMemory is how much of a multipart upload (a statement, a logo) is
// held in memory; the rest of the file waits on disk until the request
// ends.
const uploadMemory = 1 << 20

// importTimeout bounds one upload's import: 50,000 entries take well
// under a minute.
const importTimeout = 5 * time.Minute

// Bounds of what the statements page lists.
const (
	maxStatementsListed = 50
	maxOpenListed       = 200
)

// statementRoutes registers the statements' routes: everyone reads;
// owners and support upload.
func (c *Console) statementRoutes(in func(method, path string, action merchant.Action, h echo.HandlerFunc)) {
	in(http.MethodGet, RouteStatements, merchant.Read, c.showStatements)
	in(http.MethodPost, RouteStatements, merchant.Reconcile, c.uploadStatement)
}

// showStatements answers GET /console/statements.
func (c *Console) showStatements(ec echo.Context) error {
	m, options, err := c.linkScope(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	var imported []string
	if ids := ec.QueryParam("imported"); ids != "" {
		imported = strings.Split(ids, ",")
	}
	page, err := c.statementsPage(ec, m, options, imported)
	if err != nil {
		return err
	}
	return render(ec, http.StatusOK, statementviews.StatementsPage(page))
}

// statementsPage is the page for m as this person may act on it; the
// statements of the upload that led to it (imported, by id) are marked,
// and the page says what they did.
func (c *Console) statementsPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption, imported []string) (statementviews.Page, error) {
	l := localizerOf(ec)
	ctx := ec.Request().Context()
	page := statementviews.Page{ConsolePage: c.frame(ec, t(ec, "console.statements"), "statements"), Merchants: options,
		MayUpload: c.Statements != nil && sessionOf(ec).may(merchant.Reconcile), MaxSize: l.Number(statements.MaxFile>>20) + " MB"}
	if options != nil {
		page.Merchant = m.ID
	}
	if _, ok := m.ShopAccount(); !ok {
		page.NoShopAccount, page.Settings = true, templ.SafeURL(RouteSettings+linkQuery(m, options, nil))
	}
	list, err := c.Ledger.Statements(ctx, m.ID, maxStatementsListed)
	if err != nil {
		return page, err
	}
	var found, entries, matched, left, repeated, held int
	for _, s := range list {
		isNew := slices.Contains(imported, s.ID)
		if isNew {
			found++
			entries, matched = entries+s.Entries, matched+s.Booked+s.Returned+s.Received
			left, repeated, held = left+s.Mismatched+s.Unmatched, repeated+s.Repeated, held+s.Held
		}
		period := s.From
		if s.To != "" && s.To != s.From {
			period += " – " + s.To
		}
		page.Statements = append(page.Statements, statementviews.Statement{Uploaded: whenBare(l, s.Uploaded), By: s.UploadedBy,
			File: s.FileName, Kind: s.Message, Account: merchant.MaskIBAN(s.Account), Period: period,
			Entries: l.Number(int64(s.Entries)), Matched: l.Number(int64(s.Booked + s.Returned + s.Received)),
			Open: l.Number(int64(s.Mismatched + s.Unmatched)), Repeated: l.Number(int64(s.Repeated)), New: isNew})
	}
	if found > 0 {
		page.Notice = t(ec, "console.statements.imported", l.Number(int64(found)), l.Number(int64(entries)), l.Number(int64(matched)),
			l.Number(int64(left)), l.Number(int64(repeated)))
		if held > 0 {
			page.Held = t(ec, "console.statements.held", l.Number(int64(held)))
		}
	}
	open, err := c.Ledger.OpenEntries(ctx, m.ID, maxOpenListed)
	if err != nil {
		return page, err
	}
	for _, e := range open {
		page.Open = append(page.Open, c.openEntry(ec, m, options != nil, e))
	}
	return page, nil
}

// openEntry is an entry left for a person, with why it was left.
func (c *Console) openEntry(ec echo.Context, m *merchant.Merchant, operator bool, e ledger.StatementEntry) statementviews.Entry {
	l := localizerOf(ec)
	v := statementviews.Entry{Booked: e.BookedOn, Amount: amount(l, e.Amount(), rules.Currency), Credit: e.Credit,
		Counterparty: e.Counterparty, CounterIBAN: e.CounterIBAN, Remittance: e.Remittance, Reference: e.Reference,
		Why: t(ec, "console.statements.why.unmatched")}
	if e.Outcome != ledger.EntryMismatch {
		return v
	}
	v.Target = e.Target
	switch {
	case strings.HasPrefix(e.Target, "rf_") && e.Note == "refund-unknown":
		v.Why, v.Target = t(ec, "console.statements.why.refundUnknown", e.Target), ""
	case strings.HasPrefix(e.Target, "rf_") && e.Note == "refund-state":
		v.Why = t(ec, "console.statements.why.refundState")
		v.TargetURL = templ.SafeURL(refundURL(ec, m, e.Target, nil))
	case strings.HasPrefix(e.Target, "rf_"):
		v.Why = t(ec, "console.statements.why.refundAmount", amount(l, strings.TrimPrefix(e.Note, "amount "), rules.Currency))
		v.TargetURL = templ.SafeURL(refundURL(ec, m, e.Target, nil))
	case e.Note == "received-before":
		v.Why = t(ec, "console.statements.why.received")
		v.TargetURL = c.orderURL(m.ID, e.Target, operator)
	default:
		v.Why = t(ec, "console.statements.why.orderAmount", amount(l, strings.TrimPrefix(e.Note, "amount "), rules.Currency))
		v.TargetURL = c.orderURL(m.ID, e.Target, operator)
	}
	return v
}

// uploadStatement answers POST /console/statements (multipart, field
// file, with other_account to take a statement of another account than
// the shop's own): the file is read and its entries done, each once; a
// refused file changes nothing and the page says why.
func (c *Console) uploadStatement(ec echo.Context) error {
	if c.Statements == nil {
		return errNotFound
	}
	if err := ec.Request().ParseMultipartForm(uploadMemory); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return err
	}
	m, options, err := c.linkScope(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	page, err := c.statementsPage(ec, m, options, nil)
	if err != nil {
		return err
	}
	refuse := func(status int, problem string) error {
		page.Problem = problem
		return render(ec, status, statementviews.StatementsPage(page))
	}
	file, err := ec.FormFile("file")
	if err != nil {
		return refuse(http.StatusUnprocessableEntity, t(ec, "console.statements.noFile"))
	}
	l := localizerOf(ec)
	if file.Size > statements.MaxFile {
		return refuse(http.StatusRequestEntityTooLarge, t(ec, "console.statements.tooLarge", l.Number((file.Size+(1<<20)-1)>>20)+" MB", page.MaxSize))
	}
	src, err := file.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	// The import goes on if the person leaves: each entry is done once
	// whenever it is done, and the statement's audit line comes last.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ec.Request().Context()), importTimeout)
	defer cancel()
	done, err := c.Statements.Import(ctx, actor(ec), m, statements.Upload{Name: fileName(file.Filename), File: src, Size: file.Size,
		OtherAccount: ec.FormValue("other_account") == "1", MovesRefunds: sessionOf(ec).may(merchant.PayRefunds)})
	var fe *sepa.FileError
	var other *statements.OtherAccountError
	switch {
	case errors.As(err, &fe):
		return refuse(http.StatusUnprocessableEntity, fileProblem(ec, fe))
	case errors.As(err, &other):
		page.OtherAccount = t(ec, "console.statements.otherAccount", merchant.MaskIBAN(other.Statement), merchant.MaskIBAN(other.Shop))
		return refuse(http.StatusConflict, t(ec, "console.statements.otherAccountAgain"))
	case err != nil && len(done) == 0:
		return err
	case err != nil:
		// The statements before the one that failed are in, and the page
		// shows them; the file may be uploaded again, as what is in counts
		// once. The log says why the rest failed.
		c.log(ec).Error("console: a statement failed half way", "merchant", m.ID, "err", err)
	}
	ids := make([]string, len(done))
	for i, s := range done {
		ids[i] = s.ID
	}
	c.log(ec).Info("console: statements imported", "merchant", m.ID, "statements", len(done))
	return ec.Redirect(http.StatusSeeOther, RouteStatements+linkQuery(m, options, url.Values{"imported": {strings.Join(ids, ",")}}))
}

// fileName is an uploaded file's name as kept and shown: its last part,
// without control or invisible characters, at most 100 characters.
func fileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || rules.Hidden(r) {
			return -1
		}
		return r
	}, name)
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	return name
}

// fileProblem says why a file was refused, in the person's language.
func fileProblem(ec echo.Context, fe *sepa.FileError) string {
	var why string
	switch fe.Reason {
	case sepa.ReasonNotCamt:
		why = t(ec, "console.statements.refused.not-camt", foundKind(ec, fe.Found))
	default:
		why = t(ec, "console.statements.refused."+fe.Reason)
	}
	if fe.Member != "" {
		return t(ec, "console.statements.inMember", fileName(fe.Member), why)
	}
	return why
}

// foundKind names what a refused file is.
func foundKind(ec echo.Context, found string) string {
	switch found {
	case "pdf", "mt940", "html":
		return t(ec, "console.statements.kind."+found)
	case "":
		return t(ec, "console.statements.kind.other")
	}
	return found
}
