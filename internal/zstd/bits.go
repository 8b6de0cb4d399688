package zstd

import (
	"encoding/binary"
	"math/bits"
)

// The backward bit reader that FSE and Huffman streams are read with.

// bitReader reads a zstd backward bit stream: from the last byte's highest
// bit under the end marker towards the first byte's lowest. value holds
// the 8 bytes at in[off:off+8], of which the top bitsRead bits are read.
// Bits before the start read as zeros (overflow tells).
type bitReader struct {
	in       []byte
	off      int
	value    uint64
	bitsRead uint
}

func (br *bitReader) init(in []byte) bool {
	if len(in) == 0 || in[len(in)-1] == 0 {
		return false
	}
	if len(in) >= 8 {
		br.in, br.off = in, len(in)-8
		br.value = binary.LittleEndian.Uint64(in[br.off:])
		br.bitsRead = 0
	} else {
		var buf [8]byte
		copy(buf[:], in)
		br.in, br.off = nil, 0
		br.value = binary.LittleEndian.Uint64(buf[:])
		br.bitsRead = uint(8 * (8 - len(in)))
	}
	br.bitsRead += uint(bits.LeadingZeros8(in[len(in)-1])) + 1
	return true
}

// fill loads bytes so that at least 56 bits are unread, or all there are.
func (br *bitReader) fill() {
	n := int(br.bitsRead >> 3)
	if n > br.off {
		n = br.off
	}
	if n == 0 {
		return
	}
	br.off -= n
	br.value = binary.LittleEndian.Uint64(br.in[br.off:])
	br.bitsRead -= uint(8 * n)
}

// getBits reads n ≤ 56 bits (after fill).
func (br *bitReader) getBits(n uint8) uint64 {
	v := br.peek(n)
	br.bitsRead += uint(n)
	return v
}

// peek returns the next n ≤ 56 bits (after fill): zero when n is zero or
// the stream is read (Go's shifts of 64 or more bits yield zero).
func (br *bitReader) peek(n uint8) uint64 {
	return br.value << br.bitsRead >> (64 - uint(n))
}

func (br *bitReader) overflow() bool { return br.off == 0 && br.bitsRead > 64 }

func (br *bitReader) finished() bool { return br.off == 0 && br.bitsRead == 64 }
