package web

import (
	"fmt"
	"strings"

	"github.com/skip2/go-qrcode"
)

// QRSVG draws text as a QR code (medium error correction) in an SVG: one
// path of the dark modules, row by row, with the code's quiet zone.
func QRSVG(text string) (string, error) {
	code, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", err
	}
	bits := code.Bitmap()
	var path strings.Builder
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 0
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&path, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	n := len(bits)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="224" height="224" shape-rendering="crispEdges" aria-hidden="true"><rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n, n, n, n, path.String()), nil
}

// QRPNG draws text as a QR code (medium error correction) in a PNG of
// size pixels a side, for print.
func QRPNG(text string, size int) ([]byte, error) {
	return qrcode.Encode(text, qrcode.Medium, size)
}
