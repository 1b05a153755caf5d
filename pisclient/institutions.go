package pisclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/paybybank/checkout/rules"
)

// Institutions lists every bank entry (docs/provider.md). Entries are kept per
// (institution_id, country_code); the logo is read from `logo_link` or
// `logoUrl`; a missing `extraFields` means none. An entry that cannot be read
// is skipped and logged rather than failing the whole list.
func (c *Client) Institutions(ctx context.Context) ([]Institution, error) {
	res, err := c.get(ctx, "/api/v2/pis/payment/ob-institutions")
	if err != nil {
		return nil, err
	}
	if res.status != http.StatusOK {
		return nil, newAPIError(res.status, res.body, c.redact)
	}
	list, skipped, err := decodeInstitutions(res.body, c.base)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		c.log.Warn("pisclient: skipped unreadable institution entries", "skipped", skipped, "kept", len(list))
	}
	for _, in := range list {
		for _, f := range in.ExtraFields {
			if !slices.Contains(KnownExtraFields, f) {
				c.logOnce("extraFields", f)
			}
		}
	}
	return list, nil
}

// institutionJSON is one entry as the provider sends it.
type institutionJSON struct {
	ID          json.RawMessage `json:"institution_id"`
	Name        string          `json:"institution_name"`
	CountryCode string          `json:"country_code"`
	LogoLink    string          `json:"logo_link"`
	LogoURL     string          `json:"logoUrl"`
	ExtraFields []string        `json:"extraFields"`
	BIC         string          `json:"bic"`
	IsForTest   json.RawMessage `json:"is_for_test"`
}

// decodeInstitutions reads the list body. Only a body that is not a JSON array
// fails; each entry is read on its own, and one without an id, a name or a
// readable shape is skipped. The first entry for an (id, country) pair wins.
// base resolves relative logo URLs; logos that are not http(s) are dropped.
func decodeInstitutions(body []byte, base *url.URL) (list []Institution, skipped int, err error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, 0, fmt.Errorf("%w: institutions list is not a JSON array: %v", ErrBadResponse, err)
	}
	seen := make(map[Key]bool, len(raw))
	list = make([]Institution, 0, len(raw))
	for _, r := range raw {
		var e institutionJSON
		if json.Unmarshal(r, &e) != nil {
			skipped++
			continue
		}
		in := Institution{
			ID:          idString(e.ID),
			Name:        strings.TrimSpace(e.Name),
			CountryCode: strings.ToUpper(strings.TrimSpace(e.CountryCode)),
			BIC:         strings.ToUpper(strings.TrimSpace(e.BIC)),
			IsForTest:   isTrue(e.IsForTest),
		}
		if in.ID == "" || in.Name == "" {
			skipped++
			continue
		}
		if rules.CheckBIC("bic", in.BIC) != nil {
			in.BIC = ""
		}
		logo := e.LogoLink
		if logo == "" {
			logo = e.LogoURL
		}
		in.LogoURL = webURL(base, logo)
		for _, f := range e.ExtraFields {
			if f = strings.TrimSpace(f); f != "" && !slices.Contains(in.ExtraFields, f) {
				in.ExtraFields = append(in.ExtraFields, f)
			}
		}
		if seen[in.Key()] {
			continue
		}
		seen[in.Key()] = true
		list = append(list, in)
	}
	return list, skipped, nil
}

// idString accepts an institution_id sent as a string or, tolerated, a number.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// webURL resolves ref against base and returns it when it is http(s), else "".
func webURL(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := base.Parse(ref)
	if err != nil {
		return ""
	}
	if _, ok := rules.WebURL(u.String()); !ok {
		return ""
	}
	return u.String()
}

// isTrue accepts is_for_test as a JSON boolean or, tolerated, the string "true".
func isTrue(raw json.RawMessage) bool {
	v := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	return strings.EqualFold(v, "true")
}
