package codec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

func init() {
	Register(newBytesCodec,
		"bytes",
		"endian", // the name in early v3 drafts and zarr-python 3 betas
		"https://purl.org/zarr/spec/codecs/endian/1.0",
	)
}

// BytesCodec is the array→bytes codec "bytes": elements in C order, each in
// the configured byte order.
type BytesCodec struct {
	// Big is true for "endian": "big". An absent endian means little, as
	// zarr-python writes it for one-byte types (and assumes otherwise).
	Big bool
}

func newBytesCodec(cfg Config) (Codec, error) {
	var endian string
	if _, err := cfg.Decode("bytes", "endian", &endian); err != nil {
		return nil, err
	}
	switch endian {
	case "", "little":
		return BytesCodec{}, nil
	case "big":
		return BytesCodec{Big: true}, nil
	}
	return nil, fmt.Errorf("bytes: endian %q is neither \"little\" nor \"big\"", endian)
}

// Name implements Codec.
func (BytesCodec) Name() string { return "bytes" }

// EncodedSize implements ArrayToBytes.
func (BytesCodec) EncodedSize(decoded ArraySpec) int { return decoded.ByteSize() }

// Encode implements ArrayToBytes.
func (c BytesCodec) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.convert(chunk, decoded)
}

// Decode implements ArrayToBytes.
func (c BytesCodec) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	return c.convert(data, decoded)
}

// convert is its own inverse: it swaps the bytes of every element (or of
// every part of an element) when the stored order is big-endian. It never
// modifies data in place.
func (c BytesCodec) convert(data []byte, spec ArraySpec) ([]byte, error) {
	if spec.DataType.Variable() {
		return nil, Unsupportedf("data type %s with the bytes codec (variable-length types need vlen-utf8 or vlen-bytes)", spec.DataType.Name)
	}
	if err := checkSize("bytes", len(data), spec.ByteSize()); err != nil {
		return nil, err
	}
	if !c.Big {
		return data, nil
	}
	unit, err := SwapUnit(spec.DataType)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(data))
	swapInto(out, data, unit)
	return out, nil
}

// SwapUnit returns the size of the parts of an element of t whose bytes a
// byte-order change reverses: the element size for numbers, half of it for
// complex numbers, 4 for UTF-32 strings, 1 (no swap) for raw bytes, bools
// and byte strings. Types whose layout it does not know (structs) are
// unsupported.
func SwapUnit(t DataType) (int, error) {
	name := t.Name
	switch {
	case t.Size <= 1:
		return 1, nil
	case isRawName(name), name == "fixed_length_ascii", name == "fixed_length_bytes",
		name == "null_terminated_bytes", name == "bytes":
		return 1, nil
	case strings.HasPrefix(name, "complex"):
		return t.Size / 2, nil
	case name == "fixed_length_utf32":
		return 4, nil
	case name == "struct", name == "structured":
		return 0, Unsupportedf("byte order of %s data type", name)
	}
	return t.Size, nil
}

// isRawName reports whether name is a raw-bits type r<N>.
func isRawName(name string) bool {
	if len(name) < 2 || name[0] != 'r' {
		return false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// swapInto copies src to dst reversing each run of unit bytes.
// len(src) must be a multiple of unit and len(dst) >= len(src).
func swapInto(dst, src []byte, unit int) {
	switch unit {
	case 1:
		copy(dst, src)
	case 2:
		for i := 0; i+1 < len(src); i += 2 {
			dst[i], dst[i+1] = src[i+1], src[i]
		}
	case 4:
		for i := 0; i+3 < len(src); i += 4 {
			dst[i], dst[i+1], dst[i+2], dst[i+3] = src[i+3], src[i+2], src[i+1], src[i]
		}
	case 8:
		for i := 0; i+7 < len(src); i += 8 {
			s := src[i : i+8 : i+8]
			d := dst[i : i+8 : i+8]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s[7], s[6], s[5], s[4], s[3], s[2], s[1], s[0]
		}
	default:
		for i := 0; i+unit <= len(src); i += unit {
			for j := 0; j < unit; j++ {
				dst[i+j] = src[i+unit-1-j]
			}
		}
	}
}

// DecodeParts implements PartialDecoder for the little-endian byte order,
// in which a part of the decoded chunk is the same part of the stored one.
// Through a ReaderInto each part is read straight into its buffer, and a
// stored chunk of another size than the decoded one is corrupt, as for
// Decode; through a plain RangeReader, only a chunk too short for a part
// is.
func (c BytesCodec) DecodeParts(ctx context.Context, r RangeReader, decoded ArraySpec, dsts [][]byte, offs []int64) error {
	if c.Big {
		return Unsupportedf("partial decoding of big-endian bytes")
	}
	want := int64(decoded.ByteSize())
	into, _ := r.(ReaderInto)
	for i, dst := range dsts {
		if into != nil {
			got, err := into.ReadInto(ctx, dst, offs[i])
			switch {
			case err == nil && got == want:
				continue
			case err == nil || errors.Is(err, io.ErrUnexpectedEOF):
				return Corruptf("bytes", "decoded %d bytes, want %d", got, want)
			default:
				return err
			}
		}
		b, err := r.ReadRange(ctx, offs[i], int64(len(dst)))
		if err != nil {
			return err
		}
		if len(b) != len(dst) {
			return Corruptf("bytes", "decoded %d bytes, want %d", offs[i]+int64(len(b)), want)
		}
		copy(dst, b)
	}
	return nil
}
