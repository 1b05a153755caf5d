package static

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A browser that takes gzip gets the stylesheet and scripts gzip'd as kept,
// and they read the same as the files; one that does not gets them whole.
func TestFilesAreSentGzippedAhead(t *testing.T) {
	h := Handler()
	for _, name := range []string{"app.css", "banks.js", "form.js"} {
		want, _ := files.ReadFile(name)
		get := func(encoding string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, URL(name), nil)
			req.Header.Set("Accept-Encoding", encoding)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
				t.Fatalf("%s, %s: %d, Vary %q", name, encoding, rec.Code, rec.Header().Get("Vary"))
			}
			return rec
		}
		zipped, plain := get("gzip, br"), get("identity")
		if refused := get("br, gzip;q=0"); refused.Header().Get("Content-Encoding") != "" || refused.Body.String() != string(want) {
			t.Errorf("%s: gzip;q=0 got encoding %q", name, refused.Header().Get("Content-Encoding"))
		}
		if zipped.Header().Get("Content-Encoding") != "gzip" || plain.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: encodings %q and %q", name, zipped.Header().Get("Content-Encoding"), plain.Header().Get("Content-Encoding"))
		}
		if zipped.Header().Get("Content-Type") != plain.Header().Get("Content-Type") || plain.Body.String() != string(want) {
			t.Errorf("%s: types %q and %q, or the plain file is not the file", name, zipped.Header().Get("Content-Type"), plain.Header().Get("Content-Type"))
		}
		size := zipped.Body.Len()
		if zipped.Header().Get("Content-Length") != strconv.Itoa(size) {
			t.Errorf("%s: Content-Length %q for %d bytes", name, zipped.Header().Get("Content-Length"), size)
		}
		zr, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(zr)
		if string(got) != string(want) || size >= len(want) {
			t.Errorf("%s: %d bytes gzip'd for %d, and they read back the same: %v", name, size, len(want), string(got) == string(want))
		}
	}
}
