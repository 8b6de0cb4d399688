// Package inflate decodes DEFLATE streams (RFC 1951), bare or wrapped as
// gzip (RFC 1952) or zlib (RFC 1950), whole: from one buffer into another
// of exactly the size the caller expects, as a Zarr chunk's decoder (or a
// zip member's header) knows it. With all of the input at hand and the
// output's place fixed, it needs no sliding window and no stream state:
// matches are copied within the output, the input is read eight bytes at a
// time, and a stream that would write past the end of the output stops
// there (ErrTooLong), so a decompression bomb costs nothing.
//
// The checks are zlib's: over-subscribed and incomplete Huffman codes (but
// a single code of one bit), distances before the start of the stream's
// output, lengths and distances with no meaning, stored blocks whose length
// does not match its complement, and input that ends before the last block
// do are all errors (*CorruptError).
//
// It exists beside klauspost/compress's flate, whose streaming decoder
// (a sliding window behind an io.Reader) is the slower of the two on
// whole chunks of known size (the figures are in BENCH.md).
// `go test -run NONE -bench Gzip -cpu 1 ./internal/inflate/` shows the gap;
// `-bench VsNumcodecs ./codec/` sets it against zlib in C.
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/zarrfs/zarrfs/internal/lz77"
)

// ErrTooLong reports a stream that decodes to more bytes than the output
// holds. Decoding stops when the output is full.
var ErrTooLong = errors.New("inflate: stream decodes to more bytes than expected")

// A CorruptError reports invalid input: Offset is the input byte at which
// it was found (approximately: the decoder reads ahead).
type CorruptError struct {
	Offset int
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("inflate: corrupt input at byte %d: %s", e.Offset, e.Reason)
}

// Decode decodes the DEFLATE stream at the start of src into dst. It
// returns the number of bytes written and of input bytes read (up to the
// end of the byte holding the last block's end); the stream may decode to
// fewer bytes than dst holds, never to more (ErrTooLong).
func Decode(dst, src []byte) (written, read int, err error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	return d.decode(dst, 0, src)
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// Table geometry. A code is looked up by its first rootBits bits; longer
// codes go on in a subtable indexed by their remaining bits (at most
// maxCodeLen-rootBits of them). Each subtable holds at least one symbol, so
// there are at most as many subtables as symbols.
const (
	maxCodeLen     = 15
	numLitlen      = 288 // 286 and 287 only in the fixed code, where they are invalid
	numDist        = 32  // 30 and 31 likewise
	numPrecode     = 19
	litlenRootBits = 11
	distRootBits   = 8
	precodeBits    = 7 // a precode's codes are at most 7 bits: no subtables
	litlenSize     = 1<<litlenRootBits + numLitlen<<(maxCodeLen-litlenRootBits)
	distSize       = 1<<distRootBits + numDist<<(maxCodeLen-distRootBits)
)

// A table entry packs what a code means and how long it is:
//
//	bits  0–7   the bits to consume: the code's (at this level: within a subtable, those
//	            past the root's) and the extra bits that follow it; for a subtable pointer,
//	            the root's
//	bits  8–11  the code's own bits at this level; for a subtable pointer, its index bits
//	bit  12     end of block (with bit 14)
//	bit  13     a subtable pointer (with bit 14)
//	bit  14     exceptional: end of block, subtable pointer or invalid code
//	bit  15     a literal
//	bits 16–31  value: the literal byte, the base of a length or distance, or a subtable's start
//
// A length or distance is then value + (the consumed bits >> the code's bits).
const (
	flagEnd         = 1 << 12
	flagSub         = 1 << 13
	flagExceptional = 1 << 14
	flagLiteral     = 1 << 15
)

func entry(flags, value, extra, n uint32) uint32 {
	return value<<16 | flags | n<<8 | (n + extra)
}

// Bases and extra bits of the length symbols 257…285 and distance symbols
// 0…29 (RFC 1951, 3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

const invalidEntry = flagExceptional

func litlenEntry(sym int, n uint32) uint32 {
	switch {
	case sym < 256:
		return entry(flagLiteral, uint32(sym), 0, n)
	case sym == 256:
		return entry(flagExceptional|flagEnd, 0, 0, n)
	case sym < 286:
		return entry(0, uint32(lengthBase[sym-257]), uint32(lengthExtra[sym-257]), n)
	}
	return entry(invalidEntry, 0, 0, n)
}

func distEntry(sym int, n uint32) uint32 {
	if sym < 30 {
		return entry(0, uint32(distBase[sym]), uint32(distExtra[sym]), n)
	}
	return entry(invalidEntry, 0, 0, n)
}

func precodeEntry(sym int, n uint32) uint32 { return entry(0, uint32(sym), 0, n) }

// buildTable fills table with the canonical Huffman code of lens (a code
// length per symbol, 0 for none) for lookup by rootBits bits, and returns
// false when the code is over-subscribed or incomplete (a single code of
// one bit excepted, as zlib allows) unless it is empty, which fails when
// used. table must hold 1<<rootBits entries and the subtables.
func buildTable(table []uint32, lens []uint8, rootBits uint, mean func(sym int, n uint32) uint32) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	maxLen := 0
	for l := maxCodeLen; l > 0; l-- {
		if count[l] != 0 {
			maxLen = l
			break
		}
	}
	left := 1
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false // over-subscribed
		}
	}
	root := table[:1<<rootBits]
	if left > 0 {
		if maxLen > 1 {
			return false // incomplete
		}
		// Empty, or one code of one bit: the other half is invalid.
		for i := range root {
			root[i] = invalidEntry
		}
	}
	// Symbols in canonical order (by length, then symbol): a long code's
	// root prefix then changes only when a new subtable begins.
	var sorted [numLitlen]uint16
	var offs [maxCodeLen + 1]int
	for l := 2; l <= maxLen; l++ {
		offs[l] = offs[l-1] + count[l-1]
	}
	for sym, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	var next [maxCodeLen + 1]int
	code := 0
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	subBits := uint(0)
	if uint(maxLen) > rootBits {
		subBits = uint(maxLen) - rootBits
	}
	free := 1 << rootBits // where the next subtable goes
	prefix, sub := -1, []uint32(nil)
	for _, sym := range sorted[:offs[maxLen]] {
		n := uint(lens[sym])
		rev := int(bits.Reverse16(uint16(next[n])) >> (16 - n))
		next[n]++
		if n <= rootBits {
			e := mean(int(sym), uint32(n))
			for i := rev; i < len(root); i += 1 << n {
				root[i] = e
			}
			continue
		}
		if p := rev & (1<<rootBits - 1); p != prefix {
			prefix = p
			root[p] = uint32(free)<<16 | flagExceptional | flagSub | uint32(subBits)<<8 | uint32(rootBits)
			sub = table[free : free+1<<subBits]
			free += 1 << subBits
		}
		e := mean(int(sym), uint32(n-rootBits))
		for i := rev >> rootBits; i < len(sub); i += 1 << (n - rootBits) {
			sub[i] = e
		}
	}
	return true
}

// fixedLitlen and fixedDist are the tables of the fixed code (RFC 1951,
// 3.2.6).
var fixedLitlen, fixedDist = func() (*[litlenSize]uint32, *[distSize]uint32) {
	var lens [numLitlen]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	var dlens [numDist]uint8
	for i := range dlens {
		dlens[i] = 5
	}
	lt, dt := new([litlenSize]uint32), new([distSize]uint32)
	if !buildTable(lt[:], lens[:], litlenRootBits, litlenEntry) || !buildTable(dt[:], dlens[:], distRootBits, distEntry) {
		panic("inflate: the fixed code does not build")
	}
	return lt, dt
}()

// A decoder holds a stream's bit reader and the tables of its current
// block. It reads src eight bytes at a time while eight remain, then a byte
// at a time, and past the end it feeds zero bytes, counting them in
// overread: a stream that uses them is truncated.
type decoder struct {
	src      []byte
	pos      int    // the next byte of src to load
	bits     uint64 // the loaded bits, the next one lowest; above nbits, the bytes from pos on, or zeros
	nbits    uint   // how many bits of bits are loaded
	overread int    // zero bytes loaded past the end of src

	litlen  [litlenSize]uint32
	dist    [distSize]uint32
	precode [1 << precodeBits]uint32
	lens    [numLitlen + numDist]uint8
}

// corrupt reports reason at the first input byte not yet consumed whole:
// the zero bytes fed past the end (overread) are not input, so a stream
// that ran out is reported at its end, never before its start.
func (d *decoder) corrupt(reason string) error {
	real := max(int(d.nbits)-8*d.overread, 0)
	return &CorruptError{Offset: d.pos - real/8, Reason: reason}
}

const errTruncated = "input ends before the last block does"

// refill loads bits until at least 56 are loaded.
func (d *decoder) refill() error {
	if d.pos+8 <= len(d.src) {
		d.bits |= binary.LittleEndian.Uint64(d.src[d.pos:]) << d.nbits
		d.pos += int(63-d.nbits) >> 3
		d.nbits |= 56
		return nil
	}
	for d.nbits < 56 {
		if d.pos < len(d.src) {
			d.bits |= uint64(d.src[d.pos]) << d.nbits
			d.pos++
		} else {
			if d.overread >= 8 {
				return d.corrupt(errTruncated)
			}
			d.overread++
		}
		d.nbits += 8
	}
	return nil
}

// take consumes n bits (n <= d.nbits) and returns them.
func (d *decoder) take(n uint) uint32 {
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nbits -= n
	return v
}

// align drops the bits up to the next byte boundary and returns the number
// of input bytes consumed, after checking that no zero byte fed past the
// end of the input was used.
func (d *decoder) align() (int, error) {
	real := int(d.nbits) - 8*d.overread
	if real < 0 {
		return 0, d.corrupt(errTruncated)
	}
	return d.pos - real/8, nil
}

// rewind empties the bit reader, so that it goes on at src[at].
func (d *decoder) rewind(at int) {
	d.pos, d.bits, d.nbits, d.overread = at, 0, 0, 0
}

// decode decodes the stream at the start of src into dst[o:], where o is
// the stream's first output byte (matches reach back no further).
func (d *decoder) decode(dst []byte, o int, src []byte) (written, read int, err error) {
	d.src = src
	d.rewind(0)
	start := o
	defer func() { d.src = nil }()
	for {
		if err := d.refill(); err != nil {
			return o - start, 0, err
		}
		final := d.take(1)
		switch d.take(2) {
		case 0:
			o, err = d.stored(dst, o)
		case 1:
			o, err = d.block(dst, o, start, fixedLitlen, fixedDist)
		case 2:
			if err = d.dynamicTables(); err == nil {
				o, err = d.block(dst, o, start, &d.litlen, &d.dist)
			}
		default:
			err = d.corrupt("block type 3")
		}
		if err != nil {
			return o - start, 0, err
		}
		if final == 1 {
			read, err := d.align()
			return o - start, read, err
		}
	}
}

// stored copies a stored block's bytes.
func (d *decoder) stored(dst []byte, o int) (int, error) {
	at, err := d.align()
	if err != nil {
		return o, err
	}
	if at+4 > len(d.src) {
		d.rewind(at)
		return o, d.corrupt(errTruncated)
	}
	n := int(binary.LittleEndian.Uint16(d.src[at:]))
	if ^uint16(n) != binary.LittleEndian.Uint16(d.src[at+2:]) {
		d.rewind(at)
		return o, d.corrupt("stored block length does not match its complement")
	}
	at += 4
	switch {
	case at+n > len(d.src):
		d.rewind(at)
		return o, d.corrupt(errTruncated)
	case n > len(dst)-o:
		return o, ErrTooLong
	}
	copy(dst[o:], d.src[at:at+n])
	d.rewind(at + n)
	return o + n, nil
}

// precodeOrder is the order of the code length code's lengths.
var precodeOrder = [numPrecode]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicTables reads a dynamic block's code lengths (RFC 1951, 3.2.7) and
// builds its tables.
func (d *decoder) dynamicTables() error {
	if err := d.refill(); err != nil {
		return err
	}
	nlit := int(d.take(5)) + 257
	ndist := int(d.take(5)) + 1
	nclen := int(d.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return d.corrupt("too many length or distance codes")
	}
	var clens [numPrecode]uint8
	for i := range nclen {
		if d.nbits < 3 {
			if err := d.refill(); err != nil {
				return err
			}
		}
		clens[precodeOrder[i]] = uint8(d.take(3))
	}
	if !buildPrecode(d.precode[:], clens[:]) {
		return d.corrupt("invalid code length code")
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if d.nbits < precodeBits+7 {
			if err := d.refill(); err != nil {
				return err
			}
		}
		e := d.precode[d.bits&(1<<precodeBits-1)]
		if e&flagExceptional != 0 {
			return d.corrupt("invalid code length")
		}
		d.take(uint(e & 0xff))
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var v uint8
		var n int
		switch sym {
		case 16:
			if i == 0 {
				return d.corrupt("repeat of no code length")
			}
			v, n = lens[i-1], 3+int(d.take(2))
		case 17:
			n = 3 + int(d.take(3))
		default:
			n = 11 + int(d.take(7))
		}
		if i+n > len(lens) {
			return d.corrupt("code lengths repeat past their end")
		}
		for ; n > 0; n-- {
			lens[i] = v
			i++
		}
	}
	if lens[256] == 0 {
		return d.corrupt("no end-of-block code")
	}
	if !buildTable(d.litlen[:], lens[:nlit], litlenRootBits, litlenEntry) {
		return d.corrupt("invalid literal/length code")
	}
	if !buildTable(d.dist[:], lens[nlit:], distRootBits, distEntry) {
		return d.corrupt("invalid distance code")
	}
	return nil
}

// buildPrecode builds the code length code's table, which zlib wants
// complete (or empty, which fails when used).
func buildPrecode(table []uint32, lens []uint8) bool {
	n := 0
	for _, l := range lens {
		if l != 0 {
			n++
		}
	}
	if n == 1 {
		return false // a single code, allowed for the others, is incomplete here
	}
	return buildTable(table, lens, precodeBits, precodeEntry)
}

// block decodes a compressed block's symbols with the tables lt and dt
// into dst from o on, matches reaching back no further than start. The
// bit reader lives in local variables here (d's fields are written back
// only to refill near the end of the input, and on return): this loop is
// where the time goes.
func (d *decoder) block(dst []byte, o, start int, lt *[litlenSize]uint32, dt *[distSize]uint32) (int, error) {
	src, pos, bitbuf, nbits := d.src, d.pos, d.bits, d.nbits
	defer func() { d.pos, d.bits, d.nbits = pos, bitbuf, nbits }()
	// next is the entry of the next code, looked up before the bits
	// are refilled (to shorten the chain of dependent steps). That is
	// right while refills read 8 bytes: bitbuf then holds the input's
	// bits even above nbits, as many as were consumed since (at most 48)
	// short of 64. Near the end of the input it is looked up again.
	var next uint32
	preloaded := false
	for {
		// At least 56 bits: enough for a length (15 + 5) and a distance
		// (15 + 13), or for two literals.
		var e uint32
		if pos+8 <= len(src) {
			bitbuf |= binary.LittleEndian.Uint64(src[pos:]) << nbits
			pos += int(63-nbits) >> 3
			nbits |= 56
			e = next
			if !preloaded {
				e = lt[bitbuf&(1<<litlenRootBits-1)]
				preloaded = true
			}
		} else {
			d.pos, d.bits, d.nbits = pos, bitbuf, nbits
			if err := d.refill(); err != nil {
				return o, err
			}
			pos, bitbuf, nbits = d.pos, d.bits, d.nbits
			e = lt[bitbuf&(1<<litlenRootBits-1)]
		}
		if e&flagSub != 0 {
			bitbuf >>= litlenRootBits
			nbits -= litlenRootBits
			e = lt[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%litlenSize]
		}
		saved := bitbuf
		n := uint(e & 0xff)
		bitbuf >>= n & 63
		nbits -= n
		if e&flagLiteral != 0 {
			if o >= len(dst) {
				return o, ErrTooLong
			}
			dst[o] = byte(e >> 16)
			o++
			// A second literal with the bits left, when its code is in
			// the root table.
			e = lt[bitbuf&(1<<litlenRootBits-1)]
			if e&flagLiteral == 0 {
				next = e
				continue
			}
			if o >= len(dst) {
				return o, ErrTooLong
			}
			n = uint(e & 0xff)
			bitbuf >>= n & 63
			nbits -= n
			dst[o] = byte(e >> 16)
			o++
			next = lt[bitbuf&(1<<litlenRootBits-1)]
			continue
		}
		if e&flagExceptional != 0 {
			if e&flagEnd != 0 {
				return o, nil
			}
			return o, d.corrupt("invalid literal/length code")
		}
		length := int(e>>16) + int(saved&(1<<(n&63)-1)>>(e>>8&15))
		e = dt[bitbuf&(1<<distRootBits-1)]
		if e&flagSub != 0 {
			bitbuf >>= distRootBits
			nbits -= distRootBits
			e = dt[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%distSize]
		}
		saved = bitbuf
		n = uint(e & 0xff)
		bitbuf >>= n & 63
		nbits -= n
		if e&flagExceptional != 0 {
			return o, d.corrupt("invalid distance code")
		}
		dist := int(e>>16) + int(saved&(1<<(n&63)-1)>>(e>>8&15))
		switch {
		case dist > o-start:
			return o, d.corrupt("distance too far back")
		case length > len(dst)-o:
			return o, ErrTooLong
		}
		next = lt[bitbuf&(1<<litlenRootBits-1)]
		if dist >= 8 && length <= 16 && o+16 <= len(dst) {
			// Most matches (in float chunks, four of five) are this
			// short: two 8-byte moves, each from bytes already written.
			from := o - dist
			*(*[8]byte)(dst[o:]) = *(*[8]byte)(dst[from:])
			*(*[8]byte)(dst[o+8:]) = *(*[8]byte)(dst[from+8:])
		} else {
			lz77.Copy(dst, o, dist, length)
		}
		o += length
	}
}
