// Package prerender keeps a page rendered and compressed ahead, cut where each
// request's own parts go, so that serving it costs little more than a static
// file: the shared parts are deflated once, at their best, and a request's
// parts (a few hundred bytes: the shopper's order) travel as stored deflate
// blocks between them. RFC 1951 allows such a stream: every part is flushed
// to a byte boundary and refers back only within itself.
package prerender

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"
)

// Page is one page, cut into parts around its holes.
type Page struct {
	parts []part
	// fills names the value of each hole: the i-th hole (after parts[i])
	// takes the value of marker fills[i].
	fills []int
	// values is how many values the page takes: one per marker.
	values int
	// size is the bytes the page holds, plain and deflated.
	size int
}

type part struct {
	plain    []byte // nil in a page made by Compressed
	deflated []byte // sync-flushed, not final; empty for an empty part
	length   int    // of the plain text
	crc      uint32 // of the plain text
	shift    uint32 // shiftBy(length)
}

// New cuts body at every occurrence of each marker. The page then takes one
// value per marker, in the order of markers, for every place that marker
// stood. It keeps the parts plain and deflated.
func New(body []byte, markers ...string) *Page { return cut(body, true, markers) }

// Compressed is New for a page served compressed nearly always: it keeps
// the parts deflated only, a seventh of the memory, and Plain inflates them.
func Compressed(body []byte, markers ...string) *Page { return cut(body, false, markers) }

func cut(body []byte, keepPlain bool, markers []string) *Page {
	p := &Page{values: len(markers)}
	var pieces [][]byte
	for {
		at, which := -1, -1
		for i, m := range markers {
			if j := bytes.Index(body, []byte(m)); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if at < 0 {
			pieces = append(pieces, body)
			break
		}
		pieces = append(pieces, body[:at])
		p.fills = append(p.fills, which)
		body = body[at+len(markers[which]):]
	}
	for _, piece := range pieces {
		pt := part{length: len(piece), crc: crc32.ChecksumIEEE(piece), shift: shiftBy(len(piece))}
		if keepPlain {
			pt.plain = bytes.Clone(piece)
		}
		if len(piece) > 0 {
			var buf bytes.Buffer
			zw, _ := flate.NewWriter(&buf, flate.BestCompression)
			zw.Write(piece)
			zw.Flush()
			pt.deflated = buf.Bytes()
		}
		p.size += len(pt.plain) + len(pt.deflated)
		p.parts = append(p.parts, pt)
	}
	return p
}

// Holes is how many places the page has for request values.
func (p *Page) Holes() int { return len(p.fills) }

// hole is the value of the i-th hole, nil past the last part.
func (p *Page) hole(i int, values [][]byte) []byte {
	if i < len(p.fills) {
		return values[p.fills[i]]
	}
	return nil
}

// Size is the memory the page holds, in bytes.
func (p *Page) Size() int { return p.size }

// Plain writes the page with its holes filled, uncompressed.
func (p *Page) Plain(w io.Writer, values ...[]byte) error {
	_, err := w.Write(p.AppendPlain(make([]byte, 0, p.PlainLen(values...)), values...))
	return err
}

// AppendPlain appends the page with its holes filled, uncompressed, to dst.
func (p *Page) AppendPlain(dst []byte, values ...[]byte) []byte {
	p.check(values)
	for i, pt := range p.parts {
		if pt.plain != nil || pt.length == 0 {
			dst = append(dst, pt.plain...)
		} else {
			dst = inflate(dst, pt)
		}
		dst = append(dst, p.hole(i, values)...)
	}
	return dst
}

// inflate appends a part's plain text from its deflated form: a stream
// without its end, which the final empty block supplies.
func inflate(dst []byte, pt part) []byte {
	zr := flate.NewReader(io.MultiReader(bytes.NewReader(pt.deflated), bytes.NewReader(finalBlock)))
	defer zr.Close()
	start := len(dst)
	dst = slices.Grow(dst, pt.length)[:start+pt.length]
	if _, err := io.ReadFull(zr, dst[start:]); err != nil {
		// The part was deflated by this process: it cannot fail to inflate.
		panic("prerender: a kept part does not inflate: " + err.Error())
	}
	return dst
}

// PlainLen is the length of the page with holes filled in, uncompressed.
func (p *Page) PlainLen(values ...[]byte) int {
	n := 0
	for i, pt := range p.parts {
		n += pt.length + len(p.hole(i, values))
	}
	return n
}

// gzipHeader is a gzip member header with no name, time or extra fields
// (RFC 1952), deflate, made on an unknown system.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// finalBlock is an empty stored block with BFINAL set: the end of the stream.
var finalBlock = []byte{1, 0, 0, 0xff, 0xff}

// Gzip writes the page with its holes filled as one gzip member.
func (p *Page) Gzip(w io.Writer, values ...[]byte) error {
	p.check(values)
	buf := takeOutput()
	defer giveOutput(buf)
	out := (*buf)[:0]
	if n := p.GzipLen(values...); cap(out) < n {
		out = make([]byte, 0, n)
	}
	out = append(out, gzipHeader...)
	var crc uint32
	length := 0
	for i, pt := range p.parts {
		out = append(out, pt.deflated...)
		crc = combine(crc, pt.crc, pt.shift)
		length += pt.length
		hole := p.hole(i, values)
		out = appendStored(out, hole)
		crc = crc32.Update(crc, crc32.IEEETable, hole)
		length += len(hole)
	}
	out = append(out, finalBlock...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(length))
	_, err := w.Write(out)
	*buf = out
	return err
}

// outputs are buffers for Gzip's answer: pages are written one after
// another, and allocating each anew would feed the garbage collector. A
// channel keeps them, not a sync.Pool, which every collection empties, so
// that under load each of up to a hundred requests at once finds one.
var outputs = make(chan *[]byte, 128)

func takeOutput() *[]byte {
	select {
	case b := <-outputs:
		return b
	default:
		b := make([]byte, 0, 16<<10)
		return &b
	}
}

func giveOutput(b *[]byte) {
	select {
	case outputs <- b:
	default:
	}
}

// GzipLen is the length Gzip writes.
func (p *Page) GzipLen(values ...[]byte) int {
	size := len(gzipHeader) + len(finalBlock) + 8
	for i, pt := range p.parts {
		size += len(pt.deflated) + storedLen(len(p.hole(i, values)))
	}
	return size
}

// maxStored is the most a stored block holds.
const maxStored = 65535

// storedLen is the bytes n bytes take as stored blocks.
func storedLen(n int) int {
	blocks := (n + maxStored - 1) / maxStored
	return n + 5*blocks
}

// appendStored appends data as non-final stored blocks (RFC 1951 3.2.4):
// each a header byte (BFINAL 0, BTYPE 00, padding), LEN and its complement.
func appendStored(out, data []byte) []byte {
	for len(data) > 0 {
		n := min(len(data), maxStored)
		out = append(out, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = binary.LittleEndian.AppendUint16(out, ^uint16(n))
		out = append(out, data[:n]...)
		data = data[n:]
	}
	return out
}

func (p *Page) check(values [][]byte) {
	if len(values) != p.values {
		panic("prerender: one value per marker")
	}
}
