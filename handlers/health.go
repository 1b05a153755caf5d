package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// health says the process is alive.
func (h *Handler) health(c echo.Context) error {
	return c.String(http.StatusOK, "ok\n")
}

// ready says the app can serve shoppers: the payments ledger answers and
// the banks list is at hand, cached or fetched now.
func (h *Handler) ready(c echo.Context) error {
	if err := h.Orders.Ledger.Ping(c.Request().Context()); err != nil {
		h.log(c).Warn("ledger unreachable", "err", err)
		return c.String(http.StatusServiceUnavailable, "ledger unreachable\n")
	}
	if h.Banks.Warm() {
		return c.String(http.StatusOK, "ready\n")
	}
	if _, err := h.Banks.List(c.Request().Context()); err != nil {
		return c.String(http.StatusServiceUnavailable, "provider unreachable\n")
	}
	return c.String(http.StatusOK, "ready\n")
}
