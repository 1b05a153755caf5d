package order_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// FuzzLinkVerification: whatever a query holds, checking it never panics, a
// link only verifies when signed, and what Sign signs, Verify accepts.
func FuzzLinkVerification(f *testing.F) {
	f.Add("amount=49.90&currency=EUR&exp=1795400000&kid=2026-11&merchant=shop1&order=A-1001&return_url=https://shop.example/done&sig=x")
	f.Add("order=%0Akid%3Dx&sig=&sig=")
	f.Add("a=1&a=2")
	dir, err := merchant.Parse([]byte(`{"merchants":[{"id":"shop1","name":"Shop One",
		"link_keys":{"2026-11":"a-long-random-secret-for-fuzzing-000"},
		"api_token":"another-long-random-secret-00000000","return_origins":["https://shop.example"]}]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		const secret = "a-long-random-secret-for-fuzzing-000"
		wasSigned := order.Verify(secret, q)
		sig, err := order.Sign(secret, q)
		if err != nil {
			if wasSigned {
				t.Fatal("a query that cannot be signed verified")
			}
			return
		}
		q.Set(order.SigParam, sig)
		if !order.Verify(secret, q) {
			t.Fatalf("Sign then Verify fails for %q", raw)
		}
		if o, m, err := order.FromLink(q, dir, time.Unix(1795300000, 0)); err == nil && (m == nil || o.Check(m) != nil) {
			t.Fatalf("FromLink accepted an order that breaks the rules: %+v", o)
		}
	})
}

// FuzzTokenOpening: a token that was not sealed by us never opens, and no
// input panics.
func FuzzTokenOpening(f *testing.F) {
	s, _ := order.NewSealer([]byte("fuzz key"))
	good, _ := s.Seal(order.Order{Merchant: "shop1", ID: "A-1"}, time.Now())
	f.Add(good)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		// Only sealed tokens open, and the only order ever sealed is A-1.
		if o, err := s.Open(token, time.Now()); err == nil && (o.ID != "A-1" || o.Merchant != "shop1") {
			t.Fatalf("a forged token opened: %q gives %+v", token, o)
		}
	})
}
