package sepatest_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/sepa/sepatest"
	"github.com/shopspring/decimal"
)

const (
	shop  = "DE89370400440532013000"
	payer = "FR1420041010050500013M02606"
)

// everything holds an entry of each kind the writer knows.
func everything() []sepatest.Entry {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d := decimal.RequireFromString
	return []sepatest.Entry{
		{Ref: "B1", Booked: day, Amount: d("49.90"), Credit: true, EndToEndID: "pay-1", Remittance: "Order A-1", Counterparty: "Zoë & Jörg <Müller>", CounterIBAN: payer},
		{Ref: "B2", Booked: day.Add(9*time.Hour + 30*time.Minute), Amount: d("12.50"), EndToEndID: "rf-3k9x", Remittance: "Refund A-1", Counterparty: "Zoe Mueller", CounterIBAN: payer},
		{Ref: "B3", Booked: day, Amount: d("12.50"), Credit: true, EndToEndID: "rf-3k9x", Counterparty: "Zoe Mueller", CounterIBAN: payer, ReturnReason: "AC04"},
		{Ref: "B4", Booked: day, Amount: d("49.90"), Reversal: true, EndToEndID: "pay-1"},
		{Ref: "B5", Booked: day, Batch: []sepatest.Entry{
			{EndToEndID: "rf-1", Amount: d("1.00"), Counterparty: "Ann", CounterIBAN: payer},
			{EndToEndID: "rf-2", Amount: d("2.00"), Counterparty: "Bob"},
		}},
		{Amount: d("5.00"), Credit: true, Remittance: "pending"},
	}
}

func TestDocumentsAreValidAgainstTheSchemas(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	to := from.Add(24*time.Hour - time.Second)
	for _, v := range []string{"02", "04", "08"} {
		t.Run("camt.053.001."+v, func(t *testing.T) {
			sepatest.ValidateXSD(t, sepatest.Schema("camt.053.001."+v), sepatest.Statement(v, shop, from, to, everything()))
		})
		t.Run("camt.054.001."+v, func(t *testing.T) {
			sepatest.ValidateXSD(t, sepatest.Schema("camt.054.001."+v), sepatest.Notification(v, shop, everything()))
		})
		t.Run("camt.053.001."+v+" without entries", func(t *testing.T) {
			sepatest.ValidateXSD(t, sepatest.Schema("camt.053.001."+v), sepatest.Statement(v, shop, from, to, nil))
		})
	}
}

func TestValidateXSD(t *testing.T) {
	valid := sepatest.Statement("08", shop, time.Now(), time.Now(), everything())
	invalid := bytes.Replace(valid, []byte("<Cd>BOOK</Cd>"), []byte("<Cd>BOOKED</Cd>"), 1)
	noXmllint := t.TempDir()
	for _, c := range []struct {
		name, path, require string
		doc                 []byte
		want                string
	}{
		{"valid", os.Getenv("PATH"), "", valid, "pass"},
		{"a status of six letters where the schema allows four", os.Getenv("PATH"), "", invalid, "fail: the document is not valid"},
		{"no xmllint", noXmllint, "", valid, "skip: xmllint is missing, the schema is not checked: apt-get install libxml2-utils"},
		{"no xmllint where it is required", noXmllint, "1", valid, "fail: xmllint is missing and REQUIRE_XMLLINT is set: apt-get install libxml2-utils"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.path != noXmllint {
				if _, err := exec.LookPath("xmllint"); err != nil {
					t.Skip("xmllint is missing: apt-get install libxml2-utils")
				}
			}
			t.Setenv("PATH", c.path)
			t.Setenv("REQUIRE_XMLLINT", c.require)
			rt := &recordingT{TB: t, outcome: "pass"}
			done := make(chan struct{})
			go func() {
				defer close(done)
				sepatest.ValidateXSD(rt, sepatest.Schema("camt.053.001.08"), c.doc)
			}()
			<-done
			if !strings.HasPrefix(rt.outcome, c.want) {
				t.Errorf("ValidateXSD: %q, want %q", rt.outcome, c.want)
			}
		})
	}
}

// recordingT notes how a test ended instead of ending it.
type recordingT struct {
	testing.TB
	outcome string
}

func (r *recordingT) Helper() {}
func (r *recordingT) Errorf(format string, args ...any) {
	r.outcome = "fail: " + fmt.Sprintf(format, args...)
}
func (r *recordingT) Fatal(args ...any) { r.outcome = "fail: " + fmt.Sprint(args...); runtime.Goexit() }
func (r *recordingT) Skip(args ...any)  { r.outcome = "skip: " + fmt.Sprint(args...); runtime.Goexit() }

func TestStatementIsDeterministic(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a := sepatest.Statement("08", shop, from, from.AddDate(0, 0, 1), everything())
	b := sepatest.Statement("08", shop, from, from.AddDate(0, 0, 1), everything())
	if !bytes.Equal(a, b) {
		t.Error("the same statement came out different")
	}
}

func TestStatementRefusesAnUnknownVersion(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"06"`) {
			t.Errorf("panic %v, want one naming the version", r)
		}
	}()
	sepatest.Statement("06", shop, time.Now(), time.Now(), nil)
}

func TestZipHoldsTheFiles(t *testing.T) {
	files := map[string][]byte{"b.xml": []byte("<b/>"), "a.xml": []byte("<a/>")}
	z := sepatest.Zip(files)
	r, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(b, files[f.Name]) {
			t.Errorf("%s holds %q, want %q", f.Name, b, files[f.Name])
		}
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "a.xml,b.xml" {
		t.Errorf("members %v, want a.xml and b.xml in order", names)
	}
}
