package prerender

import (
	"strconv"
	"strings"
)

// AcceptsGzip reports whether a request's Accept-Encoding header takes
// gzip: names it, in any case, with a weight above zero ("gzip;q=0" says
// never). The browsers' "*" is left out: every browser names gzip.
func AcceptsGzip(acceptEncoding string) bool {
	for coding := range strings.SplitSeq(acceptEncoding, ",") {
		name, params, _ := strings.Cut(coding, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for param := range strings.SplitSeq(params, ";") {
			key, value, _ := strings.Cut(strings.TrimSpace(param), "=")
			if strings.EqualFold(key, "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}
