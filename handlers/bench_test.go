package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkBanksPage is the whole request path of the bank list through
// Echo (middleware, token, cache, rendering, gzip), the cache warm.
func BenchmarkBanksPage(b *testing.B) {
	a := setup(b, options{})
	checkout := a.enter("B-1", nil)
	a.get(checkout + "/banks?country=FR")
	handler := a.handler
	path := checkout[len(a.url):] + "/banks?country=FR"
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
