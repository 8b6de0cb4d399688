package zstd

import (
	"encoding/binary"
	"errors"
	"sync"
)

// This file, with block.go, literals.go, huff.go, fse.go and bits.go (split
// by role as the standard library's internal/zstd), is the frame decoder
// for the frames DecodeInto decodes itself:
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
