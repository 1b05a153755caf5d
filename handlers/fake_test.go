package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// fakeProvider answers the banks list with one French bank per name (no
// extraFields), every create with a link, and every status read with status.
func fakeProvider(t testing.TB, status string, names []string) http.Handler {
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
	mux.HandleFunc("POST /api/v2/pis/payment", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"payment_link": "https://bank.example/pay/1"})
	})
	mux.HandleFunc("GET /api/v2/pis/payment/{id}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"merchant_order_id": r.PathValue("id"), "status": status})
	})
	return mux
}

// paidOnce enters a checkout of shop1 for order id and submits it at the
// fake provider's bank, so that the order has a payment to report.
func (a *app) paidOnce(id string) string {
	a.t.Helper()
	checkout := a.enter(id, nil)
	if res := a.post(checkout+"/pay", url.Values{"country": {"FR"}, "bank": {"evil"}}); res.StatusCode != http.StatusSeeOther {
		a.t.Fatalf("submit: status %d", res.StatusCode)
	}
	return checkout
}
