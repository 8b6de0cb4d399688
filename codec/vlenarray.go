package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

func init() {
	Register(newVLenArray, "vlen-array", "numcodecs.vlen-array")
}

// VLenArray is numcodecs' VLenArray object codec: ragged arrays, each
// element a 1-D array of DType, in the numcodecs vlen layout (a count,
// then each element's length in bytes and its values). It decodes to an
// object array (ObjectType) whose elements are JSON lists, as Python's
// json.dumps(element.tolist(), separators=(",", ":")) writes them, compact as
// the other object arrays' elements: data.txt shows one list a
// line.
type VLenArray struct {
	DType NumpyType
}

func newVLenArray(cfg Config) (Codec, error) {
	var name string
	if ok, err := cfg.Decode("vlen-array", "dtype", &name); err != nil || !ok {
		return nil, fmt.Errorf("vlen-array: dtype is missing or not a string")
	}
	t, err := ParseNumpyType(name)
	if err != nil {
		return nil, fmt.Errorf("vlen-array: %w", err)
	}
	switch {
	case t.Kind == 'b' && t.Size == 1, t.Kind == 'i' || t.Kind == 'u', t.Kind == 'f' && (t.Size == 4 || t.Size == 8):
	default:
		return nil, Unsupportedf("vlen-array of %s", name)
	}
	return VLenArray{DType: t}, nil
}

// Name implements Codec.
func (VLenArray) Name() string { return "vlen-array" }

// EncodedSize implements ArrayToBytes.
func (VLenArray) EncodedSize(ArraySpec) int { return -1 }

// Encode implements ArrayToBytes.
func (VLenArray) Encode([]byte, ArraySpec) ([]byte, error) {
	return nil, Unsupportedf("vlen-array encoding")
}

// Decode implements ArrayToBytes.
func (c VLenArray) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	if decoded.DataType.Name != ObjectType {
		return nil, Unsupportedf("vlen-array codec for data type %s", decoded.DataType.Name)
	}
	elems, err := splitVlen("vlen-array", data, decoded.NumElements())
	if err != nil {
		return nil, err
	}
	size := c.DType.Size
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, 2*len(data)), uint32(len(elems)))
	var text []byte
	for i, e := range elems {
		if len(e)%size != 0 {
			return nil, Corruptf("vlen-array", "element %d has %d bytes, not a whole number of %d-byte values", i, len(e), size)
		}
		text = append(text[:0], '[')
		for j := 0; j < len(e); j += size {
			if j > 0 {
				text = append(text, ',')
			}
			text = c.appendValue(text, e[j:j+size])
		}
		text = append(text, ']')
		out = binary.LittleEndian.AppendUint32(out, uint32(len(text)))
		out = append(out, text...)
	}
	return out, nil
}

// appendValue appends one value as Python's json module writes it.
func (c VLenArray) appendValue(dst, b []byte) []byte {
	var u uint64
	for k := range b {
		if c.DType.Big {
			u = u<<8 | uint64(b[k])
		} else {
			u |= uint64(b[k]) << (8 * k)
		}
	}
	switch c.DType.Kind {
	case 'b':
		if u != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case 'i':
		shift := 64 - 8*len(b)
		return strconv.AppendInt(dst, int64(u<<shift)>>shift, 10)
	case 'u':
		return strconv.AppendUint(dst, u, 10)
	}
	f := math.Float64frombits(u)
	if len(b) == 4 {
		f = float64(math.Float32frombits(uint32(u)))
	}
	return append(dst, pyFloat(f)...)
}
