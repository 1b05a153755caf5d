package pisclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/paybybank/checkout/rules"
)

// CreatePayment initiates a payment and returns the link the shopper is sent
// to. The request is validated first against the provider's rules
// (docs/provider.md): a *rules.ValidationError means nothing was sent.
//
// The call is never retried: a second try could create a second payment. When
// the request went out and no answer came back, the error matches
// ErrOutcomeUnknown; read PaymentStatus before trying again.
func (c *Client) CreatePayment(ctx context.Context, r PaymentRequest) (*Payment, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, http.MethodPost, "/api/v2/pis/payment", r)
	if err != nil {
		return nil, err
	}
	res, err := c.send(req)
	if err != nil {
		return nil, errors.Join(ErrOutcomeUnknown, err)
	}
	if res.status < 200 || res.status > 299 {
		return nil, newAPIError(res.status, res.body, c.redact)
	}
	link, err := findLink(res.body)
	if err != nil {
		return nil, err
	}
	return &Payment{MerchantOrderID: r.MerchantOrderID, Link: link}, nil
}

// linkKeys are the keys under which a creation answer may carry the payment
// link, most specific first: the provider does not document the body
// (docs/provider.md).
var linkKeys = []string{
	"payment_link", "paymentLink", "payment_url", "paymentUrl",
	"redirect_url", "redirectUrl", "checkout_url", "checkoutUrl",
	"payment_links", "paymentLinks", "links", "url", "link", "href",
}

// findLink looks for an absolute http(s) URL under linkKeys at the top level of
// the body, then one object level down. A key may hold a string, an array of
// strings or an object holding such a key.
func findLink(body []byte) (string, error) {
	var top map[string]any
	if err := json.Unmarshal(body, &top); err != nil {
		return "", fmt.Errorf("%w: creation response is not a JSON object: %v", ErrBadResponse, err)
	}
	if link := linkIn(top, 1); link != "" {
		return link, nil
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if m, ok := top[k].(map[string]any); ok {
			if link := linkIn(m, 1); link != "" {
				return link, nil
			}
		}
	}
	return "", &LinkNotFoundError{Keys: slices.Sorted(maps.Keys(top))}
}

func linkIn(obj map[string]any, depth int) string {
	for _, k := range linkKeys {
		switch v := obj[k].(type) {
		case string:
			if u := absoluteWebURL(v); u != "" {
				return u
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					if u := absoluteWebURL(s); u != "" {
						return u
					}
				}
				if m, ok := e.(map[string]any); ok && depth > 0 {
					if u := linkIn(m, depth-1); u != "" {
						return u
					}
				}
			}
		case map[string]any:
			if depth > 0 {
				if u := linkIn(v, depth-1); u != "" {
					return u
				}
			}
		}
	}
	return ""
}

// absoluteWebURL returns s when it is an absolute http(s) URL with a host.
// A payment link is where the shopper's browser goes: nothing relative or
// of another scheme is followed.
func absoluteWebURL(s string) string {
	u, ok := rules.WebURL(strings.TrimSpace(s))
	if !ok {
		return ""
	}
	return u.String()
}

// PaymentStatus reads a payment's status by its merchant_order_id. NOT_FOUND,
// whether sent as HTTP 404 or inside a 200 body, is a status, not an error
// (docs/provider.md). A status this client does not know is kept verbatim and
// logged once.
func (c *Client) PaymentStatus(ctx context.Context, merchantOrderID string) (*PaymentStatus, error) {
	if fe := rules.CheckOrderID(merchantOrderID); fe != nil {
		return nil, &rules.ValidationError{Fields: []rules.FieldError{*fe}}
	}
	res, err := c.get(ctx, "/api/v2/pis/payment/"+url.PathEscape(merchantOrderID))
	if err != nil {
		return nil, err
	}
	ps := &PaymentStatus{MerchantOrderID: merchantOrderID}
	switch {
	case res.status == http.StatusNotFound:
		ps.Status = StatusNotFound
		return ps, nil
	case res.status < 200 || res.status > 299:
		return nil, newAPIError(res.status, res.body, c.redact)
	}
	st, err := findStatus(res.body)
	if err != nil {
		return nil, err
	}
	if !st.Known() {
		c.logOnce("status", strconv.Quote(string(st)))
	}
	if !plainStatus(st) {
		// Kept as it came it could not travel in a signed link, a URL or
		// a database column: it becomes one status that says so.
		st = StatusUnrecognized
	}
	ps.Status = st
	return ps, nil
}

// plainStatus reports whether a status is printable ASCII without spaces,
// 64 characters at most, as every status the provider documents is.
func plainStatus(s Status) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

var statusKeys = []string{"status", "payment_status", "paymentStatus", "state", "code", "error"}

// findStatus reads the status from a 200 body: a JSON object with the status
// under statusKeys (or one object level down), a bare JSON string, or the
// plain text NOT_FOUND.
func findStatus(body []byte) (Status, error) {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == string(StatusNotFound) {
		return StatusNotFound, nil
	}
	var s string
	if json.Unmarshal(body, &s) == nil && s != "" {
		return Status(strings.TrimSpace(s)), nil
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", fmt.Errorf("%w: status response is not JSON: %v", ErrBadResponse, err)
	}
	if st := statusIn(obj); st != "" {
		return st, nil
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if m, ok := obj[k].(map[string]any); ok {
			if st := statusIn(m); st != "" {
				return st, nil
			}
		}
	}
	return "", fmt.Errorf("%w: no status in response; keys seen: %s", ErrBadResponse, strings.Join(slices.Sorted(maps.Keys(obj)), ", "))
}

func statusIn(obj map[string]any) Status {
	for _, k := range statusKeys {
		if s, ok := obj[k].(string); ok && strings.TrimSpace(s) != "" {
			if k == "code" || k == "error" {
				// code and error name a status only when they say NOT_FOUND.
				if strings.TrimSpace(s) == string(StatusNotFound) {
					return StatusNotFound
				}
				continue
			}
			return Status(strings.TrimSpace(s))
		}
	}
	return ""
}
