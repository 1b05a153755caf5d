// Package static serves the app's own CSS and script. The pages load nothing
// from anywhere else.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paybybank/checkout/prerender"
	"github.com/paybybank/checkout/views"
)

// app.css and console.css are built by Tailwind from input.css (see
// package.json); they are
// committed so that `go run .` needs nothing but Go.
//
//go:embed app.css console.css banks.js frame.js embed.js branding.js status.js form.js handoff.js copy.js passkeys.js favicon.svg favicon.ico
var files embed.FS

// versions holds a short content hash of each file, for cache busting.
var versions = func() map[string]string {
	v := map[string]string{}
	entries, _ := fs.ReadDir(files, ".")
	for _, e := range entries {
		data, _ := files.ReadFile(e.Name())
		sum := sha256.Sum256(data)
		v[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return v
}()

// Known reports whether name is one of the files served under Prefix.
func Known(name string) bool {
	_, ok := versions[name]
	return ok
}

// Prefix is where the files are served.
const Prefix = "/static/"

// URL returns the versioned URL of a file: it changes whenever the file does,
// so browsers may keep it forever.
func URL(name string) string {
	return Prefix + name + "?v=" + versions[name]
}

// Handler serves the files under Prefix, cached for a year when the request
// names the current version. A browser that takes gzip gets each text file
// gzip'd once at the start, at the best compression: never compressed anew
// for each request, and smaller than the app's compression of answers made
// per request would make them.
func Handler() http.Handler {
	files := http.StripPrefix(Prefix, http.FileServerFS(files))
	zipped := gzipped()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if _, ok := versions[name]; !ok {
			// Only the files themselves: no listing of the folder.
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		if v := r.URL.Query().Get("v"); v != "" && v == versions[name] {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "public, max-age=300")
		}
		gz, ok := zipped[name]
		if !ok {
			files.ServeHTTP(w, r)
			return
		}
		if !slices.Contains(h.Values("Vary"), "Accept-Encoding") {
			h.Add("Vary", "Accept-Encoding")
		}
		if !prerender.AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			files.ServeHTTP(w, r)
			return
		}
		h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(gz)))
		w.Write(gz)
	})
}

// gzipped is each file that gzip makes smaller, gzip'd: the stylesheets,
// the scripts and the SVG icon, not the ICO's PNGs.
func gzipped() map[string][]byte {
	out := map[string][]byte{}
	for name := range versions {
		data, _ := files.ReadFile(name)
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		if b.Len() < len(data) {
			out[name] = b.Bytes()
		}
	}
	return out
}

// FaviconPath is where browsers ask for a site's icon unbidden, on every
// page: it answers with the app's own icon (the same picture as
// favicon.svg, as PNGs of 32 and 48 pixels in an ICO), never a page.
const FaviconPath = "/favicon.ico"

// Favicon serves favicon.ico at FaviconPath, kept a day: its address
// cannot change with its content.
func Favicon() http.Handler {
	ico, _ := files.ReadFile("favicon.ico")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, "favicon.ico", time.Time{}, bytes.NewReader(ico))
	})
}

// Assets are the versioned URLs the views load.
func Assets() views.Assets {
	return views.Assets{CSS: URL("app.css"), ConsoleCSS: URL("console.css"), BanksJS: URL("banks.js"), FrameJS: URL("frame.js"), BrandingJS: URL("branding.js"), StatusJS: URL("status.js"), FormJS: URL("form.js"), Favicon: URL("favicon.svg"), HandoffJS: URL("handoff.js"), CopyJS: URL("copy.js"), PasskeysJS: URL("passkeys.js")}
}
