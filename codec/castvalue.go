package codec

import (
	"encoding/json"
	"fmt"
	"math"
)

// The array→array codecs scale_offset and cast_value of zarr-extensions
// (codecs/scale_offset, codecs/cast_value), for every type they list:
// int2 … int64, uint2 … uint64, float16/32/64, bfloat16 and the float8,
// float6 and float4 types. zarr-python 3.2 writes them, as the successors
// of numcodecs' fixedscaleoffset and astype.

func init() {
	Register(newScaleOffset, "scale_offset")
	Register(newCastValue, "cast_value")
}

// ScaleOffset is the "scale_offset" codec: encoding computes
// (in − offset) × scale, decoding in / scale + offset, in the arithmetic
// of the array's data type; a value that type cannot hold is an error.
type ScaleOffset struct {
	Offset, Scale json.RawMessage // as the configuration spells them (nil: 0, 1)
}

func newScaleOffset(cfg Config) (Codec, error) {
	var c ScaleOffset
	for k, v := range cfg {
		switch k {
		case "offset":
			c.Offset = v
		case "scale":
			c.Scale = v
		default:
			return nil, fmt.Errorf("scale_offset: unknown configuration member %q", k)
		}
	}
	return c, nil
}

// Name implements Codec.
func (ScaleOffset) Name() string { return "scale_offset" }

// params returns the type and the offset and scale of an array of t.
func (c ScaleOffset) params(t DataType) (nt numType, off, scale num, err error) {
	if nt, err = numTypeOf("scale_offset", t); err != nil {
		return
	}
	off, scale = num{}, num{i: 1, u: 1, f: 1}
	if c.Offset != nil {
		if off, err = nt.parse(c.Offset); err != nil {
			err = fmt.Errorf("scale_offset: offset: %w", err)
			return
		}
	}
	if c.Scale != nil {
		if scale, err = nt.parse(c.Scale); err != nil {
			err = fmt.Errorf("scale_offset: scale: %w", err)
		}
	}
	return
}

// EncodedSpec implements ArrayToArray: the type is kept, the fill value
// encoded.
func (c ScaleOffset) EncodedSpec(decoded ArraySpec) (ArraySpec, error) {
	out := decoded
	if decoded.FillValue != nil {
		fill, err := c.Encode(decoded.FillValue, ArraySpec{Shape: []int{}, DataType: decoded.DataType})
		if err != nil {
			return ArraySpec{}, fmt.Errorf("scale_offset: the fill value: %w", err)
		}
		out.FillValue = fill
	}
	return out, nil
}

// Encode implements ArrayToArray.
func (c ScaleOffset) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.apply(chunk, decoded, false)
}

// Decode implements ArrayToArray.
func (c ScaleOffset) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.apply(chunk, decoded, true)
}

func (c ScaleOffset) apply(chunk []byte, spec ArraySpec, decode bool) ([]byte, error) {
	t, off, scale, err := c.params(spec.DataType)
	if err != nil {
		return nil, err
	}
	if err := checkSize("scale_offset", len(chunk), spec.ByteSize()); err != nil {
		return nil, err
	}
	out := make([]byte, len(chunk))
	for k := 0; k < len(chunk); k += t.size {
		v, err := t.scaleOffset(t.load(chunk[k:]), off, scale, decode)
		if err != nil {
			return nil, Corruptf("scale_offset", "element %d: %w", k/t.size, err)
		}
		t.store(out[k:], v)
	}
	return out, nil
}

// scaleOffset computes one value: in / scale + offset (decode) or
// (in − offset) × scale, checking that t holds every step.
func (t numType) scaleOffset(v, off, scale num, decode bool) (num, error) {
	switch t.kind {
	case 'f':
		// Each step rounded to t (nearest-even), as NumPy's float16 and
		// ml_dtypes's arithmetic round float32 results: exact rounding,
		// since float64 carries more than twice t's precision plus 2.
		step := func(f float64) (num, error) {
			r, err := t.roundFloat(f, "nearest-even", overflowIEEE)
			return num{f: r}, err
		}
		if decode {
			q, err := step(v.f / scale.f)
			if err != nil {
				return q, err
			}
			return step(q.f + off.f)
		}
		d, err := step(v.f - off.f)
		if err != nil {
			return d, err
		}
		return step(d.f * scale.f)
	case 'u':
		if decode {
			if scale.u == 0 || v.u%scale.u != 0 {
				return num{}, fmt.Errorf("%d / %d is not an integer", v.u, scale.u)
			}
			r := v.u/scale.u + off.u
			if r < off.u || !t.fits(int64(0), r) {
				return num{}, fmt.Errorf("%d / %d + %d overflows", v.u, scale.u, off.u)
			}
			return num{u: r}, nil
		}
		if v.u < off.u {
			return num{}, fmt.Errorf("%d − %d is negative", v.u, off.u)
		}
		d := v.u - off.u
		if scale.u != 0 && d > math.MaxUint64/scale.u || !t.fits(0, d*scale.u) {
			return num{}, fmt.Errorf("(%d − %d) × %d overflows", v.u, off.u, scale.u)
		}
		return num{u: d * scale.u}, nil
	}
	if decode {
		if scale.i == 0 || v.i%scale.i != 0 || scale.i == -1 && v.i == math.MinInt64 {
			return num{}, fmt.Errorf("%d / %d is not an integer", v.i, scale.i)
		}
		q := v.i / scale.i
		r := q + off.i
		if (off.i > 0 && r < q) || (off.i < 0 && r > q) || !t.fits(r, 0) {
			return num{}, fmt.Errorf("%d / %d + %d overflows", v.i, scale.i, off.i)
		}
		return num{i: r}, nil
	}
	d := v.i - off.i
	if (off.i < 0 && d < v.i) || (off.i > 0 && d > v.i) {
		return num{}, fmt.Errorf("%d − %d overflows", v.i, off.i)
	}
	p := d * scale.i
	if d != 0 && (p/d != scale.i || d == -1 && scale.i == math.MinInt64) || !t.fits(p, 0) {
		return num{}, fmt.Errorf("(%d − %d) × %d overflows", v.i, off.i, scale.i)
	}
	return num{i: p}, nil
}

// CastValue is the "cast_value" codec: each value converted to DataType
// (encoding) or back (decoding) by its numerical value: scalar_map first,
// then exactly, then by Rounding and OutOfRange.
type CastValue struct {
	DataType   string // the encoded type's v3 name
	Rounding   string // "nearest-even" (default), "towards-zero", "towards-positive", "towards-negative", "nearest-away"
	OutOfRange string // "", "clamp" or "wrap"
	// Encode and Decode are scalar_map's pairs, as spelled.
	EncodeMap, DecodeMap [][2]json.RawMessage
}

func newCastValue(cfg Config) (Codec, error) {
	c := CastValue{Rounding: "nearest-even"}
	for k, v := range cfg {
		var err error
		switch k {
		case "data_type":
			err = json.Unmarshal(v, &c.DataType)
		case "rounding":
			err = json.Unmarshal(v, &c.Rounding)
			switch c.Rounding {
			case "nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away":
			default:
				err = fmt.Errorf("unknown rounding %q", c.Rounding)
			}
		case "out_of_range":
			err = json.Unmarshal(v, &c.OutOfRange)
			if c.OutOfRange != "clamp" && c.OutOfRange != "wrap" {
				err = fmt.Errorf("unknown out_of_range %q", c.OutOfRange)
			}
		case "scalar_map":
			var m struct {
				Encode, Decode [][2]json.RawMessage
			}
			err = json.Unmarshal(v, &m)
			c.EncodeMap, c.DecodeMap = m.Encode, m.Decode
		default:
			err = fmt.Errorf("unknown configuration member %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("cast_value: %s: %w", k, err)
		}
	}
	if c.DataType == "" {
		return nil, fmt.Errorf("cast_value: data_type is missing")
	}
	t, ok := numTypeNamed(c.DataType)
	if !ok {
		return nil, Unsupportedf("cast_value to %s", c.DataType)
	}
	if t.kind == 'f' && c.OutOfRange == "wrap" {
		// "Only permitted when data_type is an integral type".
		return nil, fmt.Errorf("cast_value: out_of_range \"wrap\" with the float data_type %s", c.DataType)
	}
	return c, nil
}

// Name implements Codec.
func (CastValue) Name() string { return "cast_value" }

// target returns the encoded data type.
func (c CastValue) target() DataType {
	t, _ := numTypeNamed(c.DataType)
	return DataType{Name: c.DataType, Size: t.size}
}

// EncodedSpec implements ArrayToArray: the encoded type, the fill value
// cast to it.
func (c CastValue) EncodedSpec(decoded ArraySpec) (ArraySpec, error) {
	out := decoded
	out.DataType = c.target()
	if decoded.FillValue != nil {
		fill, err := c.Encode(decoded.FillValue, ArraySpec{Shape: []int{}, DataType: decoded.DataType})
		if err != nil {
			return ArraySpec{}, fmt.Errorf("cast_value: the fill value: %w", err)
		}
		out.FillValue = fill
	}
	return out, nil
}

// Encode implements ArrayToArray.
func (c CastValue) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.cast(chunk, decoded.DataType, c.target(), c.EncodeMap, decoded.NumElements())
}

// Decode implements ArrayToArray.
func (c CastValue) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	return c.cast(chunk, c.target(), decoded.DataType, c.DecodeMap, decoded.NumElements())
}

func (c CastValue) cast(chunk []byte, fromT, toT DataType, pairs [][2]json.RawMessage, n int) ([]byte, error) {
	from, err := numTypeOf("cast_value", fromT)
	if err != nil {
		return nil, err
	}
	to, err := numTypeOf("cast_value", toT)
	if err != nil {
		return nil, err
	}
	if err := checkSize("cast_value", len(chunk), n*from.size); err != nil {
		return nil, err
	}
	keys, vals := make([]num, len(pairs)), make([]num, len(pairs))
	for k, p := range pairs {
		if keys[k], err = from.parse(p[0]); err != nil {
			return nil, fmt.Errorf("cast_value: scalar_map: %w", err)
		}
		if vals[k], err = to.parse(p[1]); err != nil {
			return nil, fmt.Errorf("cast_value: scalar_map: %w", err)
		}
	}
	out := make([]byte, n*to.size)
next:
	for e := range n {
		v := from.load(chunk[e*from.size:])
		for k := range keys { // the first pair of a key wins
			if from.equal(v, keys[k]) {
				to.store(out[e*to.size:], vals[k])
				continue next
			}
		}
		r, err := c.convert(v, from, to)
		if err != nil {
			return nil, Corruptf("cast_value", "element %d: %w", e, err)
		}
		to.store(out[e*to.size:], r)
	}
	return out, nil
}

// convert casts v of type from to type to: exactly, else by the rounding
// and out-of-range rules.
func (c CastValue) convert(v num, from, to numType) (num, error) {
	if to.kind == 'f' {
		// The exact value, rounded once by c.Rounding; beyond the range:
		// out_of_range "clamp" (±Inf, or the largest finite value of
		// formats without one), else an error ("wrap" is for integers).
		overflow := overflowError
		if c.OutOfRange == "clamp" {
			overflow = overflowClamp
		}
		switch from.kind {
		case 'f':
			f, err := to.roundFloat(v.f, c.Rounding, overflow)
			return num{f: f}, err
		case 'u':
			f, err := to.roundTo(false, v.u, 0, c.Rounding, overflow)
			return num{f: f}, err
		}
		mag := uint64(v.i)
		if v.i < 0 {
			mag = -mag
		}
		f, err := to.roundTo(v.i < 0, mag, 0, c.Rounding, overflow)
		return num{f: f}, err
	}
	// To an integer type: from an integer, or a rounded float.
	var neg bool
	var mag uint64 // |value|, exact
	switch from.kind {
	case 'u':
		mag = v.u
	case 'i':
		neg, mag = v.i < 0, uint64(v.i)
		if neg {
			mag = -mag
		}
	default:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return num{}, fmt.Errorf("%v has no integer value", v.f)
		}
		r := c.round(v.f)
		if math.Abs(r) >= 1<<64 {
			if c.OutOfRange != "clamp" {
				return num{}, fmt.Errorf("%v is out of range", v.f)
			}
			r = math.Copysign(1<<64-1<<11, r)
		}
		neg, mag = r < 0, uint64(math.Abs(r))
	}
	bits := to.bits
	var lo, hi uint64 // the magnitudes allowed below and above zero
	if to.kind == 'u' {
		lo, hi = 0, math.MaxUint64>>(64-bits)
	} else {
		lo, hi = 1<<(bits-1), 1<<(bits-1)-1
	}
	inRange := !neg && mag <= hi || neg && mag <= lo
	if !inRange {
		switch c.OutOfRange {
		case "clamp":
			if neg {
				mag = lo
			} else {
				mag = hi
			}
		case "wrap":
			// Congruent modulo 2^bits: the low bits of the two's complement.
			w := mag
			if neg {
				w = -mag
			}
			w &= math.MaxUint64 >> (64 - bits)
			if to.kind == 'u' {
				return num{u: w}, nil
			}
			shift := 64 - bits
			return num{i: int64(w<<shift) >> shift}, nil
		default:
			return num{}, fmt.Errorf("out of the range of %c%d", to.kind, to.size)
		}
	}
	if to.kind == 'u' {
		if neg {
			return num{u: 0}, nil // mag is 0 (−0.0 rounded, or clamped)
		}
		return num{u: mag}, nil
	}
	if neg {
		return num{i: -int64(mag)}, nil
	}
	return num{i: int64(mag)}, nil
}

// round rounds f to an integer by the configured rule.
func (c CastValue) round(f float64) float64 {
	switch c.Rounding {
	case "towards-zero":
		return math.Trunc(f)
	case "towards-positive":
		return math.Ceil(f)
	case "towards-negative":
		return math.Floor(f)
	case "nearest-away":
		return math.Round(f)
	}
	return math.RoundToEven(f)
}
