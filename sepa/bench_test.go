package sepa_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/sepa"
	"github.com/paybybank/checkout/sepa/sepatest"
	"github.com/shopspring/decimal"
)

// refundRun is a file of n refunds to n payers.
func refundRun(n int) sepa.File {
	f := refundFile()
	f.Transfers = make([]sepa.Transfer, n)
	for i := range f.Transfers {
		f.Transfers[i] = sepa.Transfer{
			EndToEndID: fmt.Sprintf("rf_%08d", i),
			Amount:     decimal.New(int64(100+i), -2),
			Creditor:   sepa.Account{Name: "Zoë Müller-Lüdenscheidt", IBAN: payerIBAN},
			Remittance: fmt.Sprintf("Refund A-%d: damaged on arrival", i),
		}
	}
	return f
}

// busyMonth is a statement of n bookings: payments in, refunds out.
func busyMonth(n int) []byte {
	entries := make([]sepatest.Entry, n)
	for i := range entries {
		entries[i] = sepatest.Entry{
			Ref:          fmt.Sprintf("B%08d", i),
			Booked:       day.Add(time.Duration(i%30) * 24 * time.Hour),
			Amount:       decimal.New(int64(1000+i), -2),
			Credit:       i%3 != 0,
			EndToEndID:   fmt.Sprintf("pay-%08d", i),
			Remittance:   fmt.Sprintf("Order A-%d, thank you for shopping with us", i),
			Counterparty: "Zoe Mueller-Luedenscheidt",
			CounterIBAN:  payerIBAN,
		}
	}
	return sepatest.Statement("08", shopIBAN, day, day.AddDate(0, 1, 0), entries)
}

func BenchmarkCreditTransfer1000(b *testing.B) {
	f := refundRun(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sepa.CreditTransfer(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadStatements10000(b *testing.B) {
	doc := busyMonth(10000)
	read := func() {
		if _, err := sepa.ReadStatements("month.xml", bytes.NewReader(doc), int64(len(doc))); err != nil {
			b.Fatal(err)
		}
	}
	peak := peakHeapGrowth(read) // once, before the timed loop, as sampling costs time
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// TestReadStatementsMemory holds a 10,000-entry statement to the bound the
// app is sized for: under 100 MiB of heap beyond what was in use, whatever
// the garbage collector leaves for later.
func TestReadStatementsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 10,000-entry statement")
	}
	doc := busyMonth(10000)
	var stmts []sepa.Statement
	peak := peakHeapGrowth(func() {
		var err error
		if stmts, err = sepa.ReadStatements("month.xml", bytes.NewReader(doc), int64(len(doc))); err != nil {
			t.Fatal(err)
		}
	})
	if len(stmts) != 1 || len(stmts[0].Entries) != 10000 {
		t.Fatalf("read %d statements", len(stmts))
	}
	t.Logf("a %.1f MiB statement of 10,000 entries: heap grew by at most %.1f MiB", float64(len(doc))/(1<<20), float64(peak)/(1<<20))
	if peak > 100<<20 {
		t.Errorf("heap grew by %d MiB, more than 100", peak>>20)
	}
}

// peakHeapGrowth runs f and gives the most the heap's live and not yet
// collected objects grew over what they were before it, sampled every
// millisecond (runtime/metrics reads without stopping the world).
func peakHeapGrowth(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	stop, done := make(chan struct{}), sync.WaitGroup{}
	done.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(stop)
	done.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}
