package pisclient

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in     string
		reason string // "" means accepted
	}{
		{"1", ""},
		{"1.5", ""},
		{"49.90", ""},
		{"15000", ""},
		{"15000.00", ""},
		{"0.99", ReasonTooSmall},
		{"0", ReasonTooSmall},
		{"15000.01", ReasonTooLarge},
		{"1.234", ReasonDecimals},
		{"1e3", ReasonInvalid},
		{"-5", ReasonInvalid},
		{"+5", ReasonInvalid},
		{" 10", ReasonInvalid},
		{"10 ", ReasonInvalid},
		{"10,00", ReasonInvalid},
		{"1.", ReasonInvalid},
		{".5", ReasonInvalid},
		{"NaN", ReasonInvalid},
		{"", ReasonRequired},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, fe := ParseAmount(tt.in)
			if tt.reason == "" {
				if fe != nil {
					t.Fatalf("ParseAmount(%q) refused: %v", tt.in, fe)
				}
				if d.LessThan(MinAmount) || d.GreaterThan(MaxAmount) {
					t.Fatalf("ParseAmount(%q) = %s, outside the limits", tt.in, d)
				}
				return
			}
			if fe == nil {
				t.Fatalf("ParseAmount(%q) accepted %s, want %s", tt.in, d, tt.reason)
			}
			if fe.Reason != tt.reason || fe.Field != "payment_amount" {
				t.Fatalf("ParseAmount(%q) = %s/%s, want payment_amount/%s", tt.in, fe.Field, fe.Reason, tt.reason)
			}
		})
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1", "1.5", "15000.00", "0.99", "15000.01", "1.234", "1e3", "-5", " 10", "10,00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, fe := ParseAmount(s)
		if fe != nil {
			return
		}
		if d.LessThan(MinAmount) || d.GreaterThan(MaxAmount) {
			t.Fatalf("accepted %q = %s outside 1..15000", s, d)
		}
		if d.Exponent() < -2 && !d.Equal(d.Round(2)) {
			t.Fatalf("accepted %q with more than 2 decimals", s)
		}
		for _, r := range s {
			if (r < '0' || r > '9') && r != '.' {
				t.Fatalf("accepted %q holding %q", s, r)
			}
		}
	})
}

func validRequest() PaymentRequest {
	return PaymentRequest{
		MerchantOrderID: "A-1001",
		Amount:          "49.90",
		Currency:        "EUR",
		ReturnURL:       "https://shop.example/done",
	}
}

func TestValidateRequest(t *testing.T) {
	tests := []struct {
		name   string
		change func(*PaymentRequest)
		field  string // "" means valid
		reason string
	}{
		{"minimal", func(*PaymentRequest) {}, "", ""},
		{"with bank and payer", func(r *PaymentRequest) {
			r.InstitutionID, r.InstitutionCountryCode = "ing", "NL"
			r.Payer = &Payer{Name: "Erika Mustermann", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX", CountryCode: "DE"}
		}, "", ""},
		{"order id missing", func(r *PaymentRequest) { r.MerchantOrderID = "" }, "merchant_order_id", ReasonRequired},
		{"order id 256", func(r *PaymentRequest) { r.MerchantOrderID = strings.Repeat("é", 256) }, "", ""},
		{"order id 257", func(r *PaymentRequest) { r.MerchantOrderID = strings.Repeat("a", 257) }, "merchant_order_id", ReasonTooLong},
		{"order id control", func(r *PaymentRequest) { r.MerchantOrderID = "A\n1" }, "merchant_order_id", ReasonInvalid},
		{"amount bad", func(r *PaymentRequest) { r.Amount = "1e3" }, "payment_amount", ReasonInvalid},
		{"currency USD", func(r *PaymentRequest) { r.Currency = "USD" }, "payment_currency", ReasonUnsupported},
		{"currency missing", func(r *PaymentRequest) { r.Currency = "" }, "payment_currency", ReasonRequired},
		{"return url missing", func(r *PaymentRequest) { r.ReturnURL = "" }, "return_url", ReasonRequired},
		{"return url relative", func(r *PaymentRequest) { r.ReturnURL = "/done" }, "return_url", ReasonInvalid},
		{"return url javascript", func(r *PaymentRequest) { r.ReturnURL = "javascript:alert(1)" }, "return_url", ReasonInvalid},
		{"email ok", func(r *PaymentRequest) { r.CustomerEmail = "erika@example.com" }, "", ""},
		{"email display name", func(r *PaymentRequest) { r.CustomerEmail = "Erika <erika@example.com>" }, "customer_email", ReasonInvalid},
		{"email spaces", func(r *PaymentRequest) { r.CustomerEmail = " erika@example.com" }, "customer_email", ReasonInvalid},
		{"email no at", func(r *PaymentRequest) { r.CustomerEmail = "erika" }, "customer_email", ReasonInvalid},
		{"bank without country", func(r *PaymentRequest) { r.InstitutionID = "ing" }, "institution_country_code", ReasonPaired},
		{"country without bank", func(r *PaymentRequest) { r.InstitutionCountryCode = "NL" }, "institution_id", ReasonPaired},
		{"country lower case", func(r *PaymentRequest) { r.InstitutionID, r.InstitutionCountryCode = "ing", "nl" }, "institution_country_code", ReasonInvalid},
		{"payer without bank", func(r *PaymentRequest) { r.Payer = &Payer{Name: "Erika"} }, "payer", ReasonNotAllowed},
		{"payer iban checksum", func(r *PaymentRequest) {
			r.InstitutionID, r.InstitutionCountryCode = "ing", "NL"
			r.Payer = &Payer{IBAN: "DE89370400440532013001"}
		}, "payer.iban", ReasonChecksum},
		{"payer bic", func(r *PaymentRequest) {
			r.InstitutionID, r.InstitutionCountryCode = "ing", "NL"
			r.Payer = &Payer{BIC: "COBA"}
		}, "payer.bic", ReasonInvalid},
		{"client ip", func(r *PaymentRequest) { r.ClientIP = "300.1.1.1" }, "client_ip", ReasonInvalid},
		{"colour ok", func(r *PaymentRequest) { r.Customization = &Customization{PrimaryColor: "#0B5FFF", BgColor: "#ffffff"} }, "", ""},
		{"colour short", func(r *PaymentRequest) { r.Customization = &Customization{PrimaryColor: "#FFF"} }, "customization.primaryColor", ReasonInvalid},
		{"colour name", func(r *PaymentRequest) { r.Customization = &Customization{BgColor: "red"} }, "customization.bgColor", ReasonInvalid},
		{"spacing xl", func(r *PaymentRequest) { r.Customization = &Customization{Spacing: "xl"} }, "customization.spacing", ReasonInvalid},
		{"spacing none", func(r *PaymentRequest) { r.Customization = &Customization{Spacing: "none"} }, "customization.spacing", ReasonInvalid},
		{"radius none", func(r *PaymentRequest) { r.Customization = &Customization{Radius: "none"} }, "", ""},
		{"radius huge", func(r *PaymentRequest) { r.Customization = &Customization{Radius: "huge"} }, "customization.radius", ReasonInvalid},
		{"shadow xl", func(r *PaymentRequest) { r.Customization = &Customization{ModalShadow: "xl"} }, "customization.modalShadow", ReasonInvalid},
		{"logo relative", func(r *PaymentRequest) { r.Customization = &Customization{LogoURL: "/logo.png"} }, "customization.logoUrl", ReasonInvalid},
		{"logo height", func(r *PaymentRequest) { r.Customization = &Customization{LogoHeight: "40px"} }, "", ""},
		{"logo height huge", func(r *PaymentRequest) { r.Customization = &Customization{LogoHeight: "4000px"} }, "customization.logoHeight", ReasonInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest()
			tt.change(&r)
			err := r.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v, want *ValidationError", err)
			}
			fe, ok := ve.Field(tt.field)
			if !ok || fe.Reason != tt.reason {
				t.Fatalf("Validate() = %v, want %s refused for %s", err, tt.field, tt.reason)
			}
		})
	}
}

func TestCheckIBAN(t *testing.T) {
	tests := []struct {
		in, reason string
	}{
		{"DE89370400440532013000", ""},
		{"NL91ABNA0417164300", ""},
		{"FR1420041010050500013M02606", ""},
		{"MT84MALT011000012345MTLCAST001S", ""},
		{"DE89370400440532013001", ReasonChecksum},
		{"DE8937040044053201300", ReasonLength},
		{"US12345678901234567890", ReasonUnsupported},
		{"de89370400440532013000", ReasonInvalid},
		{"DE89 3704", ReasonInvalid},
	}
	for _, tt := range tests {
		fe := CheckIBAN("iban", tt.in)
		switch {
		case tt.reason == "" && fe != nil:
			t.Errorf("CheckIBAN(%q) = %v, want valid", tt.in, fe)
		case tt.reason != "" && (fe == nil || fe.Reason != tt.reason):
			t.Errorf("CheckIBAN(%q) = %v, want %s", tt.in, fe, tt.reason)
		}
	}
	if got := NormalizeIBAN(" de89 3704 0044 0532 0130 00 "); got != "DE89370400440532013000" {
		t.Errorf("NormalizeIBAN = %q", got)
	}
}

func TestCheckBIC(t *testing.T) {
	for in, ok := range map[string]bool{
		"DEUTDEFF": true, "COBADEFFXXX": true, "NDEAFIHH": true, "GENODEM1GLS": true,
		"DEUTDEF": false, "DEUTDEFFX": false, "deutdeff": false, "1EUTDEFF": false, "DEUT DEFF": false,
	} {
		if got := CheckBIC("bic", in) == nil; got != ok {
			t.Errorf("CheckBIC(%q) valid = %v, want %v", in, got, ok)
		}
	}
}

func TestLongTitleIsOneError(t *testing.T) {
	r := validRequest()
	r.Customization = &Customization{Title: strings.Repeat("T", 200)}
	var ve *ValidationError
	if !errors.As(r.Validate(), &ve) || len(ve.Fields) != 1 || ve.Fields[0].Reason != ReasonTooLong {
		t.Fatalf("a 200-character title: %v, want exactly one too_long error", ve)
	}
}

// FuzzIBANAndBIC: no input panics, and whatever passes has the shape the
// provider expects.
func FuzzIBANAndBIC(f *testing.F) {
	for _, s := range []string{"DE89 3704 0044 0532 0130 00", "FR7630006000011234567890189", "DEUTDEFF", "DEUTDEFF500", "", "ZZ00", "de89370400440532013000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckIBAN("iban", s) == nil {
			n := NormalizeIBAN(s)
			if len(n) < 15 || len(n) > 34 || n[0] < 'A' || n[0] > 'Z' {
				t.Fatalf("CheckIBAN accepted %q (%q)", s, n)
			}
		}
		if CheckBIC("bic", s) == nil && len(s) != 8 && len(s) != 11 {
			t.Fatalf("CheckBIC accepted %q", s)
		}
	})
}
