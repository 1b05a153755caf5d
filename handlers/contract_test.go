package handlers_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/api"
	"github.com/paybybank/checkout/handlers/api/contracttest"
)

func TestTheContractIsServedAsItIsInTheRepository(t *testing.T) {
	a := setup(t, options{})
	res := a.get(a.url + "/api/v1/openapi.json") // no token
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	served, _ := io.ReadAll(res.Body)
	file, err := os.ReadFile("api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, file) || !bytes.Equal(file, api.Contract) {
		t.Error("the served document is not the file handlers/api/openapi.json")
	}
}

func TestTheContractNamesEveryRouteOfTheAPI(t *testing.T) {
	a := setup(t, options{})
	doc := contracttest.Load(t)
	if doc.Version != "3.1.0" {
		t.Errorf("openapi %s, want 3.1.0", doc.Version)
	}

	// Echo's patterns as OpenAPI writes them: :id is {id}, the payment's
	// tail * is {merchant_order_id}, and a POST under it is the order's
	// refunds (the tail holds the order id and /refunds).
	param := regexp.MustCompile(`:([a-z_]+)`)
	registered := map[string]bool{}
	for _, r := range a.handler.(*echo.Echo).Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
			continue
		}
		path := param.ReplaceAllString(strings.Replace(r.Path, "*", "{merchant_order_id}", 1), "{$1}")
		if r.Method == http.MethodPost && r.Path == api.RoutePayment {
			path += "/refunds"
		}
		registered[r.Method+" "+path] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			documented[strings.ToUpper(method)+" "+path] = true
			public := op.Security != nil && len(op.Security) == 0
			if public != (path == api.RouteContract) {
				t.Errorf("%s %s: only the document itself is open without a token", method, path)
			}
			if _, ok := op.Responses.Codes.Get("default"); !ok && op.Responses.Default == nil {
				t.Errorf("%s %s: no default answer with the error format", method, path)
			}
		}
	}
	for route := range registered {
		if !documented[route] {
			t.Errorf("%s is a route of the API the contract does not document", route)
		}
	}
	for route := range documented {
		if !registered[route] {
			t.Errorf("%s is in the contract but not a route of the API", route)
		}
	}
	if len(registered) < 7 {
		t.Errorf("only %d API routes found: %v", len(registered), registered)
	}

	scheme, ok := doc.Components.SecuritySchemes.Get("bearer")
	if !ok || scheme.Type != "http" || scheme.Scheme != "bearer" {
		t.Error("the contract has no bearer authentication")
	}
	var hooks []string
	for name := range doc.Webhooks.KeysFromOldest() {
		hooks = append(hooks, name)
	}
	slices.Sort(hooks)
	if want := []string{"payment.received", "payment.status_changed", "ping", "refund.created", "refund.state_changed"}; !slices.Equal(hooks, want) {
		t.Errorf("webhooks %v, want %v", hooks, want)
	}
}
