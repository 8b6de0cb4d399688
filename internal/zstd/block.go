package zstd

import (
	"encoding/binary"

	"github.com/zarrfs/zarrfs/internal/lz77"
)

// Compressed blocks: literals, then sequences executed into dst
// (RFC 8878 §3.1.1.3).

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
