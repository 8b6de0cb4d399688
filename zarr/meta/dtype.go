package meta

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
)

// dtype is an element type with everything the engine needs to know of it.
type dtype struct {
	DataType
	// kind is the NumPy kind character: b i u f c S U V M m, or 's' for
	// variable-length UTF-8 strings and 'y' for variable-length bytes.
	kind byte
	// bigEndian is set for v2 types stored big-endian (">i4").
	bigEndian bool
	// spelling is the data type as the metadata spells it, for messages.
	spelling string
	// fields are the fields of a record type (dtype_ext.go), else nil.
	fields []structField
}

// Variable reports whether elements have no fixed size.
func (t dtype) Variable() bool { return t.kind == 's' || t.kind == 'y' || t.kind == 'o' }

// codecType returns the codec package's view of t.
func (t dtype) codecType() codec.DataType {
	return codec.DataType{Name: t.Name, Size: t.Size}
}

// numericNames maps a NumPy kind and size to the v3 name.
var numericNames = map[string]string{
	"b1": "bool",
	"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
	"u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
	"f2": "float16", "f4": "float32", "f8": "float64",
	"c8": "complex64", "c16": "complex128",
}

// v3Numeric maps v3 core names to NumPy kind and size.
var v3Numeric = map[string]string{}

func init() {
	for k, v := range numericNames {
		v3Numeric[v] = k
	}
}

// setNumPy sets the NumPy type string of the logical content of t, of one
// kind, and the kind and unit it names.
func (t *DataType) setNumPy(kind byte, size int, unit string) {
	t.NumPy, t.Kind, t.Unit = numpyStr(kind, size, unit), kind, unit
}

// numpyStr returns the logical (little-endian or "|") type string.
func numpyStr(kind byte, size int, unit string) string {
	order := "<"
	if size == 1 && kind != 'U' || kind == 'S' || kind == 'V' || kind == 'b' {
		order = "|"
	}
	if size >= 1 && size <= 9 && kind != 'U' && kind != 'M' && kind != 'm' {
		return memberKey([]byte{order[0], kind, '0' + byte(size)}) // "<f4", without fmt
	}
	switch kind {
	case 'U':
		return fmt.Sprintf("<U%d", size/4)
	case 'M', 'm':
		return fmt.Sprintf("<%c8[%s]", kind, unit)
	}
	return fmt.Sprintf("%s%c%d", order, kind, size)
}

// maxStringItem bounds the size of S, U and V items (bytes).
const maxStringItem = 1 << 30

// parseV2DataType parses a NumPy type string of a v2 .zarray ("<f4",
// ">i8", "|S7", "<U3", "<M8[ns]", "|O") or a structured dtype (a JSON list
// of fields, dtype_ext.go).
func parseV2DataType(raw json.RawMessage) (dtype, error) {
	if s, ok := plainString(raw); ok {
		return parseTypestr(s)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			return parseStructured(raw)
		}
		return dtype{}, fmt.Errorf("%w: dtype %s is not a string", ErrInvalidMetadata, compact(raw))
	}
	return parseTypestr(s)
}

// parseTypestr parses a NumPy array-protocol type string.
func parseTypestr(s string) (dtype, error) {
	bad := func(why string) (dtype, error) {
		return dtype{}, fmt.Errorf("%w: dtype %q: %s", ErrInvalidMetadata, s, why)
	}
	if t, ok := parseMLType(s); ok {
		// Megatron-Core's checkpoints are v2 arrays of "dtype": "bfloat16",
		// as ml_dtypes names the type.
		return t, nil
	}
	if len(s) < 2 {
		return bad("too short")
	}
	order, kind, rest := s[0], s[1], s[2:]
	if order != '<' && order != '>' && order != '|' {
		return bad("byte order must be <, > or |")
	}
	t := dtype{kind: kind, bigEndian: order == '>', spelling: s}
	if kind == 'O' {
		if rest != "" && rest != "8" {
			return bad("object type size")
		}
		// The element type (string or bytes) comes from the object codec.
		t.Name = "object"
		return t, nil
	}
	unit := ""
	if kind == 'M' || kind == 'm' {
		i := strings.IndexByte(rest, '[')
		if i < 0 || !strings.HasSuffix(rest, "]") {
			return bad("datetime types need a [unit]")
		}
		unit = rest[i+1 : len(rest)-1]
		if !validTimeUnit(unit) {
			return bad(fmt.Sprintf("unknown time unit %q", unit))
		}
		rest = rest[:i]
	}
	if rest == "" || rest[0] == '+' || rest[0] == '-' {
		return bad("missing size")
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 {
		return bad("size must be a positive integer")
	}
	switch kind {
	case 'b', 'i', 'u', 'f', 'c':
		name, ok := numericNames[fmt.Sprintf("%c%d", kind, n)]
		if !ok {
			return dtype{}, codec.Unsupportedf("data type %q", s)
		}
		t.Name, t.Size = name, n
	case 'S', 'V':
		if n > maxStringItem {
			return bad("item size too large")
		}
		t.Name, t.Size = "r"+strconv.Itoa(n*8), n
	case 'U':
		if n > maxStringItem/4 {
			return bad("item size too large")
		}
		t.Name, t.Size = "fixed_length_utf32", n*4
	case 'M', 'm':
		if n != 8 {
			return bad("datetime types are 8 bytes")
		}
		t.Name, t.Size = "numpy.datetime64", 8
		if kind == 'm' {
			t.Name = "numpy.timedelta64"
		}
	default:
		return dtype{}, codec.Unsupportedf("data type %q", s)
	}
	if t.Size == 1 || kind == 'S' || kind == 'V' {
		t.bigEndian = false
	}
	t.setNumPy(kind, t.Size, unit)
	return t, nil
}

func validTimeUnit(u string) bool {
	switch u {
	case "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic":
		return true
	}
	// NumPy also allows a multiplier, e.g. "10s".
	i := 0
	for i < len(u) && u[i] >= '0' && u[i] <= '9' {
		i++
	}
	return i > 0 && i < len(u) && u[0] != '0' && validTimeUnit(u[i:]) && u[i:] != "generic"
}

// vlenType returns the variable-length type an object codec decodes to.
func vlenType(codecID string) (dtype, bool) {
	switch codecID {
	case "vlen-utf8":
		return dtype{DataType: DataType{Name: "string"}, kind: 's', spelling: "|O"}, true
	case "vlen-bytes":
		return dtype{DataType: DataType{Name: "bytes"}, kind: 'y', spelling: "|O"}, true
	case "json2", "json", "msgpack2", "vlen-array":
		// Any Python objects (vlen-array: ragged 1-D arrays): each
		// element as its JSON text.
		return dtype{DataType: DataType{Name: codec.ObjectType}, kind: 'o', spelling: "|O"}, true
	}
	return dtype{}, false
}

// parseV3DataType parses a v3 data_type: a core name, "r<bits>", or an
// extension (a string or a {name, configuration} object).
func parseV3DataType(raw json.RawMessage) (dtype, error) {
	name, cfg, err := parseExtension("data_type", raw)
	if err != nil {
		return dtype{}, err
	}
	t := dtype{spelling: name}
	if k, ok := v3Numeric[name]; ok {
		n, _ := strconv.Atoi(k[1:])
		t.Name, t.Size, t.kind = name, n, k[0]
		t.setNumPy(t.kind, n, "")
		return t, nil
	}
	switch {
	case len(name) > 1 && name[0] == 'r' && name[1] >= '1' && name[1] <= '9':
		bitsN, err := strconv.Atoi(name[1:])
		if err != nil || bitsN%8 != 0 || bitsN/8 > maxStringItem {
			return dtype{}, fmt.Errorf("%w: data_type %q: raw types need a positive multiple of 8 bits", ErrInvalidMetadata, name)
		}
		t.Name, t.Size, t.kind = name, bitsN/8, 'V'
		t.setNumPy('V', t.Size, "")
		return t, nil
	case name == "string":
		t.DataType, t.kind = DataType{Name: "string"}, 's'
		return t, nil
	case name == "bytes", name == "variable_length_bytes": // the latter as zarr-python 3 writes it
		t.DataType, t.kind = DataType{Name: "bytes"}, 'y'
		return t, nil
	case name == "fixed_length_utf32":
		var n int64
		if ok, err := cfg.Decode(name, "length_bytes", &n); err != nil || !ok || n <= 0 || n%4 != 0 || n > maxStringItem {
			return dtype{}, fmt.Errorf("%w: data_type %s: length_bytes must be a positive multiple of 4", ErrInvalidMetadata, name)
		}
		t.Name, t.Size, t.kind = name, int(n), 'U'
		t.setNumPy('U', t.Size, "")
		return t, nil
	case name == "numpy.datetime64" || name == "numpy.timedelta64":
		var unit string
		var scale int64 = 1
		if ok, err := cfg.Decode(name, "unit", &unit); err != nil || !ok || !validTimeUnit(unit) || unit == "generic" {
			return dtype{}, fmt.Errorf("%w: data_type %s: bad or missing unit", ErrInvalidMetadata, name)
		}
		if _, err := cfg.Decode(name, "scale_factor", &scale); err != nil || scale <= 0 {
			return dtype{}, fmt.Errorf("%w: data_type %s: scale_factor must be a positive integer", ErrInvalidMetadata, name)
		}
		if scale != 1 {
			unit = strconv.FormatInt(scale, 10) + unit
		}
		t.kind = 'M'
		if name == "numpy.timedelta64" {
			t.kind = 'm'
		}
		t.Name, t.Size = name, 8
		t.setNumPy(t.kind, 8, unit)
		return t, nil
	}
	switch name {
	case "complex_float32", "complex_float64":
		// The registered names of complex64 and complex128.
		n := 8
		if name == "complex_float64" {
			n = 16
		}
		t.Name, t.Size, t.kind = numericNames["c"+strconv.Itoa(n)], n, 'c'
		t.setNumPy('c', n, "")
		return t, nil
	}
	if t, ok := parseMLType(name); ok {
		return t, nil
	}
	return parseV3ExtType(name, cfg)
}
