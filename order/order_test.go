package order_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/rules"
)

type vector struct {
	Secret    string            `json:"secret"`
	Params    map[string]string `json:"params"`
	Canonical string            `json:"canonical"`
	Sig       string            `json:"sig"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	// The published vectors, copied here so that they run in any clone.
	data, err := os.ReadFile("testdata/link-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	if published, err := os.ReadFile("../../shared/link-vectors.json"); err == nil && !bytes.Equal(published, data) {
		t.Fatal("the published link vectors (../shared/link-vectors.json) changed: copy them to order/testdata")
	}
	var file struct{ Vectors []vector }
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors in link-vectors.json")
	}
	return file.Vectors
}

func values(m map[string]string) url.Values {
	q := url.Values{}
	for k, v := range m {
		q.Set(k, v)
	}
	return q
}

func TestSharedVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		q := values(v.Params)
		canonical, err := order.Canonical(q)
		if err != nil || canonical != v.Canonical {
			t.Errorf("canonical = %q, %v; want %q", canonical, err, v.Canonical)
		}
		sig, err := order.Sign(v.Secret, q)
		if err != nil || sig != v.Sig {
			t.Errorf("sig = %q, %v; want %q", sig, err, v.Sig)
		}
		q.Set("sig", v.Sig)
		if !order.Verify(v.Secret, q) {
			t.Errorf("vector %q does not verify", v.Canonical)
		}
		// Through a real query string and back: what a browser sends.
		parsed, err := url.ParseQuery(q.Encode())
		if err != nil || !order.Verify(v.Secret, parsed) {
			t.Errorf("vector %q does not verify after encoding: %v", v.Canonical, err)
		}
		q.Set("amount", "0.01")
		if order.Verify(v.Secret, q) {
			t.Errorf("a changed amount still verifies")
		}
	}
}

func TestCanonicalRefusesControlCharactersAndRepeats(t *testing.T) {
	if _, err := order.Canonical(url.Values{"order": {"A\nkid=x"}}); !errors.Is(err, order.ErrControlChar) {
		t.Errorf("newline in a value: err = %v", err)
	}
	if _, err := order.Canonical(url.Values{"amount": {"1", "15000"}}); !errors.Is(err, order.ErrRepeated) {
		t.Errorf("repeated amount: err = %v", err)
	}
}

var now = time.Unix(1795300000, 0)

func shop(t *testing.T) (*merchant.Directory, *merchant.Merchant) {
	t.Helper()
	d, err := merchant.Parse([]byte(`{"merchants":[{"id":"shop1","name":"Shop One",
		"link_keys":{"2026-10":"an-old-secret-still-valid-0000000000","2026-11":"a-long-random-secret-for-shop1-0001"},
		"api_token":"another-long-random-secret-00000000",
		"return_origins":["https://shop.example"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Get("shop1")
	return d, m
}

func link(t *testing.T, m *merchant.Merchant, change func(*order.Link)) url.Values {
	t.Helper()
	l := order.Link{Order: order.Order{ID: "A-1001", Amount: "49.90", Currency: "EUR",
		ReturnURL: "https://shop.example/done?x=1", KID: "2026-11"}, TTL: time.Hour}
	if change != nil {
		change(&l)
	}
	raw, err := l.URL("https://pay.example", m, now)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	return u.Query()
}

func TestFromLink(t *testing.T) {
	d, m := shop(t)
	tests := []struct {
		name    string
		query   func() url.Values
		at      time.Time
		wantErr error
		field   string
	}{
		{"genuine", func() url.Values { return link(t, m, nil) }, now, nil, ""},
		{"older key still valid", func() url.Values { return link(t, m, func(l *order.Link) { l.KID = "2026-10" }) }, now, nil, ""},
		{"tampered amount", func() url.Values { q := link(t, m, nil); q.Set("amount", "1.00"); return q }, now, order.ErrLinkInvalid, ""},
		{"wrong signature", func() url.Values { q := link(t, m, nil); q.Set("sig", strings.Repeat("A", 43)); return q }, now, order.ErrLinkInvalid, ""},
		{"unknown kid", func() url.Values { q := link(t, m, nil); q.Set("kid", "2020-01"); return q }, now, order.ErrLinkInvalid, ""},
		{"unknown merchant", func() url.Values { q := link(t, m, nil); q.Set("merchant", "shop2"); return q }, now, order.ErrLinkInvalid, ""},
		{"no signature", func() url.Values { q := link(t, m, nil); q.Del("sig"); return q }, now, order.ErrLinkInvalid, ""},
		{"expired", func() url.Values { return link(t, m, nil) }, now.Add(2 * time.Hour), order.ErrLinkExpired, ""},
		{"amount too large", func() url.Values { return link(t, m, func(l *order.Link) { l.Amount = "15000.01" }) }, now, nil, "amount"},
		{"return origin not allowed", func() url.Values {
			return link(t, m, func(l *order.Link) { l.ReturnURL = "https://evil.example/done" })
		}, now, nil, "return_url"},
		{"http return outside localhost", func() url.Values {
			return link(t, m, func(l *order.Link) { l.ReturnURL = "http://shop.example/done" })
		}, now, nil, "return_url"},
		{"bank without country", func() url.Values { return link(t, m, func(l *order.Link) { l.Bank = "ing" }) }, now, nil, "bank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, got, err := order.FromLink(tt.query(), d, tt.at)
			switch {
			case tt.field != "":
				var ve *rules.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("err = %v, want a validation error on %s", err, tt.field)
				}
				if _, ok := ve.Field(tt.field); !ok {
					t.Errorf("errors %v do not name %s", ve.Fields, tt.field)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if got != m || o.ID != "A-1001" || o.Amount != "49.90" || o.ReturnURL != "https://shop.example/done?x=1" {
					t.Errorf("order = %+v", o)
				}
			}
		})
	}
}

func TestTokenRoundTripAndTampering(t *testing.T) {
	s, err := order.NewSealer([]byte("key one"))
	if err != nil {
		t.Fatal(err)
	}
	o := order.Order{Merchant: "shop1", ID: "<b>A/1 ü</b>", Amount: "49.90", Currency: "EUR", ReturnURL: "https://shop.example/done", KID: "2026-11"}
	token, err := s.Seal(o, now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(token, "A/1") || url.PathEscape(token) != token {
		t.Errorf("token %q is not opaque and URL-safe", token)
	}
	got, err := s.Open(token, now.Add(time.Minute))
	if err != nil || got.ID != o.ID || got.Amount != o.Amount {
		t.Fatalf("Open = %+v, %v", got, err)
	}
	flipped := []byte(token)
	flipped[len(flipped)/2] ^= 1
	if _, err := s.Open(string(flipped), now); !errors.Is(err, order.ErrTokenInvalid) {
		t.Errorf("tampered token: err = %v", err)
	}
	if _, err := s.Open(token, now.Add(order.TokenTTL+time.Second)); !errors.Is(err, order.ErrTokenExpired) {
		t.Errorf("old token: err = %v", err)
	}
	// Rotation: a sealer whose second key is the old one opens old tokens.
	rotated, _ := order.NewSealer([]byte("key two"), []byte("key one"))
	if _, err := rotated.Open(token, now); err != nil {
		t.Errorf("rotated sealer cannot open an old token: %v", err)
	}
	other, _ := order.NewSealer([]byte("key two"))
	if _, err := other.Open(token, now); !errors.Is(err, order.ErrTokenInvalid) {
		t.Errorf("a foreign key opened the token: err = %v", err)
	}
}

func TestWayBackVerifies(t *testing.T) {
	_, m := shop(t)
	o := order.Order{Merchant: "shop1", ID: "A-1001", ReturnURL: "https://shop.example/done?x=1&status=forged", KID: "2026-11"}
	raw, err := o.WayBack(m, "COMPLETED", now)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if q.Get("x") != "1" || q.Get("status") != "COMPLETED" || q.Get("merchant_order_id") != "A-1001" || q.Get("kid") != "2026-11" {
		t.Errorf("way back = %s", raw)
	}
	secret, _ := m.LinkKey("2026-11")
	if !order.VerifyWayBack(secret, q) {
		t.Errorf("way back %s does not verify", raw)
	}
	q.Set("status", "CANCELED")
	if order.VerifyWayBack(secret, q) {
		t.Error("a changed status still verifies")
	}
}
