package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// A page made for its request comes gzip'd to a browser that takes gzip,
// and the same page whole to one that does not; an error's page is
// compressed as any other. A redirect and a short answer come as they are.
func TestAnswersAreCompressedWhenTheyHaveABody(t *testing.T) {
	a := setup(t, options{})
	gzip := http.Header{"Accept-Encoding": {"gzip"}}
	identity := http.Header{"Accept-Encoding": {"identity"}}

	res := a.do(http.MethodGet, a.link("Z-1", nil), nil, gzip)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Content-Encoding") != "" || plainBody(t, res) != "" {
		t.Fatalf("the link's redirect: %d, encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	checkout := a.url + res.Header.Get("Location")

	for _, c := range []struct {
		what, url string
		status    int
	}{
		{"the country page", checkout, http.StatusOK},
		{"a page not found", a.url + "/no-such-page", http.StatusNotFound},
	} {
		zipped := a.do(http.MethodGet, c.url, nil, gzip)
		plain := a.do(http.MethodGet, c.url, nil, identity)
		if zipped.StatusCode != c.status || plain.StatusCode != c.status {
			t.Fatalf("%s: %d and %d, want %d", c.what, zipped.StatusCode, plain.StatusCode, c.status)
		}
		if zipped.Header.Get("Content-Encoding") != "gzip" || plain.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: encodings %q and %q", c.what, zipped.Header.Get("Content-Encoding"), plain.Header.Get("Content-Encoding"))
		}
		if !strings.Contains(zipped.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Vary %q: a cache would hand the gzip'd page to a browser that cannot read it", c.what, zipped.Header.Get("Vary"))
		}
		z, p := plainBody(t, zipped), plainBody(t, plain)
		if !strings.HasSuffix(strings.TrimSpace(z), "</html>") || len(z) != len(p) {
			t.Errorf("%s: the gzip'd page (%d bytes inflated) is not the plain one (%d bytes)", c.what, len(z), len(p))
		}
	}

	// A browser that says it never takes gzip gets the page whole.
	res = a.do(http.MethodGet, checkout, nil, http.Header{"Accept-Encoding": {"gzip;q=0, identity"}})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0: %d, encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	// Short answers, and pictures their format compresses already (the
	// icon's PNGs, 1.3 KB), come as they are.
	for _, path := range []string{"/healthz", "/favicon.ico"} {
		res = a.do(http.MethodGet, a.url+path, nil, gzip)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d, encoding %q", path, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
	}
}
