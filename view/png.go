package view

import (
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
)

// A palette image: w × h pixels, each an index into up to 256 colours.
// preview.png is written as such a PNG (colour type 3, 8 bits a pixel)
// whose image data is stored uncompressed (deflate's stored blocks), so
// that the file's size follows from w and h alone and `ls -l` never
// renders a preview (pngSize).
type paletteImage struct {
	w, h    int
	pix     []uint8    // h rows of w indices
	palette [][3]uint8 // the colours, at most 256
	// transparent makes palette entry 0 fully transparent (a tRNS chunk);
	// every other entry is opaque.
	transparent bool
}

// flipRows turns the image upside down.
func (m *paletteImage) flipRows() {
	for top, bottom := 0, m.h-1; top < bottom; top, bottom = top+1, bottom-1 {
		a, b := m.pix[top*m.w:(top+1)*m.w], m.pix[bottom*m.w:(bottom+1)*m.w]
		for i := range a {
			a[i], b[i] = b[i], a[i]
		}
	}
}

// storedBlock is the most bytes one stored deflate block holds.
const storedBlock = 65535

// pngSize returns the length of the PNG encodePNG writes for a w × h image
// with a palette of n colours.
func pngSize(w, h, n int, transparent bool) int64 {
	raw := int64(h) * (1 + int64(w)) // each row: the filter byte (0), then the pixels
	blocks := (raw + storedBlock - 1) / storedBlock
	zlib := 2 + blocks*5 + raw + 4 // header, block headers, data, Adler-32
	size := int64(8) +             // signature
		12 + 13 + // IHDR
		12 + 3*int64(n) + // PLTE
		12 + zlib + // IDAT
		12 // IEND
	if transparent {
		size += 12 + 1 // tRNS
	}
	return size
}

// encodePNG writes m as a PNG file of exactly pngSize bytes, as image/png
// would decode it: signature, IHDR, PLTE, tRNS (when m.transparent), one
// IDAT of a zlib stream of stored blocks, IEND.
func encodePNG(m *paletteImage) []byte {
	out := make([]byte, 0, pngSize(m.w, m.h, len(m.palette), m.transparent))
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	chunk := func(typ string, data []byte) {
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		start := len(out)
		out = append(out, typ...)
		out = append(out, data...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(m.w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(m.h))
	ihdr[8], ihdr[9] = 8, 3 // bit depth 8, colour type 3 (palette); no interlace
	chunk("IHDR", ihdr[:])
	plte := make([]byte, 0, 3*len(m.palette))
	for _, c := range m.palette {
		plte = append(plte, c[0], c[1], c[2])
	}
	chunk("PLTE", plte)
	if m.transparent {
		chunk("tRNS", []byte{0})
	}

	raw := make([]byte, 0, m.h*(1+m.w))
	for y := range m.h {
		raw = append(raw, 0) // filter type None
		raw = append(raw, m.pix[y*m.w:(y+1)*m.w]...)
	}
	z := make([]byte, 0, len(raw)+len(raw)/storedBlock*5+11)
	z = append(z, 0x78, 0x01)       // deflate, 32 KiB window, no dictionary, fastest
	for off := 0; off < len(raw); { // never empty: every row has its filter byte
		n := min(len(raw)-off, storedBlock)
		final := byte(0)
		if off+n == len(raw) {
			final = 1
		}
		z = append(z, final) // BFINAL, BTYPE 00 (stored)
		z = binary.LittleEndian.AppendUint16(z, uint16(n))
		z = binary.LittleEndian.AppendUint16(z, ^uint16(n))
		z = append(z, raw[off:off+n]...)
		off += n
	}
	z = binary.BigEndian.AppendUint32(z, adler32.Checksum(raw))
	chunk("IDAT", z)
	chunk("IEND", nil)
	return out
}
