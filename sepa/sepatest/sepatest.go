// Package sepatest writes bank statements for tests: the camt.053 and
// camt.054 documents a merchant's bank would export after the refunds the
// app sent and the payments shoppers made, so that the code reading them can
// be tested with files of the shape banks produce. Every document it writes
// is valid against its version's ISO 20022 schema (checked by this
// package's tests with ValidateXSD).
package sepatest

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Entry is one booking on the statement.
type Entry struct {
	Ref          string          // the bank's reference (AcctSvcrRef)
	Booked       time.Time       // the booking day (BookgDt/Dt); a time of day other than midnight writes BookgDt/DtTm; zero writes a pending entry
	Amount       decimal.Decimal // positive; zero in a batch entry stands for the sum of its Batch
	Credit       bool            // money came in (CRDT), else went out (DBIT)
	Reversal     bool            // the entry undoes an earlier one (RvslInd)
	EndToEndID   string          // the payment's end-to-end id, as the bank reports it
	Remittance   string          // unstructured remittance (RmtInf/Ustrd)
	Counterparty string          // the other party's name: the payer of a credit, the payee of a debit or return
	CounterIBAN  string
	ReturnReason string  // a return reason code ("AC04"): the entry gives back a transfer that could not be paid
	Batch        []Entry // transactions booked together as this one entry, each its own TxDtls; only their EndToEndID, Amount, Remittance, Counterparty, CounterIBAN and ReturnReason count
}

// Statement writes a camt.053 document of the given version ("02", "04" or
// "08") for account iban, covering from to to, valid against that version's
// schema. It panics on another version: a test's mistake.
func Statement(version string, iban string, from, to time.Time, entries []Entry) []byte {
	return write("camt.053.001."+checkVersion(version), iban, from, to, entries)
}

// Notification writes a camt.054 debit and credit notification of the given
// version ("02", "04" or "08") for account iban, valid against that
// version's schema. It panics on another version.
func Notification(version string, iban string, entries []Entry) []byte {
	return write("camt.054.001."+checkVersion(version), iban, time.Time{}, time.Time{}, entries)
}

func checkVersion(v string) string {
	if v != "02" && v != "04" && v != "08" {
		panic(fmt.Sprintf("sepatest: camt version %q: this package writes 02, 04 and 08", v))
	}
	return v
}

// Zip packs files into a .zip, as banks export several statements at once,
// in the order of their names.
func Zip(files map[string][]byte) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f, err := w.Create(name)
		if err == nil {
			_, err = f.Write(files[name])
		}
		if err != nil {
			panic(err) // writing to memory does not fail
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Schema gives the path of the official schema of a message ("pain.001.001.09",
// "camt.053.001.08"), kept in sepa/testdata, for any package's tests.
func Schema(message string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", message+".xsd")
}

// ValidateXSD fails t when doc is not valid against the schema at xsd, as
// xmllint says. Where xmllint is missing it skips t, with the command that
// installs it, unless REQUIRE_XMLLINT is set (as in CI), where it fails:
// call it in a subtest of its own so the skip stops nothing else.
func ValidateXSD(t testing.TB, xsd string, doc []byte) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("REQUIRE_XMLLINT") != "" {
			t.Fatal("xmllint is missing and REQUIRE_XMLLINT is set: apt-get install libxml2-utils")
		}
		t.Skip("xmllint is missing, the schema is not checked: apt-get install libxml2-utils")
	}
	if _, err := os.Stat(xsd); err != nil {
		t.Fatalf("schema: %v", err)
	}
	file := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, file).CombinedOutput()
	if err != nil {
		t.Errorf("the document is not valid against %s:\n%s", filepath.Base(xsd), out)
	}
}

// writer writes one camt document, indented, with its text escaped.
type writer struct {
	buf     bytes.Buffer
	depth   int
	version int // 2, 4 or 8
}

func write(message, iban string, from, to time.Time, entries []Entry) []byte {
	w := &writer{version: int(message[len(message)-1] - '0')}
	statement := strings.HasPrefix(message, "camt.053")
	created := to
	if !statement {
		created = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, e := range entries {
			if e.Booked.After(created) {
				created = e.Booked
			}
		}
	}
	w.buf.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.open(`Document xmlns="urn:iso:std:iso:20022:tech:xsd:` + message + `"`)
	root, block, id := "BkToCstmrDbtCdtNtfctn", "Ntfctn", "N"+created.Format("20060102")
	if statement {
		root, block, id = "BkToCstmrStmt", "Stmt", "S"+from.Format("20060102")
	}
	w.open(root)
	w.open("GrpHdr")
	w.elem("MsgId", "MSG-"+id)
	w.elem("CreDtTm", created.Format(time.RFC3339))
	w.close("GrpHdr")
	w.open(block)
	w.elem("Id", id)
	w.elem("CreDtTm", created.Format(time.RFC3339))
	if statement {
		w.open("FrToDt")
		w.elem("FrDtTm", from.Format(time.RFC3339))
		w.elem("ToDtTm", to.Format(time.RFC3339))
		w.close("FrToDt")
	}
	w.open("Acct")
	w.open("Id")
	w.elem("IBAN", iban)
	w.close("Id")
	w.elem("Ccy", "EUR")
	w.close("Acct")
	if statement {
		var closing decimal.Decimal
		for _, e := range entries {
			if e.Credit {
				closing = closing.Add(amount(e))
			} else {
				closing = closing.Sub(amount(e))
			}
		}
		w.balance("OPBD", decimal.Zero, from)
		w.balance("CLBD", closing, to)
	}
	for _, e := range entries {
		w.entry(e, iban)
	}
	w.close(block)
	w.close(root)
	w.close("Document")
	return w.buf.Bytes()
}

// amount is what an entry books: its Amount, or its batch's sum.
func amount(e Entry) decimal.Decimal {
	if !e.Amount.IsZero() || len(e.Batch) == 0 {
		return e.Amount
	}
	var sum decimal.Decimal
	for _, b := range e.Batch {
		sum = sum.Add(b.Amount)
	}
	return sum
}

func (w *writer) balance(code string, amount decimal.Decimal, day time.Time) {
	w.open("Bal")
	w.open("Tp")
	w.open("CdOrPrtry")
	w.elem("Cd", code)
	w.close("CdOrPrtry")
	w.close("Tp")
	w.money("Amt", amount.Abs())
	w.elem("CdtDbtInd", indicator(!amount.IsNegative()))
	w.open("Dt")
	w.elem("Dt", day.Format("2006-01-02"))
	w.close("Dt")
	w.close("Bal")
}

func (w *writer) entry(e Entry, own string) {
	w.open("Ntry")
	w.money("Amt", amount(e))
	w.elem("CdtDbtInd", indicator(e.Credit))
	if e.Reversal {
		w.elem("RvslInd", "true")
	}
	status := "BOOK"
	if e.Booked.IsZero() {
		status = "PDNG"
	}
	if w.version >= 8 {
		w.open("Sts")
		w.elem("Cd", status)
		w.close("Sts")
	} else {
		w.elem("Sts", status)
	}
	if !e.Booked.IsZero() {
		w.open("BookgDt")
		if h, m, s := e.Booked.Clock(); h+m+s == 0 && e.Booked.Nanosecond() == 0 {
			w.elem("Dt", e.Booked.Format("2006-01-02"))
		} else {
			w.elem("DtTm", e.Booked.Format(time.RFC3339))
		}
		w.close("BookgDt")
	}
	if e.Ref != "" {
		w.elem("AcctSvcrRef", e.Ref)
	}
	w.bankCode(e)
	txs := e.Batch
	if len(txs) == 0 {
		txs = []Entry{e}
	}
	w.open("NtryDtls")
	for _, tx := range txs {
		w.transaction(tx, e.Credit, own)
	}
	w.close("NtryDtls")
	w.close("Ntry")
}

// bankCode writes the ISO bank transaction code of a SEPA credit transfer
// received (RCDT) or issued (ICDT), or of a transfer returned (RRTN).
func (w *writer) bankCode(e Entry) {
	family, sub := "ICDT", "ESCT"
	if e.Credit {
		family = "RCDT"
	}
	if e.ReturnReason != "" {
		family, sub = "ICDT", "RRTN"
	}
	w.open("BkTxCd")
	w.open("Domn")
	w.elem("Cd", "PMNT")
	w.open("Fmly")
	w.elem("Cd", family)
	w.elem("SubFmlyCd", sub)
	w.close("Fmly")
	w.close("Domn")
	w.close("BkTxCd")
}

// transaction writes one TxDtls. A returned transfer names its parties as
// the refund did: the merchant as debtor, the counterparty as creditor.
func (w *writer) transaction(tx Entry, credit bool, own string) {
	w.open("TxDtls")
	if tx.EndToEndID != "" {
		w.open("Refs")
		w.elem("EndToEndId", tx.EndToEndID)
		w.close("Refs")
	}
	if w.version >= 4 {
		w.money("Amt", tx.Amount)
		w.elem("CdtDbtInd", indicator(credit))
	} else {
		w.open("AmtDtls")
		w.open("TxAmt")
		w.money("Amt", tx.Amount)
		w.close("TxAmt")
		w.close("AmtDtls")
	}
	if tx.Counterparty != "" || tx.CounterIBAN != "" {
		w.open("RltdPties")
		switch {
		case tx.ReturnReason != "":
			w.account("DbtrAcct", own)
			w.party("Cdtr", tx.Counterparty)
			w.account("CdtrAcct", tx.CounterIBAN)
		case credit:
			w.party("Dbtr", tx.Counterparty)
			w.account("DbtrAcct", tx.CounterIBAN)
		default:
			w.party("Cdtr", tx.Counterparty)
			w.account("CdtrAcct", tx.CounterIBAN)
		}
		w.close("RltdPties")
	}
	if tx.Remittance != "" {
		w.open("RmtInf")
		w.elem("Ustrd", tx.Remittance)
		w.close("RmtInf")
	}
	if tx.ReturnReason != "" {
		w.open("RtrInf")
		w.open("Rsn")
		w.elem("Cd", tx.ReturnReason)
		w.close("Rsn")
		w.close("RtrInf")
	}
	w.close("TxDtls")
}

func (w *writer) party(tag, name string) {
	if name == "" {
		return
	}
	w.open(tag)
	if w.version >= 8 {
		w.open("Pty")
		w.elem("Nm", name)
		w.close("Pty")
	} else {
		w.elem("Nm", name)
	}
	w.close(tag)
}

func (w *writer) account(tag, iban string) {
	if iban == "" {
		return
	}
	w.open(tag)
	w.open("Id")
	w.elem("IBAN", iban)
	w.close("Id")
	w.close(tag)
}

func (w *writer) money(tag string, a decimal.Decimal) {
	w.elem(tag+` Ccy="EUR"`, a.StringFixed(2))
}

func indicator(credit bool) string {
	if credit {
		return "CRDT"
	}
	return "DBIT"
}

func (w *writer) indent() {
	w.buf.WriteString(strings.Repeat("  ", w.depth))
}

func (w *writer) open(tag string) {
	w.indent()
	w.buf.WriteString("<" + tag + ">\n")
	w.depth++
}

func (w *writer) close(name string) {
	w.depth--
	w.indent()
	w.buf.WriteString("</" + name + ">\n")
}

func (w *writer) elem(tag, text string) {
	name, _, _ := strings.Cut(tag, " ")
	w.indent()
	w.buf.WriteString("<" + tag + ">")
	_ = xml.EscapeText(&w.buf, []byte(text)) // writing to a bytes.Buffer does not fail
	w.buf.WriteString("</" + name + ">\n")
}
