package handlers

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/handlers/shopper"
)

// compress gzips an answer when the browser takes gzip and the answer has
// a body worth it: a kilobyte or more, of a type not compressed already.
// The compressor is taken only then. A redirect, a 304 or a short answer
// costs none: with Echo's own middleware each paid for resetting a
// compressor twice (640 KB cleared each time), a tenth of the app's CPU
// under a load of whole checkouts, two of whose four answers are
// redirects. Pages compressed ahead (shopper.ServedAhead) pass as they are.
//
// An error is answered inside, so that its page is compressed as any
// other; the routes' error handler then has nothing left to do.
func compress() echo.MiddlewareFunc {
	// zstd is left off: every compressed answer is gzip, as the pages
	// kept compressed and the static files are.
	wrap, err := gzhttp.NewWrapper(gzhttp.EnableZstd(false), gzhttp.ContentTypeFilter(compressible))
	if err != nil {
		// Only a level or size out of range fails, and none is set.
		panic(err)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if shopper.ServedAhead(c) {
				return next(c)
			}
			res := c.Response()
			plain := res.Writer
			// Put back even on a panic: the compressing writer goes back
			// to its pool when wrap returns, and Echo's Recover (app.New,
			// outside this) writes the panic's 500 to the plain one.
			defer func() { res.Writer = plain }()
			wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				res.Writer = w
				if err := next(c); err != nil {
					c.Error(err)
				}
			})).ServeHTTP(plain, c.Request())
			return nil
		}
	}
}

// compressible reports whether an answer of content type ct gains by gzip:
// not a picture, which its format compresses already (a logo, the ICO's
// PNGs), unless it is SVG text; not what gzhttp knows to be compressed.
func compressible(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	if strings.HasPrefix(ct, "image/") && !strings.HasPrefix(ct, "image/svg") {
		return false
	}
	return gzhttp.DefaultContentTypeFilter(ct)
}
