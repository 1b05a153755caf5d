package prerender

// The CRC-32 of a page is that of its parts one after another. A part kept
// ahead carries its own CRC and the operator that shifts a CRC past its
// length, so that a request combines them in a few dozen steps instead of
// running over the part's bytes again (the method of zlib's crc32_combine).

// poly is the CRC-32 (IEEE) polynomial, reflected.
const poly = 0xedb88320

// multModP multiplies a and b modulo the polynomial, in reflected bit order.
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
}

// x2n holds x^(2^k) modulo the polynomial.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < 32; k++ {
		p = multModP(p, p)
		t[k] = p
	}
	return t
}()

// shiftBy is the operator that moves a CRC past n bytes: x^(8n) modulo the
// polynomial.
func shiftBy(n int) uint32 {
	p := uint32(1) << 31 // x^0
	k := 3               // 8n = n << 3
	for u := uint64(n); u != 0; u >>= 1 {
		if u&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
		k++
	}
	return p
}

// combine is the CRC of A followed by B, from A's CRC, B's CRC and B's
// shiftBy operator.
func combine(crcA, crcB, shiftB uint32) uint32 { return multModP(shiftB, crcA) ^ crcB }
