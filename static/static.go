// Package static serves the app's own CSS and script. The pages load nothing
// from anywhere else.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"

	"github.com/paybybank/checkout/views"
)

// app.css and console.css are built by Tailwind from input.css (see
// package.json); they are
// committed so that `go run .` needs nothing but Go.
//
//go:embed app.css console.css banks.js frame.js embed.js studio.js status.js form.js handoff.js favicon.svg
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

// Prefix is where the files are served.
const Prefix = "/static/"

// URL returns the versioned URL of a file: it changes whenever the file does,
// so browsers may keep it forever.
func URL(name string) string {
	return Prefix + name + "?v=" + versions[name]
}

// Handler serves the files under Prefix, cached for a year when the request
// names the current version.
func Handler() http.Handler {
	files := http.StripPrefix(Prefix, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if _, ok := versions[name]; !ok {
			// Only the files themselves: no listing of the folder.
			http.NotFound(w, r)
			return
		}
		if v := r.URL.Query().Get("v"); v != "" && v == versions[name] {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "public, max-age=300")
		}
		files.ServeHTTP(w, r)
	})
}

// Assets are the versioned URLs the views load.
func Assets() views.Assets {
	return views.Assets{CSS: URL("app.css"), ConsoleCSS: URL("console.css"), BanksJS: URL("banks.js"), FrameJS: URL("frame.js"), StudioJS: URL("studio.js"), StatusJS: URL("status.js"), FormJS: URL("form.js"), Favicon: URL("favicon.svg"), HandoffJS: URL("handoff.js")}
}
