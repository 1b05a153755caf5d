package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

func TestTheSandboxImportsNothingOfTheApp(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/paybybank/checkout") && pkg != "github.com/paybybank/checkout/pisclient/sandbox" {
			t.Errorf("the sandbox depends on %s: it must referee the app, not share its code", pkg)
		}
	}
}

// TestTheSandboxReadsTheSpecsRules checks the sandbox's own reading of the
// provider's rules (docs/provider.md), rule by rule, apart from the client's.
func TestTheSandboxReadsTheSpecsRules(t *testing.T) {
	good := PaymentRequest{MerchantOrderID: "A-1", Amount: "49.90", Currency: "EUR", ReturnURL: "https://s.example/"}
	for name, tt := range map[string]struct {
		change func(*PaymentRequest)
		field  string
	}{
		"valid":                          {func(*PaymentRequest) {}, ""},
		"amount 1":                       {func(r *PaymentRequest) { r.Amount = "1" }, ""},
		"amount 15000":                   {func(r *PaymentRequest) { r.Amount = "15000.00" }, ""},
		"amount under 1":                 {func(r *PaymentRequest) { r.Amount = "0.99" }, "payment_amount"},
		"three decimals":                 {func(r *PaymentRequest) { r.Amount = "1.234" }, "payment_amount"},
		"a number with an exponent":      {func(r *PaymentRequest) { r.Amount = "1e3" }, "payment_amount"},
		"another currency":               {func(r *PaymentRequest) { r.Currency = "SEK" }, "payment_currency"},
		"no order id":                    {func(r *PaymentRequest) { r.MerchantOrderID = "" }, "merchant_order_id"},
		"an order id of 257":             {func(r *PaymentRequest) { r.MerchantOrderID = strings.Repeat("é", 257) }, "merchant_order_id"},
		"no return_url":                  {func(r *PaymentRequest) { r.ReturnURL = "" }, "return_url"},
		"an institution without country": {func(r *PaymentRequest) { r.InstitutionID = "ing" }, "institution_id"},
		"a payer without institution":    {func(r *PaymentRequest) { r.Payer = &Payer{Name: "Jean"} }, "payer"},
		"a colour by name":               {func(r *PaymentRequest) { r.Customization = &Customization{PrimaryColor: "blue"} }, "customization.primaryColor"},
		"a radius not listed":            {func(r *PaymentRequest) { r.Customization = &Customization{Radius: "xl"} }, "customization.radius"},
	} {
		t.Run(name, func(t *testing.T) {
			r := good
			tt.change(&r)
			errs := validate(r)
			switch {
			case tt.field == "" && len(errs) > 0:
				t.Errorf("refused: %+v", errs)
			case tt.field != "" && (len(errs) != 1 || errs[0].Field != tt.field):
				t.Errorf("errors %+v, want one naming %s", errs, tt.field)
			}
		})
	}
}
