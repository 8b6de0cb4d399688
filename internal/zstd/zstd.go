package zstd

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"

	"github.com/zarrfs/zarrfs/internal/lz77"
)

// This file is the frame decoder for the frames DecodeInto decodes itself:
// one frame, no dictionary, no checksum, into a buffer of the exact
// decoded size, with few enough sequences (decodeFrame). Frames it does
// not handle, and frames it finds invalid, go to klauspost/compress, whose
// verdict stands; so this decoder must only never return wrong bytes for a
// frame it accepts, and never panic.
//
// It writes into dst only, never past len(dst), and allocates nothing
// beyond its pooled state (a 128 KiB literals buffer and fixed tables).

var errZstdFallback = errors.New("zstd: frame for the general decoder")

const (
	zstdMagic        = 0xFD2FB528
	zstdMaxBlockSize = 128 << 10
	// Larger windows go to the general decoder (klauspost/compress, which
	// refuses windows over 512 MiB).
	zstdMaxWindow = 1 << 27
)

// fseEntry is one state of an FSE decoding table.
type fseEntry struct {
	newState uint16
	symbol   uint8
	nbBits   uint8
}

// fseTable is a decoding table of up to 2^9 states.
type fseTable struct {
	log   uint8
	ok    bool
	state [1 << 9]fseEntry
}

// huffTableLog is the width of a Huffman decoding table's index: zstd's
// longest code. Tables for shorter longest codes repeat each entry, so
// that every table is indexed by the next 11 bits.
const huffTableLog = 11

// huffEntry is one entry of a Huffman decoding table: the symbol in the
// low byte, the length of its code in the high one (one load for both).
type huffEntry uint16

func (e huffEntry) symbol() uint8 { return uint8(e) }
func (e huffEntry) nbBits() uint8 { return uint8(e >> 8) }

type zstdState struct {
	lits    [zstdMaxBlockSize + 16]byte // 16 spare bytes for wide copies
	huff    [1 << huffTableLog]huffEntry
	huffOK  bool
	ll      fseTable
	of      fseTable
	ml      fseTable
	weights [256]uint8
	norm    [64]int16
	rep     [3]int
}

var zstdStates = sync.Pool{New: func() any { return new(zstdState) }}

// decodeFrame decodes the zstd frame src into dst when it is a frame of
// the kind this decoder handles (one frame declaring len(dst) bytes or
// none, no dictionary, no checksum) and valid, and reports whether it did.
// On false dst's contents are undefined and DecodeInto decodes src with
// klauspost/compress, which also gives the verdict on invalid frames.
// Frames of many short sequences, which klauspost/compress decodes faster,
// are left to it too.
func decodeFrame(dst, src []byte) bool {
	p, _, err := zstdFrameHeader(len(dst), src)
	return err == nil && zstdLongSequences(src[p:], len(dst)) && zstdDecodeFast(dst, src) == nil
}

// zstdDecodeFast decodes the zstd frame src into dst, which it must fill
// exactly. It returns errZstdFallback (or another error) when the frame
// is not one it decodes; dst's contents are then undefined.
func zstdDecodeFast(dst, src []byte) error {
	p, window, err := zstdFrameHeader(len(dst), src)
	if err != nil {
		return err
	}
	maxBlock := int(min(window, zstdMaxBlockSize))

	s := zstdStates.Get().(*zstdState)
	defer zstdStates.Put(s)
	s.huffOK, s.ll.ok, s.of.ok, s.ml.ok = false, false, false, false
	s.rep = [3]int{1, 4, 8}
	out := 0
	for {
		if len(src) < p+3 {
			return errZstdFallback
		}
		bh := int(src[p]) | int(src[p+1])<<8 | int(src[p+2])<<16
		p += 3
		last, btype, bsize := bh&1 == 1, bh>>1&3, bh>>3
		switch btype {
		case 0: // raw
			if bsize > maxBlock || bsize > len(src)-p || bsize > len(dst)-out {
				return errZstdFallback
			}
			copy(dst[out:out+bsize], src[p:p+bsize])
			out += bsize
			p += bsize
		case 1: // RLE
			if bsize > maxBlock || p >= len(src) || bsize > len(dst)-out {
				return errZstdFallback
			}
			fill(dst[out:out+bsize], src[p])
			out += bsize
			p++
		case 2:
			if bsize > maxBlock || bsize > len(src)-p {
				return errZstdFallback
			}
			n, err := s.block(dst, out, src[p:p+bsize], window, maxBlock)
			if err != nil {
				return err
			}
			out += n
			p += bsize
		default:
			return errZstdFallback
		}
		if last {
			break
		}
	}
	if out != len(dst) || p != len(src) {
		return errZstdFallback
	}
	return nil
}

// zstdFrameHeader parses the header of the frame src, which must declare
// n bytes if it declares a size, and returns the offset of its first block
// and its window size.
func zstdFrameHeader(n int, src []byte) (int, uint64, error) {
	if len(src) < 6 || binary.LittleEndian.Uint32(src) != zstdMagic {
		return 0, 0, errZstdFallback
	}
	fhd := src[4]
	fcsFlag, single, checksum, dictFlag := fhd>>6, fhd>>5&1 == 1, fhd>>2&1 == 1, fhd&3
	if fhd&0x08 != 0 || checksum || dictFlag != 0 {
		return 0, 0, errZstdFallback
	}
	p := 5
	window := uint64(0)
	if !single {
		wd := src[p]
		p++
		exp := uint(wd>>3) + 10
		base := uint64(1) << exp
		window = base + base/8*uint64(wd&7)
	}
	fcsSize := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single {
		fcsSize = 1
	}
	if len(src) < p+fcsSize {
		return 0, 0, errZstdFallback
	}
	if fcsSize > 0 {
		var fcs uint64
		switch fcsSize {
		case 1:
			fcs = uint64(src[p])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(src[p:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(src[p:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(src[p:])
		}
		if fcs != uint64(n) {
			return 0, 0, errZstdFallback
		}
		if single {
			window = fcs
		}
	} else if single {
		return 0, 0, errZstdFallback
	}
	p += fcsSize
	if window > zstdMaxWindow {
		return 0, 0, errZstdFallback
	}
	return p, window, nil
}

// zstdLongSequences reports whether the blocks of a frame, which decodes
// to n bytes, have few enough sequences for zstdDecodeFast to beat
// klauspost/compress (whose sequence loop is assembly), which it does when
// sequences are long, as in runs of the same bytes. It reads block and
// section headers only; the decoder checks everything.
func zstdLongSequences(blocks []byte, n int) bool {
	nseq := 0
	for p := 0; p+3 <= len(blocks); {
		bh := int(blocks[p]) | int(blocks[p+1])<<8 | int(blocks[p+2])<<16
		p += 3
		btype, bsize := bh>>1&3, bh>>3
		if btype == 2 && bsize <= len(blocks)-p {
			nseq += zstdBlockSequences(blocks[p : p+bsize])
		}
		if btype == 1 {
			bsize = 1
		}
		if bh&1 == 1 {
			break
		}
		p += bsize
	}
	return nseq*zstdMinSeqLen <= n
}

// zstdMinSeqLen is the average sequence length (decoded bytes) from which
// zstdDecodeFast is the faster decoder.
const zstdMinSeqLen = 128

// zstdBlockSequences returns the number of sequences a compressed block
// declares, or 0 if its headers are invalid.
func zstdBlockSequences(b []byte) int {
	if len(b) < 1 {
		return 0
	}
	ltype, sf := b[0]&3, b[0]>>2&3
	var n int
	switch {
	case ltype == 0 && len(b) >= 3:
		n = [4]int{1 + int(b[0]>>3), 2 + int(b[0]>>4) + int(b[1])<<4, 1 + int(b[0]>>3), 3 + int(b[0]>>4) + int(b[1])<<4 + int(b[2])<<12}[sf]
	case ltype == 1:
		n = [4]int{2, 3, 2, 4}[sf]
	case len(b) >= 5:
		v := int(binary.LittleEndian.Uint32(b)) | int(b[4])<<32
		n = [4]int{3 + v>>14&0x3FF, 3 + v>>14&0x3FF, 4 + v>>18&0x3FFF, 5 + v>>22&0x3FFFF}[sf]
	default:
		return 0
	}
	if n >= len(b) {
		return 0
	}
	c := int(b[n])
	switch {
	case c < 128:
		return c
	case c < 255:
		if n+1 < len(b) {
			return (c-128)<<8 + int(b[n+1])
		}
	default:
		if n+2 < len(b) {
			return int(b[n+1]) + int(b[n+2])<<8 + 0x7F00
		}
	}
	return 0
}

// fill sets every byte of b to c.
func fill(b []byte, c byte) {
	if len(b) == 0 {
		return
	}
	b[0] = c
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// block decodes one compressed block into dst[out:] and returns the number
// of bytes it wrote.
func (s *zstdState) block(dst []byte, out int, b []byte, window uint64, maxBlock int) (int, error) {
	lits, n, err := s.literals(b)
	if err != nil {
		return 0, err
	}
	b = b[n:]
	if len(b) == 0 {
		return 0, errZstdFallback
	}
	nseq := int(b[0])
	switch {
	case nseq < 128:
		b = b[1:]
	case nseq < 255:
		if len(b) < 2 {
			return 0, errZstdFallback
		}
		nseq = (nseq-128)<<8 + int(b[1])
		b = b[2:]
	default:
		if len(b) < 3 {
			return 0, errZstdFallback
		}
		nseq = int(b[1]) + int(b[2])<<8 + 0x7F00
		b = b[3:]
	}
	start := out
	if nseq == 0 {
		if len(b) != 0 || len(lits) > len(dst)-out || len(lits) > maxBlock {
			return 0, errZstdFallback
		}
		copy(dst[out:], lits)
		return len(lits), nil
	}
	if len(b) < 1 {
		return 0, errZstdFallback
	}
	modes := b[0]
	b = b[1:]
	if modes&3 != 0 {
		return 0, errZstdFallback
	}
	for _, t := range []struct {
		tab  *fseTable
		mode uint8
		kind int
	}{{&s.ll, modes >> 6, 0}, {&s.of, modes >> 4 & 3, 1}, {&s.ml, modes >> 2 & 3, 2}} {
		n, err := s.seqTable(t.tab, t.mode, t.kind, b)
		if err != nil {
			return 0, err
		}
		b = b[n:]
	}

	var br bitReader
	if !br.init(b) {
		return 0, errZstdFallback
	}
	llState := int(br.getBits(s.ll.log))
	ofState := int(br.getBits(s.of.log))
	mlState := int(br.getBits(s.ml.log))
	llT, ofT, mlT := &s.ll.state, &s.of.state, &s.ml.state
	rep := s.rep
	end := min(len(dst), out+maxBlock)
	lp := 0 // literals used
	// lits extended to the bytes after them (spare room in s.lits, or the
	// rest of the block for raw literals), read by wide copies.
	litsWide := lits[:cap(lits)]
	for i := range nseq {
		br.fill()
		lle, ofe, mle := llT[llState&511], ofT[ofState&511], mlT[mlState&511]
		ofCode := ofe.symbol
		ov := 1<<ofCode + int(br.getBits(ofCode))
		mlCode := mle.symbol
		ml := int(mlBase[mlCode]) + int(br.getBits(mlBits[mlCode]))
		br.fill()
		llCode := lle.symbol
		ll := int(llBase[llCode]) + int(br.getBits(llBits[llCode]))

		var off int
		if ov > 3 {
			off = ov - 3
			rep[2], rep[1], rep[0] = rep[1], rep[0], off
		} else {
			r := ov
			if ll == 0 {
				r++
			}
			switch r {
			case 1:
				off = rep[0]
			case 2:
				off = rep[1]
				rep[1], rep[0] = rep[0], off
			case 3:
				off = rep[2]
				rep[2], rep[1], rep[0] = rep[1], rep[0], off
			default:
				off = rep[0] - 1
				rep[2], rep[1], rep[0] = rep[1], rep[0], off
			}
		}

		if i+1 < nseq {
			llState = int(lle.newState) + int(br.getBits(lle.nbBits))
			mlState = int(mle.newState) + int(br.getBits(mle.nbBits))
			ofState = int(ofe.newState) + int(br.getBits(ofe.nbBits))
		}

		// Execute: ll literals, then ml bytes from off back.
		if ll > len(lits)-lp || ll+ml > end-out || off <= 0 || off > out+ll || uint64(off) > window {
			return 0, errZstdFallback
		}
		// Short copies move 16 bytes when dst (and the literals) have
		// room past them: bytes beyond the copy are written again later.
		if ll <= 16 && out+16 <= len(dst) && lp+16 <= len(litsWide) {
			*(*[16]byte)(dst[out:]) = *(*[16]byte)(litsWide[lp:])
		} else {
			copy(dst[out:out+ll], lits[lp:lp+ll])
		}
		lp += ll
		out += ll
		lz77.Copy(dst, out, off, ml)
		out += ml
	}
	if !br.finished() {
		return 0, errZstdFallback
	}
	rest := len(lits) - lp
	if rest > end-out {
		return 0, errZstdFallback
	}
	copy(dst[out:], lits[lp:])
	out += rest
	s.rep = rep
	return out - start, nil
}

// literals decodes the literals section at the start of b and returns the
// literals (in b itself when stored raw) and the section's length.
func (s *zstdState) literals(b []byte) ([]byte, int, error) {
	if len(b) == 0 {
		return nil, 0, errZstdFallback
	}
	ltype, sf := b[0]&3, b[0]>>2&3
	if ltype < 2 {
		var size, hdr int
		switch sf {
		case 0, 2:
			size, hdr = int(b[0]>>3), 1
		case 1:
			if len(b) < 2 {
				return nil, 0, errZstdFallback
			}
			size, hdr = int(b[0]>>4)+int(b[1])<<4, 2
		case 3:
			if len(b) < 3 {
				return nil, 0, errZstdFallback
			}
			size, hdr = int(b[0]>>4)+int(b[1])<<4+int(b[2])<<12, 3
		}
		if size > zstdMaxBlockSize {
			return nil, 0, errZstdFallback
		}
		if ltype == 0 {
			if size > len(b)-hdr {
				return nil, 0, errZstdFallback
			}
			return b[hdr : hdr+size], hdr + size, nil
		}
		if len(b) < hdr+1 {
			return nil, 0, errZstdFallback
		}
		lits := s.lits[:size]
		fill(lits, b[hdr])
		return lits, hdr + 1, nil
	}
	var regen, comp, hdr int
	streams := 4
	switch sf {
	case 0, 1:
		if len(b) < 3 {
			return nil, 0, errZstdFallback
		}
		v := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		regen, comp, hdr = v>>4&0x3FF, v>>14&0x3FF, 3
		if sf == 0 {
			streams = 1
		}
	case 2:
		if len(b) < 4 {
			return nil, 0, errZstdFallback
		}
		v := int(binary.LittleEndian.Uint32(b))
		regen, comp, hdr = v>>4&0x3FFF, v>>18&0x3FFF, 4
	case 3:
		if len(b) < 5 {
			return nil, 0, errZstdFallback
		}
		v := int(binary.LittleEndian.Uint32(b)) | int(b[4])<<32
		regen, comp, hdr = v>>4&0x3FFFF, v>>22&0x3FFFF, 5
	}
	if regen > zstdMaxBlockSize || comp > len(b)-hdr {
		return nil, 0, errZstdFallback
	}
	data := b[hdr : hdr+comp]
	if ltype == 2 {
		n, err := s.readHuffman(data)
		if err != nil {
			return nil, 0, err
		}
		data = data[n:]
	} else if !s.huffOK {
		return nil, 0, errZstdFallback
	}
	lits := s.lits[:regen]
	if streams == 1 {
		if !s.huffStream(lits, data) {
			return nil, 0, errZstdFallback
		}
		return lits, hdr + comp, nil
	}
	q := (regen + 3) / 4
	if len(data) < 6 || 3*q > regen {
		return nil, 0, errZstdFallback
	}
	s1, s2, s3 := int(binary.LittleEndian.Uint16(data)), int(binary.LittleEndian.Uint16(data[2:])), int(binary.LittleEndian.Uint16(data[4:]))
	data = data[6:]
	if s1+s2+s3 > len(data) {
		return nil, 0, errZstdFallback
	}
	if !s.huff4(lits, q, data[:s1], data[s1:s1+s2], data[s1+s2:s1+s2+s3], data[s1+s2+s3:]) {
		return nil, 0, errZstdFallback
	}
	return lits, hdr + comp, nil
}

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

// seqTable sets up the decoding table of one sequence symbol type (kind 0:
// literal lengths, 1: offsets, 2: match lengths) for mode and returns the
// bytes of b it read.
func (s *zstdState) seqTable(t *fseTable, mode uint8, kind int, b []byte) (int, error) {
	maxLog, maxSym := []int{9, 8, 9}[kind], []int{35, 31, 52}[kind]
	switch mode {
	case 0:
		*t = *predefined[kind]()
		return 0, nil
	case 1:
		if len(b) < 1 || int(b[0]) > maxSym {
			return 0, errZstdFallback
		}
		t.log, t.ok = 0, true
		t.state[0] = fseEntry{symbol: b[0]}
		return 1, nil
	case 2:
		return s.readFSE(t, b, maxLog, maxSym)
	default:
		if !t.ok {
			return 0, errZstdFallback
		}
		return 0, nil
	}
}

// readFSE reads an FSE table description from b into t and returns its
// length.
func (s *zstdState) readFSE(t *fseTable, b []byte, maxLog, maxSym int) (int, error) {
	norm := s.norm[:]
	pos := 0 // in bits
	get := func(n int) int {
		// n ≤ 10 bits from pos; bits past the end read as zeros (the
		// caller checks the end).
		v := 0
		for k := range 3 {
			if i := pos>>3 + k; i < len(b) {
				v |= int(b[i]) << (8 * k)
			}
		}
		return v >> (pos & 7) & (1<<n - 1)
	}
	log := get(4) + 5
	pos += 4
	if log > maxLog {
		return 0, errZstdFallback
	}
	remaining := 1<<log + 1
	threshold := 1 << log
	nbBits := log + 1
	sym := 0
	prev0 := false
	for remaining > 1 && sym <= maxSym {
		if prev0 {
			// Runs of symbols with a count of zero, in 2-bit repeats.
			for {
				r := get(2)
				pos += 2
				for range r {
					if sym > maxSym {
						return 0, errZstdFallback
					}
					norm[sym] = 0
					sym++
				}
				if r != 3 {
					break
				}
				if pos > 8*len(b) {
					return 0, errZstdFallback
				}
			}
		}
		max := 2*threshold - 1 - remaining
		var count int
		if v := get(nbBits - 1); v < max {
			count = v
			pos += nbBits - 1
		} else {
			count = get(nbBits)
			if count >= threshold {
				count -= max
			}
			pos += nbBits
		}
		count--
		if count < 0 {
			remaining--
		} else {
			remaining -= count
		}
		if sym > maxSym || pos > 8*len(b) || remaining < 1 {
			return 0, errZstdFallback
		}
		norm[sym] = int16(count)
		sym++
		prev0 = count == 0
		for remaining < threshold && threshold > 1 {
			nbBits--
			threshold >>= 1
		}
	}
	if remaining != 1 || pos > 8*len(b) {
		return 0, errZstdFallback
	}
	if !buildFSE(t, norm[:sym], log) {
		return 0, errZstdFallback
	}
	return (pos + 7) / 8, nil
}

// buildFSE builds the decoding table of the normalized counts norm (-1:
// less than one) with accuracy log.
func buildFSE(t *fseTable, norm []int16, log int) bool {
	size := 1 << log
	high := size - 1
	var next [256]uint16
	for s, c := range norm {
		if c == -1 {
			if high < 0 {
				return false
			}
			t.state[high].symbol = uint8(s)
			high--
			next[s] = 1
		} else {
			next[s] = uint16(max(c, 0))
		}
	}
	mask, step, pos := size-1, size>>1+size>>3+3, 0
	for s, c := range norm {
		for range max(c, 0) {
			if pos > high {
				return false
			}
			t.state[pos].symbol = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	if pos != 0 {
		return false
	}
	for u := range size {
		e := &t.state[u]
		ns := next[e.symbol]
		next[e.symbol]++
		nb := log - (bits.Len16(ns) - 1)
		e.nbBits = uint8(nb)
		e.newState = uint16(int(ns)<<nb - size)
	}
	t.log, t.ok = uint8(log), true
	return true
}

// Literal and match length codes: baseline and extra bits.
var (
	llBase = [36]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 32768, 65536}
	llBits = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16}
	mlBase = [53]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
		19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
		35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
		4099, 8195, 16387, 32771, 65539}
	mlBits = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
		12, 13, 14, 15, 16}
)

// The predefined distributions' tables, built once.
var predefined = [3]func() *fseTable{
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
			2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
			-1, -1, -1, -1}, 6)
	}),
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}, 5)
	}),
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
			-1, -1, -1, -1, -1}, 6)
	}),
}

func mustBuild(norm []int16, log int) *fseTable {
	t := new(fseTable)
	if !buildFSE(t, norm, log) {
		panic("blosc: zstd predefined table")
	}
	return t
}

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
