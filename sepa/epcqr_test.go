package sepa_test

import (
	"bytes"
	"image"
	_ "image/png" // QRPNG's output
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/paybybank/checkout/sepa"
	"github.com/shopspring/decimal"
)

// scan reads a QR code back from a PNG as a banking app's camera would.
func scan(t *testing.T, png []byte) (text, level string) {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("no QR code read from the PNG: %v", err)
	}
	level, _ = res.GetResultMetadata()[gozxing.ResultMetadataType_ERROR_CORRECTION_LEVEL].(string)
	return res.GetText(), level
}

func TestEPCQRCodeScansAsTheStandardSays(t *testing.T) {
	for _, c := range []struct {
		name        string
		beneficiary sepa.Account
		amount      string
		remittance  string
		want        []string // the lines EPC069-12 lists, as a banking app reads them
	}{
		{
			name:        "refund inside the EEA, no BIC",
			beneficiary: sepa.Account{Name: "Zoë Müller", IBAN: "DE89 3704 0044 0532 0130 00"},
			amount:      "12.3",
			remittance:  "Refund A-1: damaged (rf_3k9x)",
			want:        []string{"BCD", "002", "1", "SCT", "", "Zoe Mueller", "DE89370400440532013000", "EUR12.30", "", "", "Refund A-1: damaged (rf-3k9x)"},
		},
		{
			name:        "refund to Switzerland, with BIC",
			beneficiary: sepa.Account{Name: "Grüezi AG", IBAN: "CH9300762011623852957", BIC: "ubswchzh80a"},
			amount:      "999999999.99",
			remittance:  "Refund A-2",
			want:        []string{"BCD", "002", "1", "SCT", "UBSWCHZH80A", "Grueezi AG", "CH9300762011623852957", "EUR999999999.99", "", "", "Refund A-2"},
		},
		{
			name:        "no remittance ends after the amount",
			beneficiary: sepa.Account{Name: "Ann", IBAN: "FR1420041010050500013M02606"},
			amount:      "0.01",
			want:        []string{"BCD", "002", "1", "SCT", "", "Ann", "FR1420041010050500013M02606", "EUR0.01"},
		},
		{
			name:        "longest name and remittance are cut",
			beneficiary: sepa.Account{Name: strings.Repeat("Ä", 50), IBAN: "MT84MALT011000012345MTLCAST001S", BIC: "MALTMTMTXXX"},
			amount:      "999999999.99",
			remittance:  strings.Repeat("ß", 100),
			want:        []string{"BCD", "002", "1", "SCT", "MALTMTMTXXX", strings.Repeat("AE", 35), "MT84MALT011000012345MTLCAST001S", "EUR999999999.99", "", "", strings.Repeat("ss", 70)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			payload, err := sepa.EPCPayload(c.beneficiary, decimal.RequireFromString(c.amount), c.remittance)
			if err != nil {
				t.Fatal(err)
			}
			png, err := sepa.QRPNG(payload, 512)
			if err != nil {
				t.Fatal(err)
			}
			text, level := scan(t, png)
			if text != payload {
				t.Fatalf("the code reads %q, the payload is %q", text, payload)
			}
			if level != "M" {
				t.Errorf("error correction level %q, EPC069-12 asks for M", level)
			}
			if len(text) > 331 || !utf8.ValidString(text) {
				t.Errorf("payload of %d bytes (valid UTF-8: %v), the standard allows 331 of UTF-8", len(text), utf8.ValidString(text))
			}
			if strings.Contains(text, "\r") || strings.HasSuffix(text, "\n") {
				t.Errorf("lines must be separated by LF alone and end at the last filled element: %q", text)
			}
			lines := strings.Split(text, "\n")
			if strings.Join(lines, "|") != strings.Join(c.want, "|") {
				t.Errorf("lines\n %q\nwant\n %q", lines, c.want)
			}
			if len(lines) > 10 && lines[9] != "" && lines[10] != "" {
				t.Error("structured and unstructured remittance are both given; the standard allows one")
			}
			if len(lines) > 5 && len(lines[5]) > 70 {
				t.Errorf("name of %d characters, the standard allows 70", len(lines[5]))
			}
		})
	}
}

func TestEPCPayloadRefusesWhatTheStandardForbids(t *testing.T) {
	good := sepa.Account{Name: "Ann", IBAN: "DE89370400440532013000"}
	for _, c := range []struct {
		name        string
		beneficiary sepa.Account
		amount      string
		want        string
	}{
		{"under a cent", good, "0.009", "less than 0.01"},
		{"zero", good, "0", "less than 0.01"},
		{"over the maximum", good, "1000000000.00", "more than 999999999.99"},
		{"a fraction of a cent", good, "1.001", "more than two decimals"},
		{"no BIC outside the EEA", sepa.Account{Name: "Ann", IBAN: "CH9300762011623852957"}, "1", "needs the bank's BIC"},
		{"IBAN outside SEPA", sepa.Account{Name: "Ann", IBAN: "BR1800360305000010009795493C1"}, "1", "IBAN country is not in SEPA"},
		{"mistyped IBAN", sepa.Account{Name: "Ann", IBAN: "DE89370400440532013001"}, "1", "check digits"},
		{"no name", sepa.Account{IBAN: "DE89370400440532013000"}, "1", "no name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			payload, err := sepa.EPCPayload(c.beneficiary, decimal.RequireFromString(c.amount), "Refund")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("EPCPayload = %q, %v; want an error saying %q", payload, err, c.want)
			}
		})
	}
}
