// Package brand serves the logos designers upload on the Branding page at
// /brand/{sha256}.{ext}: from the ledger, so that every instance serves
// every logo, and kept in memory once read, since a name is the hash of its
// bytes and never changes meaning.
package brand

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/web"
	"github.com/paybybank/checkout/ledger"
)

// Route is the address of an uploaded logo.
const Route = "/brand/:name"

// Store reads uploaded logos: the ledger.
type Store interface {
	Logo(ctx context.Context, name string) (ledger.Logo, error)
}

// keep is how many logos stay in memory; past it, one goes at random.
const keep = 256

// Logos serves uploaded logos.
type Logos struct {
	Store Store
	mu    sync.Mutex
	kept  map[string]ledger.Logo
}

// names are the only names there can be: a SHA-256 in hex and the
// extension of a kind of image taken.
var names = regexp.MustCompile(`^[0-9a-f]{64}\.(png|jpg|webp)$`)

// Serve answers GET /brand/{name}: the logo with a year's immutable cache,
// or the page not found.
func (l *Logos) Serve(c echo.Context) error {
	name := c.Param("name")
	if !names.MatchString(name) {
		return web.ErrNotFound
	}
	logo, err := l.logo(c.Request().Context(), name)
	if errors.Is(err, ledger.ErrNotFound) {
		return web.ErrNotFound
	} else if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+name+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if c.Request().Header.Get("If-None-Match") == `"`+name+`"` {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, logo.ContentType, logo.Data)
}

func (l *Logos) logo(ctx context.Context, name string) (ledger.Logo, error) {
	l.mu.Lock()
	logo, ok := l.kept[name]
	l.mu.Unlock()
	if ok {
		return logo, nil
	}
	logo, err := l.Store.Logo(ctx, name)
	if err != nil {
		return logo, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept == nil {
		l.kept = map[string]ledger.Logo{}
	}
	if len(l.kept) >= keep {
		for k := range l.kept {
			delete(l.kept, k)
			break
		}
	}
	l.kept[name] = logo
	return logo, nil
}
