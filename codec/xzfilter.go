package codec

import (
	"encoding/binary"
	"fmt"
)

// The filters an xz stream (or a raw LZMA stream of numcodecs' format 3)
// can chain before LZMA2: delta and the branch-call-jump (BCJ) filters
// liblzma has, ported from its simple/*.c and delta/*.c. Each turns a
// whole block's data in place, forwards (encoding) or back (decoding),
// from the position pos (the filter's start_offset); liblzma leaves the
// few last bytes that cannot hold an instruction as they are, and so do
// these.

// xz filter IDs (the same numbers Python's lzma module uses).
const (
	xzFilterDelta    = 0x03
	xzFilterX86      = 0x04
	xzFilterPowerPC  = 0x05
	xzFilterIA64     = 0x06
	xzFilterARM      = 0x07
	xzFilterARMThumb = 0x08
	xzFilterSPARC    = 0x09
)

// preFilter is a filter of a chain other than the last (LZMA1 or LZMA2).
type preFilter struct {
	id    uint64
	dist  int    // delta: the distance, 1 to 256
	start uint32 // BCJ: the start offset
}

// newPreFilter checks a filter that may precede LZMA2: its ID and options.
func newPreFilter(id uint64, dist int, start uint32) (preFilter, error) {
	switch id {
	case xzFilterDelta:
		if dist < 1 || dist > 256 {
			return preFilter{}, fmt.Errorf("lzma: delta distance %d is not in 1…256", dist)
		}
	case xzFilterX86, xzFilterPowerPC, xzFilterARM, xzFilterARMThumb, xzFilterSPARC:
	default:
		// IA-64, ARM64 and RISC-V among them: none has an oracle here
		// (Python 3.11's lzma module has no ARM64 or RISC-V filter).
		return preFilter{}, Unsupportedf("lzma filter %#x before LZMA (only delta and the x86, PowerPC, ARM, ARM-Thumb and SPARC BCJ filters)", id)
	}
	return preFilter{id: id, dist: dist, start: start}, nil
}

// parsePreFilter reads a filter's properties as an xz block header
// stores them.
func parsePreFilter(id uint64, props []byte) (preFilter, error) {
	switch {
	case id == xzFilterDelta && len(props) == 1:
		return newPreFilter(id, int(props[0])+1, 0)
	case id == xzFilterDelta:
		return preFilter{}, fmt.Errorf("delta filter with %d property bytes", len(props))
	case len(props) == 0:
		return newPreFilter(id, 0, 0)
	case len(props) == 4:
		return newPreFilter(id, 0, binary.LittleEndian.Uint32(props))
	}
	if _, err := newPreFilter(id, 0, 0); err != nil {
		return preFilter{}, err
	}
	return preFilter{}, fmt.Errorf("filter %#x with %d property bytes", id, len(props))
}

// props returns the filter's properties as an xz block header stores them.
func (f preFilter) props() []byte {
	switch {
	case f.id == xzFilterDelta:
		return []byte{byte(f.dist - 1)}
	case f.start != 0:
		return binary.LittleEndian.AppendUint32(nil, f.start)
	}
	return nil
}

// apply runs the filter over buf in place: forwards when encoding, back
// when decoding.
func (f preFilter) apply(buf []byte, encode bool) {
	switch f.id {
	case xzFilterDelta:
		if encode {
			for i := len(buf) - 1; i >= f.dist; i-- {
				buf[i] -= buf[i-f.dist]
			}
		} else {
			for i := f.dist; i < len(buf); i++ {
				buf[i] += buf[i-f.dist]
			}
		}
	case xzFilterX86:
		bcjX86(buf, f.start, encode)
	case xzFilterPowerPC:
		bcjPowerPC(buf, f.start, encode)
	case xzFilterARM:
		bcjARM(buf, f.start, encode)
	case xzFilterARMThumb:
		bcjARMThumb(buf, f.start, encode)
	case xzFilterSPARC:
		bcjSPARC(buf, f.start, encode)
	}
}

// bcjTarget turns an absolute address into a relative one (decoding) or
// back (encoding): dest = src ∓ pc.
func bcjTarget(src, pc uint32, encode bool) uint32 {
	if encode {
		return src + pc
	}
	return src - pc
}

// bcjX86 is liblzma's x86 filter: the 32-bit operands of E8 (CALL) and E9
// (JMP) whose high byte is 00 or FF, tracking the prefix bytes that make
// a following E8/E9 part of another instruction.
func bcjX86(buf []byte, pos uint32, encode bool) {
	maskAllowed := [8]bool{true, true, true, false, true, false, false, false}
	maskBit := [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
	msByte := func(b byte) bool { return b == 0 || b == 0xff }
	if len(buf) < 5 {
		return
	}
	var prevMask uint32
	prevPos := pos - 5
	for i := 0; i <= len(buf)-5; {
		b := buf[i]
		if b != 0xe8 && b != 0xe9 {
			i++
			continue
		}
		now := pos + uint32(i)
		offset := now - prevPos
		prevPos = now
		if offset > 5 {
			prevMask = 0
		} else {
			for range offset {
				prevMask &= 0x77
				prevMask <<= 1
			}
		}
		b = buf[i+4]
		if msByte(b) && maskAllowed[(prevMask>>1)&7] && prevMask>>1 < 0x10 {
			src := binary.LittleEndian.Uint32(buf[i+1:])
			var dest uint32
			for {
				dest = bcjTarget(src, now+5, encode)
				if prevMask == 0 {
					break
				}
				j := maskBit[prevMask>>1]
				b = byte(dest >> (24 - j*8))
				if !msByte(b) {
					break
				}
				src = dest ^ (1<<(32-j*8) - 1)
			}
			dest = dest&0x01ffffff | (0-(dest>>24&1))<<24
			binary.LittleEndian.PutUint32(buf[i+1:], dest)
			i += 5
			prevMask = 0
		} else {
			i++
			prevMask |= 1
			if msByte(b) {
				prevMask |= 0x10
			}
		}
	}
}

// bcjPowerPC converts the targets of PowerPC "bl" (opcode 18 with the
// link bit and no absolute bit), big-endian.
func bcjPowerPC(buf []byte, pos uint32, encode bool) {
	for i := 0; i+4 <= len(buf); i += 4 {
		if buf[i]>>2 != 0x12 || buf[i+3]&3 != 1 {
			continue
		}
		src := binary.BigEndian.Uint32(buf[i:]) & 0x03fffffc
		dest := bcjTarget(src, pos+uint32(i), encode)
		buf[i] = 0x48 | byte(dest>>24)&3
		buf[i+1], buf[i+2] = byte(dest>>16), byte(dest>>8)
		buf[i+3] = buf[i+3]&3 | byte(dest)
	}
}

// bcjARM converts the targets of ARM "bl" (condition "always").
func bcjARM(buf []byte, pos uint32, encode bool) {
	for i := 0; i+4 <= len(buf); i += 4 {
		if buf[i+3] != 0xeb {
			continue
		}
		src := (uint32(buf[i+2])<<16 | uint32(buf[i+1])<<8 | uint32(buf[i])) << 2
		dest := bcjTarget(src, pos+uint32(i)+8, encode) >> 2
		buf[i+2], buf[i+1], buf[i] = byte(dest>>16), byte(dest>>8), byte(dest)
	}
}

// bcjARMThumb converts the targets of Thumb "bl" instruction pairs.
func bcjARMThumb(buf []byte, pos uint32, encode bool) {
	for i := 0; i+4 <= len(buf); i += 2 {
		if buf[i+1]&0xf8 != 0xf0 || buf[i+3]&0xf8 != 0xf8 {
			continue
		}
		src := (uint32(buf[i+1])&7<<19 | uint32(buf[i])<<11 | uint32(buf[i+3])&7<<8 | uint32(buf[i+2])) << 1
		dest := bcjTarget(src, pos+uint32(i)+4, encode) >> 1
		buf[i+1] = 0xf0 | byte(dest>>19)&7
		buf[i] = byte(dest >> 11)
		buf[i+3] = 0xf8 | byte(dest>>8)&7
		buf[i+2] = byte(dest)
		i += 2
	}
}

// bcjSPARC converts the targets of SPARC "call", big-endian.
func bcjSPARC(buf []byte, pos uint32, encode bool) {
	for i := 0; i+4 <= len(buf); i += 4 {
		if !(buf[i] == 0x40 && buf[i+1]&0xc0 == 0 || buf[i] == 0x7f && buf[i+1]&0xc0 == 0xc0) {
			continue
		}
		src := binary.BigEndian.Uint32(buf[i:]) << 2
		dest := bcjTarget(src, pos+uint32(i), encode) >> 2
		dest = (0-(dest>>22&1))<<22&0x3fffffff | dest&0x3fffff | 0x40000000
		binary.BigEndian.PutUint32(buf[i:], dest)
	}
}
