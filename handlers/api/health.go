package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/bankhealth"
	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/rules"
)

// RouteBankHealth is how each bank's payments end, deployment-wide.
const RouteBankHealth = "/api/v1/banks/health"

// BankLists gives the banks list, for the banks' names.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
}

// bankHealthJSON is one bank's figures in a window.
type bankHealthJSON struct {
	InstitutionID string `json:"institution_id"`
	Country       string `json:"country"`
	Name          string `json:"name"`
	Started       int64  `json:"started"`
	Completed     int64  `json:"completed"`
	Canceled      int64  `json:"canceled"`
	Abandoned     int64  `json:"abandoned"`
	Open          int64  `json:"open"`
	// SuccessRate is completed ÷ finished; null when none finished.
	SuccessRate *float64 `json:"success_rate"`
	// MedianSecondsToPaid is from submit to COMPLETED; null when none was
	// paid.
	MedianSecondsToPaid *float64 `json:"median_seconds_to_paid"`
	Degraded            bool     `json:"degraded"`
}

// ShowBankHealth answers GET /api/v1/banks/health?window=1h|24h|7d&country=DE:
// how the payments of every merchant of the deployment ended at each bank,
// from the last reading in memory (taken every BANK_HEALTH_REFRESH, 30
// seconds by default). No merchant's order is in it.
func (h *API) ShowBankHealth(c echo.Context) error {
	if _, err := h.merchant(c); err != nil {
		return err
	}
	var fields []rules.FieldError
	w, ok := bankhealth.WindowNamed(c.QueryParam("window"))
	if c.QueryParam("window") == "" {
		w, ok = bankhealth.Windows[0], true
	}
	if !ok {
		fields = append(fields, rules.FieldError{Field: "window", Reason: rules.ReasonInvalid, Message: "window must be 1h, 24h or 7d"})
	}
	country := strings.ToUpper(strings.TrimSpace(c.QueryParam("country")))
	if country != "" {
		if fe := rules.CheckCountryCode("country", country); fe != nil {
			fields = append(fields, *fe)
		}
	}
	if len(fields) > 0 {
		return &web.APIError{Status: http.StatusBadRequest, Code: "validation_error", Message: "the query breaks these rules", Fields: fields}
	}
	s := h.Health.Snapshot()
	if s.At.IsZero() {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(bankhealth.RefreshEvery.Seconds())))
		return &web.APIError{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "bank health has not been read yet: try again in a minute"}
	}
	var list *banks.List
	if h.Banks != nil {
		// Names only: without the list the ids stand in.
		list, _ = h.Banks.List(c.Request().Context())
	}
	out := struct {
		Window      string           `json:"window"`
		GeneratedAt time.Time        `json:"generated_at"`
		Banks       []bankHealthJSON `json:"banks"`
	}{Window: w.Name, GeneratedAt: s.At.UTC().Truncate(time.Second), Banks: []bankHealthJSON{}}
	for _, b := range s.Figures(w).Banks {
		if country != "" && b.Country != country {
			continue
		}
		j := bankHealthJSON{InstitutionID: b.BankID, Country: b.Country, Name: b.BankID,
			Started: b.Started, Completed: b.Completed, Canceled: b.Canceled, Abandoned: b.Abandoned, Open: b.Open(),
			Degraded: b.Degraded}
		if list != nil {
			if name, ok := list.Name(b.Country, b.BankID); ok {
				j.Name = name
			}
		}
		if rate, ok := b.SuccessRate(); ok {
			rate = math.Round(rate*10000) / 10000
			j.SuccessRate = &rate
		}
		if b.Completed > 0 && b.MedianToPaid > 0 {
			secs := math.Round(b.MedianToPaid.Seconds()*10) / 10
			j.MedianSecondsToPaid = &secs
		}
		out.Banks = append(out.Banks, j)
	}
	return c.JSON(http.StatusOK, out)
}
