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

// Delta is numcodecs' Delta filter: the first element, then the difference
// of each element from the one before, stored as AsType.
type Delta struct {
	DType, AsType NumpyType
}

func newDelta(cfg Config) (Codec, error) {
	d, err := numericConfig("delta", cfg, "dtype", "")
	if err != nil {
		return nil, err
	}
	a, err := numericConfig("delta", cfg, "astype", typeName(cfg, "dtype"))
	if err != nil {
		return nil, err
	}
	return Delta{DType: d, AsType: a}, nil
}

// Name implements Codec.
func (Delta) Name() string { return "delta" }

// EncodedSize implements BytesToBytes.
func (c Delta) EncodedSize(n int) int { return resizedSize(n, c.DType, c.AsType) }

// Encode implements BytesToBytes.
func (c Delta) Encode(data []byte) ([]byte, error) {
	d, a := c.DType, c.AsType
	n, err := elements("delta", len(data), d)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n*a.Size)
	var diff [8]byte
	for i := 0; i < n; i++ {
		cur := data[i*d.Size : (i+1)*d.Size]
		dst := out[i*a.Size : (i+1)*a.Size]
		if i == 0 {
			convert(dst, a, cur, d)
			continue
		}
		prev := data[(i-1)*d.Size : i*d.Size]
		// numpy.diff computes in d.
		switch d.Kind {
		case 'b':
			diff[0] = 0
			if (cur[0] != 0) != (prev[0] != 0) {
				diff[0] = 1
			}
		case 'f':
			d.putFloat(diff[:], d.float(cur)-d.float(prev))
		default:
			d.putBits(diff[:], d.int(cur)-d.int(prev))
		}
		convert(dst, a, diff[:d.Size], d)
	}
	return out, nil
}

// Decode implements BytesToBytes: numpy.cumsum(enc, out=dec), which
// accumulates in the promotion of the two types.
func (c Delta) Decode(data []byte, decodedSize int) ([]byte, error) {
	d, a := c.DType, c.AsType
	n, err := decodedElements("delta", data, a, d, decodedSize)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n*d.Size)
	if a.Kind == 'f' || d.Kind == 'f' {
		acc := promoteFloat(a, d)
		sum := 0.0
		for i := 0; i < n; i++ {
			sum = acc.round(sum + a.float(data[i*a.Size:]))
			d.putFloat(out[i*d.Size:(i+1)*d.Size], sum)
		}
		return out, nil
	}
	var sum uint64 // integers wrap; bools accumulate as counts
	for i := 0; i < n; i++ {
		sum += a.int(data[i*a.Size:])
		d.putInt(out[i*d.Size:(i+1)*d.Size], sum, a)
	}
	return out, nil
}

// FixedScaleOffset is numcodecs' FixedScaleOffset filter: round((x -
// Offset) × Scale) stored as AsType; decoding gives enc / Scale + Offset.
type FixedScaleOffset struct {
	DType, AsType NumpyType
	Scale, Offset scalar
}

func newFixedScaleOffset(cfg Config) (Codec, error) {
	var c FixedScaleOffset
	var err error
	if c.DType, err = numericConfig("fixedscaleoffset", cfg, "dtype", ""); err != nil {
		return nil, err
	}
	if c.AsType, err = numericConfig("fixedscaleoffset", cfg, "astype", typeName(cfg, "dtype")); err != nil {
		return nil, err
	}
	if _, ok := cfg["scale"]; !ok {
		return nil, fmt.Errorf("fixedscaleoffset: configuration has no scale")
	}
	if c.Scale, err = scalarConfig("fixedscaleoffset", cfg, "scale", 1); err != nil {
		return nil, err
	}
	if _, ok := cfg["offset"]; !ok {
		return nil, fmt.Errorf("fixedscaleoffset: configuration has no offset")
	}
	if c.Offset, err = scalarConfig("fixedscaleoffset", cfg, "offset", 0); err != nil {
		return nil, err
	}
	return c, nil
}

// Name implements Codec.
func (FixedScaleOffset) Name() string { return "fixedscaleoffset" }

// EncodedSize implements BytesToBytes.
func (c FixedScaleOffset) EncodedSize(n int) int { return resizedSize(n, c.DType, c.AsType) }

// Encode implements BytesToBytes. Only float types are encoded (NumPy's
// integer arithmetic with Python scalars is not reproduced).
func (c FixedScaleOffset) Encode(data []byte) ([]byte, error) {
	d, a := c.DType, c.AsType
	if d.Kind != 'f' {
		return nil, Unsupportedf("fixedscaleoffset encoding of %s", d)
	}
	n, err := elements("fixedscaleoffset", len(data), d)
	if err != nil {
		return nil, err
	}
	t1 := withScalar(d, c.Offset)
	t2 := withScalar(t1, c.Scale)
	out := make([]byte, n*a.Size)
	// NumPy converts the scalars to the type it computes in.
	offset, scale := t1.round(c.Offset.v), t2.round(c.Scale.v)
	for i := 0; i < n; i++ {
		v := t1.round(d.float(data[i*d.Size:]) - offset)
		v = math.RoundToEven(t2.round(v * scale))
		a.putFloat(out[i*a.Size:(i+1)*a.Size], v)
	}
	return out, nil
}

// Decode implements BytesToBytes.
func (c FixedScaleOffset) Decode(data []byte, decodedSize int) ([]byte, error) {
	d, a := c.DType, c.AsType
	n, err := decodedElements("fixedscaleoffset", data, a, d, decodedSize)
	if err != nil {
		return nil, err
	}
	// Integers divided by a Python number are float64; floats keep their
	// type unless the scalar needs a wider one.
	t1 := floatType(8)
	if a.Kind == 'f' {
		t1 = withScalar(a, c.Scale)
	}
	t2 := withScalar(t1, c.Offset)
	// NumPy converts the scalars to the type it computes in.
	scale, offset := t1.round(c.Scale.v), t2.round(c.Offset.v)
	out := make([]byte, n*d.Size)
	for i := 0; i < n; i++ {
		v := t1.round(a.float(data[i*a.Size:]) / scale)
		d.putFloat(out[i*d.Size:(i+1)*d.Size], t2.round(v+offset))
	}
	return out, nil
}

// Quantize is numcodecs' Quantize filter: floats rounded to Digits decimal
// digits (in binary), stored as AsType. Decoding only converts the type.
type Quantize struct {
	Digits        int
	DType, AsType NumpyType
}

func newQuantize(cfg Config) (Codec, error) {
	var c Quantize
	ok, err := cfg.Decode("quantize", "digits", &c.Digits)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("quantize: configuration has no digits")
	}
	if c.DType, err = numericConfig("quantize", cfg, "dtype", ""); err != nil {
		return nil, err
	}
	if c.AsType, err = numericConfig("quantize", cfg, "astype", typeName(cfg, "dtype")); err != nil {
		return nil, err
	}
	if c.DType.Kind != 'f' || c.AsType.Kind != 'f' {
		return nil, Unsupportedf("quantize from %s to %s (only float types)", c.DType, c.AsType)
	}
	return c, nil
}

// Name implements Codec.
func (Quantize) Name() string { return "quantize" }

// EncodedSize implements BytesToBytes.
func (c Quantize) EncodedSize(n int) int { return resizedSize(n, c.DType, c.AsType) }

// quantizeScale computes numcodecs' scale, a power of two, for digits
// decimal digits, with the same floating-point steps as its Python code.
func quantizeScale(digits int) float64 {
	precision := math.Pow(10, float64(-digits))
	exp := math.Log(precision) / math.Log(10)
	if exp < 0 {
		exp = math.Floor(exp)
	} else {
		exp = math.Ceil(exp)
	}
	bits := math.Ceil(math.Log(math.Pow(10, -exp)) / math.Log(2))
	return math.Pow(2, bits)
}

// Encode implements BytesToBytes.
func (c Quantize) Encode(data []byte) ([]byte, error) {
	d, a := c.DType, c.AsType
	n, err := elements("quantize", len(data), d)
	if err != nil {
		return nil, err
	}
	t := withScalar(d, scalar{v: quantizeScale(c.Digits)})
	scale := t.round(quantizeScale(c.Digits))
	out := make([]byte, n*a.Size)
	for i := 0; i < n; i++ {
		v := math.RoundToEven(t.round(scale * d.float(data[i*d.Size:])))
		a.putFloat(out[i*a.Size:(i+1)*a.Size], t.round(v/scale))
	}
	return out, nil
}

// Decode implements BytesToBytes.
func (c Quantize) Decode(data []byte, decodedSize int) ([]byte, error) {
	return convertAll("quantize", data, c.AsType, c.DType, decodedSize)
}

// convertAll converts every element of data from type from to type to.
func convertAll(codec string, data []byte, from, to NumpyType, decodedSize int) ([]byte, error) {
	n, err := decodedElements(codec, data, from, to, decodedSize)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n*to.Size)
	for i := 0; i < n; i++ {
		convert(out[i*to.Size:(i+1)*to.Size], to, data[i*from.Size:(i+1)*from.Size], from)
	}
	return out, nil
}

// AsType is numcodecs' AsType filter: elements of DecodeType stored as
// EncodeType.
type AsType struct {
	EncodeType, DecodeType NumpyType
}

func newAsType(cfg Config) (Codec, error) {
	e, err := numericConfig("astype", cfg, "encode_dtype", "")
	if err != nil {
		return nil, err
	}
	d, err := numericConfig("astype", cfg, "decode_dtype", "")
	if err != nil {
		return nil, err
	}
	return AsType{EncodeType: e, DecodeType: d}, nil
}

// Name implements Codec.
func (AsType) Name() string { return "astype" }

// EncodedSize implements BytesToBytes.
func (c AsType) EncodedSize(n int) int { return resizedSize(n, c.DecodeType, c.EncodeType) }

// Encode implements BytesToBytes.
func (c AsType) Encode(data []byte) ([]byte, error) {
	if _, err := elements("astype", len(data), c.DecodeType); err != nil {
		return nil, err
	}
	return convertAll("astype", data, c.DecodeType, c.EncodeType, -1)
}

// Decode implements BytesToBytes.
func (c AsType) Decode(data []byte, decodedSize int) ([]byte, error) {
	return convertAll("astype", data, c.EncodeType, c.DecodeType, decodedSize)
}

// Shuffle is numcodecs' Shuffle filter: the first byte of every element,
// then the second byte of every element, and so on. Bytes after the last
// whole element are kept as they are.
type Shuffle struct {
	ElementSize int
}

func newShuffle(cfg Config) (Codec, error) {
	c := Shuffle{ElementSize: 4} // numcodecs' default
	if _, err := cfg.Decode("shuffle", "elementsize", &c.ElementSize); err != nil {
		return nil, err
	}
	if c.ElementSize < 0 {
		return nil, fmt.Errorf("shuffle: elementsize %d is negative", c.ElementSize)
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

// BitRound is the array→array codec "bitround" (numcodecs BitRound):
// encoding keeps Keepbits bits of each float's mantissa, rounding to
// nearest (ties to even); decoding changes nothing.
type BitRound struct {
	Keepbits int
}

func newBitRound(cfg Config) (Codec, error) {
	var c BitRound
	ok, err := cfg.Decode("bitround", "keepbits", &c.Keepbits)
	if err != nil {
		return nil, err
	}
	if !ok || c.Keepbits < 0 {
		return nil, fmt.Errorf("bitround: keepbits must be given and not negative")
	}
	return c, nil
}

// Name implements Codec.
func (BitRound) Name() string { return "bitround" }

// EncodedSpec implements ArrayToArray.
func (BitRound) EncodedSpec(decoded ArraySpec) (ArraySpec, error) { return decoded, nil }

// Decode implements ArrayToArray; rounding needs no undoing.
func (BitRound) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) { return chunk, nil }

// Encode implements ArrayToArray for float16, float32 and float64.
func (c BitRound) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	var bits int
	switch decoded.DataType.Name {
	case "float16":
		bits = 10
	case "float32":
		bits = 23
	case "float64":
		bits = 52
	default:
		return nil, Unsupportedf("bitround encoding of %s", decoded.DataType.Name)
	}
	if c.Keepbits > bits {
		return nil, fmt.Errorf("bitround: keepbits %d is more than the %d mantissa bits of %s", c.Keepbits, bits, decoded.DataType.Name)
	}
	if c.Keepbits == bits {
		return chunk, nil
	}
	t := NumpyType{Kind: 'i', Size: decoded.DataType.Size}
	if len(chunk)%t.Size != 0 {
		return nil, fmt.Errorf("bitround: %d bytes are not whole %s elements", len(chunk), decoded.DataType.Name)
	}
	maskbits := uint(bits - c.Keepbits)
	mask := ^uint64(0) << maskbits
	half := uint64(1)<<(maskbits-1) - 1
	out := make([]byte, len(chunk))
	for i := 0; i < len(chunk); i += t.Size {
		b := t.int(chunk[i:]) // sign-extended, as numcodecs works on signed ints
		b += (b>>maskbits)&1 + half
		t.putBits(out[i:i+t.Size], b&mask)
	}
	return out, nil
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
