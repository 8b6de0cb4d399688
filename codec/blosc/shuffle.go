package blosc

import (
	"encoding/binary"
	"strconv"
)

// Shuffle is the filter applied to each block before compression.
type Shuffle int

// The shuffle filters, numbered as c-blosc numbers them.
const (
	NoShuffle   Shuffle = 0
	ByteShuffle Shuffle = 1 // byte j of every element together
	BitShuffle  Shuffle = 2 // bit b of byte j of every element together
)

// String returns the Zarr v3 name of s.
func (s Shuffle) String() string {
	switch s {
	case NoShuffle:
		return "noshuffle"
	case ByteShuffle:
		return "shuffle"
	case BitShuffle:
		return "bitshuffle"
	}
	return "shuffle(" + strconv.Itoa(int(s)) + ")"
}

// The fast paths for typesizes 2, 4 and 8 move 8 elements at a time: one
// 64-bit word from each stream, transposed as a matrix of bytes in
// registers (SWAR): each step exchanges the bytes a mask selects in one
// word with the ones a shift lower in another.
const (
	mask8  = 0x00FF00FF00FF00FF
	mask16 = 0x0000FFFF0000FFFF
	mask32 = 0x00000000FFFFFFFF
)

// swap exchanges the bytes mask m selects in hi with those s bits lower
// in lo (a delta swap).
func swap(lo, hi uint64, s uint, m uint64) (uint64, uint64) {
	t := ((lo >> s) ^ hi) & m
	return lo ^ t<<s, hi ^ t
}

// transpose4 turns four stream words (byte k of word j: byte j of element
// k) into words holding elements j (low half) and j+4 (high half), and back.
func transpose4(r0, r1, r2, r3 uint64) (uint64, uint64, uint64, uint64) {
	r0, r1 = swap(r0, r1, 8, mask8)
	r2, r3 = swap(r2, r3, 8, mask8)
	r0, r2 = swap(r0, r2, 16, mask16)
	r1, r3 = swap(r1, r3, 16, mask16)
	return r0, r1, r2, r3
}

// transpose8 transposes an 8×8 byte matrix held in eight words.
func transpose8(r0, r1, r2, r3, r4, r5, r6, r7 uint64) (uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64) {
	r0, r1, r2, r3 = transpose4(r0, r1, r2, r3)
	r4, r5, r6, r7 = transpose4(r4, r5, r6, r7)
	r0, r4 = swap(r0, r4, 32, mask32)
	r1, r5 = swap(r1, r5, 32, mask32)
	r2, r6 = swap(r2, r6, 32, mask32)
	r3, r7 = swap(r3, r7, 32, mask32)
	return r0, r1, r2, r3, r4, r5, r6, r7
}

// shuffle writes the byte-shuffled src to dst (same length): the n =
// len/ts elements' byte j go to dst[j*n:(j+1)*n]; the len%ts trailing bytes
// are copied as they are.
func shuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	fast := 0 // elements done by a fast path
	le := binary.LittleEndian
	switch ts {
	case 4:
		for ; fast+8 <= n; fast += 8 {
			in := src[4*fast : 4*fast+32]
			r0, r1, r2, r3 := transpose4(
				uint64(le.Uint32(in[0:]))|uint64(le.Uint32(in[16:]))<<32,
				uint64(le.Uint32(in[4:]))|uint64(le.Uint32(in[20:]))<<32,
				uint64(le.Uint32(in[8:]))|uint64(le.Uint32(in[24:]))<<32,
				uint64(le.Uint32(in[12:]))|uint64(le.Uint32(in[28:]))<<32)
			le.PutUint64(dst[fast:], r0)
			le.PutUint64(dst[n+fast:], r1)
			le.PutUint64(dst[2*n+fast:], r2)
			le.PutUint64(dst[3*n+fast:], r3)
		}
	case 8:
		for ; fast+8 <= n; fast += 8 {
			in := src[8*fast : 8*fast+64]
			r0, r1, r2, r3, r4, r5, r6, r7 := transpose8(le.Uint64(in[0:]), le.Uint64(in[8:]), le.Uint64(in[16:]), le.Uint64(in[24:]),
				le.Uint64(in[32:]), le.Uint64(in[40:]), le.Uint64(in[48:]), le.Uint64(in[56:]))
			le.PutUint64(dst[fast:], r0)
			le.PutUint64(dst[n+fast:], r1)
			le.PutUint64(dst[2*n+fast:], r2)
			le.PutUint64(dst[3*n+fast:], r3)
			le.PutUint64(dst[4*n+fast:], r4)
			le.PutUint64(dst[5*n+fast:], r5)
			le.PutUint64(dst[6*n+fast:], r6)
			le.PutUint64(dst[7*n+fast:], r7)
		}
	}
	for j := range ts {
		row := dst[j*n : (j+1)*n]
		for i := fast; i < n; i++ {
			row[i] = src[i*ts+j]
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// unshuffle undoes shuffle, with vector instructions where the
// architecture has them (unshuffleSIMD) and portable code for the rest.
func unshuffle(dst, src []byte, ts int) {
	unshuffleFrom(dst, src, ts, unshuffleSIMD(dst, src, ts))
}

// unshuffleStreams interleaves the ts = len(streams) streams of n bytes
// each into dst[:ts*n]: element i's byte j is streams[j][i]. It is
// unshuffle for streams that are not contiguous (blosc's stored streams
// stay in the chunk); portable code does what the vector kernels do not.
func unshuffleStreams(dst []byte, streams [][]byte, n int) {
	ts := len(streams)
	fast := unshuffleStreamsSIMD(dst, streams, n)
	for j, s := range streams {
		s = s[:n]
		for i := fast; i < n; i++ {
			dst[i*ts+j] = s[i]
		}
	}
}

// unshuffleFrom undoes shuffle for the elements from fast (a multiple of
// 8) on: the ones before are done already.
func unshuffleFrom(dst, src []byte, ts, fast int) {
	n := len(src) / ts
	le := binary.LittleEndian
	switch ts {
	case 2:
		s0, s1 := src[:n], src[n:2*n]
		for ; fast+8 <= n; fast += 8 {
			// Two steps of the transpose leave elements 0,1,4,5 in r0
			// and 2,3,6,7 in r1.
			r0, r1 := le.Uint64(s0[fast:fast+8]), le.Uint64(s1[fast:fast+8])
			t := ((r0 >> 8) ^ r1) & mask8
			r1 ^= t
			r0 ^= t << 8
			t = ((r0 >> 16) ^ r1) & mask16
			r1 ^= t
			r0 ^= t << 16
			out := dst[2*fast : 2*fast+16]
			le.PutUint64(out, r0&mask32|r1<<32)
			le.PutUint64(out[8:], r0>>32|r1&^mask32)
		}
	case 4:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for ; fast+8 <= n; fast += 8 {
			r0, r1, r2, r3 := transpose4(le.Uint64(s0[fast:fast+8]), le.Uint64(s1[fast:fast+8]), le.Uint64(s2[fast:fast+8]), le.Uint64(s3[fast:fast+8]))
			out := dst[4*fast : 4*fast+32]
			le.PutUint64(out[0:], r0&mask32|r1<<32)
			le.PutUint64(out[8:], r2&mask32|r3<<32)
			le.PutUint64(out[16:], r0>>32|r1&^mask32)
			le.PutUint64(out[24:], r2>>32|r3&^mask32)
		}
	case 8:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		s4, s5, s6, s7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		for ; fast+8 <= n; fast += 8 {
			r0, r1, r2, r3, r4, r5, r6, r7 := transpose8(le.Uint64(s0[fast:fast+8]), le.Uint64(s1[fast:fast+8]), le.Uint64(s2[fast:fast+8]), le.Uint64(s3[fast:fast+8]),
				le.Uint64(s4[fast:fast+8]), le.Uint64(s5[fast:fast+8]), le.Uint64(s6[fast:fast+8]), le.Uint64(s7[fast:fast+8]))
			out := dst[8*fast : 8*fast+64]
			le.PutUint64(out[0:], r0)
			le.PutUint64(out[8:], r1)
			le.PutUint64(out[16:], r2)
			le.PutUint64(out[24:], r3)
			le.PutUint64(out[32:], r4)
			le.PutUint64(out[40:], r5)
			le.PutUint64(out[48:], r6)
			le.PutUint64(out[56:], r7)
		}
	}
	for j := range ts {
		row := src[j*n : (j+1)*n]
		for i := fast; i < n; i++ {
			dst[i*ts+j] = row[i]
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// transpose8x8 transposes the 8×8 bit matrix x: bit b of byte i becomes bit
// i of byte b (bitshuffle's TRANS_BIT_8X8). It is its own inverse.
func transpose8x8(x uint64) uint64 {
	t := (x ^ (x >> 7)) & 0x00AA00AA00AA00AA
	x = x ^ t ^ (t << 7)
	t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCC
	x = x ^ t ^ (t << 14)
	t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0
	return x ^ t ^ (t << 28)
}

// bitshuffle writes the bit-shuffled src to dst as c-blosc 1.x does: with
// n = len/ts elements, when n is a multiple of 8 row r = 8*j+b of dst
// (n/8 bytes) holds bit b of byte j of every element, element 8k+m at bit
// m of byte k, and the trailing len%ts bytes are copied; otherwise the
// whole block is copied unchanged.
func bitshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	rowLen := n / 8
	for k := range rowLen {
		elems := src[8*k*ts : 8*(k+1)*ts]
		for j := range ts {
			scatter8(dst[8*j*rowLen+k:], rowLen, transpose8x8(gather8(elems[j:], ts)))
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// bitunshuffle undoes bitshuffle.
func bitunshuffle(dst, src []byte, ts int) { bitunshuffleBuf(dst, src, nil, ts) }

// bitunshuffleBuf undoes bitshuffle, using buf (len(src) bytes, allocated
// when shorter) when the architecture has vector kernels: each byte plane
// is unshuffled into buf, then buf is byte-unshuffled into dst.
func bitunshuffleBuf(dst, src, buf []byte, ts int) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	rowLen := n / 8
	if ts == 1 {
		bitunshufflePlane(dst, src, rowLen, bitunshufflePlaneSIMD(dst, src, rowLen))
		copy(dst[n:], src[n:])
		return
	}
	if haveSIMD && rowLen >= 16 {
		if len(buf) < n*ts {
			buf = make([]byte, n*ts)
		}
		for j := range ts {
			plane, out := src[j*n:(j+1)*n], buf[j*n:(j+1)*n]
			bitunshufflePlane(out, plane, rowLen, bitunshufflePlaneSIMD(out, plane, rowLen))
		}
		unshuffle(dst[:n*ts], buf[:n*ts], ts)
		copy(dst[n*ts:], src[n*ts:])
		return
	}
	for j := range ts {
		rows := src[8*j*rowLen : 8*(j+1)*rowLen]
		for k := range rowLen {
			scatter8(dst[8*k*ts+j:], ts, transpose8x8(gather8(rows[k:], rowLen)))
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// bitunshufflePlane undoes the bit shuffle of one byte plane, src's 8 rows
// of rowLen bytes, into dst[8*from:8*rowLen].
func bitunshufflePlane(dst, src []byte, rowLen, from int) {
	for k := from; k < rowLen; k++ {
		binary.LittleEndian.PutUint64(dst[8*k:], transpose8x8(gather8(src[k:], rowLen)))
	}
}

// gather8 returns the bytes b[0], b[stride], …, b[7*stride] as a
// little-endian word.
func gather8(b []byte, stride int) uint64 {
	var x uint64
	for i := range 8 {
		x |= uint64(b[i*stride]) << (8 * i)
	}
	return x
}

// scatter8 stores the bytes of x, low first, at b[0], b[stride], …,
// b[7*stride].
func scatter8(b []byte, stride int, x uint64) {
	for i := range 8 {
		b[i*stride] = byte(x >> (8 * i))
	}
}
