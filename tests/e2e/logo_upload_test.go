package e2e

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/settings"
)

// TestALogoUpToThePromised512KBGoesThroughTheAppsGuards uploads logos
// through the whole app, whose body limit is 64 KB but on the logo upload:
// a 200 KB PNG is taken, a 600 KB file is refused on the Branding page
// with its size, and only a far bigger one gets a bare 413. Every other
// route keeps 64 KB.
func TestALogoUpToThePromised512KBGoesThroughTheAppsGuards(t *testing.T) {
	s := start(t, nil) // sandbox mode: the demo shop is managed in the console
	p := signIn(t, s.base, s.consoleEmail, s.consolePassword)
	upload := func(data []byte) (int, string, http.Header) {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("csrf", p.csrf)
		w.WriteField("title", "Typed, not saved")
		part, _ := w.CreateFormFile("logo", "logo.png")
		part.Write(data)
		w.Close()
		req, _ := http.NewRequest(http.MethodPost, s.base+"/console/branding/logo", &body)
		req.Header.Set("Content-Type", w.FormDataContentType())
		res, err := p.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}

	logo := noisyPNG(t, 230, 230)
	if n := len(logo); n < 190<<10 || n > settings.MaxLogoBytes {
		t.Fatalf("the test's logo is %d KB, want about 200", n>>10)
	}
	if status, body, header := upload(logo); status != http.StatusSeeOther || !strings.Contains(header.Get("Location"), "done=logo") {
		t.Errorf("a %d KB PNG: %d to %q, want 303 to the draft\n%.300s", len(logo)>>10, status, header.Get("Location"), body)
	}

	tooBig := append(bytes.Clone(logo), make([]byte, 600<<10-len(logo))...)
	status, body, _ := upload(tooBig)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "The file is 600 KB; a logo may be 512 KB at most.") ||
		!strings.Contains(body, `value="Typed, not saved"`) {
		t.Errorf("a 600 KB file: %d, want 422 on the Branding page saying its size, the title typed kept\n%.300s", status, body)
	}

	if status, _, _ := upload(make([]byte, 2<<20)); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MB file: %d, want 413 unread", status)
	}
	if status, _ := p.post("/console/branding", url.Values{"title": {strings.Repeat("t", 100<<10)}}); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 100 KB form on another route: %d, want 413", status)
	}
}

// noisyPNG is a w×h PNG of random pixels, which do not compress: about
// 4×w×h bytes.
func noisyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
