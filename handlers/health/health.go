// Package health answers the operators' load balancers and orchestrators:
// /healthz (the process is alive) and /readyz (it can serve shoppers).
package health

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/web"
)

// Ledger is the payments ledger, as far as readiness asks it.
type Ledger interface {
	Ping(ctx context.Context) error
}

// BankLists gives the banks list, cached or fetched now.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
	Warm() bool
}

// Checks answers the health routes.
type Checks struct {
	Ledger Ledger
	Banks  BankLists
	Log    *slog.Logger
	// Unopened lists the merchants disabled because their settings did not
	// open, each with its reason: the app is ready for every other one,
	// and says which are not served.
	Unopened func() []string
	// Mismatches lists what does not work as the settings say (passkeys
	// off while people have some): the app is ready all the same, and
	// says so.
	Mismatches func() []string
}

// Health says the process is alive.
func (h Checks) Health(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

// Ready says the app can serve shoppers: the payments ledger answers and
// the banks list is at hand, cached or fetched now.
func (h Checks) Ready(c echo.Context) error {
	if err := h.Ledger.Ping(c.Request().Context()); err != nil {
		web.Logger(c, h.Log).Warn("ledger unreachable", "err", err)
		return c.String(http.StatusServiceUnavailable, "ledger unreachable\n")
	}
	if !h.Banks.Warm() {
		if _, err := h.Banks.List(c.Request().Context()); err != nil {
			return c.String(http.StatusServiceUnavailable, "provider unreachable\n")
		}
	}
	answer := "ready\n"
	if h.Unopened != nil {
		for _, why := range h.Unopened() {
			answer += "disabled at start: " + why + "\n"
		}
	}
	if h.Mismatches != nil {
		for _, what := range h.Mismatches() {
			answer += what + "\n"
		}
	}
	return c.String(http.StatusOK, answer)
}
