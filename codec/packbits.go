package codec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PackBitsV3 is the v3 extension codec "packbits" (zarr-extensions
// codecs/packbits): an array→bytes codec that stores each element as
// last_bit−first_bit+1 bits of each of its components (two for complex
// types), one after the other from the least significant bit of the first
// byte, padded with zero bits to whole bytes, with optionally one byte
// before ("first_byte") or after ("last_byte") giving the number of
// padding bits. It shares its name with numcodecs' v2 PackBits filter
// (PackBits), a bytes→bytes codec with another layout: NewCodecs, which
// builds v3 chains, takes the name to mean this codec.
type PackBitsV3 struct {
	// Padding is "none", "first_byte" or "last_byte".
	Padding string
	// FirstBit and LastBit are the configured bits; LastBit < 0 means
	// the component's last bit.
	FirstBit, LastBit int
}

func newPackBitsV3(cfg Config) (Codec, error) {
	c := PackBitsV3{Padding: "none", LastBit: -1}
	for k, raw := range cfg {
		switch k {
		case "padding_encoding":
			if err := json.Unmarshal(raw, &c.Padding); err != nil || c.Padding != "none" && c.Padding != "first_byte" && c.Padding != "last_byte" {
				return nil, fmt.Errorf("packbits: padding_encoding %s is not \"none\", \"first_byte\" or \"last_byte\"", jsonText(raw))
			}
		case "first_bit", "last_bit":
			if string(raw) == "null" {
				continue
			}
			v, ok := plainInt(raw)
			if !ok || v < 0 || v > 127 {
				return nil, fmt.Errorf("packbits: %s %s is not a bit index", k, jsonText(raw))
			}
			if k == "first_bit" {
				c.FirstBit = v
			} else {
				c.LastBit = v
			}
		default:
			return nil, fmt.Errorf("packbits: unknown configuration member %q", k)
		}
	}
	if c.LastBit >= 0 && c.LastBit < c.FirstBit {
		return nil, fmt.Errorf("packbits: last_bit %d is less than first_bit %d", c.LastBit, c.FirstBit)
	}
	return c, nil
}

// Name implements Codec.
func (PackBitsV3) Name() string { return "packbits" }

// packComponents describes the elements of a data type to packbits: the
// number of components, the bits N of each, the bytes each takes in the
// decoded chunk and whether a component is sign-extended.
type packComponents struct {
	n, bits, bytes int
	signed         bool
}

// packbitsTypes are the data types the extension lists whose components
// are not whole bytes (their decoded elements take one byte each).
var packbitsTypes = map[string]packComponents{
	"bool": {1, 1, 1, false},
	"int2": {1, 2, 1, true}, "uint2": {1, 2, 1, false},
	"int4": {1, 4, 1, true}, "uint4": {1, 4, 1, false},
	"float4_e2m1fn": {1, 4, 1, false}, "float6_e2m3fn": {1, 6, 1, false}, "float6_e3m2fn": {1, 6, 1, false},
	"complex_float4_e2m1fn": {2, 4, 1, false},
	"complex_float6_e2m3fn": {2, 6, 1, false}, "complex_float6_e3m2fn": {2, 6, 1, false},
}

// components returns how packbits sees elements of t.
func (PackBitsV3) components(t DataType) (packComponents, error) {
	if p, ok := packbitsTypes[t.Name]; ok && t.Size == p.n*p.bytes {
		return p, nil
	}
	name := t.Name
	switch {
	case t.Size < 1 || t.Size > 16:
	case strings.HasPrefix(name, "int"), strings.HasPrefix(name, "uint"):
		return packComponents{1, 8 * t.Size, t.Size, name[0] == 'i'}, nil
	case strings.HasPrefix(name, "float"), name == "bfloat16":
		return packComponents{1, 8 * t.Size, t.Size, false}, nil
	case strings.HasPrefix(name, "complex") && t.Size%2 == 0:
		return packComponents{2, 4 * t.Size, t.Size / 2, false}, nil
	}
	return packComponents{}, Unsupportedf("packbits on data type %s", name)
}

// layout returns the components of spec's elements, the first bit and the
// number of bits b stored of each component, and the encoded size.
func (c PackBitsV3) layout(spec ArraySpec) (p packComponents, first, b, size int, err error) {
	if p, err = c.components(spec.DataType); err != nil {
		return
	}
	first, last := c.FirstBit, c.LastBit
	if last < 0 {
		last = p.bits - 1
	}
	if last >= p.bits || first > last {
		err = fmt.Errorf("packbits: bits %d to %d outside the %d bits of %s", first, last, p.bits, spec.DataType.Name)
		return
	}
	b = last - first + 1
	// The engine bounds chunks (MaxChunkBytes), so this product fits.
	size = (spec.NumElements()*p.n*b + 7) / 8
	if c.Padding != "none" {
		size++
	}
	return
}

// wholeBytes reports whether the encoding is the bytes codec's
// (little-endian, every bit of whole-byte components).
func wholeBytes(p packComponents, first, b int) bool {
	return first == 0 && b == p.bits && p.bits == 8*p.bytes
}

// EncodedSize implements ArrayToBytes.
func (c PackBitsV3) EncodedSize(decoded ArraySpec) int {
	_, _, _, size, err := c.layout(decoded)
	if err != nil {
		return -1
	}
	return size
}

// padBits returns the padding bits after nbits bits.
func padBits(nbits int) byte { return byte((8 - nbits%8) % 8) }

// Encode implements ArrayToBytes.
func (c PackBitsV3) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	p, first, b, size, err := c.layout(decoded)
	if err != nil {
		return nil, err
	}
	if err := checkSize("packbits", len(chunk), decoded.ByteSize()); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	bits := out
	ncomp := decoded.NumElements() * p.n
	switch c.Padding {
	case "first_byte":
		out[0], bits = padBits(ncomp*b), out[1:]
	case "last_byte":
		out[size-1], bits = padBits(ncomp*b), out[:size-1]
	}
	if wholeBytes(p, first, b) {
		copy(bits, chunk)
		return out, nil
	}
	pos := 0
	for i := range ncomp {
		comp := chunk[i*p.bytes : (i+1)*p.bytes]
		for j := range b {
			src := first + j
			if comp[src/8]>>(src%8)&1 != 0 {
				bits[pos/8] |= 1 << (pos % 8)
			}
			pos++
		}
	}
	return out, nil
}

// Decode implements ArrayToBytes: each component's bits are shifted to
// first_bit and sign-extended (signed integers) or zero-extended to the
// bytes of the component.
func (c PackBitsV3) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	p, first, b, size, err := c.layout(decoded)
	if err != nil {
		return nil, err
	}
	if len(data) != size {
		return nil, Corruptf("packbits", "%d bytes, want %d", len(data), size)
	}
	bits := data
	ncomp := decoded.NumElements() * p.n
	switch c.Padding {
	case "first_byte":
		if data[0] != padBits(ncomp*b) {
			return nil, Corruptf("packbits", "first byte says %d padding bits, want %d", data[0], padBits(ncomp*b))
		}
		bits = data[1:]
	case "last_byte":
		if data[size-1] != padBits(ncomp*b) {
			return nil, Corruptf("packbits", "last byte says %d padding bits, want %d", data[size-1], padBits(ncomp*b))
		}
		bits = data[:size-1]
	}
	if wholeBytes(p, first, b) {
		return bits, nil
	}
	out := make([]byte, decoded.ByteSize())
	pos := 0
	for i := range ncomp {
		comp := out[i*p.bytes : (i+1)*p.bytes]
		var bit byte
		for j := range b {
			bit = bits[pos/8] >> (pos % 8) & 1
			dst := first + j
			comp[dst/8] |= bit << (dst % 8)
			pos++
		}
		if p.signed && bit != 0 {
			for dst := first + b; dst < 8*p.bytes; dst++ {
				comp[dst/8] |= 1 << (dst % 8)
			}
		}
	}
	return out, nil
}
