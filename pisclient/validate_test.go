package pisclient

import (
	"errors"
	"strings"
	"testing"

	"github.com/paybybank/checkout/rules"
)

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
		{"order id missing", func(r *PaymentRequest) { r.MerchantOrderID = "" }, "merchant_order_id", rules.ReasonRequired},
		{"order id 256", func(r *PaymentRequest) { r.MerchantOrderID = strings.Repeat("é", 256) }, "", ""},
		{"order id 257", func(r *PaymentRequest) { r.MerchantOrderID = strings.Repeat("a", 257) }, "merchant_order_id", rules.ReasonTooLong},
		{"order id control", func(r *PaymentRequest) { r.MerchantOrderID = "A\n1" }, "merchant_order_id", rules.ReasonInvalid},
		{"amount bad", func(r *PaymentRequest) { r.Amount = "1e3" }, "payment_amount", rules.ReasonInvalid},
		{"currency USD", func(r *PaymentRequest) { r.Currency = "USD" }, "payment_currency", rules.ReasonUnsupported},
		{"currency missing", func(r *PaymentRequest) { r.Currency = "" }, "payment_currency", rules.ReasonRequired},
		{"return url missing", func(r *PaymentRequest) { r.ReturnURL = "" }, "return_url", rules.ReasonRequired},
		{"return url relative", func(r *PaymentRequest) { r.ReturnURL = "/done" }, "return_url", rules.ReasonInvalid},
		{"return url javascript", func(r *PaymentRequest) { r.ReturnURL = "javascript:alert(1)" }, "return_url", rules.ReasonInvalid},
		{"email ok", func(r *PaymentRequest) { r.CustomerEmail = "erika@example.com" }, "", ""},
		{"email display name", func(r *PaymentRequest) { r.CustomerEmail = "Erika <erika@example.com>" }, "customer_email", rules.ReasonInvalid},
		{"email spaces", func(r *PaymentRequest) { r.CustomerEmail = " erika@example.com" }, "customer_email", rules.ReasonInvalid},
		{"email no at", func(r *PaymentRequest) { r.CustomerEmail = "erika" }, "customer_email", rules.ReasonInvalid},
		{"bank without country", func(r *PaymentRequest) { r.InstitutionID = "ing" }, "institution_country_code", rules.ReasonPaired},
		{"country without bank", func(r *PaymentRequest) { r.InstitutionCountryCode = "NL" }, "institution_id", rules.ReasonPaired},
		{"country lower case", func(r *PaymentRequest) { r.InstitutionID, r.InstitutionCountryCode = "ing", "nl" }, "institution_country_code", rules.ReasonInvalid},
		{"payer without bank", func(r *PaymentRequest) { r.Payer = &Payer{Name: "Erika"} }, "payer", rules.ReasonNotAllowed},
		{"payer iban checksum", func(r *PaymentRequest) {
			r.InstitutionID, r.InstitutionCountryCode = "ing", "NL"
			r.Payer = &Payer{IBAN: "DE89370400440532013001"}
		}, "payer.iban", rules.ReasonChecksum},
		{"payer bic", func(r *PaymentRequest) {
			r.InstitutionID, r.InstitutionCountryCode = "ing", "NL"
			r.Payer = &Payer{BIC: "COBA"}
		}, "payer.bic", rules.ReasonInvalid},
		{"client ip", func(r *PaymentRequest) { r.ClientIP = "300.1.1.1" }, "client_ip", rules.ReasonInvalid},
		{"colour ok", func(r *PaymentRequest) {
			r.Customization = &rules.Customization{PrimaryColor: "#0B5FFF", BgColor: "#ffffff"}
		}, "", ""},
		{"colour short", func(r *PaymentRequest) { r.Customization = &rules.Customization{PrimaryColor: "#FFF"} }, "customization.primaryColor", rules.ReasonInvalid},
		{"colour name", func(r *PaymentRequest) { r.Customization = &rules.Customization{BgColor: "red"} }, "customization.bgColor", rules.ReasonInvalid},
		{"spacing xl", func(r *PaymentRequest) { r.Customization = &rules.Customization{Spacing: "xl"} }, "customization.spacing", rules.ReasonInvalid},
		{"spacing none", func(r *PaymentRequest) { r.Customization = &rules.Customization{Spacing: "none"} }, "customization.spacing", rules.ReasonInvalid},
		{"radius none", func(r *PaymentRequest) { r.Customization = &rules.Customization{Radius: "none"} }, "", ""},
		{"radius huge", func(r *PaymentRequest) { r.Customization = &rules.Customization{Radius: "huge"} }, "customization.radius", rules.ReasonInvalid},
		{"shadow xl", func(r *PaymentRequest) { r.Customization = &rules.Customization{ModalShadow: "xl"} }, "customization.modalShadow", rules.ReasonInvalid},
		{"logo relative", func(r *PaymentRequest) { r.Customization = &rules.Customization{LogoURL: "/logo.png"} }, "customization.logoUrl", rules.ReasonInvalid},
		{"logo height", func(r *PaymentRequest) { r.Customization = &rules.Customization{LogoHeight: "40px"} }, "", ""},
		{"logo height huge", func(r *PaymentRequest) { r.Customization = &rules.Customization{LogoHeight: "4000px"} }, "customization.logoHeight", rules.ReasonInvalid},
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
			var ve *rules.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v, want *rules.ValidationError", err)
			}
			fe, ok := ve.Field(tt.field)
			if !ok || fe.Reason != tt.reason {
				t.Fatalf("Validate() = %v, want %s refused for %s", err, tt.field, tt.reason)
			}
		})
	}
}

func TestLongTitleIsOneError(t *testing.T) {
	r := validRequest()
	r.Customization = &rules.Customization{Title: strings.Repeat("T", 200)}
	var ve *rules.ValidationError
	if !errors.As(r.Validate(), &ve) || len(ve.Fields) != 1 || ve.Fields[0].Reason != rules.ReasonTooLong {
		t.Fatalf("a 200-character title: %v, want exactly one too_long error", ve)
	}
}
