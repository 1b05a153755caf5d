package health_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/health"
)

type up struct{}

func (up) Ping(context.Context) error                { return nil }
func (up) Warm() bool                                { return true }
func (up) List(context.Context) (*banks.List, error) { return &banks.List{}, nil }

func TestReadySaysWhatDoesNotWorkAsTheSettingsSay(t *testing.T) {
	const said = "passkeys off (BASE_URL's host 10.0.0.5 is an IP address); operators must use passkeys: they sign in only with a recovery code"
	checks := health.Checks{Ledger: up{}, Banks: up{}, Unopened: func() []string { return []string{"shop2: its settings do not open"} },
		Mismatches: func() []string { return []string{said} }}
	e := echo.New()
	rec := httptest.NewRecorder()
	if err := checks.Ready(e.NewContext(httptest.NewRequest(http.MethodGet, "/readyz", nil), rec)); err != nil {
		t.Fatal(err)
	}
	// Shoppers are served all the same: ready, with the detail.
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "ready\n") || !strings.Contains(rec.Body.String(), "\n"+said+"\n") {
		t.Errorf("/readyz: %d %q", rec.Code, rec.Body.String())
	}
}
