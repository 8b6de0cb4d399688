package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	// floats: exponent and mantissa bits, bias, and their specials.
	exp, man, bias int
	special        floatSpecial
}

// floatSpecial is how a small float format spells NaN and infinity.
type floatSpecial int

const (
	ieeeSpecials floatSpecial = iota // all-ones exponent: ±Inf (mantissa 0) or NaN
	fnuzSpecials                     // no infinity; 0x80 (negative zero) is NaN
	fnSpecials                       // neither infinity nor NaN
	e8m0Specials                     // no sign, no zero; 0xff is NaN
)

// mlTypes are the ML types by their registered names (chunk-grids and
// data-types of zarr-extensions, July 2026), each README's bit layout.
var mlTypes = map[string]mlType{
	"bfloat16":           {size: 2, bits: 16, exp: 8, man: 7, bias: 127},
	"float8_e3m4":        {size: 1, bits: 8, exp: 3, man: 4, bias: 3},
	"float8_e4m3":        {size: 1, bits: 8, exp: 4, man: 3, bias: 7},
	"float8_e4m3b11fnuz": {size: 1, bits: 8, exp: 4, man: 3, bias: 11, special: fnuzSpecials},
	"float8_e4m3fnuz":    {size: 1, bits: 8, exp: 4, man: 3, bias: 8, special: fnuzSpecials},
	"float8_e5m2":        {size: 1, bits: 8, exp: 5, man: 2, bias: 15},
	"float8_e5m2fnuz":    {size: 1, bits: 8, exp: 5, man: 2, bias: 16, special: fnuzSpecials},
	"float8_e8m0fnu":     {size: 1, bits: 8, exp: 8, man: 0, bias: 127, special: e8m0Specials},
	"float6_e2m3fn":      {size: 1, bits: 6, exp: 2, man: 3, bias: 1, special: fnSpecials},
	"float6_e3m2fn":      {size: 1, bits: 6, exp: 3, man: 2, bias: 3, special: fnSpecials},
	"float4_e2m1fn":      {size: 1, bits: 4, exp: 2, man: 1, bias: 1, special: fnSpecials},
	"int2":               {size: 1, bits: 2, integer: true, signed: true},
	"uint2":              {size: 1, bits: 2, integer: true},
	"int4":               {size: 1, bits: 4, integer: true, signed: true},
	"uint4":              {size: 1, bits: 4, integer: true},
}

func init() {
	// The complex forms: complex_bfloat16, complex_float8_e4m3 …, and
	// complex_float16 (NumPy has no complex32).
	for name, t := range mlTypes {
		if !t.integer {
			t.complex = true
			mlTypes["complex_"+name] = t
		}
	}
	mlTypes["complex_float16"] = mlType{size: 2, complex: true, bits: 16, exp: 5, man: 10, bias: 15}
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
	if t.size == 2 && t.exp == 8 { // bfloat16: the top half of a float32
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
	}
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
	switch t.special {
	case e8m0Specials:
		if v == 0xff {
			return math.NaN()
		}
		return math.Ldexp(1, int(v)-t.bias)
	case fnuzSpecials:
		if v == 0x80 {
			return math.NaN()
		}
	}
	sign := 1.0
	if v>>(t.exp+t.man)&1 != 0 {
		sign = -1
	}
	e := int(v >> t.man & (1<<t.exp - 1))
	m := float64(v & (1<<t.man - 1))
	if t.special == ieeeSpecials && e == 1<<t.exp-1 {
		if m == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	if e == 0 {
		return sign * math.Ldexp(m, 1-t.bias-t.man)
	}
	return sign * math.Ldexp(1+math.Ldexp(m, -t.man), e-t.bias)
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
	if t.size == 2 && t.exp == 8 {
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
				return t.nanCode(), nil
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

// nanCode is the NaN each README names for the "NaN" fill value.
func (t mlType) nanCode() uint32 {
	switch t.special {
	case fnuzSpecials:
		return 0x80
	case e8m0Specials:
		return 0xff
	}
	// The IEEE formats: exponent all ones, the top mantissa bit set
	// (0x78 e3m4, 0x7c e4m3, 0x7e e5m2, 0x7e00 float16).
	return (1<<t.exp-1)<<t.man | 1<<(t.man-1)
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
		case s == "NaN" && !t.integer && t.special != fnSpecials:
			code = t.nanCode()
		case (s == "Infinity" || s == "-Infinity") && !t.integer && t.special == ieeeSpecials:
			code = (1<<t.exp - 1) << t.man // 0x7f80 bfloat16, 0x7c e5m2 …
			if s[0] == '-' {
				code |= 1 << (t.exp + t.man)
			}
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
