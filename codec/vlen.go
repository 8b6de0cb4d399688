package codec

import (
	"encoding/binary"
	"fmt"
)

// splitVlen parses the numcodecs vlen layout of exactly n elements (a
// little-endian uint32 count, then a uint32 length and the bytes of each
// element) and returns the elements as sub-slices of data. Every length is
// checked against the bytes that remain before anything is sliced.
func splitVlen(name string, data []byte, n int) ([][]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf(name, "vlen data of %d bytes has no header", len(data))
	}
	count := binary.LittleEndian.Uint32(data)
	if n >= 0 && uint64(count) != uint64(n) {
		return nil, Corruptf(name, "vlen data holds %d elements, want %d", count, n)
	}
	rest := data[4:]
	// Each element needs at least its 4-byte length.
	if uint64(count) > uint64(len(rest))/4 {
		return nil, Corruptf(name, "vlen data of %d bytes cannot hold %d elements", len(data), count)
	}
	elems := make([][]byte, count)
	for i := range elems {
		if len(rest) < 4 {
			return nil, Corruptf(name, "vlen element %d: truncated length", i)
		}
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(l) > uint64(len(rest)) {
			return nil, Corruptf(name, "vlen element %d: length %d, only %d bytes left", i, l, len(rest))
		}
		elems[i] = rest[:l:l]
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return nil, Corruptf(name, "vlen data has %d bytes after the last element", len(rest))
	}
	return elems, nil
}

func init() {
	Register(func(Config) (Codec, error) { return Vlen{Codec: "vlen-utf8"}, nil }, "vlen-utf8", "numcodecs.vlen-utf8")
	Register(func(Config) (Codec, error) { return Vlen{Codec: "vlen-bytes"}, nil }, "vlen-bytes", "numcodecs.vlen-bytes")
}

// Vlen is the array→bytes codec "vlen-utf8" or "vlen-bytes" for arrays of
// variable-length strings or byte strings. Its encoded form is the numcodecs
// vlen layout, which is also the package's in-memory form of such arrays,
// so it only checks the layout: the element count must match the chunk and
// every length must fit. vlen-utf8 does not reject invalid UTF-8, so that
// such data stays readable.
type Vlen struct {
	Codec string // "vlen-utf8" or "vlen-bytes"
}

// Name implements Codec.
func (c Vlen) Name() string { return c.Codec }

// EncodedSize implements ArrayToBytes: the size depends on the data.
func (Vlen) EncodedSize(ArraySpec) int { return -1 }

// Encode implements ArrayToBytes.
func (c Vlen) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("%s codec for fixed-size data type %s", c.Codec, decoded.DataType.Name)
	}
	if _, err := splitVlen(c.Codec, chunk, decoded.NumElements()); err != nil {
		return nil, fmt.Errorf("%s: encode: %w", c.Codec, err)
	}
	return chunk, nil
}

// Decode implements ArrayToBytes. The result aliases data.
func (c Vlen) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("%s codec for fixed-size data type %s", c.Codec, decoded.DataType.Name)
	}
	if _, err := splitVlen(c.Codec, data, decoded.NumElements()); err != nil {
		return nil, err
	}
	return data, nil
}

// vlenAppend appends the numcodecs vlen layout of elems to out.
func vlenAppend(out []byte, elems []string) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(len(elems)))
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

// toStrings converts byte-string elements to strings.
func toStrings(elems [][]byte) []string {
	s := make([]string, len(elems))
	for i, e := range elems {
		s[i] = string(e)
	}
	return s
}
