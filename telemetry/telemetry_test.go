package telemetry_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/paybybank/checkout/telemetry"
)

func TestMaskIBANs(t *testing.T) {
	for in, want := range map[string]string{
		"DE89370400440532013000":                             "DE89**************3000",
		"payer DE89 3704 0044 0532 0130 00 refused":          "payer DE89**************3000 refused",
		"FR7630006000011234567890189 and NL91ABNA0417164300": "FR76*******************0189 and NL91**********4300",
		"order A-1001 for 49.90 EUR":                         "order A-1001 for 49.90 EUR",
	} {
		if got := telemetry.MaskIBANs(in); got != want {
			t.Errorf("MaskIBANs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLogsNeverCarryAWholeIBAN(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(telemetry.Masking(slog.NewJSONHandler(&buf, nil)))
	log.With("payer", "DE89370400440532013000").Warn("provider refused DE89 3704 0044 0532 0130 00",
		"err", errors.New(`400: {"iban":"DE89370400440532013000"}`),
		slog.Group("payer", "iban", "DE89370400440532013000"))
	out := buf.String()
	if strings.Contains(out, "0532013") || strings.Contains(out, "0532 0130") {
		t.Errorf("a whole IBAN reached the log: %s", out)
	}
	if strings.Count(out, "DE89**************3000") != 4 {
		t.Errorf("masked IBANs missing from %s", out)
	}
	// A plain message with the IBAN in one string among other values.
	buf.Reset()
	log.Info("request", "status", 200, "note", "payer NL91ABNA0417164300", "route", "/c/:token/pay")
	if out := buf.String(); strings.Contains(out, "0417164") || !strings.Contains(out, "NL91**********4300") {
		t.Errorf("an IBAN among plain values was not masked: %s", out)
	}
}
