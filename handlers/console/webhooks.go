package console

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/merchant"
	consoleviews "github.com/paybybank/checkout/views/console"
)

// webhookMerchant is the merchant whose endpoint the page is about: the
// user's own, or for an operator the one asked for (the first with an
// endpoint when none is).
func (c *Console) webhookMerchant(ec echo.Context, asked string) (*merchant.Merchant, []consoleviews.ConsoleOption, error) {
	if own := sessionOf(ec).merchant; own != nil {
		return own, nil, nil
	}
	all := c.Merchants.All()
	if asked == "" {
		for _, m := range all {
			if m.WebhookURL != "" {
				asked = m.ID
				break
			}
		}
		if asked == "" && len(all) > 0 {
			asked = all[0].ID
		}
	}
	_, options, err := c.scope(ec, asked, "")
	if err != nil {
		return nil, nil, err
	}
	m, _ := c.Merchants.Get(asked)
	return m, options, nil
}

// showWebhooks answers GET /console/webhooks: how the endpoint has done.
func (c *Console) showWebhooks(ec echo.Context) error {
	m, options, err := c.webhookMerchant(ec, ec.QueryParam("merchant"))
	if err != nil {
		return err
	}
	page, err := c.webhooksPage(ec, m, options)
	if err != nil {
		return err
	}
	return render(ec, http.StatusOK, consoleviews.ConsoleWebhooksPage(page))
}

// webhooksPage reads the endpoint's health over the last 24 hours.
func (c *Console) webhooksPage(ec echo.Context, m *merchant.Merchant, options []consoleviews.ConsoleOption) (consoleviews.ConsoleWebhooks, error) {
	now := c.Now()
	h, err := c.Ledger.WebhookHealth(ec.Request().Context(), m.ID, now.Add(-24*time.Hour))
	if err != nil {
		return consoleviews.ConsoleWebhooks{}, err
	}
	l := localizerOf(ec)
	page := consoleviews.ConsoleWebhooks{
		ConsolePage: c.frame(ec, t(ec, "console.webhooks"), "webhooks"),
		Merchants:   options, MerchantID: m.ID, Endpoint: m.WebhookURL,
	}
	success := consoleviews.ConsoleFigure{Label: t(ec, "console.webhooks.success"), Value: percent(l, h.Delivered, h.Tries),
		Hint: t(ec, "console.webhooks.success.hint", count(l, h.Delivered), count(l, h.Tries)), TestID: "success"}
	if h.Tries == 0 {
		success.Hint = t(ec, "console.webhooks.noTries")
	}
	oldest := t(ec, "console.fig.none")
	if !h.OldestPending.IsZero() {
		oldest = duration(l, now.Sub(h.OldestPending))
	}
	page.Figures = []consoleviews.ConsoleFigure{
		success,
		{Label: t(ec, "console.webhooks.pending"), Value: count(l, h.Pending), Hint: t(ec, "console.webhooks.pending.hint"), TestID: "pending"},
		{Label: t(ec, "console.webhooks.failed"), Value: count(l, h.Failed), Hint: t(ec, "console.webhooks.failed.hint"), TestID: "failed"},
		{Label: t(ec, "console.webhooks.oldest"), Value: oldest, Hint: t(ec, "console.webhooks.oldest.hint"), TestID: "oldest"},
	}
	if f := h.LastFailure; f != nil {
		try := tryOf(ec, f.Delivery)
		why := try.Error
		if why == "" {
			why = "HTTP " + try.Code
		}
		page.LastFailure = t(ec, "console.webhooks.failure", f.EventID, try.N, why)
		page.LastFailureWhen = when(localizerOf(ec), f.At)
		page.LastFailureURL = c.orderURL(m.ID, f.OrderID, options != nil)
	}
	return page, nil
}

// sendTest answers POST /console/webhooks/test: a signed ping to the
// endpoint, its answer shown on the page. Nothing is recorded.
func (c *Console) sendTest(ec echo.Context) error {
	m, options, err := c.webhookMerchant(ec, ec.FormValue("merchant"))
	if err != nil {
		return err
	}
	var test *consoleviews.ConsoleTry
	if m.WebhookURL != "" {
		d := c.Webhooks.Ping(ec.Request().Context(), m)
		tr := tryOf(ec, d)
		test = &tr
		c.log(ec).Info("console: test event sent", "merchant", m.ID, "code", d.Code, "email", maskEmail(sessionOf(ec).user.Email))
	}
	page, err := c.webhooksPage(ec, m, options)
	if err != nil {
		return err
	}
	page.Test = test
	return render(ec, http.StatusOK, consoleviews.ConsoleWebhooksPage(page))
}
