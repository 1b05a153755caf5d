package pisclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/pisclient/sandbox"
)

const secretKey = "k3y-that-must-never-leak"

func newClient(t *testing.T, url string) *pisclient.Client {
	t.Helper()
	c, err := pisclient.New(url, secretKey, pisclient.WithRetry(4, time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadRetriesOn503ThenSucceeds(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, `{"code":"DOWN"}`, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`[{"institution_id":"x","institution_name":"X Bank","country_code":"DE"}]`))
	}))
	defer srv.Close()
	list, err := newClient(t, srv.URL).Institutions(context.Background())
	if err != nil || len(list) != 1 || calls.Load() != 3 {
		t.Fatalf("got %v, %v after %d calls; want one bank after 3 calls", list, err, calls.Load())
	}
}

func TestCreateIsNeverRetriedAndKeyNeverLeaks(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"message":"bad key `+r.Header.Get("x-api-key")+`"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := newClient(t, srv.URL).CreatePayment(context.Background(), pisclient.PaymentRequest{
		MerchantOrderID: "A-1", Amount: "10", Currency: "EUR", ReturnURL: "https://shop.example/done"})
	if !errors.Is(err, pisclient.ErrUnavailable) || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls; want ErrUnavailable after exactly 1", err, calls.Load())
	}
	var ae *pisclient.APIError
	if !errors.As(err, &ae) || strings.Contains(err.Error(), secretKey) || strings.Contains(ae.Body, secretKey) {
		t.Fatalf("the API key reached the error: %v / %q", err, ae)
	}
}

func TestLifecycleAgainstSandbox(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	sb := sandbox.New(sandbox.Config{APIKey: secretKey, Now: clock})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	c := newClient(t, srv.URL)
	ctx := context.Background()

	list, err := c.Institutions(ctx)
	if err != nil || len(list) < 300 {
		t.Fatalf("Institutions: %d entries, %v; want at least 300", len(list), err)
	}
	st, err := c.PaymentStatus(ctx, "never-created")
	if err != nil || st.Status != pisclient.StatusNotFound {
		t.Fatalf("unknown order: %v, %v; want NOT_FOUND from a 404", st, err)
	}
	req := pisclient.PaymentRequest{MerchantOrderID: "A/1 ü", Amount: "49.90", Currency: "EUR",
		ReturnURL: "https://shop.example/done", InstitutionID: "credit-agricole", InstitutionCountryCode: "FR",
		Payer: &pisclient.Payer{Name: "Erika", IBAN: "DE89370400440532013000"}}
	p, err := c.CreatePayment(ctx, req)
	if err != nil || !strings.HasPrefix(p.Link, srv.URL+"/checkout/") {
		t.Fatalf("CreatePayment = %v, %v", p, err)
	}
	if _, err := c.CreatePayment(ctx, req); !errors.Is(err, pisclient.ErrDuplicateOrder) {
		t.Fatalf("second create = %v, want ErrDuplicateOrder", err)
	}
	if st, _ := c.PaymentStatus(ctx, req.MerchantOrderID); st.Status != pisclient.StatusNotFound {
		t.Fatalf("before opening: %v, want NOT_FOUND inside a 200", st.Status)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := noFollow.Get(p.Link); err != nil || res.StatusCode != 200 {
		t.Fatalf("opening the link: %v %v", res, err)
	}
	if st, _ := c.PaymentStatus(ctx, req.MerchantOrderID); st.Status != pisclient.StatusInProgress {
		t.Fatalf("after opening: %v, want IN_PROGRESS", st.Status)
	}
	res, err := noFollow.PostForm(p.Link, map[string][]string{"action": {"approve"}})
	if err != nil || res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "https://shop.example/done") {
		t.Fatalf("approve: %v %v", res, err)
	}
	if st, _ := c.PaymentStatus(ctx, req.MerchantOrderID); st.Status != pisclient.StatusAccepted {
		t.Fatalf("after approve: %v, want ACCEPTED_SETTLEMENT_IN_PROCESS", st.Status)
	}
	now = now.Add(sandbox.DefaultSettleDelay)
	if st, _ := c.PaymentStatus(ctx, req.MerchantOrderID); !st.Status.Paid() || !st.Status.Final() {
		t.Fatalf("after settling: %v, want COMPLETED", st.Status)
	}
}
