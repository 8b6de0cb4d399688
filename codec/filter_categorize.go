package codec

import (
	"fmt"
	"strings"
)

// The numcodecs filters that repack elements: packbits (booleans into
// bits) and categorize (strings into small integer labels).

// PackBits is numcodecs' PackBits filter for bools: a byte giving the
// number of padding bits in the last byte, then eight elements a byte,
// the first in the most significant bit.
type PackBits struct{}

func newPackBits(cfg Config) (Codec, error) {
	for k := range cfg {
		// The v3 packbits extension shares the name but is an array→bytes
		// codec with a different layout.
		return nil, Unsupportedf("packbits configuration %q (the v3 packbits extension)", k)
	}
	return PackBits{}, nil
}

// Name implements Codec.
func (PackBits) Name() string { return "packbits" }

// EncodedSize implements BytesToBytes.
func (PackBits) EncodedSize(n int) int { return 1 + (n+7)/8 }

// Encode implements BytesToBytes.
func (PackBits) Encode(data []byte) ([]byte, error) {
	out := make([]byte, 1+(len(data)+7)/8)
	out[0] = byte((8 - len(data)%8) % 8)
	for i, v := range data {
		if v != 0 {
			out[1+i/8] |= 0x80 >> (i % 8)
		}
	}
	return out, nil
}

// Decode implements BytesToBytes.
func (PackBits) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < 1 {
		return nil, Corruptf("packbits", "no header byte")
	}
	pad := int(data[0])
	if pad > 7 || (len(data) == 1 && pad != 0) {
		return nil, Corruptf("packbits", "%d padding bits in %d bytes", pad, len(data))
	}
	n := (len(data)-1)*8 - pad
	if err := checkSize("packbits", n, decodedSize); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = data[1+i/8] >> (7 - i%8) & 1
	}
	return out, nil
}

// Categorize is numcodecs' Categorize filter: each string is stored as the
// 1-based index of its label (0 for strings not among the labels) in
// AsType. DType is a fixed-size UTF-32 type ("<U4") or objects ("|O"),
// whose elements are in the package's vlen layout of UTF-8 strings.
type Categorize struct {
	Labels        []string
	DType, AsType NumpyType
}

func newCategorize(cfg Config) (Codec, error) {
	var c Categorize
	var labels []*string // nil for JSON null, which is no string either
	ok, err := cfg.Decode("categorize", "labels", &labels)
	if err != nil {
		return nil, Unsupportedf("categorize labels that are not strings: %v", err)
	}
	if !ok {
		return nil, fmt.Errorf("categorize: configuration has no labels") // numcodecs requires them
	}
	c.Labels = make([]string, len(labels))
	for i, l := range labels {
		if l == nil {
			return nil, Unsupportedf("categorize label %d is null, not a string", i)
		}
		c.Labels[i] = *l
	}
	if c.DType, err = numpyTypeConfig("categorize", cfg, "dtype", ""); err != nil {
		return nil, err
	}
	if c.DType.Kind != 'U' && c.DType.Kind != 'O' {
		return nil, Unsupportedf("categorize dtype %s", c.DType)
	}
	if c.AsType, err = numpyTypeConfig("categorize", cfg, "astype", "|u1"); err != nil {
		return nil, err
	}
	if !c.AsType.integer() {
		return nil, Unsupportedf("categorize astype %s", c.AsType)
	}
	return c, nil
}

// Name implements Codec.
func (Categorize) Name() string { return "categorize" }

// EncodedSize implements BytesToBytes.
func (c Categorize) EncodedSize(n int) int {
	if c.DType.Kind == 'O' {
		return -1
	}
	return resizedSize(n, c.DType, c.AsType)
}

// Encode implements BytesToBytes.
func (c Categorize) Encode(data []byte) ([]byte, error) {
	var values []string
	if c.DType.Kind == 'O' {
		elems, err := splitVlen("categorize", data, -1)
		if err != nil {
			return nil, err
		}
		values = toStrings(elems)
	} else {
		n, err := elements("categorize", len(data), c.DType)
		if err != nil {
			return nil, err
		}
		values = make([]string, n)
		for i := range values {
			values[i] = fromUTF32(data[i*c.DType.Size:(i+1)*c.DType.Size], c.DType)
		}
	}
	index := make(map[string]uint64, len(c.Labels))
	for i, l := range c.Labels {
		index[l] = uint64(i + 1) // later labels win, as in numcodecs
	}
	a := c.AsType
	out := make([]byte, len(values)*a.Size)
	for i, v := range values {
		a.putBits(out[i*a.Size:(i+1)*a.Size], index[v])
	}
	return out, nil
}

// Decode implements BytesToBytes.
func (c Categorize) Decode(data []byte, decodedSize int) ([]byte, error) {
	a := c.AsType
	if len(data)%a.Size != 0 {
		return nil, Corruptf("categorize", "%d bytes are not whole elements of %s", len(data), a)
	}
	n := len(data) / a.Size
	label := func(i int) string {
		code := a.int(data[i*a.Size:])
		if code == 0 || code > uint64(len(c.Labels)) {
			return ""
		}
		return c.Labels[code-1]
	}
	if c.DType.Kind == 'O' {
		elems := make([]string, n)
		size := 4
		for i := range elems {
			elems[i] = label(i)
			size += 4 + len(elems[i])
			if err := checkSize("categorize", size, -1); err != nil {
				return nil, err
			}
		}
		out := vlenAppend(make([]byte, 0, size), elems)
		if err := checkSize("categorize", len(out), decodedSize); err != nil {
			return nil, err
		}
		return out, nil
	}
	d := c.DType
	if err := checkElems("categorize", n, d.Size, decodedSize); err != nil {
		return nil, err
	}
	out := make([]byte, n*d.Size)
	for i := 0; i < n; i++ {
		putUTF32(out[i*d.Size:(i+1)*d.Size], d, label(i))
	}
	return out, nil
}

// fromUTF32 decodes a fixed-size UTF-32 element, without its trailing NULs
// (NumPy ignores them). Code points that are not valid become U+FFFD.
func fromUTF32(b []byte, t NumpyType) string {
	var sb strings.Builder
	end := len(b) / 4
	for end > 0 && t.order().Uint32(b[(end-1)*4:]) == 0 {
		end--
	}
	for i := 0; i < end; i++ {
		sb.WriteRune(rune(t.order().Uint32(b[i*4:])))
	}
	return sb.String()
}

// putUTF32 stores s in the fixed-size UTF-32 element b, truncated to fit
// and padded with NULs, as NumPy assigns strings.
func putUTF32(b []byte, t NumpyType, s string) {
	i := 0
	for _, r := range s {
		if i+4 > len(b) {
			break
		}
		t.order().PutUint32(b[i:], uint32(r))
		i += 4
	}
	clear(b[i:])
}
