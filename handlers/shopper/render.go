package shopper

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/theme"
	"github.com/paybybank/checkout/views"
)

// render writes component as the response. It renders into a buffer first,
// so that a failing component gives an error page, not half a page.
func render(c echo.Context, status int, component templ.Component) error {
	var buf bytes.Buffer
	if err := component.Render(renderContext(c), &buf); err != nil {
		return err
	}
	header := c.Response().Header()
	header.Set("Cache-Control", "no-store")
	header.Set("Content-Security-Policy", contentSecurityPolicy(c, styleSources(buf.Bytes())))
	return c.HTMLBlob(status, buf.Bytes())
}

// renderContext is what components render in: the request's language.
// Rendering is local work; it completes even when the request's deadline
// has passed, so that an error page still reaches the shopper.
func renderContext(c echo.Context) context.Context {
	return i18n.With(context.WithoutCancel(c.Request().Context()), localizer(c))
}

// look is a merchant's name and theme (the merchant's customization, or a
// designer's draft in a sandbox preview).
type look struct {
	name   string
	custom *rules.Customization
}

// contentSecurityPolicy allows our own styles and scripts, the page's theme
// style by its hash (styleSrc), images from us only (logos are served by the
// app), forms to us and the provider only, and framing by the merchant's
// allowed origins only (DESIGN.md section 6); a page with no known merchant
// cannot be framed.
func contentSecurityPolicy(c echo.Context, styleSrc string) string {
	r := requestOf(c)
	ancestors := "'none'"
	if r.merchant != nil && len(r.merchant.FrameAncestors) > 0 {
		ancestors = strings.Join(r.merchant.FrameAncestors, " ")
	}
	formAction := r.formAction
	if styleSrc != "" {
		styleSrc = " " + styleSrc
	}
	return "default-src 'self'; style-src 'self'" + styleSrc + "; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action " + formAction + "; frame-ancestors " + ancestors
}

// sawPaymentLink remembers the origin of a payment link the provider gave,
// so that later pages' forms may lead there too.
func (h *Steps) sawPaymentLink(link string) {
	origin := originOf(link)
	if origin == "" || origin == originOf(h.BaseURL) || origin == h.ProviderOrigin {
		return
	}
	h.originsMu.Lock()
	defer h.originsMu.Unlock()
	if !slices.Contains(h.linkOrigins, origin) {
		h.linkOrigins = append(h.linkOrigins, origin)
		h.setFormAction()
	}
}

// setFormAction rebuilds the form-action sources; callers other than New
// hold originsMu.
func (h *Steps) setFormAction() {
	sources := []string{"'self'"}
	if h.ProviderOrigin != "" {
		sources = append(sources, h.ProviderOrigin)
	}
	list := strings.Join(append(sources, h.linkOrigins...), " ")
	h.formAction.Store(&list)
}

// pageError is an error a shopper is shown, in their language: key names
// its heading in the catalog of package i18n, key+".text" its message (with
// args). Pages for staff (the studio) give heading and message as they are.
// err, when set, is the cause, for the log only.
type pageError struct {
	status   int
	key      string
	args     []any
	heading  string
	message  string
	retryURL templ.SafeURL
	err      error
}

func (e *pageError) Error() string {
	name := e.key
	if name == "" {
		name = e.heading
	}
	if e.err != nil {
		return name + ": " + e.err.Error()
	}
	return name
}

// texts are the error's heading and message in the language of l.
func (e *pageError) texts(l *i18n.Localizer) (heading, message string) {
	if e.key == "" {
		return e.heading, e.message
	}
	return l.T(e.key), l.T(e.key+".text", e.args...)
}

func (e *pageError) Unwrap() error { return e.err }

// Errors a shopper may meet more than once.
var (
	errNotFound = &pageError{status: http.StatusNotFound, key: "error.notFound"}
	errInternal = &pageError{status: http.StatusInternalServerError, key: "error.internal"}
)

// page is the layout model of the page being served, in its merchant's look
// (forMerchant), or the app's own when no merchant is known.
func (h *Steps) page(c echo.Context, title string) views.Page {
	l := look{name: h.loc(c).T("app.name")}
	if r := requestOf(c); r.merchant != nil {
		l = look{name: r.merchant.Name, custom: r.custom}
	}
	p := pageFor(title, l, h.Assets)
	p.Theme.LogoURL = h.logos.ThemePath(p.Theme.LogoURL)
	p.Switch = languageSwitch(c)
	return p
}

func pageFor(title string, l look, assets views.Assets) views.Page {
	th := theme.New(l.custom, l.name)
	return views.Page{
		Title: title, Merchant: l.name, Assets: assets,
		Theme: views.Theme{
			Title: th.Title, LogoURL: th.LogoURL, LogoHeight: strconv.Itoa(th.LogoHeight), CSS: th.CSS(":root"),
		},
	}
}
