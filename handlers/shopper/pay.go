package shopper

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/logos"
	"github.com/paybybank/checkout/handlers/shopper/details"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/payment"
	"github.com/paybybank/checkout/pisclient"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/views"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// showPay shows the details form the bank's extraFields ask for, or a
// one-click summary when they ask for nothing. Its first showing is the
// same for every shopper of a look, language and bank but for their order
// and token: it is kept rendered and compressed like the bank page, and a
// request fills in its own parts.
func (h *Steps) showPay(c echo.Context) error {
	co, bank, list, err := h.payStep(c, c.QueryParam(details.FieldCountry), c.QueryParam(details.FieldBank))
	if err != nil {
		return answered(err)
	}
	l := h.loc(c)
	if !ServedAhead(c) {
		return h.renderPay(c, http.StatusOK, co, bank, details.New(l, bank, list.Countries(), co.merchant.IPVerification, nil), "")
	}
	degraded := h.Health.Snapshot().Degraded(bank.CountryCode, bank.ID)
	key := pageKey{route: RoutePay, look: lookKey(c), lang: l.Lang(), country: bank.CountryCode, query: bank.ID,
		degraded: strconv.FormatBool(degraded), stale: list.Stale, linked: co.order.Link != ""}
	now := h.Now()
	kept, ok := h.pages.get(list, key, now)
	if !ok {
		marked := co
		marked.token, marked.order.ID, marked.order.Description = tokenMarker, orderMarker, descriptionMarker
		page := h.payPage(c, marked, bank, details.New(l, bank, list.Countries(), co.merchant.IPVerification, nil), "")
		page.Summary.Amount, page.Degraded = amountMarker, degraded
		page.Switch = payLanguageSwitch(c, bank, tokenMarker)
		if kept, err = keep(c, checkoutviews.Pay(page), now, true, amountMarker, orderMarker, tokenMarker, descriptionMarker); err != nil {
			return err
		}
		h.pages.put(list, key, kept)
	}
	return serveKept(c, kept, true, []byte(html.EscapeString(l.Amount(co.order.Amount))), []byte(html.EscapeString(co.order.ID)),
		[]byte(url.PathEscape(co.token)), []byte(html.EscapeString(co.order.Description)))
}

// payLanguageSwitch is the language switch of the details page of bank for
// the checkout token: back to this page in each language.
func payLanguageSwitch(c echo.Context, bank pisclient.Institution, token string) views.LanguageSwitch {
	s := languageSwitch(c)
	s.Action = payAction(token)
	s.Keep = []views.Hidden{{Name: details.FieldCountry, Value: bank.CountryCode}, {Name: details.FieldBank, Value: bank.ID}}
	return s
}

// errAnswered means a step has answered already: it sent the shopper on.
var errAnswered = errors.New("shopper: answered already")

// answered is err, but nil when the step answered already.
func answered(err error) error {
	if errors.Is(err, errAnswered) {
		return nil
	}
	return err
}

// payStep opens the order and finds the chosen bank. A bank the provider's
// list does not hold (it left the list for a while, say) sends the shopper
// to the country's other banks, told that it is unavailable for now, and
// reports errAnswered: never a dead end.
func (h *Steps) payStep(c echo.Context, country, id string) (checkout, pisclient.Institution, *banks.List, error) {
	co, list, err := h.openWithBanks(c)
	if err != nil {
		return co, pisclient.Institution{}, nil, err
	}
	country = strings.ToUpper(country)
	bank, ok := list.Find(country, id)
	if !ok {
		to := string(countryURL(co.token, true))
		if list.HasCountry(country) {
			to = string(banksURL(co.token, country, "")) + "&" + url.Values{"unavailable": {id}}.Encode()
		}
		h.log(c).Info("the shopper's bank is not in the list: choosing again", "country", country, "bank", id)
		if err := c.Redirect(http.StatusSeeOther, to); err != nil {
			return co, bank, nil, err
		}
		return co, bank, nil, errAnswered
	}
	return co, bank, list, nil
}

func (h *Steps) renderPay(c echo.Context, status int, co checkout, bank pisclient.Institution, f *details.Form, problem string) error {
	return web.Render(c, status, checkoutviews.Pay(h.payPage(c, co, bank, f, problem)))
}

// payPage is the details form's page, with problem (a catalog key) above
// it when set.
func (h *Steps) payPage(c echo.Context, co checkout, bank pisclient.Institution, f *details.Form, problem string) checkoutviews.PayPage {
	l := h.loc(c)
	if problem != "" {
		problem = l.T(problem)
	}
	layout := h.page(c, l.T("pay.title", bank.Name))
	layout.Scripts = []string{h.Assets.FormJS}
	page := checkoutviews.PayPage{
		Page:     layout,
		Summary:  co.summary(l),
		BankName: bank.Name,
		BankLogo: logos.BankPath(bank.LogoURL), BankInitials: views.Initials(bank.Name), BankTone: logos.Tone(bank.Name),
		Action: payAction(co.token),
		Hidden: []views.Hidden{
			{Name: details.FieldCountry, Value: bank.CountryCode},
			{Name: details.FieldBank, Value: bank.ID},
		},
		Problem:       problem,
		ChangeBankURL: banksURL(co.token, bank.CountryCode, ""),
		Degraded:      h.Health.Snapshot().Degraded(bank.CountryCode, bank.ID),
	}
	if f.HasErrors() {
		page.Title = l.T("title.error", page.Title)
	}
	for _, field := range f.Fields() {
		if field.Error != "" {
			page.Errors = append(page.Errors, views.FieldError{ID: field.ID, Message: field.Error})
		}
		page.Fields = append(page.Fields, field)
	}
	return page
}

// showPayAgain shows the details form again as it was sent, with a problem
// (a catalog key) above it; the error when the form cannot be shown.
func (h *Steps) showPayAgain(c echo.Context, status int, problem string) error {
	co, bank, list, err := h.payStep(c, c.FormValue(details.FieldCountry), c.FormValue(details.FieldBank))
	if err != nil {
		return err
	}
	f := details.New(h.loc(c), bank, list.Countries(), co.merchant.IPVerification, details.Read(c))
	return h.renderPay(c, status, co, bank, f, problem)
}

// inFrame reports whether the details form came from inside a merchant's
// frame: sent by frame.js, or by the browser navigating the frame.
func inFrame(r *http.Request) bool {
	return r.Header.Get("X-Checkout-Frame") != "" || r.Header.Get("Sec-Fetch-Dest") == "iframe"
}

// linkOrder gives the checkout of a reusable payment link its payer's
// order, made now, and seals it into the checkout's token, so that the
// return address and every later step name it.
func (h *Steps) linkOrder(c echo.Context, co checkout) (checkout, error) {
	_, o, err := h.Links.OrderFor(c.Request().Context(), co.order.Link, order.PayerDigest(co.order.Payer))
	if err != nil {
		return co, err
	}
	co.order.ID = o.OrderID
	token, err := h.Sealer.Seal(co.order, h.Now())
	if err != nil {
		return co, err
	}
	co.token = token
	return co, nil
}

// createPayment validates the details, creates the payment once per order
// (package payment) and sends the shopper to it.
func (h *Steps) createPayment(c echo.Context) error {
	co, bank, list, err := h.payStep(c, c.FormValue(details.FieldCountry), c.FormValue(details.FieldBank))
	if err != nil {
		return answered(err)
	}
	f := details.New(h.loc(c), bank, list.Countries(), co.merchant.IPVerification, details.Read(c))
	req := pisclient.PaymentRequest{
		// Pay names each attempt; the first one's id is checked here.
		MerchantOrderID:        co.merchant.UpstreamOrderID(co.order.ID),
		Amount:                 co.order.Amount,
		Currency:               co.order.Currency,
		ReturnURL:              h.BaseURL + returnPath(co.token, 0),
		CustomerEmail:          co.order.Email,
		InstitutionID:          bank.ID,
		InstitutionCountryCode: bank.CountryCode,
		Payer:                  f.Payer(),
		Customization:          co.customization(),
	}
	if co.merchant.IPVerification {
		req.ClientIP = c.RealIP()
		req.CustomerFullName = f.FullName()
	}
	var ve *rules.ValidationError
	if err := req.Validate(); errors.As(err, &ve) {
		if !f.AddErrors(ve.Fields) {
			return fmt.Errorf("order %q breaks the provider's rules: %w", co.order.ID, err)
		}
	}
	if f.HasErrors() {
		return h.renderPay(c, http.StatusUnprocessableEntity, co, bank, f, "")
	}
	if co.order.Link != "" && co.order.ID == "" {
		// A reusable link's payer gets their order now, at the first step
		// that needs one.
		if co, err = h.linkOrder(c, co); err != nil {
			if errors.Is(err, payment.ErrLinkEnded) || errors.Is(err, payment.ErrLinkFull) {
				return h.errLinkStopped(c, co, err)
			}
			return err
		}
		req.MerchantOrderID, req.ReturnURL = co.merchant.UpstreamOrderID(co.order.ID), h.BaseURL+returnPath(co.token, 0)
	}

	out, err := h.Orders.Pay(c.Request().Context(), co.payment(), req)
	var refused *payment.RefusedError
	switch {
	case err == nil && out.Link != "":
		h.rememberBank(c, bank.CountryCode, bank.ID)
		h.sawPaymentLink(out.Link)
		if inFrame(c.Request()) {
			// Banks refuse to be framed: the shopper goes on in the
			// whole window.
			l := h.loc(c)
			return web.Render(c, http.StatusOK, checkoutviews.ToBank(checkoutviews.ToBankPage{
				Page: h.page(c, l.T("tobank.heading", bank.Name)), Summary: co.summary(l),
				BankName: bank.Name, Link: templ.SafeURL(out.Link),
			}))
		}
		return c.Redirect(http.StatusSeeOther, out.Link)
	case err == nil:
		// The order's payment has begun or is done: its status page says
		// where it stands.
		return c.Redirect(http.StatusSeeOther, statusPath(co.token))
	case errors.Is(err, payment.ErrOrderChanged):
		return errOrderChanged(err)
	case errors.Is(err, payment.ErrInProgress):
		// Another checkout's payment of the order is under way: nothing of
		// it is shown, and nothing was started for this one.
		if co.order.Link != "" {
			p, lerr := h.Orders.Ledger.LinkByID(c.Request().Context(), co.order.Link)
			if lerr != nil {
				return lerr
			}
			return h.linkInProgress(c, co.merchant, p)
		}
		c.Response().Header().Set("Retry-After", strconv.Itoa(inProgressRefresh))
		return &web.PageError{Status: http.StatusConflict, Key: "error.inProgress", RetryURL: countryURL(co.token, false), Err: err}
	case errors.Is(err, payment.ErrLinkEnded), errors.Is(err, payment.ErrLinkFull):
		// The link was cancelled, expired or filled while the payer chose
		// their bank: nothing was started.
		return h.errLinkStopped(c, co, err)
	case errors.Is(err, payment.ErrChecking):
		// A payment may exist: the shopper is not told nothing was charged,
		// and pressing Continue again settles it.
		h.log(c).Warn("create payment: outcome not known yet", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusServiceUnavailable, co, bank, f, "problem.noAnswer")
	case !errors.As(err, &refused) && h.Outage.Down(c, err):
		// The ledger does not answer (logged once for the outage): no link
		// was handed out, so nothing can have been charged.
		c.Response().Header().Set("Retry-After", strconv.Itoa(web.RetryAfterOutage))
		page := h.payPage(c, co, bank, f, "error.unavailable.text")
		if back, err := h.wayBackURL(co, ""); err == nil {
			// Continue tries again; this leads back to the shop.
			page.WayBackURL = back
		}
		return web.Render(c, http.StatusServiceUnavailable, checkoutviews.Pay(page))
	case !errors.As(err, &refused):
		// Something of ours failed, perhaps after the provider acted: what
		// was made is not known, so the shopper is not told that nothing
		// was charged.
		h.log(c).Error("paying an order failed", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusServiceUnavailable, co, bank, f, "problem.noAnswer")
	case errors.As(err, &ve), errors.Is(err, pisclient.ErrUnauthorized):
		return fmt.Errorf("creating a payment: %w", err)
	case errors.Is(err, pisclient.ErrRateLimited), errors.Is(err, pisclient.ErrUnavailable):
		h.log(c).Warn("create payment: provider busy", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusServiceUnavailable, co, bank, f, "problem.busy")
	default:
		h.log(c).Error("create payment refused", "merchant", co.merchant.ID, "err", err)
		return h.renderPay(c, http.StatusBadGateway, co, bank, f, "problem.failed")
	}
}
