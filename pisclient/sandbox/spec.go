package sandbox

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The sandbox imports nothing of the app: it implements the provider's
// interface (docs/provider.md) with its own types and its own reading of the
// rules, so that it referees the client instead of agreeing with it by
// construction.

// PaymentRequest is the provider's payment creation body.
type PaymentRequest struct {
	MerchantOrderID        string         `json:"merchant_order_id"`
	Amount                 string         `json:"payment_amount"`
	Currency               string         `json:"payment_currency"`
	ReturnURL              string         `json:"return_url"`
	CustomerEmail          string         `json:"customer_email,omitempty"`
	InstitutionID          string         `json:"institution_id,omitempty"`
	InstitutionCountryCode string         `json:"institution_country_code,omitempty"`
	Payer                  *Payer         `json:"payer,omitempty"`
	ClientIP               string         `json:"client_ip,omitempty"`
	CustomerFullName       string         `json:"customer_full_name,omitempty"`
	Customization          *Customization `json:"customization,omitempty"`
}

// Payer is the provider's payer object.
type Payer struct {
	Name           string   `json:"name,omitempty"`
	BIC            string   `json:"bic,omitempty"`
	IBAN           string   `json:"iban,omitempty"`
	Country        string   `json:"country,omitempty"`
	CountryCode    string   `json:"countryCode,omitempty"`
	City           string   `json:"city,omitempty"`
	PostCode       string   `json:"postCode,omitempty"`
	StreetName     string   `json:"streetName,omitempty"`
	BuildNumber    string   `json:"buildNumber,omitempty"`
	AddressLines   []string `json:"addressLines,omitempty"`
	PSUID          string   `json:"psuId,omitempty"`
	PSUCorporateID string   `json:"psuCorporateId,omitempty"`
}

// Customization is the theme of the provider's checkout page.
type Customization struct {
	Title        string `json:"title,omitempty"`
	LogoURL      string `json:"logoUrl,omitempty"`
	LogoHeight   string `json:"logoHeight,omitempty"`
	PrimaryColor string `json:"primaryColor,omitempty"`
	BgColor      string `json:"bgColor,omitempty"`
	Spacing      string `json:"spacing,omitempty"`
	Radius       string `json:"radius,omitempty"`
	ModalShadow  string `json:"modalShadow,omitempty"`
}

// The statuses the sandbox moves a payment through, as the real provider is
// known to (docs/provider.md).
const (
	statusNotFound   = "NOT_FOUND"
	statusInProgress = "IN_PROGRESS"
	statusAccepted   = "ACCEPTED_SETTLEMENT_IN_PROCESS"
	statusCompleted  = "COMPLETED"
	statusCanceled   = "CANCELED"
)

var (
	// amountForm is a plain decimal string: digits, then at most two decimals.
	amountForm = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`)
	colourForm = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
)

// validate applies the rules the provider's document states for a creation
// body (docs/provider.md) and nothing the app adds: the sandbox refuses what
// the real provider would, by the document's words.
func validate(r PaymentRequest) []fieldError {
	var errs []fieldError
	add := func(field, reason, message string) { errs = append(errs, fieldError{field, reason, message}) }
	switch n := utf8.RuneCountInString(r.MerchantOrderID); {
	case n == 0:
		add("merchant_order_id", "required", "merchant_order_id is required")
	case n > 256:
		add("merchant_order_id", "too_long", "merchant_order_id is longer than 256 characters")
	}
	if !amountForm.MatchString(r.Amount) {
		add("payment_amount", "invalid", "payment_amount must be a decimal string with at most 2 fractional digits")
	} else if f, _ := strconv.ParseFloat(r.Amount, 64); f < 1 || f > 15000 || math.IsNaN(f) {
		add("payment_amount", "out_of_range", "payment_amount must be from 1 to 15000")
	}
	if r.Currency != "EUR" {
		add("payment_currency", "unsupported", "only EUR is supported")
	}
	if r.ReturnURL == "" {
		add("return_url", "required", "return_url is required")
	}
	if (r.InstitutionID == "") != (r.InstitutionCountryCode == "") {
		add("institution_id", "paired", "institution_id and institution_country_code go together")
	}
	if r.Payer != nil && r.InstitutionID == "" {
		add("payer", "needs_institution", "payer is usable only with institution_id")
	}
	if c := r.Customization; c != nil {
		for field, v := range map[string]string{"primaryColor": c.PrimaryColor, "bgColor": c.BgColor} {
			if v != "" && !colourForm.MatchString(v) {
				add("customization."+field, "invalid", field+" must be #RRGGBB")
			}
		}
		for field, v := range map[string]struct {
			value   string
			allowed []string
		}{
			"spacing":     {c.Spacing, []string{"sm", "md", "lg"}},
			"radius":      {c.Radius, []string{"none", "sm", "md", "lg"}},
			"modalShadow": {c.ModalShadow, []string{"none", "sm", "md", "lg"}},
		} {
			if v.value != "" && !slices.Contains(v.allowed, v.value) {
				add("customization."+field, "invalid", field+" must be one of "+strings.Join(v.allowed, ", "))
			}
		}
	}
	return errs
}

// hostedTheme is how the sandbox's hosted page looks in a customization.
// This is a small copy of the app's theme maths (package theme): the
// sandbox stands alone, and a provider would have its own.
type hostedTheme struct {
	Title, Logo, LogoHeight, Bg, Primary, OnPrimary, Radius, Shadow string
}

func newHostedTheme(c *Customization, fallbackTitle string) hostedTheme {
	t := hostedTheme{Title: fallbackTitle, LogoHeight: "40", Bg: "#F4F5F7", Primary: "#0B5FFF", Radius: "8px", Shadow: "0 4px 12px rgba(0, 0, 0, 0.2)"}
	if c != nil {
		if c.Title != "" {
			t.Title = c.Title
		}
		if strings.HasPrefix(c.LogoURL, "https://") || strings.HasPrefix(c.LogoURL, "http://") {
			t.Logo = c.LogoURL
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(c.LogoHeight, "px")); err == nil && n >= 16 && n <= 200 {
			t.LogoHeight = strconv.Itoa(n)
		}
		if colourForm.MatchString(c.PrimaryColor) {
			t.Primary = strings.ToUpper(c.PrimaryColor)
		}
		if colourForm.MatchString(c.BgColor) {
			t.Bg = strings.ToUpper(c.BgColor)
		}
		if r, ok := map[string]string{"none": "0px", "sm": "4px", "md": "8px", "lg": "16px"}[c.Radius]; ok {
			t.Radius = r
		}
		if s, ok := map[string]string{"none": "none", "sm": "0 1px 3px rgba(0, 0, 0, 0.2)", "md": "0 4px 12px rgba(0, 0, 0, 0.2)",
			"lg": "0 12px 32px rgba(0, 0, 0, 0.25)"}[c.ModalShadow]; ok {
			t.Shadow = s
		}
	}
	t.OnPrimary = "#FFFFFF"
	if contrast("#000000", t.Primary) >= contrast("#FFFFFF", t.Primary) {
		t.OnPrimary = "#000000"
	}
	return t
}

// contrast is the WCAG contrast ratio of two #RRGGBB colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(hex string) float64 {
	var sum float64
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(n) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		sum += weight * c
	}
	return sum
}
