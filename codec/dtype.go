package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NumpyType is a NumPy array-interface type string such as "<i4", "|b1",
// ">f8", "<U7" or "<M8[ns]", as numcodecs filters name their types.
type NumpyType struct {
	// Kind is the type character: 'b' bool, 'i' signed and 'u' unsigned
	// integer, 'f' float, 'c' complex, 'S' bytes, 'U' UTF-32 string, 'V'
	// raw, 'M' datetime, 'm' timedelta, 'O' object.
	Kind byte
	// Size is the size of one element in bytes (0 for objects).
	Size int
	// Big is true for big-endian types.
	Big bool
	// Unit is the unit of a datetime or timedelta ("ns"), else "".
	Unit string
}

// numpyNames are the NumPy type names (also the Zarr v3 names) that
// configurations may use instead of type strings ("int32" for "<i4").
var numpyNames = map[string]string{
	"bool": "|b1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
	"uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
	"float16": "<f2", "float32": "<f4", "float64": "<f8",
	"complex64": "<c8", "complex128": "<c16",
}

// ParseNumpyType parses a NumPy type string or one of the type names of
// numpyNames. A missing or native ("=") byte order means little-endian,
// the order of every machine zarrfs runs on.
func ParseNumpyType(s string) (NumpyType, error) {
	if typestr, ok := numpyNames[s]; ok {
		s = typestr
	}
	var t NumpyType
	rest := s
	if rest != "" {
		switch rest[0] {
		case '<', '|', '=':
			rest = rest[1:]
		case '>':
			t.Big = true
			rest = rest[1:]
		}
	}
	if rest == "" {
		return t, fmt.Errorf("numpy type %q: no kind", s)
	}
	t.Kind = rest[0]
	rest = rest[1:]
	if i := strings.IndexByte(rest, '['); i >= 0 {
		if (t.Kind != 'M' && t.Kind != 'm') || !strings.HasSuffix(rest, "]") {
			return t, fmt.Errorf("numpy type %q: unexpected unit", s)
		}
		t.Unit = rest[i+1 : len(rest)-1]
		rest = rest[:i]
	}
	if t.Kind == 'O' {
		if rest != "" && rest != "8" {
			return t, fmt.Errorf("numpy type %q: bad object size", s)
		}
		return t, nil
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || n > 1<<30 {
		return t, fmt.Errorf("numpy type %q: bad size", s)
	}
	valid := false
	switch t.Kind {
	case 'b':
		valid = n == 1
	case 'i', 'u':
		valid = n == 1 || n == 2 || n == 4 || n == 8
	case 'f':
		valid = n == 2 || n == 4 || n == 8
	case 'c':
		valid = n == 8 || n == 16
	case 'M', 'm':
		valid = n == 8
	case 'S', 'V':
		valid = true
	case 'U':
		valid = true
		n *= 4
	}
	if !valid {
		return t, fmt.Errorf("numpy type %q: unknown kind or size", s)
	}
	t.Size = n
	if t.Size == 1 || t.Kind == 'S' || t.Kind == 'V' {
		t.Big = false // no byte order
	}
	return t, nil
}

// String returns the type string in NumPy's form.
func (t NumpyType) String() string {
	order := "<"
	switch {
	case t.Big:
		order = ">"
	case t.Size <= 1 || t.Kind == 'S' || t.Kind == 'V' || t.Kind == 'O':
		order = "|"
	}
	size := t.Size
	if t.Kind == 'U' {
		size /= 4
	}
	if t.Kind == 'O' {
		size = 8
	}
	s := order + string(t.Kind) + strconv.Itoa(size)
	if t.Unit != "" {
		s += "[" + t.Unit + "]"
	}
	return s
}

// DataTypeName returns the Zarr v3 name of t ("int32"), or "" when t has
// none among numpyNames.
func (t NumpyType) DataTypeName() string {
	le := t
	le.Big = false
	for name, typestr := range numpyNames {
		if u, err := ParseNumpyType(typestr); err == nil && u == le {
			return name
		}
	}
	return ""
}

// order returns the byte order of t's elements.
func (t NumpyType) order() binary.ByteOrder {
	if t.Big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// numeric reports whether t is a bool, integer, float, datetime or
// timedelta: the kinds the numeric filters handle.
func (t NumpyType) numeric() bool {
	switch t.Kind {
	case 'b', 'i', 'u', 'f', 'M', 'm':
		return true
	}
	return false
}

// signed reports whether t holds two's complement integers.
func (t NumpyType) signed() bool { return t.Kind == 'i' || t.Kind == 'M' || t.Kind == 'm' }

// integer reports whether t holds integers (datetimes count).
func (t NumpyType) integer() bool { return t.Kind == 'u' || t.signed() }

// bits returns the element at b (t.Size bytes) as raw bits, zero-extended.
func (t NumpyType) bits(b []byte) uint64 {
	switch t.Size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(t.order().Uint16(b))
	case 4:
		return uint64(t.order().Uint32(b))
	}
	return t.order().Uint64(b)
}

// putBits stores the low t.Size bytes of v at b.
func (t NumpyType) putBits(b []byte, v uint64) {
	switch t.Size {
	case 1:
		b[0] = byte(v)
	case 2:
		t.order().PutUint16(b, uint16(v))
	case 4:
		t.order().PutUint32(b, uint32(v))
	default:
		t.order().PutUint64(b, v)
	}
}

// int returns an integer or bool element, sign-extended for signed types.
func (t NumpyType) int(b []byte) uint64 {
	v := t.bits(b)
	if t.signed() {
		shift := 64 - 8*uint(t.Size)
		return uint64(int64(v<<shift) >> shift)
	}
	return v
}

// float returns a numeric element as a float64 (exactly, for floats).
func (t NumpyType) float(b []byte) float64 {
	switch {
	case t.Kind == 'f':
		v := t.bits(b)
		switch t.Size {
		case 2:
			return float64(halfToFloat32(uint16(v)))
		case 4:
			return float64(math.Float32frombits(uint32(v)))
		}
		return math.Float64frombits(v)
	case t.signed():
		return float64(int64(t.int(b)))
	}
	return float64(t.int(b))
}

// round returns v rounded to the precision of float type t (float64 for
// non-float types).
func (t NumpyType) round(v float64) float64 {
	if t.Kind != 'f' {
		return v
	}
	switch t.Size {
	case 2:
		return float64(halfToFloat32(float64ToHalf(v)))
	case 4:
		return float64(float32(v))
	}
	return v
}

// putFloat stores v at b as NumPy's astype does: floats round to nearest,
// integers truncate toward zero (and wrap), bools are v != 0.
func (t NumpyType) putFloat(b []byte, v float64) {
	switch t.Kind {
	case 'f':
		switch t.Size {
		case 2:
			t.putBits(b, uint64(float64ToHalf(v)))
		case 4:
			t.putBits(b, uint64(math.Float32bits(float32(v))))
		default:
			t.putBits(b, math.Float64bits(v))
		}
	case 'b':
		b[0] = boolByte(v != 0)
	default:
		t.putBits(b, floatToIntBits(v, t.Size, t.signed()))
	}
}

// boolByte returns the stored form of a bool: 1 or 0.
func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// floatToIntBits converts v to an integer of size bytes as NumPy's astype
// does on x86-64 (a C cast): truncation toward zero; for 64-bit types NaN
// and values out of range give 1<<63, for smaller types the conversion goes
// through int32 (unsigned 32-bit through int64) and wraps.
func floatToIntBits(v float64, size int, signed bool) uint64 {
	v = math.Trunc(v)
	toInt64 := func(v float64) uint64 {
		if v != v || v < -(1<<63) || v >= 1<<63 {
			return 1 << 63
		}
		return uint64(int64(v))
	}
	switch {
	case size == 8 && signed:
		return toInt64(v)
	case size == 8:
		switch {
		case v != v:
			return 1 << 63
		case v >= 1<<64:
			return 0
		case v >= 1<<63:
			return uint64(v)
		}
		return toInt64(v)
	case size == 4 && !signed:
		return toInt64(v)
	}
	if v != v || v < -(1<<31) || v >= 1<<31 {
		return 1 << 31
	}
	return uint64(int64(v))
}

// putInt stores an integer value (sign- or zero-extended bits) at b as
// NumPy's astype from the integer type src does.
func (t NumpyType) putInt(b []byte, v uint64, src NumpyType) {
	switch t.Kind {
	case 'f':
		if src.signed() {
			t.putFloat(b, float64(int64(v)))
		} else {
			t.putFloat(b, float64(v))
		}
	case 'b':
		b[0] = boolByte(v != 0)
	default:
		t.putBits(b, v)
	}
}

// convert stores the element src (of type from) at dst (of type t) as
// NumPy's astype does.
func convert(dst []byte, t NumpyType, src []byte, from NumpyType) {
	if from.Kind == 'f' {
		t.putFloat(dst, from.float(src))
		return
	}
	t.putInt(dst, from.int(src), from)
}

// halfToFloat32 converts IEEE 754 binary16 bits to a float32.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0:
		// Zero or subnormal: frac × 2^-24.
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// float64ToHalf rounds v to the nearest binary16 (ties to even).
func float64ToHalf(v float64) uint16 {
	bits := math.Float64bits(v)
	sign := uint16(bits>>48) & 0x8000
	a := math.Abs(v)
	switch {
	case a != a:
		return sign | 0x7e00
	case a >= 65520: // rounds to infinity
		return sign | 0x7c00
	case a < 1.0/(1<<25): // rounds to zero (half of the smallest subnormal, ties to even)
		return sign
	}
	exp := math.Ilogb(a)
	if exp < -14 {
		// Subnormal: a multiple of 2^-24.
		q := math.RoundToEven(a * (1 << 24))
		return sign | uint16(q)
	}
	// Normal: 10 fraction bits.
	m := math.RoundToEven(math.Ldexp(a, 10-exp)) // in [1024, 2048]
	if m == 2048 {
		m = 1024
		exp++
		if exp > 15 {
			return sign | 0x7c00
		}
	}
	return sign | uint16(exp+15)<<10 | uint16(m-1024)
}
