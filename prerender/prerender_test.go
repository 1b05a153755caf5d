package prerender

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// A browser inflates the page to exactly the bytes of the page with the
// shopper's parts in place, whatever their size, repeats across parts
// included.
func TestGzipIsThePage(t *testing.T) {
	const summary, token = "<!--summary-->", "TOKENHOLE"
	long := strings.Repeat("<li>Sparkasse Bad Zell</li>", 3000) // beyond the 32 KB window
	body := "<html><p>" + summary + "</p><a href=\"/c/" + token + "/pay\">" + long + "<ul>" + token + "</ul>" + long + summary
	for _, p := range []*Page{New([]byte(body), summary, token), Compressed([]byte(body), summary, token)} {
		fillIn(t, p, body, summary, token, long)
	}
	if New([]byte(body), summary, token).Size() < 5*Compressed([]byte(body), summary, token).Size() {
		t.Error("a compressed page keeps as much as a plain one")
	}
}

func fillIn(t *testing.T, p *Page, body, summary, token, long string) {
	if p.Holes() != 4 {
		t.Fatalf("holes: %d, want 4", p.Holes())
	}
	for _, holes := range [][][]byte{
		{[]byte("order A-1, €49.90"), []byte("eyJhbGciOi")},
		{nil, nil},
		{bytes.Repeat([]byte("x"), 70000), []byte(long[:100])},
	} {
		want := strings.NewReplacer(summary, string(holes[0]), token, string(holes[1])).Replace(body)
		var plain, zipped bytes.Buffer
		if err := p.Plain(&plain, holes...); err != nil {
			t.Fatal(err)
		}
		if plain.String() != want || plain.Len() != p.PlainLen(holes...) {
			t.Errorf("plain page differs (%d bytes, want %d)", plain.Len(), len(want))
		}
		if err := p.Gzip(&zipped, holes...); err != nil {
			t.Fatal(err)
		}
		if zipped.Len() != p.GzipLen(holes...) {
			t.Errorf("gzip length %d, said %d", zipped.Len(), p.GzipLen(holes...))
		}
		zr, err := gzip.NewReader(&zipped)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("inflating: %v", err)
		}
		if string(got) != want {
			t.Errorf("inflated page differs (%d bytes, want %d)", len(got), len(want))
		}
		if rest, _ := io.ReadAll(&zipped); len(rest) > 0 {
			t.Errorf("%d bytes after the gzip member", len(rest))
		}
	}
	if p.GzipLen(nil, nil) > len(body)/20 {
		t.Errorf("compressed %d bytes of %d: the shared parts are not compressed", p.GzipLen(nil, nil), len(body))
	}
}

func BenchmarkGzip(b *testing.B) {
	body := strings.Repeat("<li><a href=\"pay?country=FR&amp;bank=b\">Banque</a></li>", 800)
	p := New([]byte("<p>"+"<!--h-->"+"</p>"+body), "<!--h-->")
	hole := bytes.Repeat([]byte("y"), 400)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p.Gzip(io.Discard, hole)
	}
}

// Combining CRCs gives the CRC of the bytes one after another, for empty,
// short and long parts.
func TestCombine(t *testing.T) {
	a := []byte(strings.Repeat("Sparkasse", 7000))
	for _, b := range [][]byte{nil, []byte("x"), []byte("<li>Banque</li>"), bytes.Repeat([]byte{0xff, 0}, 40000)} {
		want := crc32.ChecksumIEEE(append(bytes.Clone(a), b...))
		if got := combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), shiftBy(len(b))); got != want {
			t.Errorf("%d bytes then %d: CRC %08x, want %08x", len(a), len(b), got, want)
		}
	}
}
