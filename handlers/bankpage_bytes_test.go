package handlers_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paybybank/checkout/pisclient/sandbox"
)

var updateBankPages = flag.Bool("update-bank-pages", false, "rewrite testdata/bankpage with the bank pages served now")

// The bank page is served as it was when the figures of its speed were
// taken (testdata/bankpage): every header and every byte, plain and
// gzip'd, for long and short lists, searches, ranges, languages, looks
// and HEAD. The checkout's token and the request id differ from run to
// run and are written as TOKEN and ID; the gzip'd bytes are compared whole
// but for the checksum, which covers the token.
func TestTheBankPageIsServedByteForByteAsBefore(t *testing.T) {
	// The provider's address names the logos' addresses: a fixed one.
	provider := sandbox.New(sandbox.Config{PublicURL: "http://provider.test", Knobs: sandbox.Knobs{CountryBanks: map[string]int{"FR": 150, "DE": 2000}}})
	a := setup(t, options{upstream: provider})
	shop1 := a.enter("G-1", nil)
	shop2 := a.follow(a.linkOf("shop2", "G-2", nil))
	cases := []struct {
		name, checkout, query, method string
		header                        http.Header
	}{
		{"fr-gzip", shop1, "country=FR", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}}},
		{"fr-plain", shop1, "country=FR", http.MethodGet, nil},
		{"fr-head", shop1, "country=FR", http.MethodHead, http.Header{"Accept-Encoding": {"gzip"}}},
		{"fr-german", shop1, "country=FR", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}, "Accept-Language": {"de-DE,de;q=0.9"}}},
		{"fr-unavailable", shop1, "country=FR&unavailable=gone-bank", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}}},
		{"fr-other-shop", shop2, "country=FR", http.MethodGet, http.Header{"Accept-Encoding": {"gzip, deflate, br"}}},
		{"de-gzip", shop1, "country=DE", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}}},
		{"de-range-3", shop1, "country=DE&page=3", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}}},
		{"de-search", shop1, "country=DE&q=spar", http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}}},
		{"de-search-plain", shop1, "country=DE&q=spar", http.MethodGet, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Twice: the first renders and keeps the page, the second is
			// served from what was kept.
			for _, round := range []string{"first", "kept"} {
				got := servedBytes(t, a, c.checkout, c.query, c.method, c.header)
				file := filepath.Join("testdata", "bankpage", c.name+".golden")
				if *updateBankPages && round == "first" {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run with -update-bank-pages to write it)", err)
				}
				if got != string(want) {
					t.Errorf("%s request: the page differs from %s:\n%s", round, file, firstDifference(got, string(want)))
				}
			}
		})
	}
}

// servedBytes is one answer of the bank page, written out: status,
// headers, body, and for a gzip'd body the SHA-256 of its bytes.
func servedBytes(t *testing.T, a *app, checkout, query, method string, header http.Header) string {
	t.Helper()
	path := strings.TrimPrefix(checkout, a.url) + "/banks?" + query
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	token := strings.TrimPrefix(strings.TrimPrefix(checkout, a.url), "/c/")
	normal := strings.NewReplacer(url.PathEscape(token), "TOKEN", token, "TOKEN")
	var out strings.Builder
	fmt.Fprintf(&out, "%d\n", rec.Code)
	res := rec.Result()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range res.Header {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range names {
		v := strings.Join(res.Header[k], ", ")
		if k == "X-Request-Id" {
			v = "ID"
		}
		fmt.Fprintf(&out, "%s: %s\n", k, normal.Replace(v))
	}
	body := rec.Body.Bytes()
	if res.Header.Get("Content-Encoding") == "gzip" && len(body) > 0 {
		raw := bytes.Clone(body)
		// The token travels as stored bytes: the same length, written
		// over; the checksum before the length at the end covers it.
		for _, t := range []string{url.PathEscape(token), token} {
			raw = bytes.ReplaceAll(raw, []byte(t), bytes.Repeat([]byte("T"), len(t)))
		}
		copy(raw[len(raw)-8:], []byte{0, 0, 0, 0})
		sum := sha256.Sum256(raw)
		fmt.Fprintf(&out, "gzip: %d bytes, SHA-256 without the token and checksum %s\n", len(body), hex.EncodeToString(sum[:]))
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(&out, "\n%s", normal.Replace(string(body)))
	return out.String()
}

// firstDifference shows where two texts part, with a little of each.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d\n got: %q\nwant: %q", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}
