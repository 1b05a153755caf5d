package sepa

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/text/encoding/ianaindex"

	"github.com/paybybank/checkout/rules"
)

// Statement is one account's statement (camt.053 Stmt) or debit and credit
// notification (camt.054 Ntfctn).
type Statement struct {
	Message  string    // the namespace's message id: "camt.053.001.02", "camt.054.001.08"…
	ID       string    // Stmt/Id or Ntfctn/Id
	Account  string    // Acct/Id/IBAN; "" where the bank names the account otherwise
	Currency string    // Acct/Ccy, else the currency of the amounts
	From, To time.Time // FrToDt, else the earliest and latest booking dates
	Entries  []Entry
}

// Entry is one booking on the account (Ntry): a single transfer, or a batch
// of them booked as one amount.
type Entry struct {
	Ref            string          // the bank's reference: AcctSvcrRef, else NtryRef
	Booked         time.Time       // BookgDt (Dt, or the date of DtTm as written), midnight UTC; zero if not booked
	Amount         decimal.Decimal // Amt, never negative: Credit says the direction
	Credit         bool            // CdtDbtInd is CRDT: money came in
	Reversal       bool            // RvslInd: this entry undoes an earlier one
	Status         string          // BOOK, PDNG, INFO (Sts, or Sts/Cd from version 08 on)
	Bank           string          // BkTxCd: "PMNT/RCDT/ESCT" from Domn/Fmly/SubFmlyCd, else Prtry/Cd
	AdditionalInfo string          // AddtlNtryInf, where many banks put the booking text
	Details        []Detail        // NtryDtls/TxDtls, one per transaction
}

// Detail is one transaction of an entry (TxDtls).
type Detail struct {
	EndToEndID     string          // Refs/EndToEndId: a refund's Reference(id)
	InstructionID  string          // Refs/InstrId
	TransactionID  string          // Refs/TxId
	MandateID      string          // Refs/MndtId
	Amount         decimal.Decimal // Amt, else AmtDtls/TxAmt/Amt; zero when absent (then the entry's)
	Remittance     []string        // RmtInf/Ustrd lines and RmtInf/Strd/CdtrRefInf/Ref
	Counterparty   string          // the other party's name (RltdPties Dbtr or Cdtr, Nm or Pty/Nm)
	CounterIBAN    string          // the other party's IBAN
	ReturnReason   string          // RtrInf/Rsn/Cd ("AC04"), or Prtry, for a returned transfer; see ReturnReasons
	AdditionalInfo string          // AddtlTxInf and RtrInf/AddtlInf
}

// FileError says why an uploaded file could not be read, in a Reason the UI
// can say in the person's language; Detail says more, in English, for logs
// and support.
type FileError struct {
	Reason string // one of the Reason constants
	Member string // the member of a .zip that was wrong; "" for the file itself
	Found  string // for ReasonNotCamt, what the file is: "pdf", "mt940", "html", or a message id ("pain.001.001.09")
	Detail string
}

func (e *FileError) Error() string {
	s := "sepa: " + e.Reason
	if e.Member != "" {
		s += " in " + e.Member
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Reasons a file is refused, stable keys for FileError.Reason.
const (
	ReasonEmpty     = "empty"      // nothing in it, or a .zip with no statements
	ReasonTooLarge  = "too-large"  // over MaxFileSize
	ReasonNotXML    = "not-xml"    // neither XML nor a .zip
	ReasonNotCamt   = "not-camt"   // another kind of file or message: Found says which
	ReasonDoctype   = "doctype"    // a DOCTYPE or entity declaration, refused as an attack
	ReasonTruncated = "truncated"  // the XML stops before its end: a download cut short
	ReasonMalformed = "malformed"  // broken XML
	ReasonInvalid   = "invalid"    // a camt document that breaks the standard where it matters
	ReasonZipBomb   = "zip-bomb"   // a .zip unpacking beyond MaxUnpacked or with over MaxZipMembers members
	ReasonNestedZip = "nested-zip" // a .zip inside the .zip
	ReasonBrokenZip = "broken-zip" // a .zip that cannot be opened or unpacked
)

// Bounds on what ReadStatements takes, so that an upload cannot exhaust the
// server: a year of daily statements of a busy shop is a few megabytes.
const (
	MaxFileSize   = 20 << 20  // bytes of the uploaded file
	MaxUnpacked   = 100 << 20 // bytes of all the members of a .zip, unpacked
	MaxZipMembers = 1000      // members of a .zip
	maxDepth      = 64        // nesting of XML elements; camt needs about 15
	maxText       = 64 << 10  // text of one element; camt's longest is 500 characters
)

var (
	errTooLarge = errors.New("over the size limit")
	utf8BOM     = []byte("\xef\xbb\xbf")
	camtMessage = regexp.MustCompile(`\bcamt\.05[34]\.001\.(0[2-9]|1[0-9])\b`)
	isoMessage  = regexp.MustCompile(`\b[a-z]{4}\.[0-9]{3}\.[0-9]{3}\.[0-9]{2}\b`)
)

// ReadStatements reads one uploaded file: a camt.053 statement or camt.054
// notification (versions 02 to 08, and later ones of the same shape), or a
// .zip of them as many banks export, and gives every statement in it. name is
// the file's name for messages; size is its length if known, else -1.
//
// It reads the XML token by token, one entry at a time, and never the whole
// tree, so a statement of ten thousand entries takes little memory beyond
// the result. Whatever is wrong gives a *FileError and no statements at all,
// so a half-read file is never taken for a whole one: a file over 20 MB, a
// .zip that unpacks beyond 100 MB or holds over 1,000 members or another
// .zip, XML with a DOCTYPE (the door to entity attacks), anything that is not
// camt.053 or camt.054 (PDF, MT940, HTML, pain.001…), an empty or truncated
// file, an amount that is not a decimal number.
func ReadStatements(name string, r io.Reader, size int64) ([]Statement, error) {
	if size > MaxFileSize {
		return nil, &FileError{Reason: ReasonTooLarge, Detail: fmt.Sprintf("%s has %d bytes, more than %d", name, size, MaxFileSize)}
	}
	in := bufio.NewReaderSize(&capReader{r: r, left: MaxFileSize}, 64<<10)
	head, err := in.Peek(512)
	if err != nil && err != io.EOF {
		return nil, readError(name, err)
	}
	if isZip(head) {
		data, err := io.ReadAll(in)
		if err != nil {
			return nil, readError(name, err)
		}
		return readZip(data)
	}
	stmts, err := readDocument(in, head)
	if _, ok := err.(*FileError); err != nil && !ok {
		return nil, readError(name, err)
	}
	return stmts, err
}

// readError turns an error of reading the upload into a FileError where
// the file is at fault, and leaves others (a broken connection) as they are.
func readError(name string, err error) error {
	if errors.Is(err, errTooLarge) {
		return &FileError{Reason: ReasonTooLarge, Detail: fmt.Sprintf("%s has more than %d bytes", name, MaxFileSize)}
	}
	return fmt.Errorf("sepa: reading %s: %w", name, err)
}

func isZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// readZip reads every statement of every member of a .zip. Its unpacked
// size is bounded by the sizes the .zip declares, which archive/zip holds
// each member to (it fails a member that inflates beyond its size). Folders
// and the metadata macOS adds (__MACOSX/, ._name, .DS_Store) are passed over.
func readZip(data []byte) ([]Statement, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are never used as paths here
		return nil, &FileError{Reason: ReasonBrokenZip, Detail: err.Error()}
	}
	if len(zr.File) > MaxZipMembers {
		return nil, &FileError{Reason: ReasonZipBomb, Detail: fmt.Sprintf("%d members, more than %d", len(zr.File), MaxZipMembers)}
	}
	var unpacked uint64
	for _, f := range zr.File {
		unpacked += f.UncompressedSize64
		if unpacked > MaxUnpacked {
			return nil, &FileError{Reason: ReasonZipBomb, Detail: fmt.Sprintf("unpacks to more than %d bytes", MaxUnpacked)}
		}
	}
	var all []Statement
	read := 0
	for _, f := range zr.File {
		base := path.Base(f.Name)
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") || strings.HasPrefix(base, "._") || base == ".DS_Store" {
			continue
		}
		stmts, err := readMember(f)
		if err != nil {
			err.Member = f.Name
			return nil, err
		}
		all = append(all, stmts...)
		read++
	}
	if read == 0 {
		return nil, &FileError{Reason: ReasonEmpty, Detail: "the .zip holds no files"}
	}
	return all, nil
}

func readMember(f *zip.File) ([]Statement, *FileError) {
	rc, err := f.Open()
	if err != nil {
		return nil, &FileError{Reason: ReasonBrokenZip, Detail: err.Error()}
	}
	defer rc.Close()
	in := bufio.NewReaderSize(rc, 64<<10)
	head, err := in.Peek(512)
	if err != nil && err != io.EOF {
		return nil, &FileError{Reason: ReasonBrokenZip, Detail: err.Error()}
	}
	if isZip(head) {
		return nil, &FileError{Reason: ReasonNestedZip, Detail: "a .zip inside the .zip"}
	}
	stmts, err := readDocument(in, head)
	if fe, ok := err.(*FileError); ok {
		return nil, fe
	}
	if err != nil {
		return nil, &FileError{Reason: ReasonBrokenZip, Detail: err.Error()}
	}
	return stmts, nil
}

// capReader reads from r until left bytes are spent, then fails with
// errTooLarge, so that a file over the limit is refused rather than cut.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

// sniff tells apart, from a file's first bytes, the things people upload
// instead of a camt statement. White space alone is left to the XML
// decoder, which sees whether anything follows it.
func sniff(head []byte) *FileError {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	lower := bytes.ToLower(t)
	switch {
	case len(t) == 0:
		return nil
	case bytes.HasPrefix(t, []byte("%PDF")):
		return &FileError{Reason: ReasonNotCamt, Found: "pdf", Detail: "a PDF document"}
	case bytes.HasPrefix(t, []byte("{1:")) || bytes.Contains(t, []byte(":20:")) && (bytes.Contains(t, []byte(":25:")) || bytes.Contains(t, []byte(":60F:"))):
		return &FileError{Reason: ReasonNotCamt, Found: "mt940", Detail: "an MT940 statement"}
	case bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")):
		return &FileError{Reason: ReasonNotCamt, Found: "html", Detail: "an HTML page"}
	case bytes.HasPrefix(head, []byte("\xfe\xff")) || bytes.HasPrefix(head, []byte("\xff\xfe")):
		return &FileError{Reason: ReasonNotXML, Detail: "UTF-16 text"}
	case t[0] != '<':
		return &FileError{Reason: ReasonNotXML, Detail: "the file is not XML"}
	}
	return nil
}

// readDocument reads one camt XML document.
func readDocument(r io.Reader, head []byte) ([]Statement, error) {
	if fe := sniff(head); fe != nil {
		return nil, fe
	}
	src := &watchedReader{r: bufio.NewReader(r)}
	d := xml.NewDecoder(src)
	d.CharsetReader = charsetReader
	p := &camtParser{}
	blank := true // nothing but white space so far
	for {
		tok, err := d.Token()
		if err == io.EOF && blank {
			return nil, &FileError{Reason: ReasonEmpty, Detail: "the file is empty"}
		}
		if err == io.EOF {
			return nil, &FileError{Reason: ReasonTruncated, Detail: "the document has no element"}
		}
		if err != nil {
			return nil, xmlError(err, src.err)
		}
		if c, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(bytes.TrimPrefix(c, utf8BOM))) > 0 {
			blank = false
		}
		var done bool
		switch t := tok.(type) {
		case xml.StartElement:
			err = p.start(t)
		case xml.EndElement:
			done, err = p.end(t)
		case xml.CharData:
			if len(p.stack) > 0 {
				if len(p.text)+len(t) > maxText {
					err = p.invalid("an element holds over %d bytes of text", maxText)
				}
				p.text = append(p.text, t...)
			}
		case xml.Directive:
			return nil, &FileError{Reason: ReasonDoctype, Detail: "a DOCTYPE or entity declaration"}
		}
		if err != nil {
			return nil, err
		}
		if done {
			// What follows the document still counts towards the limits.
			if _, err := io.Copy(io.Discard, src); err != nil {
				return nil, err
			}
			return p.stmts, nil
		}
	}
}

// charsetReader reads the encodings besides UTF-8 some banks still declare,
// ISO-8859-1 and Windows-1252 most of all.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	enc, err := ianaindex.IANA.Encoding(label)
	if err != nil || enc == nil {
		return nil, errors.New("an encoding this reader does not know")
	}
	return enc.NewDecoder().Reader(in), nil
}

// xmlError gives a FileError for what is wrong with the document, and the
// error of reading it, readErr, as it is.
func xmlError(err, readErr error) error {
	var syntax *xml.SyntaxError
	switch {
	case readErr != nil:
		return readErr
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syntax) && syntax.Msg == "unexpected EOF":
		return &FileError{Reason: ReasonTruncated, Detail: "the XML stops before its end"}
	case errors.As(err, &syntax):
		return &FileError{Reason: ReasonMalformed, Detail: fmt.Sprintf("line %d: %s", syntax.Line, syntax.Msg)}
	}
	return &FileError{Reason: ReasonMalformed, Detail: err.Error()}
}

// watchedReader notes the error of reading the document, which the XML
// decoder returns alike with what it finds wrong in the document.
type watchedReader struct {
	r   *bufio.Reader
	err error
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.note(err)
	return n, err
}

func (w *watchedReader) ReadByte() (byte, error) {
	c, err := w.r.ReadByte()
	w.note(err)
	return c, err
}

func (w *watchedReader) note(err error) {
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
}

// camtParser follows the elements of a camt document and fills statements,
// entries and details as their elements close. A field is known by its path
// below the Stmt, Ntry or TxDtls it belongs to, which is the same in every
// version where the versions agree; where they differ, each path is listed.
type camtParser struct {
	message string
	stack   []string
	text    []byte
	stmts   []Statement

	stmt      *Statement
	stmtDepth int
	ccy       string // the first Ccy attribute of an amount, for a statement without Acct/Ccy

	entry      *Entry
	entryDepth int
	amount     string
	indicator  string
	badDate    string
	domain     [3]string
	prtry      string

	detail      *Detail
	detailDepth int
	txAmount    string
	amtDtls     string
	parties     [2]party // debtor, creditor
	rtrPrtry    string
}

type party struct{ name, iban string }

func (p *camtParser) invalid(format string, args ...any) *FileError {
	return &FileError{Reason: ReasonInvalid, Detail: fmt.Sprintf(format, args...)}
}

func (p *camtParser) start(t xml.StartElement) error {
	name := t.Name.Local
	depth := len(p.stack)
	p.stack = append(p.stack, name)
	p.text = p.text[:0]
	if depth >= maxDepth {
		return p.invalid("elements nested over %d deep", maxDepth)
	}
	switch {
	case depth == 0:
		return p.root(t)
	case depth == 1:
		want := "BkToCstmrStmt"
		if strings.HasPrefix(p.message, "camt.054") {
			want = "BkToCstmrDbtCdtNtfctn"
		}
		if name != want {
			return p.invalid("%s holds %s, not %s", p.message, name, want)
		}
	case depth == 2 && (name == "Stmt" || name == "Ntfctn"):
		p.stmt = &Statement{Message: p.message}
		p.stmtDepth, p.ccy = depth, ""
	case p.stmt != nil && depth == p.stmtDepth+1 && name == "Ntry":
		p.entry = &Entry{}
		p.entryDepth, p.amount, p.indicator, p.badDate, p.domain, p.prtry = depth, "", "", "", [3]string{}, ""
	case p.entry != nil && depth == p.entryDepth+2 && name == "TxDtls" && p.stack[depth-1] == "NtryDtls":
		p.detail = &Detail{}
		p.detailDepth, p.txAmount, p.amtDtls, p.parties, p.rtrPrtry = depth, "", "", [2]party{}, ""
	}
	if p.stmt != nil && p.ccy == "" && name == "Amt" {
		for _, a := range t.Attr {
			if a.Name.Local == "Ccy" {
				p.ccy = a.Value
			}
		}
	}
	return nil
}

// root checks that the document is a camt.053 or camt.054 and notes which.
func (p *camtParser) root(t xml.StartElement) error {
	ns := t.Name.Space
	if t.Name.Local == "Document" {
		if m := camtMessage.FindString(ns); m != "" {
			p.message = m
			return nil
		}
	}
	found := isoMessage.FindString(ns)
	if found == "" {
		found = strings.ToLower(t.Name.Local)
	}
	return &FileError{Reason: ReasonNotCamt, Found: found, Detail: fmt.Sprintf("a %s document", found)}
}

// end fills the field that closes and, at the end of the document, reports
// done.
func (p *camtParser) end(t xml.EndElement) (done bool, err error) {
	depth := len(p.stack) - 1
	text := string(bytes.TrimSpace(p.text))
	p.text = p.text[:0]
	switch {
	case p.detail != nil && depth == p.detailDepth:
		err = p.endDetail()
	case p.detail != nil && text != "":
		p.detailField(strings.Join(p.stack[p.detailDepth+1:], "/"), text)
	case p.entry != nil && depth == p.entryDepth:
		err = p.endEntry()
	case p.entry != nil && text != "":
		p.entryField(strings.Join(p.stack[p.entryDepth+1:], "/"), text)
	case p.stmt != nil && depth == p.stmtDepth:
		err = p.endStatement()
	case p.stmt != nil && text != "":
		err = p.statementField(strings.Join(p.stack[p.stmtDepth+1:], "/"), text)
	case depth == 0:
		if len(p.stmts) == 0 {
			err = p.invalid("the %s document has no statement", p.message)
		}
		done = true
	}
	p.stack = p.stack[:depth]
	return done, err
}

func (p *camtParser) statementField(rel, text string) error {
	var err error
	switch rel {
	case "Id":
		p.stmt.ID = text
	case "Acct/Id/IBAN":
		p.stmt.Account = rules.NormalizeIBAN(text)
	case "Acct/Ccy":
		p.stmt.Currency = text
	case "FrToDt/FrDtTm":
		p.stmt.From, err = parseDateTime(text)
	case "FrToDt/ToDtTm":
		p.stmt.To, err = parseDateTime(text)
	}
	if err != nil {
		return p.invalid("statement %s: %s %q: %v", p.stmt.ID, rel, text, err)
	}
	return nil
}

func (p *camtParser) endStatement() error {
	s := p.stmt
	if s.Currency == "" {
		s.Currency = p.ccy
	}
	if s.From.IsZero() || s.To.IsZero() {
		var from, to time.Time
		for _, e := range s.Entries {
			if e.Booked.IsZero() {
				continue
			}
			if from.IsZero() || e.Booked.Before(from) {
				from = e.Booked
			}
			if e.Booked.After(to) {
				to = e.Booked
			}
		}
		if s.From.IsZero() {
			s.From = from
		}
		if s.To.IsZero() {
			s.To = to
		}
	}
	p.stmts = append(p.stmts, *s)
	p.stmt = nil
	return nil
}

func (p *camtParser) entryField(rel, text string) {
	e := p.entry
	switch rel {
	case "Amt":
		p.amount = text
	case "CdtDbtInd":
		p.indicator = text
	case "RvslInd":
		e.Reversal = text == "true" || text == "1"
	case "Sts", "Sts/Cd", "Sts/Prtry":
		e.Status = text
	case "BookgDt/Dt", "BookgDt/DtTm":
		e.Booked, _ = parseDay(text) // checked in endEntry, where the entry is named
		if e.Booked.IsZero() {
			p.badDate = text
		}
	case "AcctSvcrRef":
		e.Ref = text
	case "NtryRef":
		if e.Ref == "" {
			e.Ref = text
		}
	case "BkTxCd/Domn/Cd":
		p.domain[0] = text
	case "BkTxCd/Domn/Fmly/Cd":
		p.domain[1] = text
	case "BkTxCd/Domn/Fmly/SubFmlyCd":
		p.domain[2] = text
	case "BkTxCd/Prtry/Cd":
		p.prtry = text
	case "AddtlNtryInf":
		e.AdditionalInfo = text
	}
}

func (p *camtParser) endEntry() error {
	e := p.entry
	n := len(p.stmt.Entries) + 1
	if p.badDate != "" {
		return p.invalid("statement %s, entry %d: booking date %q", p.stmt.ID, n, p.badDate)
	}
	amount, err := parseAmount(p.amount)
	if err != nil {
		return p.invalid("statement %s, entry %d: amount %q: %v", p.stmt.ID, n, p.amount, err)
	}
	e.Amount = amount
	switch p.indicator {
	case "CRDT":
		e.Credit = true
	case "DBIT":
	default:
		return p.invalid("statement %s, entry %d: CdtDbtInd %q is neither CRDT nor DBIT", p.stmt.ID, n, p.indicator)
	}
	switch {
	case p.domain[0] != "":
		e.Bank = strings.Join(p.domain[:], "/")
	default:
		e.Bank = p.prtry
	}
	p.stmt.Entries = append(p.stmt.Entries, *e)
	p.entry = nil
	return nil
}

func (p *camtParser) detailField(rel, text string) {
	d := p.detail
	switch rel {
	case "Refs/EndToEndId":
		d.EndToEndID = text
	case "Refs/InstrId":
		d.InstructionID = text
	case "Refs/TxId":
		d.TransactionID = text
	case "Refs/MndtId":
		d.MandateID = text
	case "Amt":
		p.txAmount = text
	case "AmtDtls/TxAmt/Amt":
		p.amtDtls = text
	case "RmtInf/Ustrd", "RmtInf/Strd/CdtrRefInf/Ref":
		d.Remittance = append(d.Remittance, text)
	case "RltdPties/Dbtr/Nm", "RltdPties/Dbtr/Pty/Nm":
		p.parties[0].name = text
	case "RltdPties/DbtrAcct/Id/IBAN":
		p.parties[0].iban = rules.NormalizeIBAN(text)
	case "RltdPties/Cdtr/Nm", "RltdPties/Cdtr/Pty/Nm":
		p.parties[1].name = text
	case "RltdPties/CdtrAcct/Id/IBAN":
		p.parties[1].iban = rules.NormalizeIBAN(text)
	case "RtrInf/Rsn/Cd":
		d.ReturnReason = text
	case "RtrInf/Rsn/Prtry":
		p.rtrPrtry = text
	case "RtrInf/AddtlInf", "AddtlTxInf":
		d.AdditionalInfo = strings.TrimSpace(d.AdditionalInfo + " " + text)
	}
}

func (p *camtParser) endDetail() error {
	d := p.detail
	raw := p.txAmount
	if raw == "" {
		raw = p.amtDtls
	}
	if raw != "" {
		amount, err := parseAmount(raw)
		if err != nil {
			return p.invalid("statement %s, entry %d, transaction %d: amount %q: %v",
				p.stmt.ID, len(p.stmt.Entries)+1, len(p.entry.Details)+1, raw, err)
		}
		d.Amount = amount
	}
	if d.ReturnReason == "" {
		d.ReturnReason = p.rtrPrtry
	}
	// The other party is the one whose account is not the statement's;
	// where that does not tell, the payer of a credit and the payee of a
	// debit; and where that one is missing, whichever is given.
	other := 1
	switch {
	case p.stmt.Account != "" && p.parties[0].iban == p.stmt.Account:
		other = 1
	case p.stmt.Account != "" && p.parties[1].iban == p.stmt.Account:
		other = 0
	case p.indicator == "CRDT":
		other = 0
	}
	if p.parties[other] == (party{}) {
		other = 1 - other
	}
	d.Counterparty, d.CounterIBAN = p.parties[other].name, p.parties[other].iban
	p.entry.Details = append(p.entry.Details, *d)
	p.detail = nil
	return nil
}

// parseAmount reads an ISO 20022 amount: a decimal number with a point,
// never negative (the direction is CdtDbtInd's).
func parseAmount(s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, errors.New("missing")
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return decimal.Decimal{}, errors.New("not a decimal number")
		}
	}
	return decimal.NewFromString(s)
}

// parseDay reads an ISODate, or the date of an ISODateTime as the bank wrote
// it (its own time zone), as midnight UTC: a booking day, not an instant.
func parseDay(s string) (time.Time, error) {
	if len(s) < 10 {
		return time.Time{}, errors.New("not a date")
	}
	t, err := time.Parse("2006-01-02", s[:10])
	if err != nil {
		return time.Time{}, err
	}
	if len(s) > 10 && s[10] != 'T' && s[10] != 'Z' && s[10] != '+' && s[10] != '-' {
		return time.Time{}, errors.New("not a date")
	}
	return t, nil
}

// parseDateTime reads an ISODateTime, with or without fractions of a second
// and a time zone (UTC when none is written).
func parseDateTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a date and time")
}
