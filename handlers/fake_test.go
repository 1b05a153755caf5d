package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// fakeProvider answers the banks list with one French bank per name (no
// extraFields) and every status read with status.
func fakeProvider(t *testing.T, status string, names []string) http.Handler {
	t.Helper()
	if names == nil {
		names = []string{"Fake Bank"}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/pis/payment/ob-institutions", func(w http.ResponseWriter, r *http.Request) {
		var list []map[string]any
		for _, name := range names {
			list = append(list, map[string]any{"institution_id": "evil", "institution_name": name, "country_code": "FR"})
		}
		json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("GET /api/v2/pis/payment/{id}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"merchant_order_id": r.PathValue("id"), "status": status})
	})
	return mux
}
