// Package sepa reads and writes the files a merchant exchanges with its bank
// to pay refunds by SEPA credit transfer and to see money come and go: the
// pain.001 credit transfer file, the EPC QR code a banking app scans, and
// the camt.053 and camt.054 statements the bank exports.
//
// Everything here is a pure function of its input, with no database and no
// network, so that the refund rules above it can be tested with real files.
// Text that goes to a bank is reduced to the SEPA basic Latin character set
// by Transliterate: banks must accept it, and may refuse or garble anything
// else.
package sepa
