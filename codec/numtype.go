package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// numType is an integer or float type scale_offset and cast_value compute
// in: int2 … int64, uint2 … uint64, float16, float32, float64 and the
// registered ML floats (bfloat16, float8_*, float6_*, float4_e2m1fn).
type numType struct {
	kind byte        // 'i', 'u' or 'f'
	size int         // bytes of one element
	bits int         // the stored bits: the low ones of its bytes (2 for int2, 4 for float4_e2m1fn …)
	ff   FloatFormat // floats: the layout
}

// smallInts are the registered integers narrower than a byte: "Encoded
// as a 1-byte value, 0bIIIIXXXX where the upper IIII bits are ignored"
// (zarr-extensions data-types/int4; int2, uint2, uint4 alike).
var smallInts = map[string]numType{
	"int2":  {kind: 'i', size: 1, bits: 2},
	"uint2": {kind: 'u', size: 1, bits: 2},
	"int4":  {kind: 'i', size: 1, bits: 4},
	"uint4": {kind: 'u', size: 1, bits: 4},
}

// numTypeNamed returns the numType of the v3 data type name.
func numTypeNamed(name string) (numType, bool) {
	if ff, ok := floatFormats[name]; ok {
		return numType{kind: 'f', size: (ff.Bits + 7) / 8, bits: ff.Bits, ff: ff}, true
	}
	if t, ok := smallInts[name]; ok {
		return t, true
	}
	if nt, err := ParseNumpyType(name); err == nil {
		switch nt.Kind {
		case 'i', 'u':
			return numType{kind: nt.Kind, size: nt.Size, bits: 8 * nt.Size}, true
		case 'f':
			return numTypeNamed(fmt.Sprintf("float%d", 8*nt.Size))
		}
	}
	return numType{}, false
}

// numTypeOf returns the numType of t, or an unsupported error.
func numTypeOf(codec string, t DataType) (numType, error) {
	if nt, ok := numTypeNamed(t.Name); ok && nt.size == t.Size {
		return nt, nil
	}
	return numType{}, Unsupportedf("%s on data type %s", codec, t.Name)
}

// num is one value: an integer (i for signed types, u for unsigned) or a
// float.
type num struct {
	i int64
	u uint64
	f float64
}

// load reads the little-endian element at b.
func (t numType) load(b []byte) num {
	var u uint64
	for k := t.size - 1; k >= 0; k-- {
		u = u<<8 | uint64(b[k])
	}
	if t.bits < 64 {
		u &= 1<<t.bits - 1
	}
	switch t.kind {
	case 'f':
		return num{f: t.ff.Value(u)}
	case 'u':
		return num{u: u}
	}
	shift := 64 - t.bits
	return num{i: int64(u<<shift) >> shift}
}

// store writes v, a value of t (floats: one t can hold exactly, NaN or
// ±Inf), little-endian at b; the bits above t.bits are 0.
func (t numType) store(b []byte, v num) {
	var u uint64
	switch t.kind {
	case 'f':
		u = t.ff.code(v.f)
	case 'u':
		u = v.u
	default:
		u = uint64(v.i)
	}
	if t.bits < 64 {
		u &= 1<<t.bits - 1
	}
	for k := range t.size {
		b[k] = byte(u >> (8 * k))
	}
}

// code returns the bits of v, rounded to nearest-even (values out of
// range clamped, NaN where the format has none 0).
func (f FloatFormat) code(v float64) uint64 {
	switch {
	case f.Bits == 64:
		return math.Float64bits(v)
	case f.Bits == 32:
		return uint64(math.Float32bits(float32(v)))
	case v != v:
		if f.HasNaN() {
			return f.NaNCode()
		}
		return 0
	case math.IsInf(v, 0):
		return f.ClampCode(v < 0)
	}
	neg, m, e := exactParts(v)
	c, over := f.Round(neg, m, e, "")
	if over {
		return f.ClampCode(neg)
	}
	return c
}

// The overflow policies of roundTo.
const (
	overflowIEEE  = "ieee"  // IEEE arithmetic: ±Inf where the format has it, else an error
	overflowClamp = "clamp" // cast_value's "clamp"
	overflowError = ""      // cast_value without out_of_range
)

// roundTo rounds (−1)^neg × mant × 2^exp to float type t by rounding;
// a value beyond t's range is handled by overflow.
func (t numType) roundTo(neg bool, mant uint64, exp int, rounding, overflow string) (float64, error) {
	c, over := t.ff.Round(neg, mant, exp, rounding)
	if over {
		if t.ff.Special == E8M0Specials {
			// Unsigned, without zero: below its range (< 1) is its least value.
			neg = neg || mant == 0 || exp+bits.Len64(mant) <= 0
		}
		switch {
		case overflow == overflowClamp, overflow == overflowIEEE && t.ff.HasInf():
			c = t.ff.ClampCode(neg)
		default:
			sign := ""
			if neg {
				sign = "−"
			}
			return 0, fmt.Errorf("%s%v × 2^%d is out of the range of %s", sign, mant, exp, t)
		}
	}
	return t.ff.Value(c), nil
}

// roundFloat rounds f to float type t. NaN and ±Inf stay where t has
// them and are an error where it has not.
func (t numType) roundFloat(f float64, rounding, overflow string) (float64, error) {
	switch {
	case f != f && !t.ff.HasNaN():
		return 0, fmt.Errorf("%s has no NaN", t)
	case math.IsInf(f, 0) && !t.ff.HasInf():
		return 0, fmt.Errorf("%s has no infinity", t)
	case f != f || math.IsInf(f, 0):
		return f, nil
	case t.size == 8:
		return f, nil
	case t.size == 4 && rounding == "nearest-even":
		// The common case, without splitting f.
		r := float32(f)
		if math.IsInf(float64(r), 0) && overflow == overflowError {
			return 0, fmt.Errorf("%v is out of the range of %s", f, t)
		}
		return float64(r), nil
	}
	neg, m, e := exactParts(f)
	return t.roundTo(neg, m, e, rounding, overflow)
}

// String names t for errors.
func (t numType) String() string {
	if t.kind == 'f' {
		return fmt.Sprintf("a %d-bit float", t.bits)
	}
	return fmt.Sprintf("%c%d", t.kind, t.bits)
}

// parse reads a scalar spelled as a v3 fill value of t: a number (floats:
// rounded to nearest-even), or for floats "NaN", "Infinity",
// "+Infinity", "-Infinity" where t has them, or hex bits.
func (t numType) parse(raw json.RawMessage) (num, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil && t.kind == 'f' {
		switch s {
		case "NaN":
			if !t.ff.HasNaN() {
				return num{}, fmt.Errorf("%s has no NaN", t)
			}
			return num{f: math.NaN()}, nil
		case "Infinity", "+Infinity", "-Infinity":
			if !t.ff.HasInf() {
				return num{}, fmt.Errorf("%s has no infinity", t)
			}
			if s[0] == '-' {
				return num{f: math.Inf(-1)}, nil
			}
			return num{f: math.Inf(1)}, nil
		}
		if h, ok := strings.CutPrefix(s, "0x"); ok && len(h) == 2*t.size {
			bits, err := strconv.ParseUint(h, 16, 64)
			if err != nil {
				return num{}, fmt.Errorf("%q is not hex", s)
			}
			b := make([]byte, t.size)
			for k := range t.size {
				b[k] = byte(bits >> (8 * k))
			}
			return t.load(b), nil
		}
		return num{}, fmt.Errorf("%q is not a value of a float type", s)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return num{}, fmt.Errorf("%s is not a number", jsonText(raw))
	}
	switch t.kind {
	case 'f':
		f, err := n.Float64()
		if err != nil {
			return num{}, err
		}
		f, err = t.roundFloat(f, "nearest-even", overflowIEEE)
		return num{f: f}, err
	case 'u':
		var u uint64
		if _, err := fmt.Sscan(n.String(), &u); err != nil || strings.ContainsAny(n.String(), ".eE-") {
			return num{}, fmt.Errorf("%s is not a %d-bit unsigned integer", n, t.bits)
		}
		if !t.fits(0, u) {
			return num{}, fmt.Errorf("%s is out of range", n)
		}
		return num{u: u}, nil
	}
	var i int64
	if _, err := fmt.Sscan(n.String(), &i); err != nil || strings.ContainsAny(n.String(), ".eE") {
		return num{}, fmt.Errorf("%s is not a %d-bit integer", n, t.bits)
	}
	if !t.fits(i, 0) {
		return num{}, fmt.Errorf("%s is out of range", n)
	}
	return num{i: i}, nil
}

// equal compares two values of t (NaN equals NaN, as scalar_map keys
// match).
func (t numType) equal(a, b num) bool {
	if t.kind == 'f' {
		return a.f == b.f && math.Signbit(a.f) == math.Signbit(b.f) || math.IsNaN(a.f) && math.IsNaN(b.f)
	}
	return a == b
}

// fits reports whether i (signed types) or u (unsigned) is in t's range.
func (t numType) fits(i int64, u uint64) bool {
	if t.bits == 64 {
		return true
	}
	if t.kind == 'u' {
		return u < 1<<t.bits
	}
	lim := int64(1) << (t.bits - 1)
	return i >= -lim && i < lim
}
