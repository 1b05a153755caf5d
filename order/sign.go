// Package order holds the rules of a checkout order: the signed links that
// bring a shopper in and take them back to the merchant (a contract, written
// down in docs/integrate.md), the order fields those links carry, and the
// sealed token that carries the order through every later step without a
// cookie.
package order

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// SigParam is the query parameter that holds a signature.
const SigParam = "sig"

// ErrControlChar refuses a value that holds a control character: the canonical
// form joins values with newlines, so a newline inside one could forge another.
var ErrControlChar = errors.New("a parameter holds a control character")

// ErrRepeated refuses a parameter given twice: which of the two was signed?
var ErrRepeated = errors.New("a parameter is given more than once")

// Canonical is the text a signature covers: every parameter but sig, as
// name=value with the raw value, sorted by name bytewise, joined by "\n".
func Canonical(params url.Values) (string, error) {
	names := make([]string, 0, len(params))
	for name, values := range params {
		if name == SigParam {
			continue
		}
		if len(values) != 1 {
			return "", ErrRepeated
		}
		if strings.ContainsFunc(name+values[0], unicode.IsControl) {
			return "", ErrControlChar
		}
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(params.Get(name))
	}
	return b.String(), nil
}

// Sign returns the signature of params under secret: base64url without
// padding of HMAC-SHA256 over the canonical form.
func Sign(secret string, params url.Values) (string, error) {
	canonical, err := Canonical(params)
	if err != nil {
		return "", err
	}
	return mac(secret, canonical), nil
}

// SignedQuery returns params with sig added, encoded as a query string.
func SignedQuery(secret string, params url.Values) (string, error) {
	sig, err := Sign(secret, params)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	maps.Copy(q, params)
	q.Set(SigParam, sig)
	return q.Encode(), nil
}

// Verify reports whether params carry a valid sig under secret, comparing in
// constant time.
func Verify(secret string, params url.Values) bool {
	sigs := params[SigParam]
	if len(sigs) != 1 {
		return false
	}
	canonical, err := Canonical(params)
	if err != nil {
		return false
	}
	return hmac.Equal([]byte(sigs[0]), []byte(mac(secret, canonical)))
}

func mac(secret, canonical string) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(canonical))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
