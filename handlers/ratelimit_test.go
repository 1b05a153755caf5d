package handlers_test

import (
	"context"

	"github.com/paybybank/checkout/settings"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a time the test moves by hand, so that a budget's refill is
// counted in the test's seconds, not the machine's.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// linksUntilRefused makes links with token until the API refuses one, and
// returns how many it made and the refusal's header; it gives up after max.
func (a *app) linksUntilRefused(token, origin string, max int) (int, http.Header, map[string]any) {
	a.t.Helper()
	for i := range max {
		body := `{"order":"R-` + strconv.Itoa(i) + `","amount":"9.90","return_url":"` + origin + `/done"}`
		status, answer, header := a.apiCall(http.MethodPost, "/api/v1/links", token, body)
		switch status {
		case http.StatusCreated:
		case http.StatusTooManyRequests:
			return i, header, answer
		default:
			a.t.Fatalf("link %d: %d %v", i, status, answer)
		}
	}
	return max, nil, nil
}

func TestTheAPIAllowsATokenFiftyRequestsASecondInBurstsOfAHundred(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := setup(t, options{now: clk.now})

	// The first answer tells the policy and what is left of it.
	status, _, header := a.apiCall(http.MethodGet, "/api/v1/payments", shop1Token, "")
	if status != http.StatusOK {
		t.Fatalf("first call: %d", status)
	}
	if got := header.Get("RateLimit-Policy"); got != `"api";q=100;w=2` {
		t.Errorf("RateLimit-Policy %q, want \"api\";q=100;w=2", got)
	}
	if got := header.Get("RateLimit"); got != `"api";r=99;t=1` {
		t.Errorf("RateLimit %q after one call, want \"api\";r=99;t=1", got)
	}

	// A burst: the 99 left pass, the next is refused with the JSON error,
	// Retry-After and an empty budget.
	made, refused, body := a.linksUntilRefused(shop1Token, "https://shop.example", 200)
	if made != 99 {
		t.Errorf("%d links made in a burst after one call, want 99", made)
	}
	if e, _ := body["error"].(map[string]any); e["code"] != "too_many_requests" {
		t.Errorf("refusal %v, want the JSON error too_many_requests", body)
	}
	if got := refused.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if got := refused.Get("RateLimit"); !strings.HasPrefix(got, `"api";r=0;`) {
		t.Errorf("RateLimit %q on the refusal, want r=0", got)
	}

	// Another shop's token has a budget of its own.
	if status, _, _ := a.apiCall(http.MethodGet, "/api/v1/payments", shop2Token, ""); status != http.StatusOK {
		t.Errorf("shop2 after shop1's burst: %d, want 200", status)
	}

	// The steady rate: a second later, 50 more and no more.
	clk.add(time.Second)
	if made, _, _ := a.linksUntilRefused(shop1Token, "https://shop.example", 200); made != 50 {
		t.Errorf("%d links made one second after the burst, want 50", made)
	}
	clk.add(500 * time.Millisecond)
	if made, _, _ := a.linksUntilRefused(shop1Token, "https://shop.example", 200); made != 25 {
		t.Errorf("%d links made half a second later, want 25", made)
	}
}

func TestAMerchantsOwnAPIRateOverridesTheDeployments(t *testing.T) {
	clk := &clock{t: time.Now()}
	file := strings.Replace(merchantsFile, `"id":"shop2","name":"Shop Two",`, `"id":"shop2","name":"Shop Two","api_rate":200,`, 1)
	a := setup(t, options{now: clk.now, file: file, apiRate: 5})
	if made, _, _ := a.linksUntilRefused(shop1Token, "https://shop.example", 500); made != 10 {
		t.Errorf("shop1 on API_RATE=5: %d links in a burst, want 10", made)
	}
	made, refused, _ := a.linksUntilRefused(shop2Token, "https://two.example", 500)
	if made != 400 {
		t.Errorf("shop2 with api_rate 200: %d links in a burst, want 400", made)
	}
	if got := refused.Get("RateLimit-Policy"); got != `"api";q=400;w=2` {
		t.Errorf("shop2's policy %q, want \"api\";q=400;w=2", got)
	}
}

func TestEachTokenOfAMerchantHasItsOwnBudgetAndItsLastUse(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := setup(t, options{now: clk.now, apiRate: 5})
	by := settings.Actor{Name: "dev@shop4.example"}
	if _, err := a.settings.CreateMerchant(context.Background(), by, "shop4", "Shop Four", []string{"https://four.example"}); err != nil {
		t.Fatal(err)
	}
	first, err := a.settings.MakeToken(context.Background(), by, "shop4", "server one", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.settings.MakeToken(context.Background(), by, "shop4", "server two", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	made, _, _ := a.linksUntilRefused(first.Token, "https://four.example", 100)
	if made != 10 {
		t.Errorf("the first token made %d links before its budget ran out, want its burst of 10", made)
	}
	if status, _, _ := a.apiCall(http.MethodGet, "/api/v1/payments", second.Token, ""); status != http.StatusOK {
		t.Errorf("the merchant's second token after the first ran out: %d, want its own budget", status)
	}
	tokens, err := a.ledger.MerchantTokens(context.Background(), "shop4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tokens {
		if used := !tk.Used.IsZero(); used != strings.HasPrefix(tk.Name, "server") {
			t.Errorf("token %q: used %v", tk.Name, used)
		}
	}
}
