package handlers_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

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
	cases := []struct {
		name, bank string
		header     http.Header
		change     func(*order.Link)
	}{
		{"one click", "deutsche-bank", nil, nil},
		{"with fields", "hypovereinsbank", nil, nil},
		{"in German, another amount", "hypovereinsbank", http.Header{"Accept-Language": {"de-DE,de;q=0.9"}},
			func(l *order.Link) { l.Amount = "1249.90" }},
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The first shopper's page is rendered and kept; the next
			// ones are served from it.
			for i := range 3 {
				id := fmt.Sprintf("KEPT-%d-%d", n, i)
				checkout := a.enter(id, c.change)
				address := checkout + "/pay?country=DE&bank=" + c.bank
				header := http.Header{"Accept-Encoding": {"gzip"}}
				for k, v := range c.header {
					header[k] = v
				}
				kept := a.do(http.MethodGet, address, nil, header)
				fresh := a.do(http.MethodGet, address+"&x=1", nil, header)
				if kept.StatusCode != http.StatusOK || fresh.StatusCode != http.StatusOK {
					t.Fatalf("status %d and %d, want 200", kept.StatusCode, fresh.StatusCode)
				}
				if kept.Header.Get("Content-Encoding") != "gzip" {
					t.Errorf("the kept page is sent with Content-Encoding %q, want gzip", kept.Header.Get("Content-Encoding"))
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
				if !strings.Contains(got, id) || !strings.Contains(got, "/c/"+token+"/pay") {
					t.Errorf("shopper %d: the page does not name their order %s and their checkout", i+1, id)
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
