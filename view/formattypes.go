package view

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/zarrfs/zarrfs/zarr"
)

// numKey is a numeric element type's kind and size: the key of
// formatTypes.
type numKey struct {
	kind byte
	size int
}

// typeCodes is what each foreign format calls one numeric element type;
// the zero value of a member means the format cannot store it.
type typeCodes struct {
	envi int    // ENVI's data type code (ENVI has no int8)
	nrrd string // NRRD's type name; bools are their bytes (0 or 1)
	nc   int32  // NetCDF's type; a bool is a byte, as xarray writes it
	cdf5 bool   // nc needs the CDF-5 format (64-bit offset/classic lack it)
}

// formatTypes is the one table of the numeric element types the views
// write against the formats: NetCDF and NRRD lack complex, ENVI int8,
// none of them float16.
var formatTypes = map[numKey]typeCodes{
	{'b', 1}:  {1, "uint8", ncByte, false},
	{'i', 1}:  {0, "int8", ncByte, false},
	{'u', 1}:  {1, "uint8", ncUbyte, true},
	{'i', 2}:  {2, "int16", ncShort, false},
	{'u', 2}:  {12, "uint16", ncUshort, true},
	{'i', 4}:  {3, "int32", ncInt, false},
	{'u', 4}:  {13, "uint32", ncUint, true},
	{'i', 8}:  {14, "int64", ncInt64, true},
	{'u', 8}:  {15, "uint64", ncUint64, true},
	{'f', 4}:  {4, "float", ncFloat, false},
	{'f', 8}:  {5, "double", ncDouble, false},
	{'c', 8}:  {6, "", 0, false},
	{'c', 16}: {9, "", 0, false},
}

// codes returns what the foreign formats call t, all zero for a type that
// is not numeric.
func (t elemType) codes() typeCodes { return formatTypes[numKey{t.kind, t.size}] }

// elemType is an element type of `data` as the foreign-format views need
// it: the NumPy kind character (b i u f c S U V M m), the size of an
// element in bytes (28 for "<U7") and, for datetimes, the unit.
type elemType struct {
	kind byte
	size int
	unit string
}

// elemOf returns the element type of `data` as the views of foreign
// formats need it, from what package meta knows of the array's data type
// (its kind, size and unit); ok is false for the types they leave out
// (structured, ml_dtypes and variable-length types, which have no kind).
func elemOf(t zarr.DataType) (e elemType, ok bool) {
	if t.Kind == 0 {
		return e, false
	}
	return elemType{kind: t.Kind, size: t.Size, unit: t.Unit}, true
}

// numeric reports whether the elements are numbers (bool, integers and
// floats; not complex).
func (t elemType) numeric() bool {
	return t.kind == 'b' || t.kind == 'i' || t.kind == 'u' || t.kind == 'f'
}

// value returns the number in b, one little-endian element of a numeric
// type, as a float64, and its exact decimal spelling (integers in full,
// floats as the shortest that reads back at their precision).
func (t elemType) value(b []byte) (float64, string) {
	switch {
	case t.kind == 'b' || t.kind == 'u' && t.size == 1:
		return float64(b[0]), strconv.Itoa(int(b[0]))
	case t.kind == 'i' && t.size == 1:
		return float64(int8(b[0])), strconv.Itoa(int(int8(b[0])))
	case t.kind == 'i' && t.size == 2:
		v := int16(binary.LittleEndian.Uint16(b))
		return float64(v), strconv.Itoa(int(v))
	case t.kind == 'u' && t.size == 2:
		v := binary.LittleEndian.Uint16(b)
		return float64(v), strconv.Itoa(int(v))
	case t.kind == 'i' && t.size == 4:
		v := int32(binary.LittleEndian.Uint32(b))
		return float64(v), strconv.Itoa(int(v))
	case t.kind == 'u' && t.size == 4:
		v := binary.LittleEndian.Uint32(b)
		return float64(v), strconv.FormatUint(uint64(v), 10)
	case t.kind == 'i' && t.size == 8:
		v := int64(binary.LittleEndian.Uint64(b))
		return float64(v), strconv.FormatInt(v, 10)
	case t.kind == 'u' && t.size == 8:
		v := binary.LittleEndian.Uint64(b)
		return float64(v), strconv.FormatUint(v, 10)
	case t.kind == 'f' && t.size == 2:
		f := halfToFloat(binary.LittleEndian.Uint16(b))
		return f, strconv.FormatFloat(f, 'g', -1, 32)
	case t.kind == 'f' && t.size == 4:
		f := math.Float32frombits(binary.LittleEndian.Uint32(b))
		return float64(f), strconv.FormatFloat(float64(f), 'g', -1, 32)
	case t.kind == 'f' && t.size == 8:
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		return f, strconv.FormatFloat(f, 'g', -1, 64)
	}
	return math.NaN(), "nan"
}
