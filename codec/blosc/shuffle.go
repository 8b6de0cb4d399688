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

// shuffle writes the byte-shuffled src to dst (same length): the n =
// len/ts elements' byte j go to dst[j*n:(j+1)*n]; the len%ts trailing bytes
// are copied as they are.
func shuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	switch ts {
	case 2:
		d0, d1 := dst[:n], dst[n:2*n]
		for i := range d0 {
			v := binary.LittleEndian.Uint16(src[2*i:])
			d0[i], d1[i] = byte(v), byte(v>>8)
		}
	case 4:
		d0, d1, d2, d3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
		for i := range d0 {
			v := binary.LittleEndian.Uint32(src[4*i:])
			d0[i], d1[i], d2[i], d3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	case 8:
		d := [8][]byte{}
		for j := range d {
			d[j] = dst[j*n : (j+1)*n]
		}
		for i := range n {
			v := binary.LittleEndian.Uint64(src[8*i:])
			for j := range d {
				d[j][i] = byte(v >> (8 * j))
			}
		}
	default:
		for j := range ts {
			row := dst[j*n : (j+1)*n]
			for i := range row {
				row[i] = src[i*ts+j]
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// unshuffle undoes shuffle.
func unshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	switch ts {
	case 2:
		s0, s1 := src[:n], src[n:2*n]
		for i := range s0 {
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(s0[i])|uint16(s1[i])<<8)
		}
	case 4:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for i := range s0 {
			binary.LittleEndian.PutUint32(dst[4*i:],
				uint32(s0[i])|uint32(s1[i])<<8|uint32(s2[i])<<16|uint32(s3[i])<<24)
		}
	case 8:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		s4, s5, s6, s7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		for i := range s0 {
			binary.LittleEndian.PutUint64(dst[8*i:],
				uint64(s0[i])|uint64(s1[i])<<8|uint64(s2[i])<<16|uint64(s3[i])<<24|
					uint64(s4[i])<<32|uint64(s5[i])<<40|uint64(s6[i])<<48|uint64(s7[i])<<56)
		}
	default:
		for j := range ts {
			row := src[j*n : (j+1)*n]
			for i, b := range row {
				dst[i*ts+j] = b
			}
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
			var x uint64
			for m := range 8 {
				x |= uint64(elems[m*ts+j]) << (8 * m)
			}
			x = transpose8x8(x)
			for b := range 8 {
				dst[(8*j+b)*rowLen+k] = byte(x >> (8 * b))
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// bitunshuffle undoes bitshuffle.
func bitunshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	rowLen := n / 8
	if ts == 1 {
		rows := [8][]byte{}
		for b := range rows {
			rows[b] = src[b*rowLen : (b+1)*rowLen]
		}
		for k := range rowLen {
			x := uint64(rows[0][k]) | uint64(rows[1][k])<<8 | uint64(rows[2][k])<<16 | uint64(rows[3][k])<<24 |
				uint64(rows[4][k])<<32 | uint64(rows[5][k])<<40 | uint64(rows[6][k])<<48 | uint64(rows[7][k])<<56
			binary.LittleEndian.PutUint64(dst[8*k:], transpose8x8(x))
		}
		copy(dst[n:], src[n:])
		return
	}
	for j := range ts {
		rows := src[8*j*rowLen : 8*(j+1)*rowLen]
		for k := range rowLen {
			var x uint64
			for b := range 8 {
				x |= uint64(rows[b*rowLen+k]) << (8 * b)
			}
			if x == 0 {
				for m := range 8 {
					dst[(8*k+m)*ts+j] = 0
				}
				continue
			}
			x = transpose8x8(x)
			for m := range 8 {
				dst[(8*k+m)*ts+j] = byte(x >> (8 * m))
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}
