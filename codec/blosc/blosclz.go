package blosc

import (
	"encoding/binary"
	"fmt"

	"github.com/zarrfs/zarrfs/internal/lz77"
)

// BloscLZ is a FastLZ derivative. A stream is a sequence of instructions;
// the first byte's low 5 bits are a literal run (its bit 5 is a marker the
// decoder ignores). An instruction byte ctrl below 32 is a literal run of
// ctrl+1 bytes. Otherwise it is a match of length (ctrl>>5)+2 — when
// ctrl>>5 is 7, following bytes are added to the length while they are 255,
// plus the first one that is not — at distance ((ctrl&31)<<8) + next byte
// + 1; when that byte is 255 and ctrl&31 is 31, a big-endian 16-bit
// distance follows and the distance is that plus 8192. A match is only
// executed when another instruction follows it (c-blosc's decoder stops
// before a trailing match), so streams end with a literal run.

const (
	bloscLZMaxCopy     = 32                         // longest literal run
	bloscLZMaxDistance = 8191                       // longest biased distance of a near match
	bloscLZMaxFar      = 65535 + bloscLZMaxDistance // longest biased distance of a far match
)

// bloscLZDecompress decodes the BloscLZ stream src into dst, which must be
// filled exactly.
func bloscLZDecompress(dst, src []byte) error {
	if len(src) == 0 {
		if len(dst) == 0 {
			return nil
		}
		return fmt.Errorf("blosclz: empty stream for %d bytes", len(dst))
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			length := ctrl>>5 + 2
			ofs := (ctrl & 31) << 8
			if length == 9 {
				for {
					if ip >= len(src) {
						return fmt.Errorf("blosclz: truncated match length at input %d", ip)
					}
					c := int(src[ip])
					ip++
					length += c
					if c != 255 {
						break
					}
				}
			}
			if ip >= len(src) {
				return fmt.Errorf("blosclz: truncated match distance at input %d", ip)
			}
			code := int(src[ip])
			ip++
			dist := ofs + code + 1
			if code == 255 && ofs == 31<<8 {
				if ip+2 > len(src) {
					return fmt.Errorf("blosclz: truncated far distance at input %d", ip)
				}
				dist = int(binary.BigEndian.Uint16(src[ip:])) + bloscLZMaxDistance + 1
				ip += 2
			}
			if ip >= len(src) {
				return fmt.Errorf("blosclz: stream ends with a match at input %d", ip)
			}
			if length > len(dst)-op {
				return fmt.Errorf("blosclz: match of %d bytes at output %d overruns %d bytes", length, op, len(dst))
			}
			if dist > op {
				return fmt.Errorf("blosclz: match distance %d at output %d", dist, op)
			}
			ctrl = int(src[ip])
			ip++
			lz77.Copy(dst, op, dist, length)
			op += length
			continue
		}
		n := ctrl + 1
		if n > len(dst)-op {
			return fmt.Errorf("blosclz: literal run of %d bytes at output %d overruns %d bytes", n, op, len(dst))
		}
		if n > len(src)-ip {
			return fmt.Errorf("blosclz: literal run of %d bytes at input %d overruns %d bytes", n, ip, len(src))
		}
		if op+bloscLZMaxCopy <= len(dst) && ip+bloscLZMaxCopy <= len(src) {
			// One 32-byte move; the bytes past the run are written again.
			*(*[bloscLZMaxCopy]byte)(dst[op:]) = *(*[bloscLZMaxCopy]byte)(src[ip:])
		} else {
			copy(dst[op:], src[ip:ip+n])
		}
		op += n
		ip += n
		if ip >= len(src) {
			break
		}
		ctrl = int(src[ip])
		ip++
	}
	if op != len(dst) {
		return fmt.Errorf("blosclz: decoded %d bytes, want %d", op, len(dst))
	}
	return nil
}

// bloscLZLevel holds the compressor's parameters for one clevel.
type bloscLZLevel struct {
	hashLog uint
	minLen  int // shortest match worth encoding
}

// bloscLZLevels follows c-blosc's choice of hash table size and minimum
// match length per clevel (index 0 is unused: level 0 stores raw).
var bloscLZLevels = [10]bloscLZLevel{
	{10, 12}, {10, 12}, {11, 12}, {12, 11}, {12, 10}, {12, 9}, {12, 8}, {12, 7}, {12, 6}, {12, 5},
}

// bloscLZCompress appends the BloscLZ stream of src to dst[:0] and returns
// it, or nil when src is too short to compress or the stream would exceed
// maxOut bytes. table is scratch space of at least 1<<12 entries.
func bloscLZCompress(dst, src []byte, clevel, maxOut int, table []int32) []byte {
	const tail = 12 // bytes left as literals at the end, as c-blosc does
	if len(src) < 16 || maxOut < 66 {
		return nil
	}
	lv := bloscLZLevels[min(max(clevel, 1), 9)]
	table = table[:1<<lv.hashLog]
	for i := range table {
		table[i] = -1
	}
	hash := func(v uint32) uint32 { return (v * 2654435761) >> (32 - lv.hashLog) }

	out := dst[:0]
	anchor := 0 // start of the pending literals
	emitLiterals := func(lit []byte) bool {
		for len(lit) > 0 {
			n := min(len(lit), bloscLZMaxCopy)
			if len(out)+1+n > maxOut {
				return false
			}
			out = append(out, byte(n-1))
			out = append(out, lit[:n]...)
			lit = lit[n:]
		}
		return true
	}
	limit := len(src) - tail
	ip := 0
	for ip < limit {
		seq := binary.LittleEndian.Uint32(src[ip:])
		h := hash(seq)
		ref := int(table[h])
		table[h] = int32(ip)
		if ip == 0 || ref < 0 || ip-ref-1 >= bloscLZMaxFar || binary.LittleEndian.Uint32(src[ref:]) != seq {
			ip++
			continue
		}
		// Extend the match, leaving at least tail-8 bytes for literals.
		length := 4
		for end := len(src) - tail + 8; ip+length < end && src[ref+length] == src[ip+length]; length++ {
		}
		dist := ip - ref - 1 // biased
		if length < lv.minLen || (dist >= bloscLZMaxDistance && length < 8) {
			ip++
			continue
		}
		if !emitLiterals(src[anchor:ip]) {
			return nil
		}
		if len(out)+8+(length-9)/255 > maxOut {
			return nil
		}
		lenCode := length - 2
		near := dist < bloscLZMaxDistance
		hi := 31
		if near {
			hi = dist >> 8
		}
		if lenCode < 7 {
			out = append(out, byte(lenCode<<5|hi))
		} else {
			out = append(out, byte(7<<5|hi))
			r := lenCode - 7
			for ; r >= 255; r -= 255 {
				out = append(out, 255)
			}
			out = append(out, byte(r))
		}
		if near {
			out = append(out, byte(dist))
		} else {
			far := dist - bloscLZMaxDistance
			out = append(out, 255, byte(far>>8), byte(far))
		}
		ip += length
		anchor = ip
		// Index the two positions before the new anchor.
		if ip-2 >= 0 && ip+2 <= len(src) {
			table[hash(binary.LittleEndian.Uint32(src[ip-2:]))] = int32(ip - 2)
		}
	}
	if !emitLiterals(src[anchor:]) {
		return nil
	}
	out[0] |= 1 << 5 // the marker c-blosc sets on the first byte
	return out
}
