package shopper

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/shopper/details"
	"github.com/paybybank/checkout/handlers/web"

	"github.com/paybybank/checkout/banks"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/prerender"
	checkoutviews "github.com/paybybank/checkout/views/checkout"
)

// The country and bank pages are the same for every shopper of a merchant's
// look, language and country but for a few hundred bytes (the order, the
// token in the country links, the last-used bank). They are rendered once,
// compressed once, and kept; a request fills in its own parts (package
// prerender). The pages kept are dropped when the banks list changes.

// Limits of the pages kept.
const (
	// pageCacheBytes bounds the memory of the pages kept.
	pageCacheBytes = 48 << 20
	// pageMaxAge renders a page again after a while, for the popular
	// banks to follow the ledger.
	pageMaxAge = 5 * time.Minute
)

// Markers stand where a request's parts go in a page kept rendered: random
// per process, so that no bank's name can hold one. tokenMarker sits in
// addresses, so it is letters and digits only.
var (
	summaryMarker = "<!--summary-" + randomHex() + "-->"
	lastMarker    = "<!--last-used-" + randomHex() + "-->"
	tokenMarker   = "tokenmarker" + randomHex()
	amountMarker  = "amountmarker" + randomHex()
	orderMarker   = "ordermarker" + randomHex()
	// descriptionMarker stands for a payment link's description.
	descriptionMarker = "descriptionmarker" + randomHex()
)

func randomHex() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// pageKey names one page kept.
type pageKey struct {
	route   string
	look    look
	lang    string
	country string
	query   string
	page    int
	popular string
	// degraded are the country's banks failing right now: the page
	// changes with them.
	degraded string
	extra    string // the country page's suggestion
	stale    bool
	// linked: the shopper's part of an order from a payment link, which
	// shows its description and calls its order id a reference.
	linked bool
}

// keptPage is a page rendered ahead and the CSP sources of its inline
// style, with its Content-Security-Policy header once made.
type keptPage struct {
	page       *prerender.Page
	styleSrc   string
	renderedAt time.Time
	policy     atomic.Pointer[keptPolicy]
}

// keptPolicy is a kept page's Content-Security-Policy header, made for the
// deployment's form-action sources formAction.
type keptPolicy struct {
	formAction string
	header     []string
}

// csp is the page's Content-Security-Policy header for c. Pages are kept
// per look, so every request for one has the same merchant, and the same
// policy until the deployment's form-action sources change (a payment
// link of a new origin): it is made once, not on every request.
func (p *keptPage) csp(c echo.Context) []string {
	formAction := web.RequestOf(c).FormAction
	if kp := p.policy.Load(); kp != nil && kp.formAction == formAction {
		return kp.header
	}
	kp := &keptPolicy{formAction: formAction, header: []string{web.ContentSecurityPolicy(c, p.styleSrc)}}
	p.policy.Store(kp)
	return kp.header
}

// pageCache keeps pages rendered from one banks list.
type pageCache struct {
	mu    sync.Mutex
	list  *banks.List
	pages map[pageKey]*keptPage
	bytes int
	// merchants are the merchants pages are kept for, by id: a changed
	// merchant is a new value, whose first page kept drops the pages of
	// the one it replaced, and only those.
	merchants map[string]*merchant.Merchant
}

// get returns the page of key made from list, if kept and fresh.
func (pc *pageCache) get(list *banks.List, key pageKey, now time.Time) (*keptPage, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.list != list {
		return nil, false
	}
	p, ok := pc.pages[key]
	if !ok || now.Sub(p.renderedAt) > pageMaxAge {
		return nil, false
	}
	return p, true
}

// put keeps p, made from list; a newer list drops every page of the old.
func (pc *pageCache) put(list *banks.List, key pageKey, p *keptPage) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.list != list || pc.pages == nil {
		pc.list, pc.pages, pc.bytes, pc.merchants = list, map[pageKey]*keptPage{}, 0, map[string]*merchant.Merchant{}
	}
	if m := key.look.merchant; m != nil && pc.merchants[m.ID] != m {
		if pc.merchants[m.ID] != nil {
			for k, old := range pc.pages {
				if k.look.merchant != nil && k.look.merchant.ID == m.ID {
					delete(pc.pages, k)
					pc.bytes -= old.page.Size()
				}
			}
		}
		pc.merchants[m.ID] = m
	}
	if old, ok := pc.pages[key]; ok {
		pc.bytes -= old.page.Size()
	}
	for k, old := range pc.pages {
		if pc.bytes+p.page.Size() <= pageCacheBytes {
			break
		}
		delete(pc.pages, k)
		pc.bytes -= old.page.Size()
	}
	pc.pages[key] = p
	pc.bytes += p.page.Size()
}

// look names the look of a page: whose it is and the theme it wears.
type look struct {
	// merchant is the merchant as the running settings hold it: a change
	// of its settings makes a new one, so a new name or theme is a new
	// look (merchants not changed stay the same value). Held here, an old
	// merchant lives while its pages are kept, and no new one can take its
	// address.
	merchant *merchant.Merchant
	// custom is the theme a link carried, as JSON; empty for the
	// merchant's own.
	custom string
}

// lookKey names the look of the page being served: the merchant's own
// theme, or the theme its link carried.
func lookKey(c echo.Context) look {
	r := web.RequestOf(c)
	if r.Merchant == nil || r.Custom == r.Merchant.Customization {
		return look{merchant: r.Merchant}
	}
	b, _ := json.Marshal(r.Custom)
	return look{merchant: r.Merchant, custom: string(b)}
}

// keep renders component as a page kept ahead, cut at markers. A page
// served compressed keeps its deflated form only (plain clients get it
// inflated); others keep the plain text too.
func keep(c echo.Context, component templ.Component, now time.Time, compressed bool, markers ...string) (*keptPage, error) {
	var buf bytes.Buffer
	if err := component.Render(web.RenderContext(c), &buf); err != nil {
		return nil, err
	}
	page := prerender.New
	if compressed {
		page = prerender.Compressed
	}
	return &keptPage{page: page(buf.Bytes(), markers...), styleSrc: web.StyleSources(buf.Bytes()), renderedAt: now}, nil
}

// fragment renders a request's part of a page.
func fragment(c echo.Context, component templ.Component) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, 1024))
	err := component.Render(web.RenderContext(c), buf)
	return buf.Bytes(), err
}

// shopperPart appends to dst the shopper's own part of a page (their
// order, links with their token), itself kept rendered per look and
// language with the amount, order id and token filled in per request:
// rendering it anew each time was a tenth of the bank page's cost.
func (h *Steps) shopperPart(c echo.Context, list *banks.List, key pageKey, co checkout, part func(checkoutviews.Summary, string) templ.Component, dst []byte) ([]byte, error) {
	now := h.Now()
	key.linked = co.order.Link != ""
	kept, ok := h.pages.get(list, key, now)
	if !ok {
		var err error
		summary := checkoutviews.Summary{Merchant: co.merchant.Name, Amount: amountMarker, OrderID: orderMarker,
			Linked: key.linked, Description: descriptionMarker}
		if kept, err = keep(c, part(summary, tokenMarker), now, false, amountMarker, orderMarker, tokenMarker, descriptionMarker); err != nil {
			return nil, err
		}
		h.pages.put(list, key, kept)
	}
	return kept.page.AppendPlain(dst, []byte(html.EscapeString(web.Localizer(c).Amount(co.order.Amount))),
		[]byte(html.EscapeString(co.order.ID)), []byte(url.PathEscape(co.token)), []byte(html.EscapeString(co.order.Description))), nil
}

// partBuffer is a buffer for a request's own part of a page, used until the
// page is sent and then handed back (release) for another request: the part
// is a couple of kilobytes, and a new one each time fed the garbage
// collector. A channel keeps them, not a sync.Pool, which every collection
// empties.
type partBuffer struct{ b []byte }

var partBuffers = make(chan *partBuffer, 128)

func newPartBuffer() *partBuffer {
	select {
	case p := <-partBuffers:
		return p
	default:
		return &partBuffer{b: make([]byte, 0, 4<<10)}
	}
}

// keep holds on to b, which grew from the buffer, for the next request.
func (p *partBuffer) keep(b []byte) []byte {
	p.b = b[:0]
	return b
}

func (p *partBuffer) release() {
	select {
	case partBuffers <- p:
	default:
	}
}

// ServedAhead reports whether a request's page comes compressed ahead, so
// that the app's own compression skips it: the bank page, and the details
// page's first showing when its address holds the country, the bank and
// at most a language (any other parameter is kept by its language switch,
// so that page is rendered anew).
func ServedAhead(c echo.Context) bool {
	switch c.Path() {
	case RouteBanks:
		return true
	case RoutePay:
		if c.Request().Method != http.MethodGet {
			return false
		}
		q := c.QueryParams()
		for name, values := range q {
			if len(values) != 1 || name != details.FieldCountry && name != details.FieldBank && name != paramLang {
				return false
			}
		}
		return q.Has(details.FieldCountry) && q.Has(details.FieldBank)
	}
	return false
}

// serveKept answers with a kept page, its holes filled with values. With
// compressed set it is sent gzip'd as kept (the route skips the app's own
// compression); otherwise plain, for the app to compress.
func serveKept(c echo.Context, p *keptPage, compressed bool, values ...[]byte) error {
	// The same header values for every answer: shared slices, made once.
	header := c.Response().Header()
	header["Cache-Control"] = noStore
	header["Content-Security-Policy"] = p.csp(c)
	header[echo.HeaderContentType] = htmlUTF8
	if compressed {
		if len(header[echo.HeaderVary]) == 0 {
			header[echo.HeaderVary] = varyAcceptEncoding
		} else {
			header.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		}
		if prerender.AcceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
			header[echo.HeaderContentEncoding] = gzipEncoding
			header[echo.HeaderContentLength] = []string{strconv.Itoa(p.page.GzipLen(values...))}
			c.Response().WriteHeader(http.StatusOK)
			return p.page.Gzip(c.Response(), values...)
		}
		header[echo.HeaderContentLength] = []string{strconv.Itoa(p.page.PlainLen(values...))}
	}
	c.Response().WriteHeader(http.StatusOK)
	return p.page.Plain(c.Response(), values...)
}

var (
	noStore            = []string{"no-store"}
	htmlUTF8           = []string{echo.MIMETextHTMLCharsetUTF8}
	varyAcceptEncoding = []string{echo.HeaderAcceptEncoding}
	gzipEncoding       = []string{"gzip"}
)
