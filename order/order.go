package order

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/rules"
)

// Order is what a signed link asks for: one payment of one merchant.
type Order struct {
	Merchant  string `json:"m"`
	ID        string `json:"o"`
	Amount    string `json:"a"`
	Currency  string `json:"c"`
	ReturnURL string `json:"r"`
	Email     string `json:"e,omitempty"`
	// Country, Bank and Lang are the merchant's hints: a country or bank the
	// shopper has already chosen at the shop, and the shop's language.
	Country string `json:"co,omitempty"`
	Bank    string `json:"b,omitempty"`
	Lang    string `json:"l,omitempty"`
	// LastBank is the bank the shopper paid with last time at the shop: it
	// is offered first in the list without skipping the bank step.
	LastBank string `json:"lb,omitempty"`
	// KID names the link key the order came with; the way back is signed with it.
	KID string `json:"k"`
	// Theme is a designer's draft customization carried by a sandbox preview
	// link (the studio's); nil means the merchant's own.
	Theme *rules.Customization `json:"t,omitempty"`
	// Link is the id of the payment link the order was opened from (the
	// app's own /l/{id}); such an order has no return_url: its way back is
	// the app's own receipt. Description is the link's, shown on every step.
	Link        string `json:"pl,omitempty"`
	Description string `json:"d,omitempty"`
	// Payer is the payer key of this checkout (NewPayer): a payment it
	// begins is its own, and another checkout of the same order is never
	// handed its bank page. Made at the checkout's door, or brought back
	// from the browser's cookie there, and carried by every step's token.
	Payer string `json:"py,omitempty"`
	// Expires ends the sealed token's life (unix seconds).
	Expires int64 `json:"x"`
}

// Link parameter names, as docs/integrate.md gives them to shops.
const (
	ParamMerchant  = "merchant"
	ParamOrder     = "order"
	ParamAmount    = "amount"
	ParamCurrency  = "currency"
	ParamReturnURL = "return_url"
	ParamEmail     = "email"
	ParamCountry   = "country"
	ParamBank      = "bank"
	ParamLang      = "lang"
	ParamLastBank  = "last_bank"
	ParamExp       = "exp"
	ParamKID       = "kid"
)

// maxBankID bounds the last_bank hint, which every later address carries in
// the token.
const maxBankID = 100

// ErrLinkInvalid means the link was not signed by the merchant it names: an
// unknown merchant or key, a wrong signature, a changed value. It says no
// more than that, so it does not help anyone forge a link.
var ErrLinkInvalid = errors.New("the payment link is not valid")

// ErrLinkExpired means a genuine link is past its exp.
var ErrLinkExpired = errors.New("the payment link has expired")

// Link describes a link to make: the order and how long it stays valid.
type Link struct {
	Order
	TTL time.Duration
	// Extra are further parameters, signed with the rest (a studio preview's
	// theme).
	Extra url.Values
}

// FromLink checks a /checkout link and returns the order it carries. It
// returns ErrLinkInvalid, ErrLinkExpired, or a *rules.ValidationError
// naming the link parameters that break the order rules. With the last two
// the signature held, so the merchant is returned too.
func FromLink(q url.Values, merchants *merchant.Directory, now time.Time) (Order, *merchant.Merchant, error) {
	m, ok := merchants.Get(q.Get(ParamMerchant))
	if !ok {
		return Order{}, nil, ErrLinkInvalid
	}
	secret, ok := m.LinkKeyAt(q.Get(ParamKID), now)
	if !ok || !Verify(secret, q) {
		return Order{}, nil, ErrLinkInvalid
	}
	exp, err := strconv.ParseInt(q.Get(ParamExp), 10, 64)
	if err != nil {
		return Order{}, nil, ErrLinkInvalid
	}
	if now.Unix() > exp {
		return Order{}, m, ErrLinkExpired
	}
	o := Order{
		Merchant:  m.ID,
		ID:        q.Get(ParamOrder),
		Amount:    q.Get(ParamAmount),
		Currency:  q.Get(ParamCurrency),
		ReturnURL: q.Get(ParamReturnURL),
		Email:     q.Get(ParamEmail),
		Country:   q.Get(ParamCountry),
		Bank:      q.Get(ParamBank),
		Lang:      q.Get(ParamLang),
		LastBank:  q.Get(ParamLastBank),
		KID:       q.Get(ParamKID),
	}
	if err := o.Check(m); err != nil {
		return Order{}, m, err
	}
	return o, m, nil
}

// Check applies the order rules to o (the provider's for the order id,
// amount and currency, and the merchant's return origins), naming the link
// parameters that break them.
func (o Order) Check(m *merchant.Merchant) error {
	var errs []rules.FieldError
	add := func(param string, fe *rules.FieldError) {
		if fe != nil {
			fe.Field = param
			errs = append(errs, *fe)
		}
	}
	if fe := rules.CheckOrderID(o.ID); fe != nil {
		add(ParamOrder, fe)
	} else if fe := rules.CheckOrderID(m.LongestAttemptID(o.ID)); fe != nil {
		fe.Message = fmt.Sprintf("order id is too long: with the merchant id and an attempt number (6 characters) it must fit in %d characters", rules.MaxOrderIDLength)
		add(ParamOrder, fe)
	}
	_, fe := rules.ParseAmount(o.Amount)
	add(ParamAmount, fe)
	if o.Currency != rules.Currency {
		add(ParamCurrency, &rules.FieldError{Reason: rules.ReasonUnsupported, Message: "only EUR is supported"})
	}
	if fe := rules.CheckWebURL(ParamReturnURL, o.ReturnURL); fe != nil {
		add(ParamReturnURL, fe)
	} else if u, _ := url.Parse(o.ReturnURL); !m.AllowsReturn(u) {
		add(ParamReturnURL, &rules.FieldError{Reason: rules.ReasonNotAllowed, Message: "return_url is not on the merchant's list of return origins"})
	}
	if o.Email != "" {
		add(ParamEmail, rules.CheckEmail(ParamEmail, o.Email))
	}
	if o.Country != "" {
		add(ParamCountry, rules.CheckCountryCode(ParamCountry, o.Country))
	}
	if o.Bank != "" && o.Country == "" {
		add(ParamBank, &rules.FieldError{Reason: rules.ReasonPaired, Message: "bank needs country: a bank id names a bank in one country"})
	}
	switch {
	case o.LastBank != "" && o.Country == "":
		add(ParamLastBank, &rules.FieldError{Reason: rules.ReasonPaired, Message: "last_bank needs country: a bank id names a bank in one country"})
	case len(o.LastBank) > maxBankID:
		add(ParamLastBank, &rules.FieldError{Reason: rules.ReasonTooLong, Message: fmt.Sprintf("last_bank is not a bank id: at most %d characters", maxBankID)})
	}
	if len(o.Lang) > 35 {
		add(ParamLang, &rules.FieldError{Reason: rules.ReasonTooLong, Message: "lang is not a language tag"})
	}
	if len(errs) > 0 {
		return &rules.ValidationError{Fields: errs}
	}
	return nil
}

// URL returns a signed /checkout link to the order on the app at baseURL,
// signed with the merchant's key l.KID.
func (l Link) URL(baseURL string, m *merchant.Merchant, now time.Time) (string, error) {
	secret, ok := m.LinkKey(l.KID)
	if !ok {
		return "", errors.New("merchant " + m.ID + " has no link key " + l.KID)
	}
	q := url.Values{}
	set := func(name, value string) {
		if value != "" {
			q.Set(name, value)
		}
	}
	set(ParamMerchant, m.ID)
	set(ParamOrder, l.ID)
	set(ParamAmount, l.Amount)
	set(ParamCurrency, l.Currency)
	set(ParamReturnURL, l.ReturnURL)
	set(ParamEmail, l.Email)
	set(ParamCountry, l.Country)
	set(ParamBank, l.Bank)
	set(ParamLang, l.Lang)
	set(ParamLastBank, l.LastBank)
	set(ParamKID, l.KID)
	set(ParamExp, strconv.FormatInt(now.Add(l.TTL).Unix(), 10))
	for name, v := range l.Extra {
		if q.Has(name) {
			return "", errors.New("link: extra parameter " + name + " would replace an order parameter")
		}
		q[name] = v
	}
	query, err := SignedQuery(secret, q)
	if err != nil {
		return "", err
	}
	return baseURL + "/checkout?" + query, nil
}

// Way-back parameter names, as docs/integrate.md gives them to shops.
const (
	ParamMerchantOrderID = "merchant_order_id"
	ParamStatus          = "status"
	ParamTS              = "ts"
)

// WayBack returns the merchant's return_url with merchant_order_id, status,
// ts, kid and sig appended, signed with the key the order came with. Any
// parameter of return_url with one of those names is replaced.
func (o Order) WayBack(m *merchant.Merchant, status string, now time.Time) (string, error) {
	secret, ok := m.LinkKey(o.KID)
	if !ok {
		return "", errors.New("merchant " + m.ID + " no longer has link key " + o.KID)
	}
	u, err := url.Parse(o.ReturnURL)
	if err != nil {
		return "", err
	}
	signed := url.Values{
		ParamMerchantOrderID: {o.ID},
		ParamStatus:          {status},
		ParamTS:              {strconv.FormatInt(now.Unix(), 10)},
		ParamKID:             {o.KID},
	}
	sig, err := Sign(secret, signed)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for name, v := range signed {
		q[name] = v
	}
	q.Set(SigParam, sig)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// VerifyWayBack checks the parameters a merchant's return page received,
// as the merchant does: over merchant_order_id, status, ts and kid only.
func VerifyWayBack(secret string, q url.Values) bool {
	signed := url.Values{SigParam: q[SigParam]}
	for _, name := range []string{ParamMerchantOrderID, ParamStatus, ParamTS, ParamKID} {
		signed[name] = q[name]
	}
	return Verify(secret, signed)
}

// DemoLink is the link of an order of the demo merchant (sandbox mode) on the
// app at baseURL, paid back to the demo shop and signed with the demo key;
// o gives the order id and amount (EUR when no currency), change, when set,
// edits the link before it is signed.
func DemoLink(baseURL string, o Order, ttl time.Duration, now time.Time, change func(*Link)) (string, error) {
	dir, err := merchant.Demo(baseURL)
	if err != nil {
		return "", err
	}
	demo, _ := dir.Get(merchant.DemoID)
	return DemoLinkOf(baseURL, demo, o, ttl, now, change)
}

// DemoLinkOf is DemoLink signed with the newest key of demo, the demo
// merchant as the running settings hold it: its keys may have been rolled
// in the console since it was made.
func DemoLinkOf(baseURL string, demo *merchant.Merchant, o Order, ttl time.Duration, now time.Time, change func(*Link)) (string, error) {
	if o.Currency == "" {
		o.Currency = rules.Currency
	}
	o.ReturnURL, o.KID = strings.TrimRight(baseURL, "/")+merchant.DemoShopPath, demo.NewestKID()
	l := Link{Order: o, TTL: ttl}
	if change != nil {
		change(&l)
	}
	return l.URL(baseURL, demo, now)
}

// DemoAmount is what a demo order asks for, and DemoTTL how long its link
// works.
const (
	DemoAmount = "49.90"
	DemoTTL    = 24 * time.Hour
)

// NewDemoOrder is a demo order of its own, as the app offers one at start
// (printed) and on its start page: each has a new id, so that a newcomer
// who paid one can try again.
func NewDemoOrder() Order {
	b := make([]byte, 4)
	rand.Read(b)
	return Order{ID: "DEMO-" + hex.EncodeToString(b), Amount: DemoAmount}
}
