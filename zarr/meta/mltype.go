package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
)

// The data types of zarr-extensions that machine-learning tools use and
// NumPy has no type for (ml_dtypes provides them in Python): bfloat16, the
// 8-, 6- and 4-bit floats, int2/int4/uint2/uint4 and their complex forms.
// Their `data` holds the stored element bytes (each 1 or 2 bytes,
// little-endian, as the bytes codec stores them); user.zarr.dtype and
// info.txt name them with ml_dtypes's names; there is no data.npy.

// mlKind marks an ML type in dtype.kind.
const mlKind = 'x'

// mlType describes one ML type.
type mlType struct {
	size int // bytes of one component (1 or 2)
	// complex types have two components (real, imaginary).
	complex bool
	// bits are the bits of a component that carry its value (the low
	// ones of its byte; the others are ignored).
	bits int
	// integers: int2/int4 (signed) and uint2/uint4.
	integer, signed bool
	// floats: the bit layout (exponent, mantissa, bias, specials), which
	// the codec package's scale_offset and cast_value share.
	ff codec.FloatFormat
}

// mlTypes are the ML types by their registered names (chunk-grids and
// data-types of zarr-extensions, July 2026), each README's bit layout.
var mlTypes = map[string]mlType{
	"int2":  {size: 1, bits: 2, integer: true, signed: true},
	"uint2": {size: 1, bits: 2, integer: true},
	"int4":  {size: 1, bits: 4, integer: true, signed: true},
	"uint4": {size: 1, bits: 4, integer: true},
}

func init() {
	for _, name := range []string{"bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
		"float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"} {
		ff, _ := codec.FloatFormatOf(name)
		mlTypes[name] = mlType{size: (ff.Bits + 7) / 8, bits: ff.Bits, ff: ff}
	}
	// The complex forms: complex_bfloat16, complex_float8_e4m3 …, and
	// complex_float16 (NumPy has no complex32).
	for name, t := range mlTypes {
		if !t.integer {
			t.complex = true
			mlTypes["complex_"+name] = t
		}
	}
	// TensorStore's v2 name for the OCP FP8 E4M3 (not registered, so no
	// complex form).
	e4m3fn, _ := codec.FloatFormatOf("float8_e4m3fn")
	mlTypes["float8_e4m3fn"] = mlType{size: 1, bits: 8, ff: e4m3fn}
	f16, _ := codec.FloatFormatOf("float16")
	mlTypes["complex_float16"] = mlType{size: 2, complex: true, bits: 16, ff: f16}
}

// parseMLType returns the dtype of the ML type name, if it is one.
func parseMLType(name string) (dtype, bool) {
	t, ok := mlTypes[name]
	if !ok {
		return dtype{}, false
	}
	size := t.size
	if t.complex {
		size *= 2
	}
	return dtype{DataType: DataType{Name: name, Size: size, NumPy: name}, kind: mlKind, spelling: name}, true
}

// float decodes one component (its little-endian bytes b).
func (t mlType) float(b []byte) float64 {
	var v uint32
	if t.size == 2 {
		v = uint32(binary.LittleEndian.Uint16(b))
	} else {
		v = uint32(b[0])
	}
	v &= 1<<t.bits - 1
	if t.integer {
		if t.signed && v>>(t.bits-1) != 0 {
			return float64(int32(v) - 1<<t.bits)
		}
		return float64(v)
	}
	return t.ff.Value(uint64(v))
}

// MLElement returns a decoder of elements of the ML type name to float64
// (complex types: their magnitude), for previews; false for other types.
func MLElement(name string) (func([]byte) float64, bool) {
	t, ok := mlTypes[name]
	if !ok {
		return nil, false
	}
	if t.complex {
		return func(b []byte) float64 { return math.Hypot(t.float(b), t.float(b[t.size:])) }, true
	}
	return t.float, true
}

// encode returns the code of the component nearest to v: exact where v
// is representable (as fill values are), ties to the even code.
func (t mlType) encode(v float64) (uint32, error) {
	if t.integer {
		lo, hi := 0.0, float64(int(1)<<t.bits-1)
		if t.signed {
			lo, hi = -float64(int(1)<<(t.bits-1)), float64(int(1)<<(t.bits-1)-1)
		}
		if v != math.Trunc(v) || v < lo || v > hi {
			return 0, fmt.Errorf("%v is not an integer in [%v, %v]", v, lo, hi)
		}
		return uint32(int32(v)) & (1<<t.bits - 1), nil
	}
	if t.size == 2 && t.ff.Exp == 8 {
		f := float32(v)
		bits := math.Float32bits(f)
		if f != f {
			return 0x7fc0, nil
		}
		return (bits + 0x7fff + (bits >> 16 & 1)) >> 16, nil
	}
	best, bestErr := uint32(0), math.Inf(1)
	found := false
	for c := range uint32(1) << t.bits {
		x := t.float([]byte{byte(c), byte(c >> 8)})
		switch {
		case math.IsNaN(v) || math.IsNaN(x):
			if math.IsNaN(v) && math.IsNaN(x) {
				return uint32(t.ff.NaNCode()), nil
			}
			continue
		case x == v && (v != 0 || math.Signbit(x) == math.Signbit(v)):
			return c, nil
		}
		if d := math.Abs(x - v); d < bestErr || d == bestErr && c%2 == 0 {
			best, bestErr, found = c, d, true
		}
	}
	if !found || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v has no representation", v)
	}
	return best, nil
}

// mlFill parses a fill value of ML type t: a number, "NaN", "Infinity",
// "-Infinity", a hex string of the stored bits ("0x7fc0"), or for
// complex types a list [real, imaginary] of those.
func mlFill(name string, raw json.RawMessage) ([]byte, error) {
	t := mlTypes[name]
	if t.complex {
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
			return nil, fmt.Errorf("a complex fill value is [real, imaginary]")
		}
		re, err := t.component(parts[0])
		if err != nil {
			return nil, fmt.Errorf("real part: %w", err)
		}
		im, err := t.component(parts[1])
		if err != nil {
			return nil, fmt.Errorf("imaginary part: %w", err)
		}
		return append(re, im...), nil
	}
	return t.component(raw)
}

// component parses the fill value of one component.
func (t mlType) component(raw json.RawMessage) ([]byte, error) {
	var code uint32
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch {
		case strings.HasPrefix(s, "0x") && !t.integer:
			v, err := strconv.ParseUint(s[2:], 16, 8*t.size)
			if err != nil {
				return nil, fmt.Errorf("%q is not %d hex digits", s, 2*t.size)
			}
			code = uint32(v)
		case s == "NaN" && !t.integer && t.ff.HasNaN():
			code = uint32(t.ff.NaNCode())
		case (s == "Infinity" || s == "-Infinity") && !t.integer && t.ff.HasInf():
			code = uint32(t.ff.InfCode(s[0] == '-')) // 0x7f80 bfloat16, 0x7c e5m2 …
		default:
			return nil, fmt.Errorf("%q is no fill value of this type", s)
		}
	} else {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("a fill value of this type is a number or a string")
		}
		c, err := t.encode(v)
		if err != nil {
			return nil, err
		}
		code = c
	}
	out := make([]byte, t.size)
	out[0] = byte(code)
	if t.size == 2 {
		out[1] = byte(code >> 8)
	}
	return out, nil
}
