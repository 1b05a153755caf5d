package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers"
	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/api/contracttest"
	"github.com/paybybank/checkout/handlers/shopper"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/static"
)

// shopToken is the one API token the app of these tests knows.
const shopToken = "pbb_test_the-one-token-of-shop1-0000000000"

// startApp serves the whole app's routes, as main does, over a fresh
// ledger with one merchant, every API answer held to the API's contract.
// It returns the app's address and its routes.
func startApp(t *testing.T) (string, []*echo.Route) {
	t.Helper()
	dir, err := merchant.Parse([]byte(`{"merchants":[{"id":"shop1","name":"Shop One",
		"link_keys":{"k1":"a-long-random-secret-for-shop1-0001"},"api_token":"` + shopToken + `",
		"return_origins":["https://shop.example"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	l := ledgertest.Open(t, ledgertest.SQLiteURL(t))
	log := slog.New(slog.DiscardHandler)
	e := echo.New()
	srv := httptest.NewServer(contracttest.Wrap(t, e))
	t.Cleanup(srv.Close)
	// A budget the test cannot spend: the answers are about the header.
	h := handlers.New(handlers.Config{APIRate: 10000, Config: shopper.Config{BaseURL: srv.URL, Merchants: dir, Assets: static.Assets(),
		Log: log, Orders: &payment.Service{Ledger: l, Log: log}}})
	h.Routes(e, static.Handler(), nil)
	return srv.URL, e.Routes()
}

// TestAnAuthorizationThatIsNoKnownBearerTokenIs401OnEveryRoute: whatever a
// caller puts in Authorization, a Basic header, a scheme without a token,
// an unknown token, a huge or non-ASCII value, every API route answers 401
// with the API's JSON error, never a 500.
func TestAnAuthorizationThatIsNoKnownBearerTokenIs401OnEveryRoute(t *testing.T) {
	base, routes := startApp(t)
	headers := map[string]string{
		"Basic":                 "Basic x",
		"Basic credentials":     "Basic c2hvcDE6c2VjcmV0",
		"scheme alone":          "Bearer",
		"scheme and a space":    "Bearer ",
		"unknown token":         "bearer pbb_test_unknown0000000000000000000000000000",
		"the token, no scheme":  shopToken,
		"the token, Basic":      "Basic " + shopToken,
		"very long":             "Bearer " + strings.Repeat("x", 64<<10),
		"non-ASCII":             "Bearer jéton-🔑-токен",
		"non-ASCII scheme":      "Bérarer " + shopToken,
		"tab instead of space":  "Bearer\t" + shopToken,
		"two tokens":            "Bearer " + shopToken + " " + shopToken,
		"the token as a scheme": shopToken + " x",
	}
	paths := apiPaths(t, routes)
	for name, header := range headers {
		for _, route := range paths {
			req, err := http.NewRequest(route.method, base+route.path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", header)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s on %s %s: %d, want 401\n%.300s", name, route.method, route.path, res.StatusCode, body)
				continue
			}
			if route.method == http.MethodHead {
				continue
			}
			var answer struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &answer); err != nil || answer.Error.Code != "unauthorized" || answer.Error.Message == "" ||
				res.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("%s on %s %s: %s (WWW-Authenticate %q), want the API's unauthorized error",
					name, route.method, route.path, body, res.Header.Get("WWW-Authenticate"))
			}
		}
	}
	// The token itself still opens every route (bank health answers 503
	// until its first reading): the refusals above are for the header.
	for _, route := range paths {
		req, _ := http.NewRequest(route.method, base+route.path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+shopToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusInternalServerError {
			t.Errorf("the known token on %s %s: %d", route.method, route.path, res.StatusCode)
		}
	}
}

type apiRoute struct{ method, path string }

// apiPaths is a request path for each API route the router has, its
// parameters filled in; the contract, which needs no token, aside.
func apiPaths(t *testing.T, routes []*echo.Route) []apiRoute {
	t.Helper()
	var paths []apiRoute
	for _, r := range routes {
		switch {
		case !strings.HasPrefix(r.Path, "/api/v1/") || r.Path == api.RouteContract:
		case r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead:
		default:
			path := strings.ReplaceAll(r.Path, ":id", "evt_1")
			paths = append(paths, apiRoute{r.Method, strings.ReplaceAll(path, "*", "A-7")})
		}
	}
	for _, want := range []string{api.RouteLinks, api.RoutePayments, api.RouteEvents, api.RouteBankHealth} {
		found := false
		for _, p := range paths {
			found = found || p.path == want
		}
		if !found {
			t.Fatalf("the router has no %s among %v", want, paths)
		}
	}
	return paths
}
