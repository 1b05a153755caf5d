package sepa

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/skip2/go-qrcode"
)

// EPCPayload is the text of an EPC QR code (EPC069-12 "Quick Response Code:
// guidelines to enable data capture for the initiation of a SEPA credit
// transfer", version 002, UTF-8, SCT) that the merchant scans with its banking
// app to pay a refund: the beneficiary is the payer being refunded.
//
// The name and remittance are transliterated like a credit transfer file's
// and cut to 70 and 140 characters, so the refund reads the same on the
// statement whichever way it was paid; with those limits every payload stays
// within the standard's 331 bytes (at most 287: one byte a character). A payment made from the code carries no
// end-to-end id (the app sets none), so put the refund's id in the
// remittance to find it on the statement. It refuses what the standard
// forbids: an amount under 0.01, over 999,999,999.99 or with a fraction of a
// cent, an IBAN outside SEPA or mistyped, and no BIC for a beneficiary outside
// the EEA (version 002 lets the BIC go only inside the EEA).
func EPCPayload(beneficiary Account, amount decimal.Decimal, remittance string) (string, error) {
	if err := checkAmount(amount); err != nil {
		return "", fmt.Errorf("sepa: EPC QR code: %w", err)
	}
	ben, err := checkAccount("EPC QR code: beneficiary", Account{Name: beneficiary.Name, IBAN: beneficiary.IBAN, BIC: beneficiary.BIC}, true)
	if err != nil {
		return "", err
	}
	lines := []string{
		"BCD", // service tag
		"002", // version
		"1",   // character set: UTF-8
		"SCT", // identification: SEPA credit transfer
		ben.BIC,
		ben.Name,
		ben.IBAN,
		"EUR" + amount.StringFixed(2),
		"", // purpose
		"", // structured remittance (creditor reference), exclusive with the next
		cut(Transliterate(remittance), maxRemittanceLen),
	}
	// The last filled element is followed by nothing, not even a line break.
	return strings.TrimRight(strings.Join(lines, "\n"), "\n"), nil
}

// QRPNG draws a payload as a QR code in a PNG of size pixels a side, at error
// correction level M, the level EPC069-12 asks for so that a banking app
// reads the code from a screen or a slightly soiled print. (Draw the SVG for
// a page with handlers/web.QRSVG, which uses the same level.)
func QRPNG(payload string, size int) ([]byte, error) {
	return qrcode.Encode(payload, qrcode.Medium, size)
}
