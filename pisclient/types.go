package pisclient

import "github.com/paybybank/checkout/rules"

// Institution is one entry of the banks list (docs/provider.md). A bank
// present in several countries comes once per country: (ID, CountryCode) names
// an entry.
type Institution struct {
	ID          string
	Name        string
	CountryCode string
	// LogoURL is an absolute http(s) URL or empty; the provider's `logo_link`
	// or `logoUrl`, whichever it sent.
	LogoURL string
	// ExtraFields lists the payer fields the bank needs; empty when the
	// provider sent none. Values the specification does not name are kept.
	ExtraFields []string
	// BIC is the bank's BIC when the provider happens to send one (the
	// specification does not list it); empty otherwise.
	BIC       string
	IsForTest bool
}

// Key identifies an institution entry: one bank in one country.
type Key struct {
	ID          string
	CountryCode string
}

// Key returns the (institution_id, country_code) pair that names this entry.
func (i Institution) Key() Key { return Key{i.ID, i.CountryCode} }

// PaymentRequest is the provider's payment creation body (docs/provider.md).
type PaymentRequest struct {
	MerchantOrderID        string               `json:"merchant_order_id"`
	Amount                 string               `json:"payment_amount"`
	Currency               string               `json:"payment_currency"`
	ReturnURL              string               `json:"return_url"`
	CustomerEmail          string               `json:"customer_email,omitempty"`
	InstitutionID          string               `json:"institution_id,omitempty"`
	InstitutionCountryCode string               `json:"institution_country_code,omitempty"`
	Payer                  *Payer               `json:"payer,omitempty"`
	ClientIP               string               `json:"client_ip,omitempty"`
	CustomerFullName       string               `json:"customer_full_name,omitempty"`
	Customization          *rules.Customization `json:"customization,omitempty"`
}

// Payer is the provider's payer object: the shopper's details a bank may
// need, all optional.
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

// Payment is what creation returns: the link the shopper is sent to.
type Payment struct {
	MerchantOrderID string
	Link            string
}

// Status is a payment status as the provider spells it. Values this package
// does not know are kept verbatim.
type Status string

// The statuses the provider is known to send; docs/provider.md says what
// each means and how we learnt of those its document does not name.
const (
	StatusNotFound   Status = "NOT_FOUND"
	StatusInProgress Status = "IN_PROGRESS"
	StatusAccepted   Status = "ACCEPTED_SETTLEMENT_IN_PROCESS"
	StatusCompleted  Status = "COMPLETED"
	StatusCanceled   Status = "CANCELED"
)

// StatusUnrecognized stands for a status the provider sent with control
// characters, spaces or other bytes no status has: shown as "processing",
// like any status nobody documented.
const StatusUnrecognized Status = "UNRECOGNIZED"

// Known reports whether s is one of the documented statuses.
func (s Status) Known() bool {
	switch s {
	case StatusNotFound, StatusInProgress, StatusAccepted, StatusCompleted, StatusCanceled:
		return true
	}
	return false
}

// Pending reports whether the shopper or the bank has yet to act.
func (s Status) Pending() bool { return s == StatusNotFound || s == StatusInProgress }

// Paid reports whether the funds were credited.
func (s Status) Paid() bool { return s == StatusCompleted }

// Final reports whether the status can no longer change.
func (s Status) Final() bool { return s == StatusCompleted || s == StatusCanceled }

// PaymentStatus is the provider's answer to a status read.
type PaymentStatus struct {
	MerchantOrderID string
	Status          Status
}
