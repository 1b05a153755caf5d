package handlers_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/order"
)

// The details page's first showing is kept rendered and compressed per
// look, language and bank, and each shopper still gets their own page: the
// one rendered anew for them, byte for byte. The page rendered anew is
// asked for with one parameter more, which makes the app render it (its
// language switch keeps every parameter) and is then taken out of its
// links.
func TestTheDetailsPageKeptIsEachShoppersOwn(t *testing.T) {
	a := setup(t, options{})
	byLink := func(n, i int) (string, string) {
		ref := fmt.Sprintf("INV-%d-%d", n, i)
		p := a.paymentLink(links.Draft{Amount: fmt.Sprintf("%d.50", 10+i), Description: fmt.Sprintf(`Invoice <%d> & "kitchen" %d`, n, i), Reference: ref})
		return a.openLink(p.ID), ref
	}
	bySignedLink := func(change func(*order.Link)) func(n, i int) (string, string) {
		return func(n, i int) (string, string) {
			id := fmt.Sprintf("KEPT-%d-%d", n, i)
			return a.enter(id, change), id
		}
	}
	cases := []struct {
		name, bank string
		header     http.Header
		open       func(n, i int) (checkout, order string)
	}{
		{"one click", "deutsche-bank", http.Header{"Accept-Encoding": {"gzip"}}, bySignedLink(nil)},
		{"with fields", "hypovereinsbank", http.Header{"Accept-Encoding": {"gzip"}}, bySignedLink(nil)},
		{"in German, another amount", "hypovereinsbank", http.Header{"Accept-Encoding": {"gzip"}, "Accept-Language": {"de-DE,de;q=0.9"}},
			bySignedLink(func(l *order.Link) { l.Amount = "1249.90" })},
		{"a payment link's order, its description to escape", "deutsche-bank", http.Header{"Accept-Encoding": {"gzip"}}, byLink},
		{"a browser taking no compression", "hypovereinsbank", http.Header{"Accept-Encoding": {"identity"}}, bySignedLink(nil)},
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The first shopper's page is rendered and kept; the next
			// ones are served from it.
			for i := range 3 {
				checkout, orderRef := c.open(n, i)
				address := checkout + "/pay?country=DE&bank=" + c.bank
				kept := a.do(http.MethodGet, address, nil, c.header)
				fresh := a.do(http.MethodGet, address+"&x=1", nil, c.header)
				if kept.StatusCode != http.StatusOK || fresh.StatusCode != http.StatusOK {
					t.Fatalf("status %d and %d, want 200", kept.StatusCode, fresh.StatusCode)
				}
				wantEncoding := ""
				if strings.Contains(c.header.Get("Accept-Encoding"), "gzip") {
					wantEncoding = "gzip"
				}
				if got := kept.Header.Get("Content-Encoding"); got != wantEncoding {
					t.Errorf("the kept page is sent with Content-Encoding %q, want %q", got, wantEncoding)
				}
				for _, name := range []string{"Content-Type", "Cache-Control", "Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options"} {
					if got, want := kept.Header.Get(name), fresh.Header.Get(name); got != want {
						t.Errorf("%s: %q, rendered anew %q", name, got, want)
					}
				}
				got, want := plainBody(t, kept), strings.ReplaceAll(plainBody(t, fresh), "&amp;x=1", "")
				if got != want {
					t.Fatalf("shopper %d: the kept page differs from the page rendered anew:\n%s", i+1, firstDifference(got, want))
				}
				token := strings.TrimPrefix(checkout, a.url+"/c/")
				if !strings.Contains(got, ">"+orderRef+"<") || !strings.Contains(got, "/c/"+token+"/pay") {
					t.Errorf("shopper %d: the page does not name their order %s and their checkout", i+1, orderRef)
				}
			}
		})
	}
}

// plainBody is a response's body, inflated when it came gzip'd.
func plainBody(t *testing.T, res *http.Response) string {
	t.Helper()
	var r io.Reader = res.Body
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
