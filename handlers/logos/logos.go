// Package logos serves banks' and merchants' logos from the app itself
// (/logos/{key}), so that a shopper's browser talks to nobody else and the
// pages' content policy can keep img-src 'self'.
package logos

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"net/http"
	"sync"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/singleflight"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/views"
)

// Route serves a bank's (or a merchant's) logo from the app itself, so
// that the shopper's browser talks to nobody else and the CSP's img-src can
// be 'self'.
const Route = "/logos/:key"

// BankLists gives the banks list, which names the banks' logos.
type BankLists interface {
	List(ctx context.Context) (*banks.List, error)
}

// Limits of a logo fetched from the provider or a merchant.
const (
	// MaxLogoBytes is the largest logo taken; bigger ones get initials.
	MaxLogoBytes = 256 << 10
	// logoTimeout bounds one fetch.
	logoTimeout = 5 * time.Second
	// logoCacheBytes bounds the logos kept in memory.
	logoCacheBytes = 16 << 20
	// logoRetry is how long a failed logo shows initials before it is
	// fetched again.
	logoRetry = 5 * time.Minute
	// logoMaxAge is how long browsers keep a logo: a year, as its address
	// names one provider address.
	logoMaxAge = 365 * 24 * time.Hour
	// maxThemeLogos bounds the merchants' logo addresses remembered.
	maxThemeLogos = 1000
)

// logoCSP is sent with every logo: an SVG opened on its own runs no script
// and loads nothing.
const logoCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

// logos fetches logos once, keeps them in a bounded cache and serves them
// with a content hash; a logo that is missing, too big, not an image or
// failing is served as initials.
type Logos struct {
	client *http.Client
	banks  BankLists
	now    func() time.Time
	flight singleflight.Group

	mu     sync.Mutex
	cached map[string]*logo // by key
	bytes  int
	// themes are the merchants' logo addresses by key: the banks list
	// names the banks' own.
	themes map[string]string
}

// logo is one logo as served: an image, or initials when failed is set.
type logo struct {
	body        []byte
	contentType string
	etag        string
	failed      bool
	until       time.Time // when a failure is tried again
}

// New returns the logos of the banks lists and of the merchants whose
// logo addresses ThemePath is given; client fetches them.
func New(client *http.Client, banks BankLists, now func() time.Time) *Logos {
	return &Logos{client: client, banks: banks, now: now, cached: map[string]*logo{}, themes: map[string]string{}}
}

// ThemePath is the app's address of a merchant's logo, which it then
// serves; "" for none.
func (l *Logos) ThemePath(url string) string {
	if url == "" {
		return ""
	}
	key := banks.LogoKey(url)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.themes[key]; !ok {
		if len(l.themes) >= maxThemeLogos {
			for k := range l.themes {
				delete(l.themes, k)
				break
			}
		}
		l.themes[key] = url
	}
	return "/logos/" + key
}

// BankPath is the app's address of a bank's logo; "" for none.
func BankPath(url string) string {
	if url == "" {
		return ""
	}
	return "/logos/" + banks.LogoKey(url)
}

// Serve answers GET /logos/{key}.
func (l *Logos) Serve(c echo.Context) error {
	key := c.Param("key")
	source, name, ok := l.logoSource(c, key)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "no such logo")
	}
	lg := l.get(c.Request().Context(), key, source, name)
	header := c.Response().Header()
	header.Set("Content-Security-Policy", logoCSP)
	header.Set("Content-Type", lg.contentType)
	header.Set("ETag", lg.etag)
	if lg.failed {
		header.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(logoRetry.Seconds())))
	} else {
		header.Set("Cache-Control", fmt.Sprintf("public, max-age=%d, immutable", int(logoMaxAge.Seconds())))
	}
	if c.Request().Header.Get("If-None-Match") == lg.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, lg.contentType, lg.body)
}

// logoSource finds the address behind key: a bank's of the banks list, or a
// merchant's this instance has shown.
func (l *Logos) logoSource(c echo.Context, key string) (url, name string, ok bool) {
	if list, err := l.banks.List(c.Request().Context()); err == nil {
		if lg, ok := list.Logo(key); ok {
			return lg.URL, lg.Name, true
		}
	}
	l.mu.Lock()
	url, ok = l.themes[key]
	l.mu.Unlock()
	return url, "", ok
}

// get returns the logo of key, fetching it once however many ask at once.
func (l *Logos) get(ctx context.Context, key, url, name string) *logo {
	l.mu.Lock()
	lg, ok := l.cached[key]
	l.mu.Unlock()
	if ok && (!lg.failed || l.now().Before(lg.until)) {
		return lg
	}
	v, _, _ := l.flight.Do(key, func() (any, error) {
		// The fetch outlives one shopper leaving: others wait on it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logoTimeout)
		defer cancel()
		lg := fetchLogo(ctx, l.client, url)
		if lg == nil {
			lg = initialsLogo(name)
			lg.failed, lg.until = true, l.now().Add(logoRetry)
		}
		l.keep(key, lg)
		return lg, nil
	})
	return v.(*logo)
}

// keep caches lg, dropping others while the cache is over its bound.
func (l *Logos) keep(key string, lg *logo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.cached[key]; ok {
		l.bytes -= len(old.body)
	}
	for k, old := range l.cached {
		if l.bytes+len(lg.body) <= logoCacheBytes {
			break
		}
		delete(l.cached, k)
		l.bytes -= len(old.body)
	}
	l.cached[key] = lg
	l.bytes += len(lg.body)
}

// errNotImage is a logo that is no PNG, JPEG, WebP or SVG.
var errNotImage = errors.New("not a PNG, JPEG, WebP or SVG image")

// fetchLogo gets a logo; nil when it fails, is too big or is not an image.
func fetchLogo(ctx context.Context, client *http.Client, url string) *logo {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	res, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxLogoBytes+1))
	if err != nil || len(body) > MaxLogoBytes {
		return nil
	}
	kind, err := imageType(body)
	if err != nil {
		return nil
	}
	return &logo{body: body, contentType: kind, etag: contentTag(body)}
}

// imageType tells the image's type by its content, never by what the
// server claimed.
func imageType(body []byte) (string, error) {
	switch kind := http.DetectContentType(body); kind {
	case "image/png", "image/jpeg", "image/webp":
		return kind, nil
	}
	if isSVG(body) {
		return "image/svg+xml", nil
	}
	return "", errNotImage
}

// isSVG reports whether body is an SVG document: an <svg> root after any
// XML declaration, comments and doctype.
func isSVG(body []byte) bool {
	rest := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	for {
		rest = bytes.TrimLeftFunc(rest, unicode.IsSpace)
		switch {
		case bytes.HasPrefix(rest, []byte("<?")):
			_, rest, _ = bytes.Cut(rest, []byte("?>"))
		case bytes.HasPrefix(rest, []byte("<!--")):
			_, rest, _ = bytes.Cut(rest, []byte("-->"))
		case bytes.HasPrefix(rest, []byte("<!")):
			_, rest, _ = bytes.Cut(rest, []byte(">"))
		default:
			return bytes.HasPrefix(rest, []byte("<svg")) && len(rest) > 4 && (rest[4] == ' ' || rest[4] == '>' || rest[4] == '\n' || rest[4] == '\t' || rest[4] == '\r')
		}
	}
}

func contentTag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// initialsLogo is the stand-in of a logo: the bank's initials on its tone,
// the size of a logo.
func initialsLogo(name string) *logo {
	body := []byte(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40" width="40" height="40"><rect width="40" height="40" rx="8" fill="%s"/><text x="20" y="25" font-family="system-ui,sans-serif" font-size="14" font-weight="700" fill="#fff" text-anchor="middle">%s</text></svg>`,
		toneColours[Tone(name)], html.EscapeString(views.Initials(name))))
	return &logo{body: body, contentType: "image/svg+xml", etag: contentTag(body)}
}

// toneColours are the backgrounds of initials, as the stylesheet's
// .tone-0 to .tone-5.
var toneColours = [6]string{"#1e4d8c", "#7a2e1e", "#1f5e3a", "#5b2a7a", "#6b4a00", "#2f4858"}

// Tone picks a bank's background from its name, the same every time.
func Tone(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % uint32(len(toneColours)))
}
