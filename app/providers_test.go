package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paybybank/checkout/merchant"
)

func TestEachMerchantUsesItsOwnProviderKey(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // order id → x-api-key
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[strings.TrimPrefix(r.URL.Path, "/api/v2/pis/payment/")] = r.Header.Get("x-api-key")
		mu.Unlock()
		fmt.Fprint(w, `{"status":"COMPLETED"}`)
	}))
	defer upstream.Close()
	dir, err := merchant.Parse([]byte(`{"merchants":[
		{"id":"own","name":"Own Key","link_keys":{"k":"a-long-random-secret-for-own-000001"},"api_token":"own-api-token-00000000000000000000000",
		 "return_origins":["https://own.example"],"pis_api_key":"the-own-provider-key"},
		{"id":"shared","name":"Shared Key","link_keys":{"k":"a-long-random-secret-for-shared-001"},"api_token":"shared-api-token-000000000000000000",
		 "return_origins":["https://shared.example"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProviders(upstream.URL, "the-deployment-key", dir, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"own": "the-own-provider-key", "shared": "the-deployment-key"} {
		m, _ := dir.Get(id)
		if _, err := p.For(m).PaymentStatus(context.Background(), m.UpstreamOrderID("A-1")); err != nil {
			t.Fatal(err)
		}
		if got := seen[id+":A-1"]; got != want {
			t.Errorf("merchant %s called the provider with key %q, want %q", id, got, want)
		}
	}
}
