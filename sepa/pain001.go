package sepa

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paybybank/checkout/rules"
)

// Account is a party of a transfer.
type Account struct {
	Name    string
	IBAN    string  // normalized: no spaces, upper case (NormalizeIBAN)
	BIC     string  // optional inside the EEA (IBANNeedsBIC)
	Address Address // optional; the debtor's is needed for a transfer leaving the EEA
}

// Address is a party's postal address. The rulebook asks for the payer's
// address, with at least its town and country, when a transfer goes to or
// comes from a bank outside the EEA (Switzerland, the United Kingdom…), as
// the EU's rules on information accompanying transfers require.
type Address struct {
	Street, Building, PostCode, Town string
	Country                          string // ISO 3166 code: "DE"
}

// Transfer is one credit transfer of a file: a refund.
type Transfer struct {
	EndToEndID string          // the refund's id; it comes back on the statements as Reference(EndToEndID)
	Amount     decimal.Decimal // EUR, at least 0.01, at most 2 decimals
	Creditor   Account         // the payer who gets the money back
	Remittance string          // unstructured remittance, transliterated and cut to 140
}

// File is a SEPA credit transfer initiation: one payment block from the
// merchant's account.
type File struct {
	MessageID string    // unique per file; written as Reference(MessageID)
	Created   time.Time // CreDtTm, written in UTC
	Execution time.Time // requested execution date; its date in its own location
	Initiator string    // initiating party's name: the shop
	Debtor    Account   // the merchant's own account
	Transfers []Transfer
}

// MaxTransfers bounds the transfers of one file, which keeps it to a few
// megabytes; a bigger refund run is written as several files.
const MaxTransfers = 10000

// Limits the EPC's 2023 implementation guidelines set for a credit transfer.
const (
	maxNameLen       = 70
	maxRemittanceLen = 140
	maxReferenceLen  = 35
)

var (
	minAmount = decimal.New(1, -2)
	maxAmount = decimal.RequireFromString("999999999.99")
)

// CreditTransfer writes f as a pain.001.001.09 document after the EPC's SEPA
// Credit Transfer customer-to-PSP implementation guidelines (EPC132-08, 2023),
// ready to upload to the merchant's bank. The same File always gives the same
// bytes, so a file can be written again for a person who lost it and still be
// the one the bank saw.
//
// Names and remittance are transliterated to the SEPA character set and cut
// to the lengths the guidelines allow (70 and 140), so that no bank refuses
// the file for its text. Each transfer is marked as the transfer back of a
// received payment (purpose RRCT), which is what a refund is. An input the
// bank could not execute is refused with an error naming the transfer and
// what is wrong with it: no transfers, an amount under 0.01 or with more than
// two decimals, an IBAN that is mistyped or outside SEPA, a missing BIC where
// the country needs one, a repeated EndToEndID.
func CreditTransfer(f File) ([]byte, error) {
	if len(f.Transfers) == 0 {
		return nil, errors.New("sepa: the file has no transfers")
	}
	if len(f.Transfers) > MaxTransfers {
		return nil, fmt.Errorf("sepa: %d transfers are too many for one file (at most %d)", len(f.Transfers), MaxTransfers)
	}
	msgID, err := checkReference("message id", f.MessageID)
	if err != nil {
		return nil, err
	}
	if f.Created.IsZero() || f.Execution.IsZero() {
		return nil, errors.New("sepa: the file needs its creation time and its execution date")
	}
	initiator := cut(Transliterate(f.Initiator), maxNameLen)
	if !strings.ContainsFunc(initiator, func(r rune) bool { return isAlnum(byte(r)) }) {
		return nil, fmt.Errorf("sepa: the initiating party has no name in Latin letters or digits: %q", f.Initiator)
	}
	debtor, err := checkAccount("debtor", f.Debtor, false)
	if err != nil {
		return nil, err
	}
	needAddress := rules.IBANNeedsBIC(debtor.IBAN)
	type transfer struct {
		id, amount, remittance string
		creditor               Account
	}
	transfers := make([]transfer, len(f.Transfers))
	seen := make(map[string]int, len(f.Transfers))
	var sum decimal.Decimal
	for i, t := range f.Transfers {
		which := fmt.Sprintf("transfer %d (%s)", i+1, t.EndToEndID)
		id, err := checkReference(which+": end-to-end id", t.EndToEndID)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("sepa: %s has the end-to-end id of transfer %d: the refund would be paid twice", which, j+1)
		}
		seen[id] = i
		if err := checkAmount(t.Amount); err != nil {
			return nil, fmt.Errorf("sepa: %s: %w", which, err)
		}
		creditor, err := checkAccount(which+": creditor", t.Creditor, true)
		if err != nil {
			return nil, err
		}
		needAddress = needAddress || rules.IBANNeedsBIC(creditor.IBAN)
		sum = sum.Add(t.Amount)
		transfers[i] = transfer{id, t.Amount.StringFixed(2), cut(Transliterate(t.Remittance), maxRemittanceLen), creditor}
	}
	if needAddress && (debtor.Address.Town == "" || debtor.Address.Country == "") {
		return nil, errors.New("sepa: a transfer leaving the EEA needs the debtor's town and country")
	}

	w := &xmlWriter{}
	w.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.open(`Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"`)
	w.open("CstmrCdtTrfInitn")
	w.open("GrpHdr")
	w.elem("MsgId", msgID)
	w.elem("CreDtTm", f.Created.UTC().Format("2006-01-02T15:04:05Z"))
	w.elem("NbOfTxs", strconv.Itoa(len(transfers)))
	w.elem("CtrlSum", sum.StringFixed(2))
	w.open("InitgPty")
	w.elem("Nm", initiator)
	w.close("InitgPty")
	w.close("GrpHdr")

	w.open("PmtInf")
	w.elem("PmtInfId", msgID)
	w.elem("PmtMtd", "TRF")
	w.elem("NbOfTxs", strconv.Itoa(len(transfers)))
	w.elem("CtrlSum", sum.StringFixed(2))
	w.open("PmtTpInf")
	w.open("SvcLvl")
	w.elem("Cd", "SEPA")
	w.close("SvcLvl")
	w.close("PmtTpInf")
	w.open("ReqdExctnDt")
	w.elem("Dt", f.Execution.Format("2006-01-02"))
	w.close("ReqdExctnDt")
	w.party("Dbtr", debtor)
	w.account("DbtrAcct", debtor.IBAN)
	w.open("DbtrAgt")
	w.open("FinInstnId")
	if debtor.BIC != "" {
		w.elem("BICFI", debtor.BIC)
	} else {
		w.open("Othr")
		w.elem("Id", "NOTPROVIDED")
		w.close("Othr")
	}
	w.close("FinInstnId")
	w.close("DbtrAgt")
	w.elem("ChrgBr", "SLEV")
	for _, t := range transfers {
		w.open("CdtTrfTxInf")
		w.open("PmtId")
		w.elem("EndToEndId", t.id)
		w.close("PmtId")
		w.open("Amt")
		w.elem(`InstdAmt Ccy="EUR"`, t.amount)
		w.close("Amt")
		if t.creditor.BIC != "" {
			w.open("CdtrAgt")
			w.open("FinInstnId")
			w.elem("BICFI", t.creditor.BIC)
			w.close("FinInstnId")
			w.close("CdtrAgt")
		}
		w.party("Cdtr", t.creditor)
		w.account("CdtrAcct", t.creditor.IBAN)
		w.open("Purp")
		w.elem("Cd", "RRCT")
		w.close("Purp")
		if t.remittance != "" {
			w.open("RmtInf")
			w.elem("Ustrd", t.remittance)
			w.close("RmtInf")
		}
		w.close("CdtTrfTxInf")
	}
	w.close("PmtInf")
	w.close("CstmrCdtTrfInitn")
	w.close("Document")
	return w.buf.Bytes(), nil
}

// Reference gives the form an identifier takes in a SEPA file, and so on the
// bank statements that report it: the SEPA character set, where a refund id
// such as "rf_3k9x" is written "rf-3k9x". Compare a statement's EndToEndID
// with Reference(id), not with id.
func Reference(id string) string {
	return Transliterate(id)
}

// checkReference gives an identifier's form in the file, or an error where
// the guidelines forbid it: empty, longer than 35, starting or ending with
// "/" or holding "//".
func checkReference(what, id string) (string, error) {
	ref := Reference(id)
	switch {
	case ref == "":
		return "", fmt.Errorf("sepa: %s is empty", what)
	case len(ref) > maxReferenceLen:
		return "", fmt.Errorf("sepa: %s %q is longer than %d characters", what, ref, maxReferenceLen)
	case strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || strings.Contains(ref, "//"):
		return "", fmt.Errorf("sepa: %s %q may not start or end with / nor hold //", what, ref)
	}
	return ref, nil
}

// checkAmount reports what the EPC forbids in an amount: less than 0.01,
// more than 999,999,999.99, or a fraction of a cent.
func checkAmount(a decimal.Decimal) error {
	switch {
	case a.LessThan(minAmount):
		return fmt.Errorf("amount %s is less than 0.01", a)
	case a.GreaterThan(maxAmount):
		return fmt.Errorf("amount %s is more than 999999999.99", a)
	case !a.Equal(a.Round(2)):
		return fmt.Errorf("amount %s has more than two decimals", a)
	}
	return nil
}

// checkAccount gives an account as it is written: name transliterated and
// cut to 70, IBAN and BIC normalized and checked. A beneficiary's bank
// outside the EEA must be named by its BIC; the debtor's bank knows itself.
func checkAccount(what string, a Account, beneficiary bool) (Account, error) {
	out := Account{
		Name: cut(Transliterate(a.Name), maxNameLen),
		IBAN: rules.NormalizeIBAN(a.IBAN),
		BIC:  compact(a.BIC),
		Address: Address{
			Street:   cut(Transliterate(a.Address.Street), 70),
			Building: cut(Transliterate(a.Address.Building), 16),
			PostCode: cut(Transliterate(a.Address.PostCode), 16),
			Town:     cut(Transliterate(a.Address.Town), 35),
			Country:  compact(a.Address.Country),
		},
	}
	if !strings.ContainsFunc(out.Name, func(r rune) bool { return isAlnum(byte(r)) }) {
		return out, fmt.Errorf("sepa: %s has no name in Latin letters or digits: %q", what, a.Name)
	}
	if c := out.Address.Country; c != "" && (len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z') {
		return out, fmt.Errorf("sepa: %s: country %q is not a two-letter ISO 3166 code", what, c)
	}
	if (out.Address != Address{}) && (out.Address.Town == "" || out.Address.Country == "") {
		return out, fmt.Errorf("sepa: %s: an address needs its town and country", what)
	}
	if fe := rules.CheckIBAN("iban", out.IBAN); fe != nil {
		return out, fmt.Errorf("sepa: %s: IBAN %q: %s", what, out.IBAN, fe.Message)
	}
	if out.BIC != "" {
		if fe := rules.CheckBIC("bic", out.BIC); fe != nil {
			return out, fmt.Errorf("sepa: %s: BIC %q: %s", what, out.BIC, fe.Message)
		}
	} else if beneficiary && rules.IBANNeedsBIC(out.IBAN) {
		return out, fmt.Errorf("sepa: %s: a transfer to %s needs the bank's BIC", what, out.IBAN[:2])
	}
	return out, nil
}

// cut shortens transliterated (so one byte a character) text to n
// characters, without a space at the end.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for len(s) > n || s != "" && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// xmlWriter writes an indented XML document whose element names are
// constants of this package and whose text is escaped.
type xmlWriter struct {
	buf   bytes.Buffer
	depth int
}

func (w *xmlWriter) raw(s string) { w.buf.WriteString(s) }

func (w *xmlWriter) indent() {
	for range w.depth {
		w.buf.WriteString("  ")
	}
}

// open starts an element; tag may carry attributes ("Document xmlns=...").
func (w *xmlWriter) open(tag string) {
	w.indent()
	w.buf.WriteString("<" + tag + ">\n")
	w.depth++
}

func (w *xmlWriter) close(name string) {
	w.depth--
	w.indent()
	w.buf.WriteString("</" + name + ">\n")
}

// elem writes an element holding text; tag may carry attributes.
func (w *xmlWriter) elem(tag, text string) {
	name, _, _ := strings.Cut(tag, " ")
	w.indent()
	w.buf.WriteString("<" + tag + ">")
	_ = xml.EscapeText(&w.buf, []byte(text)) // writing to a bytes.Buffer does not fail
	w.buf.WriteString("</" + name + ">\n")
}

// party writes a name and, when known, the postal address in its structured
// form (town and country at least), the form the EPC keeps when it retires
// unstructured address lines.
func (w *xmlWriter) party(tag string, a Account) {
	w.open(tag)
	w.elem("Nm", a.Name)
	if a.Address != (Address{}) {
		w.open("PstlAdr")
		for _, f := range []struct{ tag, text string }{
			{"StrtNm", a.Address.Street}, {"BldgNb", a.Address.Building},
			{"PstCd", a.Address.PostCode}, {"TwnNm", a.Address.Town}, {"Ctry", a.Address.Country},
		} {
			if f.text != "" {
				w.elem(f.tag, f.text)
			}
		}
		w.close("PstlAdr")
	}
	w.close(tag)
}

func (w *xmlWriter) account(tag, iban string) {
	w.open(tag)
	w.open("Id")
	w.elem("IBAN", iban)
	w.close("Id")
	w.close(tag)
}
