package prerender

import "testing"

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip, deflate, br, zstd": true,
		"GZIP":                    true,
		"br;q=1.0, gzip;q=0.8":    true,
		"gzip ; Q=0.5":            true,
		"gzip;q=0":                false,
		"gzip;q=0.000":            false,
		"identity":                false,
		"x-gzip":                  false,
		"":                        false,
	} {
		if got := AcceptsGzip(header); got != want {
			t.Errorf("%q: %v, want %v", header, got, want)
		}
	}
}
