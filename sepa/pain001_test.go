package sepa_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/sepa/sepatest"
	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// refundFile is a file of three refunds as the refund rules would make it.
func refundFile() sepa.File {
	return sepa.File{
		MessageID: "rfb_2026-12-05_1",
		Created:   time.Date(2026, 12, 5, 10, 30, 0, 0, time.FixedZone("CET", 3600)),
		Execution: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC),
		Initiator: "Bäckerei Müller & Söhne",
		Debtor: sepa.Account{Name: "Bäckerei Müller GmbH", IBAN: "DE89 3704 0044 0532 0130 00", BIC: "COBADEFFXXX",
			Address: sepa.Address{Street: "Hauptstraße", Building: "1", PostCode: "10115", Town: "Berlin", Country: "de"}},
		Transfers: []sepa.Transfer{
			{EndToEndID: "rf_3k9x", Amount: dec("12.5"), Creditor: sepa.Account{Name: "Zoë Ελληνίδου", IBAN: "FR1420041010050500013M02606"}, Remittance: "Refund A-1: damaged"},
			{EndToEndID: "rf_77aa", Amount: dec("0.01"), Creditor: sepa.Account{Name: "Łukasz Żółć", IBAN: "PL61109010140000071219812874"}, Remittance: "Refund A-2: late"},
			{EndToEndID: "rf_z", Amount: dec("999999999.99"), Creditor: sepa.Account{Name: "Grüezi AG", IBAN: "CH9300762011623852957", BIC: "UBSWCHZH80A"}},
		},
	}
}

// painDoc is what a bank reads from a credit transfer file.
type painDoc struct {
	MsgID     string `xml:"CstmrCdtTrfInitn>GrpHdr>MsgId"`
	Created   string `xml:"CstmrCdtTrfInitn>GrpHdr>CreDtTm"`
	NbOfTxs   string `xml:"CstmrCdtTrfInitn>GrpHdr>NbOfTxs"`
	CtrlSum   string `xml:"CstmrCdtTrfInitn>GrpHdr>CtrlSum"`
	Initiator string `xml:"CstmrCdtTrfInitn>GrpHdr>InitgPty>Nm"`
	PmtInf    struct {
		NbOfTxs   string `xml:"NbOfTxs"`
		CtrlSum   string `xml:"CtrlSum"`
		Execution string `xml:"ReqdExctnDt>Dt"`
		Debtor    string `xml:"Dbtr>Nm"`
		Town      string `xml:"Dbtr>PstlAdr>TwnNm"`
		IBAN      string `xml:"DbtrAcct>Id>IBAN"`
		BIC       string `xml:"DbtrAgt>FinInstnId>BICFI"`
		Tx        []struct {
			EndToEndID string `xml:"PmtId>EndToEndId"`
			Amount     struct {
				Value    string `xml:",chardata"`
				Currency string `xml:"Ccy,attr"`
			} `xml:"Amt>InstdAmt"`
			BIC        string `xml:"CdtrAgt>FinInstnId>BICFI"`
			Name       string `xml:"Cdtr>Nm"`
			IBAN       string `xml:"CdtrAcct>Id>IBAN"`
			Purpose    string `xml:"Purp>Cd"`
			Remittance string `xml:"RmtInf>Ustrd"`
		} `xml:"CdtTrfTxInf"`
	} `xml:"CstmrCdtTrfInitn>PmtInf"`
}

func readPain(t *testing.T, b []byte) painDoc {
	t.Helper()
	var doc painDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the file is not XML: %v", err)
	}
	return doc
}

func TestCreditTransferIsValidAndSaysWhatTheBankExecutes(t *testing.T) {
	f := refundFile()
	b, err := sepa.CreditTransfer(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("schema", func(t *testing.T) {
		sepatest.ValidateXSD(t, sepatest.Schema("pain.001.001.09"), b)
	})
	doc := readPain(t, b)
	for _, c := range []struct{ what, got, want string }{
		{"message id", doc.MsgID, "rfb-2026-12-05-1"},
		{"creation time", doc.Created, "2026-12-05T09:30:00Z"},
		{"number of transfers", doc.NbOfTxs, "3"},
		{"control sum", doc.CtrlSum, "1000000012.50"},
		{"block's number of transfers", doc.PmtInf.NbOfTxs, "3"},
		{"block's control sum", doc.PmtInf.CtrlSum, "1000000012.50"},
		{"initiator", doc.Initiator, "Baeckerei Mueller + Soehne"},
		{"execution date", doc.PmtInf.Execution, "2026-12-07"},
		{"debtor", doc.PmtInf.Debtor, "Baeckerei Mueller GmbH"},
		{"debtor IBAN", doc.PmtInf.IBAN, "DE89370400440532013000"},
		{"debtor BIC", doc.PmtInf.BIC, "COBADEFFXXX"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	want := []struct{ id, amount, bic, name, iban, remittance string }{
		{"rf-3k9x", "12.50", "", "Zoe Ellinidou", "FR1420041010050500013M02606", "Refund A-1: damaged"},
		{"rf-77aa", "0.01", "", "Lukasz Zolc", "PL61109010140000071219812874", "Refund A-2: late"},
		{"rf-z", "999999999.99", "UBSWCHZH80A", "Grueezi AG", "CH9300762011623852957", ""},
	}
	if len(doc.PmtInf.Tx) != len(want) {
		t.Fatalf("%d transfers, want %d", len(doc.PmtInf.Tx), len(want))
	}
	for i, w := range want {
		tx := doc.PmtInf.Tx[i]
		got := []string{tx.EndToEndID, tx.Amount.Value, tx.Amount.Currency, tx.BIC, tx.Name, tx.IBAN, tx.Purpose, tx.Remittance}
		exp := []string{w.id, w.amount, "EUR", w.bic, w.name, w.iban, "RRCT", w.remittance}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("transfer %d: %q, want %q", i+1, got, exp)
		}
		if tx.EndToEndID != sepa.Reference(f.Transfers[i].EndToEndID) {
			t.Errorf("transfer %d: end-to-end id %q is not Reference(%q)", i+1, tx.EndToEndID, f.Transfers[i].EndToEndID)
		}
	}
}

func TestCreditTransferIsDeterministic(t *testing.T) {
	a, err := sepa.CreditTransfer(refundFile())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sepa.CreditTransfer(refundFile())
	if !bytes.Equal(a, b) {
		t.Error("the same file gave different bytes")
	}
	moved := refundFile()
	moved.Created = moved.Created.In(time.FixedZone("other", -5*3600))
	c, _ := sepa.CreditTransfer(moved)
	if !bytes.Equal(a, c) {
		t.Error("the same creation instant in another time zone gave different bytes")
	}
}

func TestCreditTransferCutsLongText(t *testing.T) {
	f := refundFile()
	f.Transfers = f.Transfers[:1]
	f.Transfers[0].Creditor.Name = strings.Repeat("Ä", 40) // 80 characters once transliterated
	f.Transfers[0].Remittance = strings.Repeat("Refund A-1 ", 20) + "END"
	b, err := sepa.CreditTransfer(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("schema", func(t *testing.T) {
		sepatest.ValidateXSD(t, sepatest.Schema("pain.001.001.09"), b)
	})
	tx := readPain(t, b).PmtInf.Tx[0]
	if want := strings.Repeat("AE", 35); tx.Name != want {
		t.Errorf("name %q (%d characters), want the first 70: %q", tx.Name, len(tx.Name), want)
	}
	if len(tx.Remittance) > 140 || !strings.HasPrefix(tx.Remittance, "Refund A-1 Refund A-1") || strings.HasSuffix(tx.Remittance, " ") {
		t.Errorf("remittance %q (%d characters), want its first 140 without a trailing space", tx.Remittance, len(tx.Remittance))
	}
}

func TestCreditTransferWritesTheAddressLeavingTheEEA(t *testing.T) {
	f := refundFile()
	f.Debtor.Address = sepa.Address{}
	if _, err := sepa.CreditTransfer(f); err == nil || !strings.Contains(err.Error(), "town and country") {
		t.Fatalf("a refund to Switzerland without the merchant's address: %v, want an error asking for it", err)
	}
	f = refundFile()
	b, err := sepa.CreditTransfer(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("schema", func(t *testing.T) {
		sepatest.ValidateXSD(t, sepatest.Schema("pain.001.001.09"), b)
	})
	if town := readPain(t, b).PmtInf.Town; town != "Berlin" {
		t.Errorf("debtor's town %q, want Berlin", town)
	}
}

func TestCreditTransferRefusesWhatTheBankWould(t *testing.T) {
	eea := func(f *sepa.File) { f.Transfers = f.Transfers[:2] } // no address needed
	for _, c := range []struct {
		name   string
		change func(*sepa.File)
		want   string
	}{
		{"no transfers", func(f *sepa.File) { f.Transfers = nil }, "no transfers"},
		{"too many", func(f *sepa.File) {
			f.Transfers = make([]sepa.Transfer, sepa.MaxTransfers+1)
		}, "too many"},
		{"zero amount", func(f *sepa.File) { eea(f); f.Transfers[0].Amount = decimal.Zero }, "transfer 1 (rf_3k9x): amount 0 is less than 0.01"},
		{"negative amount", func(f *sepa.File) { eea(f); f.Transfers[1].Amount = dec("-3") }, "transfer 2 (rf_77aa): amount -3 is less than 0.01"},
		{"a fraction of a cent", func(f *sepa.File) { eea(f); f.Transfers[0].Amount = dec("1.005") }, "more than two decimals"},
		{"over the scheme's maximum", func(f *sepa.File) { eea(f); f.Transfers[0].Amount = dec("1000000000") }, "more than 999999999.99"},
		{"mistyped IBAN", func(f *sepa.File) { eea(f); f.Transfers[1].Creditor.IBAN = "PL61109010140000071219812875" }, "check digits do not match"},
		{"IBAN outside SEPA", func(f *sepa.File) { eea(f); f.Transfers[0].Creditor.IBAN = "BR1800360305000010009795493C1" }, "IBAN country is not in SEPA"},
		{"IBAN of the wrong length", func(f *sepa.File) { eea(f); f.Debtor.IBAN = "DE8937040044053201300" }, "an IBAN from DE has 22 characters"},
		{"bad BIC", func(f *sepa.File) { eea(f); f.Debtor.BIC = "COBA" }, "8 or 11"},
		{"no BIC for Switzerland", func(f *sepa.File) { f.Transfers[2].Creditor.BIC = "" }, "transfer 3 (rf_z): creditor: a transfer to CH needs the bank's BIC"},
		{"name of emoji", func(f *sepa.File) { eea(f); f.Transfers[0].Creditor.Name = "🙂" }, `transfer 1 (rf_3k9x): creditor has no name in Latin letters or digits: "🙂"`},
		{"name of spaces", func(f *sepa.File) { eea(f); f.Transfers[1].Creditor.Name = "  " }, "transfer 2 (rf_77aa): creditor has no name"},
		{"no initiator", func(f *sepa.File) { eea(f); f.Initiator = "" }, "initiating party has no name"},
		{"a refund twice", func(f *sepa.File) { eea(f); f.Transfers[1].EndToEndID = "rf_3k9x" }, "transfer 2 (rf_3k9x) has the end-to-end id of transfer 1"},
		{"no end-to-end id", func(f *sepa.File) { eea(f); f.Transfers[0].EndToEndID = "" }, "end-to-end id is empty"},
		{"end-to-end id too long", func(f *sepa.File) { eea(f); f.Transfers[0].EndToEndID = strings.Repeat("x", 36) }, "longer than 35"},
		{"end-to-end id with //", func(f *sepa.File) { eea(f); f.Transfers[0].EndToEndID = "rf//1" }, "nor hold //"},
		{"message id starting with /", func(f *sepa.File) { eea(f); f.MessageID = "/m1" }, "message id"},
		{"no execution date", func(f *sepa.File) { eea(f); f.Execution = time.Time{} }, "execution date"},
		{"address without a town", func(f *sepa.File) { eea(f); f.Debtor.Address = sepa.Address{Street: "Hauptstr.", Country: "DE"} }, "needs its town and country"},
		{"country of three letters", func(f *sepa.File) { eea(f); f.Debtor.Address = sepa.Address{Town: "Berlin", Country: "DEU"} }, "not a two-letter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := refundFile()
			c.change(&f)
			b, err := sepa.CreditTransfer(f)
			if err == nil {
				t.Fatalf("no error; wrote %d bytes", len(b))
			}
			if b != nil {
				t.Errorf("an error and %d bytes: a half-made file", len(b))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}
