package settings_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"testing"

	"github.com/paybybank/checkout/settings"
)

// TestALogoTooLargeToDecodeIsRefusedFromItsHeader: a few kilobytes can
// declare an image that takes hundreds of megabytes to decode. Such a
// logo is refused by its sides, read from its header, with the reason the
// console says, while taking next to no memory; the 49 KB 16-bit
// PNG of 2000×2000 pixels is one.
func TestALogoTooLargeToDecodeIsRefusedFromItsHeader(t *testing.T) {
	deep := image.NewRGBA64(image.Rect(0, 0, 2000, 2000))
	for i := range 2000 {
		deep.SetRGBA64(i, i, color.RGBA64{R: 0xffff, A: 0xffff})
	}
	var deepPNG bytes.Buffer
	if err := png.Encode(&deepPNG, deep); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data []byte
		w, h int
	}{
		"10000×10000 declared by a 1×1 PNG": {declaring(t, 10000, 10000), 10000, 10000},
		"a 16-bit 2000×2000 PNG":            {deepPNG.Bytes(), 2000, 2000},
		"1025 px wide":                      {declaring(t, settings.MaxLogoSide+1, 10), settings.MaxLogoSide + 1, 10},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := settings.ReadLogo(c.data)
		runtime.ReadMemStats(&after)
		var le *settings.LogoError
		if !errors.As(err, &le) || le.Key != "logoSide" || len(le.Args) != 3 || le.Args[0] != c.w || le.Args[1] != c.h || le.Args[2] != settings.MaxLogoSide {
			t.Errorf("%s (%d bytes): err = %#v, want the logoSide refusal", name, len(c.data), err)
		}
		if took := after.TotalAlloc - before.TotalAlloc; took > 8<<20 {
			t.Errorf("%s: refusing it took %d MiB; it was decoded", name, took>>20)
		}
	}
	// A logo at the limit is still taken.
	if _, err := settings.ReadLogo(pngOf(t, settings.MaxLogoSide, 64)); err != nil {
		t.Errorf("a PNG of %d×64: %v", settings.MaxLogoSide, err)
	}
}

// declaring is a tiny PNG whose header says w×h pixels: a 1×1 PNG with its
// IHDR chunk's sides (and checksum) written over.
func declaring(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	// The signature (8 bytes), then IHDR: length (4), type (4), width (4),
	// height (4), 5 more bytes of data, its CRC over type and data.
	binary.BigEndian.PutUint32(b[16:], uint32(w))
	binary.BigEndian.PutUint32(b[20:], uint32(h))
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != w || cfg.Height != h {
		t.Fatalf("the PNG declaring %d×%d reads as %+v, %v", w, h, cfg, err)
	}
	return b
}
