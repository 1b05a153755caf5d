package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/theme"
	"github.com/paybybank/checkout/views"
)

// Render writes component as the response. It renders into a buffer first,
// so that a failing component gives an error page, not half a page.
func Render(c echo.Context, status int, component templ.Component) error {
	return Write(c, status, component, RenderContext(c), func(page []byte) string {
		return ContentSecurityPolicy(c, StyleSources(page))
	})
}

// Write renders component in ctx into a buffer, then answers with it under
// the content policy policy gives for the page, never to be kept by a
// cache: a failing component gives an error page, not half a page.
func Write(c echo.Context, status int, component templ.Component, ctx context.Context, policy func(page []byte) string) error {
	var buf bytes.Buffer
	if err := component.Render(ctx, &buf); err != nil {
		return err
	}
	header := c.Response().Header()
	header.Set("Cache-Control", "no-store")
	header.Set("Content-Security-Policy", policy(buf.Bytes()))
	return c.HTMLBlob(status, buf.Bytes())
}

// RenderContext is what components render in: the request's language.
// Rendering is local work; it completes even when the request's deadline
// has passed, so that an error page still reaches the shopper.
func RenderContext(c echo.Context) context.Context {
	return i18n.With(context.WithoutCancel(c.Request().Context()), Localizer(c))
}

// Look is a merchant's name and theme (the merchant's customization, or a
// designer's draft in a sandbox preview).
type Look struct {
	Name   string
	Custom *rules.Customization
}

// ContentSecurityPolicy allows our own styles and scripts, the page's theme
// style by its hash (styleSrc), images from us only (logos are served by the
// app), forms to us and the provider only, and framing by the merchant's
// allowed origins only (its frame_ancestors); a page with no known merchant
// cannot be framed.
func ContentSecurityPolicy(c echo.Context, styleSrc string) string {
	r := RequestOf(c)
	ancestors := "'none'"
	if r.Merchant != nil && len(r.Merchant.FrameAncestors) > 0 {
		ancestors = strings.Join(r.Merchant.FrameAncestors, " ")
	}
	formAction := r.FormAction
	if styleSrc != "" {
		styleSrc = " " + styleSrc
	}
	return "default-src 'self'; style-src 'self'" + styleSrc + "; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action " + formAction + "; frame-ancestors " + ancestors
}

// FramedBySelf is policy with its frame-ancestors the app's own pages
// only: a preview of the shopper's pages inside the console's.
func FramedBySelf(policy string) string {
	if i := strings.LastIndex(policy, "frame-ancestors"); i >= 0 {
		policy = policy[:i]
	}
	return policy + "frame-ancestors 'self'"
}

// StyleSources are the CSP sources of a page's inline style elements: the
// hash of each one's text.
func StyleSources(page []byte) string {
	var sources []string
	for {
		_, rest, ok := bytes.Cut(page, []byte("<style>"))
		if !ok {
			break
		}
		css, after, ok := bytes.Cut(rest, []byte("</style>"))
		if !ok {
			break
		}
		sum := sha256.Sum256(css)
		sources = append(sources, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		page = after
	}
	return strings.Join(sources, " ")
}

// PageFor is the layout model of a page in look l.
func PageFor(title string, l Look, assets views.Assets) views.Page {
	th := theme.New(l.Custom, l.Name)
	return views.Page{
		Title: title, Merchant: l.Name, Assets: assets,
		Theme: views.Theme{
			Title: th.Title, LogoURL: th.LogoURL, LogoHeight: strconv.Itoa(th.LogoHeight), CSS: th.CSS(":root"),
		},
	}
}
