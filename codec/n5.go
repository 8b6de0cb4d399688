package codec

import (
	"encoding/binary"
	"fmt"
	"slices"
)

func init() {
	Register(newN5Default, "n5_default")
}

// N5Default is the "n5_default" codec of zarr-extensions
// (codecs/n5_default): an array→bytes codec for N5 blocks in default
// mode. A block is a header (mode uint16 0, the number of dimensions
// uint16, then each dimension as uint32, all big-endian, in N5's order,
// which is the Zarr array's) and the block's elements through the inner codecs (a
// full transpose, big-endian bytes and at most one bytes→bytes codec),
// for the block's own shape, which may be smaller than the chunk at the
// array's edge (truncated blocks): decoding pads it to the chunk with the
// fill value. Decode only.
type N5Default struct {
	Codecs []Codec
}

func newN5Default(cfg Config) (Codec, error) {
	for k := range cfg {
		if k != "codecs" {
			return nil, fmt.Errorf("n5_default: unknown configuration member %q", k)
		}
	}
	raw, ok := cfg["codecs"]
	if !ok {
		return nil, fmt.Errorf("n5_default: codecs is missing")
	}
	cs, err := ParseCodecList(raw)
	if err != nil {
		return nil, err
	}
	if len(cs) < 2 || len(cs) > 3 {
		return nil, fmt.Errorf("n5_default: codecs must be transpose, bytes and at most one bytes→bytes codec")
	}
	if _, ok := cs[0].(ArrayToArray); !ok || cs[0].Name() != "transpose" {
		return nil, fmt.Errorf("n5_default: the first codec must be transpose")
	}
	// (Little-endian bytes are allowed for one-byte types only: Decode
	// checks it against the data type.)
	if _, ok := cs[1].(BytesCodec); !ok {
		return nil, fmt.Errorf("n5_default: the second codec must be bytes")
	}
	return N5Default{Codecs: cs}, nil
}

// Name implements Codec.
func (N5Default) Name() string { return "n5_default" }

// EncodedSize implements ArrayToBytes: blocks carry a header and may be
// compressed.
func (N5Default) EncodedSize(ArraySpec) int { return -1 }

// Encode implements ArrayToBytes.
func (N5Default) Encode([]byte, ArraySpec) ([]byte, error) {
	return nil, Unsupportedf("n5_default encoding")
}

// Decode implements ArrayToBytes.
func (c N5Default) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	if decoded.DataType.Variable() {
		return nil, Unsupportedf("n5_default on data type %s", decoded.DataType.Name)
	}
	if b := c.Codecs[1].(BytesCodec); !b.Big && decoded.DataType.Size > 1 {
		return nil, fmt.Errorf("n5_default: bytes must be big-endian for %s", decoded.DataType.Name)
	}
	if len(data) < 4 {
		return nil, Corruptf("n5_default", "%d bytes, no header", len(data))
	}
	mode, n := binary.BigEndian.Uint16(data), int(binary.BigEndian.Uint16(data[2:]))
	if mode != 0 {
		return nil, Unsupportedf("N5 block mode %d (only the default mode, 0)", mode)
	}
	rank := len(decoded.Shape)
	if n != rank || len(data) < 4+4*n {
		return nil, Corruptf("n5_default", "header of %d dimensions for a %d-dimensional chunk", n, rank)
	}
	// The block's shape, in N5's order of dimensions, which is the Zarr
	// array's (the inner transpose makes N5's fastest-first layout). A
	// block larger than the chunk is corrupt, so no allocation exceeds
	// the chunk's.
	block := make([]int, rank)
	for i := range rank {
		d := binary.BigEndian.Uint32(data[4+4*i:])
		if uint64(d) > uint64(decoded.Shape[i]) {
			return nil, Corruptf("n5_default", "block dimension %d of %d, larger than the chunk's %d", i, d, decoded.Shape[i])
		}
		block[i] = int(d)
	}
	inner := decoded
	inner.Shape = block
	p, err := NewPipeline(c.Codecs, inner)
	if err != nil {
		return nil, fmt.Errorf("n5_default: %w", err)
	}
	dec, err := p.Decode(data[4+4*n:])
	if err != nil {
		return nil, err
	}
	if slices.Equal(block, decoded.Shape) {
		return dec, nil
	}
	// A truncated block: its elements in place, the rest the fill value.
	size := decoded.DataType.Size
	out := make([]byte, decoded.ByteSize())
	fillElements(out, decoded.FillValue, size)
	if len(dec) == 0 {
		return out, nil
	}
	rowLen := block[rank-1] * size
	idx := make([]int, rank-1)
	for src := 0; src < len(dec); src += rowLen {
		dst := 0
		for i := range rank - 1 {
			dst = dst*decoded.Shape[i] + idx[i]
		}
		dst *= decoded.Shape[rank-1] * size
		copy(out[dst:dst+rowLen], dec[src:src+rowLen])
		for i := rank - 2; i >= 0; i-- {
			if idx[i]++; idx[i] < block[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// fillElements sets dst to repetitions of the element fill (zeros when
// fill is nil).
func fillElements(dst, fill []byte, size int) {
	if len(fill) != size {
		return
	}
	for k := 0; k+size <= len(dst); k += size {
		copy(dst[k:], fill)
	}
}
