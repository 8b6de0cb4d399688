package codec

import (
	"fmt"
	"math"
)

// The arithmetic numcodecs filters: delta, fixedscaleoffset, quantize,
// astype and bitround (see filter.go for what they share).

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
