package zstd

import (
	"encoding/binary"
	"math/bits"
)

// Huffman tables of the literals and their decoding, one stream or four
// (RFC 8878 §4.2); the weights may themselves be FSE-coded.

// huffTableLog is the width of a Huffman decoding table's index: zstd's
// longest code. Tables for shorter longest codes repeat each entry, so
// that every table is indexed by the next 11 bits.
const huffTableLog = 11

// huffEntry is one entry of a Huffman decoding table: the symbol in the
// low byte, the length of its code in the high one (one load for both).
type huffEntry uint16

func (e huffEntry) symbol() uint8 { return uint8(e) }

func (e huffEntry) nbBits() uint8 { return uint8(e >> 8) }

// huff4 decodes the four Huffman streams in0…in3 into out, q bytes each
// but the last, which takes the rest. The streams are independent:
// huff4Prefix decodes them side by side while all have 8 bytes left to
// read, four chains of table lookups that the CPU runs at once (one
// stream alone waits for each lookup before the next), and huffRest
// decodes the rest of each and checks its end.
func (s *zstdState) huff4(out []byte, q int, in0, in1, in2, in3 []byte) bool {
	var br [4]bitReader
	if !br[0].init(in0) || !br[1].init(in1) || !br[2].init(in2) || !br[3].init(in3) {
		return false
	}
	i := huff4Prefix(&s.huff, out, q, &br)
	return s.huffRest(out[i:q], br[0]) && s.huffRest(out[q+i:2*q], br[1]) &&
		s.huffRest(out[2*q+i:3*q], br[2]) && s.huffRest(out[3*q+i:], br[3])
}

// huff4Go is huff4Prefix in Go: it decodes the first i symbols of each of
// the four streams br (fresh from init) into out, q bytes apart, and
// returns i, at most len(out)-3q; br is left where each stream stands.
func huff4Go(t *[1 << huffTableLog]huffEntry, out []byte, q int, br *[4]bitReader) int {
	b0, b1, b2, b3 := &br[0], &br[1], &br[2], &br[3]
	o0, o1, o2, o3 := out[:q], out[q:2*q], out[2*q:3*q], out[3*q:]
	// v holds a stream's unread bits at the top, c how many of the 8 bytes
	// at in[off:] are read. Four symbols take at most 44 bits, so a
	// reload after every four leaves enough.
	v0, v1, v2, v3 := b0.value<<(b0.bitsRead&63), b1.value<<(b1.bitsRead&63), b2.value<<(b2.bitsRead&63), b3.value<<(b3.bitsRead&63)
	c0, c1, c2, c3 := b0.bitsRead, b1.bitsRead, b2.bitsRead, b3.bitsRead
	i := 0
	for ; i+4 <= len(o3) && b0.off >= 8 && b1.off >= 8 && b2.off >= 8 && b3.off >= 8; i += 4 {
		d0, d1, d2, d3 := o0[i:i+4:i+4], o1[i:i+4:i+4], o2[i:i+4:i+4], o3[i:i+4:i+4]
		for k := range 4 {
			e0 := t[v0>>(64-huffTableLog)]
			e1 := t[v1>>(64-huffTableLog)]
			e2 := t[v2>>(64-huffTableLog)]
			e3 := t[v3>>(64-huffTableLog)]
			d0[k], d1[k], d2[k], d3[k] = e0.symbol(), e1.symbol(), e2.symbol(), e3.symbol()
			// "& 63" lets the compiler drop its handling of shifts by 64
			// or more, which cannot happen.
			v0 <<= e0.nbBits() & 63
			v1 <<= e1.nbBits() & 63
			v2 <<= e2.nbBits() & 63
			v3 <<= e3.nbBits() & 63
			c0 += uint(e0.nbBits())
			c1 += uint(e1.nbBits())
			c2 += uint(e2.nbBits())
			c3 += uint(e3.nbBits())
		}
		b0.off -= int(c0 >> 3)
		b1.off -= int(c1 >> 3)
		b2.off -= int(c2 >> 3)
		b3.off -= int(c3 >> 3)
		c0, c1, c2, c3 = c0&7, c1&7, c2&7, c3&7
		v0 = binary.LittleEndian.Uint64(b0.in[b0.off:]) << c0
		v1 = binary.LittleEndian.Uint64(b1.in[b1.off:]) << c1
		v2 = binary.LittleEndian.Uint64(b2.in[b2.off:]) << c2
		v3 = binary.LittleEndian.Uint64(b3.in[b3.off:]) << c3
	}
	if i > 0 {
		b0.value, b0.bitsRead = binary.LittleEndian.Uint64(b0.in[b0.off:]), c0
		b1.value, b1.bitsRead = binary.LittleEndian.Uint64(b1.in[b1.off:]), c1
		b2.value, b2.bitsRead = binary.LittleEndian.Uint64(b2.in[b2.off:]), c2
		b3.value, b3.bitsRead = binary.LittleEndian.Uint64(b3.in[b3.off:]), c3
	}
	return i
}

// huffStream decodes one Huffman stream into out, which it must fill
// exactly.
func (s *zstdState) huffStream(out, in []byte) bool {
	var br bitReader
	return br.init(in) && s.huffRest(out, br)
}

// huffRest decodes the rest of a Huffman stream, from br on, into out,
// which it must fill exactly.
func (s *zstdState) huffRest(out []byte, br bitReader) bool {
	t := &s.huff
	i := 0
	for ; i+4 <= len(out); i += 4 {
		br.fill()
		// 4 codes of at most 11 bits fit in the 56 bits fill leaves;
		// past the start, v reads zeros and finished fails.
		v := br.value << br.bitsRead
		for k := range 4 {
			e := t[v>>(64-huffTableLog)]
			out[i+k] = e.symbol()
			v <<= e.nbBits() & 63
			br.bitsRead += uint(e.nbBits())
		}
	}
	for ; i < len(out); i++ {
		br.fill()
		e := t[br.peek(huffTableLog)]
		out[i] = e.symbol()
		br.bitsRead += uint(e.nbBits())
	}
	return br.finished()
}

// readHuffman reads a Huffman tree description and builds s.huff. It
// returns the description's length.
func (s *zstdState) readHuffman(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errZstdFallback
	}
	h := int(b[0])
	var nw, n int
	w := s.weights[:]
	if h >= 128 {
		nw = h - 127
		n = 1 + (nw+1)/2
		if n > len(b) {
			return 0, errZstdFallback
		}
		for i := range nw {
			v := b[1+i/2]
			if i%2 == 0 {
				w[i] = v >> 4
			} else {
				w[i] = v & 15
			}
		}
	} else {
		n = 1 + h
		if n > len(b) {
			return 0, errZstdFallback
		}
		var err error
		if nw, err = s.fseWeights(b[1:n]); err != nil {
			return 0, err
		}
	}
	if nw == 0 || nw > 255 {
		return 0, errZstdFallback
	}
	// The weights' sum (2^(w-1) each) and the implied last weight.
	sum := 0
	for _, x := range w[:nw] {
		if x > 11 {
			return 0, errZstdFallback
		}
		if x > 0 {
			sum += 1 << (x - 1)
		}
	}
	if sum == 0 {
		return 0, errZstdFallback
	}
	maxBits := bits.Len(uint(sum))
	rest := 1<<maxBits - sum
	if rest&(rest-1) != 0 || maxBits > huffTableLog {
		return 0, errZstdFallback
	}
	w[nw] = uint8(bits.Len(uint(rest)))
	nsym := nw + 1
	// A prefix code has an even number, at least 2, of longest codes.
	ones := 0
	for _, x := range w[:nsym] {
		if x == 1 {
			ones++
		}
	}
	if ones < 2 || ones%2 != 0 {
		return 0, errZstdFallback
	}
	// Symbols by weight, then by value, take consecutive runs of 2^(w-1)
	// entries from the start of the table.
	var rankStart [13]int
	for _, x := range w[:nsym] {
		if x > 0 {
			rankStart[x] += 1 << (x - 1)
		}
	}
	pos := 0
	for x := 1; x <= maxBits; x++ {
		c := rankStart[x]
		rankStart[x] = pos
		pos += c
	}
	scale := huffTableLog - maxBits
	for sym, x := range w[:nsym] {
		if x == 0 {
			continue
		}
		size := 1 << (x - 1)
		e := huffEntry(sym | (maxBits+1-int(x))<<8)
		run := s.huff[rankStart[x]<<scale : (rankStart[x]+size)<<scale]
		for i := range run {
			run[i] = e
		}
		rankStart[x] += size
	}
	s.huffOK = true
	return n, nil
}

// fseWeights decodes FSE-compressed Huffman weights into s.weights and
// returns their number.
func (s *zstdState) fseWeights(b []byte) (int, error) {
	var t fseTable
	n, err := s.readFSE(&t, b, 6, 12)
	if err != nil {
		return 0, err
	}
	var br bitReader
	if !br.init(b[n:]) {
		return 0, errZstdFallback
	}
	s1 := int(br.getBits(t.log))
	s2 := int(br.getBits(t.log))
	// Two interleaved states, until the stream is read and the next state
	// would need more bits; stricter about the end than the reference
	// decoder, as klauspost/compress is (whose verdict must stand).
	w := s.weights[:]
	nw := 0
	for {
		if nw > 253 {
			return 0, errZstdFallback
		}
		if br.finished() && t.state[s1].nbBits > 0 {
			w[nw], w[nw+1] = t.state[s1].symbol, t.state[s2].symbol
			nw += 2
			break
		}
		br.fill()
		e := t.state[s1]
		w[nw] = e.symbol
		nw++
		s1 = int(e.newState) + int(br.getBits(e.nbBits))
		if br.finished() && t.state[s2].nbBits > 0 {
			w[nw], w[nw+1] = t.state[s2].symbol, t.state[s1].symbol
			nw += 2
			break
		}
		e = t.state[s2]
		w[nw] = e.symbol
		nw++
		s2 = int(e.newState) + int(br.getBits(e.nbBits))
		if nw >= 255 {
			return 0, errZstdFallback
		}
	}
	if br.overflow() || nw > 255 {
		return 0, errZstdFallback
	}
	return nw, nil
}
