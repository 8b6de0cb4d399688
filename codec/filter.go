package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The numcodecs filters (delta, fixedscaleoffset, quantize, astype,
// shuffle, packbits, categorize) are bytes→bytes codecs here: in Zarr v2 a
// filter sits between the serialisation of the chunk and the compressor,
// and sees a flat buffer of elements of the type its configuration names
// ("dtype"), in that type's byte order. Their arithmetic follows NumPy 1.x,
// which numcodecs uses, type promotions included, so that lossy filters
// decode bit for bit as numcodecs does.

// numpyTypeConfig reads member key of cfg as a NumPy type string; def is
// used when it is absent ("" makes it required).
func numpyTypeConfig(codec string, cfg Config, key, def string) (NumpyType, error) {
	s := def
	if _, err := cfg.Decode(codec, key, &s); err != nil {
		return NumpyType{}, err
	}
	if s == "" {
		return NumpyType{}, fmt.Errorf("%s: configuration has no %s", codec, key)
	}
	t, err := ParseNumpyType(s)
	if err != nil {
		return NumpyType{}, fmt.Errorf("%s: %s: %w", codec, key, err)
	}
	return t, nil
}

// numericConfig reads a numeric NumPy type from cfg; other kinds are
// unsupported.
func numericConfig(codec string, cfg Config, key, def string) (NumpyType, error) {
	t, err := numpyTypeConfig(codec, cfg, key, def)
	if err == nil && !t.numeric() {
		err = Unsupportedf("%s %s %s", codec, key, t)
	}
	return t, err
}

// typeName returns the string form of member key of cfg, or "" when it is
// absent, for defaults such as "astype defaults to dtype".
func typeName(cfg Config, key string) string {
	var s string
	if raw, ok := cfg[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// elements returns how many elements of t the n bytes hold.
func elements(codec string, n int, t NumpyType) (int, error) {
	if t.Size == 0 || n%t.Size != 0 {
		return 0, fmt.Errorf("%s: %d bytes are not whole elements of %s", codec, n, t)
	}
	return n / t.Size, nil
}

// decodedElements checks encoded data of elements of type enc against the
// size the caller expects of its decoding into elements of type dec, and
// returns the number of elements.
func decodedElements(codec string, data []byte, enc, dec NumpyType, decodedSize int) (int, error) {
	if len(data)%enc.Size != 0 {
		return 0, Corruptf(codec, "%d bytes are not whole elements of %s", len(data), enc)
	}
	n := len(data) / enc.Size
	if err := checkElems(codec, n, dec.Size, decodedSize); err != nil {
		return 0, err
	}
	return n, nil
}

// resizedSize returns the size of n bytes of elements of from converted to
// elements of to, or -1 when n is not a whole number of elements.
func resizedSize(n int, from, to NumpyType) int {
	if from.Size == 0 || n < 0 || n%from.Size != 0 {
		return -1
	}
	return n / from.Size * to.Size
}

// floatType returns the NumPy float type of size bytes.
func floatType(size int) NumpyType { return NumpyType{Kind: 'f', Size: size} }

// promoteFloat returns the float type NumPy computes in when it combines
// types a and b, at least one of them a float.
func promoteFloat(a, b NumpyType) NumpyType {
	need := func(t NumpyType) int {
		switch {
		case t.Kind == 'f':
			return t.Size
		case t.Kind == 'b' || t.Size == 1:
			return 2
		case t.Size == 2:
			return 4
		}
		return 8
	}
	return floatType(max(need(a), need(b)))
}

// scalar is a number from a filter's configuration, remembered as a JSON
// integer or float because NumPy 1.x promotes the two differently.
type scalar struct {
	v     float64
	isInt bool
	i     int64
}

func scalarConfig(codec string, cfg Config, key string, def float64) (scalar, error) {
	raw, ok := cfg[key]
	if !ok || string(raw) == "null" {
		return scalar{v: def, isInt: def == math.Trunc(def), i: int64(def)}, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return scalar{}, fmt.Errorf("%s: configuration %q: %w", codec, key, err)
	}
	s := n.String()
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return scalar{v: float64(i), isInt: true, i: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return scalar{}, fmt.Errorf("%s: configuration %q: %w", codec, key, err)
	}
	return scalar{v: f}, nil
}

// withScalar returns the type of NumPy 1.x arithmetic between an array of
// float type t and the Python scalar s (value-based casting).
func withScalar(t NumpyType, s scalar) NumpyType {
	need := 8
	if s.isInt {
		switch {
		case s.i >= -128 && s.i <= 255:
			need = 2
		case s.i >= -32768 && s.i <= 65535:
			need = 4
		}
	} else {
		switch a := math.Abs(s.v); {
		case a <= 65504 || math.IsInf(a, 0) || a != a:
			need = 2
		case a <= math.MaxFloat32:
			need = 4
		}
	}
	return floatType(max(t.Size, need))
}

// Shuffle is numcodecs' Shuffle filter: the first byte of every element,
// then the second byte of every element, and so on. Bytes after the last
// whole element are kept as they are.
type Shuffle struct {
	ElementSize int
}

// newShuffle reads numcodecs' "elementsize" and "element_size", the name
// the zarr-extensions registry's examples give the same member (codecs/
// conditional/README.md: {"name": "shuffle", "configuration":
// {"element_size": 4}}). Both present and different, or either negative,
// is invalid metadata: silently picking one would unshuffle wrongly.
func newShuffle(cfg Config) (Codec, error) {
	c := Shuffle{ElementSize: 4} // numcodecs' default
	var sizes [2]int
	var set [2]bool
	for i, key := range [2]string{"elementsize", "element_size"} {
		ok, err := cfg.Decode("shuffle", key, &sizes[i])
		if err != nil {
			return nil, err
		}
		if ok && sizes[i] < 0 {
			return nil, fmt.Errorf("shuffle: %s %d is negative", key, sizes[i])
		}
		if set[i] = ok; ok {
			c.ElementSize = sizes[i]
		}
	}
	if set[0] && set[1] && sizes[0] != sizes[1] {
		return nil, fmt.Errorf("shuffle: elementsize %d and element_size %d disagree", sizes[0], sizes[1])
	}
	return c, nil
}

// Name implements Codec.
func (Shuffle) Name() string { return "shuffle" }

// EncodedSize implements BytesToBytes.
func (Shuffle) EncodedSize(n int) int { return n }

// Encode implements BytesToBytes.
func (c Shuffle) Encode(data []byte) ([]byte, error) { return c.shuffle(data, false), nil }

// Decode implements BytesToBytes.
func (c Shuffle) Decode(data []byte, decodedSize int) ([]byte, error) {
	if err := checkSize("shuffle", len(data), decodedSize); err != nil {
		return nil, err
	}
	return c.shuffle(data, true), nil
}

func (c Shuffle) shuffle(data []byte, inverse bool) []byte {
	out := make([]byte, len(data))
	size := c.ElementSize
	if size <= 1 {
		copy(out, data)
		return out
	}
	count := len(data) / size
	for i := 0; i < count; i++ {
		for b := 0; b < size; b++ {
			if inverse {
				out[i*size+b] = data[b*count+i]
			} else {
				out[b*count+i] = data[i*size+b]
			}
		}
	}
	copy(out[count*size:], data[count*size:])
	return out
}

func init() {
	Register(newDelta, "delta")
	Register(newFixedScaleOffset, "fixedscaleoffset")
	Register(newQuantize, "quantize")
	Register(newAsType, "astype")
	Register(newShuffle, "shuffle", "numcodecs.shuffle")
	Register(newPackBits, "packbits")
	Register(newCategorize, "categorize")
	Register(newBitRound, "bitround", "numcodecs.bitround")
}
