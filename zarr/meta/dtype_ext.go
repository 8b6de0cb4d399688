package meta

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
)

// structField is one field of a structured (record) data type: a leaf of
// a fixed-size type or a nested record, repeated over an optional
// sub-array shape (v2). Records are packed: no padding between fields.
type structField struct {
	name   string
	leaf   dtype         // the element type of a leaf field
	fields []structField // the fields of a nested record (leaf unset)
	shape  []int64       // v2 sub-array shape; nil for a scalar field
	count  int           // elements: the product of shape
	size   int           // bytes of the whole field
}

// maxStructFields bounds the number of fields (all levels) of a record type.
const maxStructFields = 1 << 12

// structKind marks a record type in dtype.kind.
const structKind = 'V'

// parseStructured parses a v2 structured dtype: a list of fields
// [name, typestr] or [name, typestr, shape], where typestr may itself be a
// list of fields (a nested record).
func parseStructured(raw json.RawMessage) (dtype, error) {
	n := 0
	fields, err := parseV2Fields(raw, &n, 0)
	if err != nil {
		return dtype{}, err
	}
	return structType(fields, compact(raw))
}

func parseV2Fields(raw json.RawMessage, n *int, depth int) ([]structField, error) {
	bad := func(format string, args ...any) ([]structField, error) {
		return nil, fmt.Errorf("%w: structured dtype: %s", ErrInvalidMetadata, fmt.Sprintf(format, args...))
	}
	if depth > MaxRank {
		return bad("nested more than %d levels", MaxRank)
	}
	var list [][]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return bad("%s is not a non-empty list of [name, type] or [name, type, shape]", compact(raw))
	}
	seen := map[string]bool{}
	out := make([]structField, 0, len(list))
	for _, item := range list {
		if *n++; *n > maxStructFields {
			return bad("more than %d fields", maxStructFields)
		}
		if len(item) != 2 && len(item) != 3 {
			return bad("field %s is not [name, type] or [name, type, shape]", compactList(item))
		}
		var f structField
		if err := json.Unmarshal(item[0], &f.name); err != nil {
			return bad("field name %s is not a string", compact(item[0]))
		}
		if seen[f.name] && f.name != "" {
			return bad("field %q appears twice", f.name)
		}
		seen[f.name] = true
		var s string
		if json.Unmarshal(item[1], &s) == nil {
			t, err := parseTypestr(s)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.name, err)
			}
			if t.kind == 'O' {
				return nil, codec.Unsupportedf("object field %q in a structured data type", f.name)
			}
			f.leaf = t
		} else {
			nested, err := parseV2Fields(item[1], n, depth+1)
			if err != nil {
				return nil, err
			}
			f.fields = nested
		}
		if len(item) == 3 {
			shape, err := parseDims(fmt.Sprintf("field %q shape", f.name), item[2], false)
			if err != nil {
				var one int64
				if json.Unmarshal(item[2], &one) != nil || one < 0 {
					return nil, err
				}
				shape = []int64{one} // NumPy also accepts a bare integer
			}
			f.shape = shape
		}
		if err := f.measure(); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func compactList(items []json.RawMessage) string {
	b, _ := json.Marshal(items)
	return compact(b)
}

// measure computes f.count and f.size, checking for overflow.
func (f *structField) measure() error {
	one := f.leaf.Size
	if f.fields != nil {
		one = 0
		for _, g := range f.fields {
			one += g.size
		}
	}
	count := int64(1)
	for _, d := range f.shape {
		c, ok := nd.Mul(count, d)
		if !ok || c > maxStringItem {
			return fmt.Errorf("%w: structured dtype: field %q is too large", ErrInvalidMetadata, f.name)
		}
		count = c
	}
	size, ok := nd.Mul(count, int64(one))
	if !ok || size > maxStringItem {
		return fmt.Errorf("%w: structured dtype: field %q is too large", ErrInvalidMetadata, f.name)
	}
	f.count, f.size = int(count), int(size)
	return nil
}

// structType returns the record type of fields. Its NumPy type string is
// the Python literal of the NumPy descr of the logical (little-endian)
// content, e.g. "[('a', '<i4'), ('b', '<f8', (2,))]".
func structType(fields []structField, spelling string) (dtype, error) {
	size := 0
	for _, f := range fields {
		size += f.size
		if size > maxStringItem {
			return dtype{}, fmt.Errorf("%w: structured dtype is too large", ErrInvalidMetadata)
		}
	}
	if size == 0 {
		return dtype{}, fmt.Errorf("%w: structured dtype %s has no bytes", ErrInvalidMetadata, spelling)
	}
	t := dtype{kind: structKind, spelling: spelling, fields: fields}
	t.Name, t.Size, t.NumPy = "struct", size, descr(fields)
	t.mlFields = hasMLField(fields)
	return t, nil
}

// hasMLField reports whether a field (at any depth) is of an ML type
// (bfloat16, float8_e4m3 …, int4), as TensorStore's zarr2 driver writes
// them inside v2 structured dtypes ([["w", "bfloat16"], ["s", "<f4"]]).
func hasMLField(fields []structField) bool {
	for _, f := range fields {
		if f.leaf.kind == mlKind || hasMLField(f.fields) {
			return true
		}
	}
	return false
}

// descr returns the Python literal of the NumPy descr of fields.
func descr(fields []structField) string {
	items := make([]string, len(fields))
	for i, f := range fields {
		typ := pyString(f.leaf.NumPy)
		if f.fields != nil {
			typ = descr(f.fields)
		}
		item := pyString(f.name) + ", " + typ
		if f.shape != nil {
			item += ", " + PyTuple(f.shape)
		}
		items[i] = "(" + item + ")"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// PyTuple formats shape as Python's repr of a tuple of ints: "()", "(3,)",
// "(3, 4)", as NumPy writes shapes in a descr or a .npy header.
func PyTuple(shape []int64) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

// pyString returns s as a single-quoted Python string literal.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// parseV3Struct parses the configuration of the v3 "struct" data type (and
// its legacy alias "structured", whose fields may be [name, type] pairs).
func parseV3Struct(name string, cfg codec.Config) (dtype, error) {
	n := 0
	fields, err := parseV3Fields(name, cfg, &n, 0)
	if err != nil {
		return dtype{}, err
	}
	b, _ := json.Marshal(cfg)
	return structType(fields, name+" "+compact(b))
}

func parseV3Fields(name string, cfg codec.Config, n *int, depth int) ([]structField, error) {
	bad := func(format string, args ...any) ([]structField, error) {
		return nil, fmt.Errorf("%w: data_type %s: %s", ErrInvalidMetadata, name, fmt.Sprintf(format, args...))
	}
	if depth > MaxRank {
		return bad("nested more than %d levels", MaxRank)
	}
	var list []json.RawMessage
	if ok, err := cfg.Decode(name, "fields", &list); err != nil || !ok || len(list) == 0 {
		return bad("configuration needs a non-empty list of fields")
	}
	seen := map[string]bool{}
	out := make([]structField, 0, len(list))
	for _, item := range list {
		if *n++; *n > maxStructFields {
			return bad("more than %d fields", maxStructFields)
		}
		var f structField
		var typ json.RawMessage
		var obj struct {
			Name     *string         `json:"name"`
			DataType json.RawMessage `json:"data_type"`
		}
		var pair []json.RawMessage
		switch {
		case json.Unmarshal(item, &obj) == nil && obj.Name != nil && obj.DataType != nil:
			f.name, typ = *obj.Name, obj.DataType
		case name == "structured" && json.Unmarshal(item, &pair) == nil && len(pair) == 2 && json.Unmarshal(pair[0], &f.name) == nil:
			typ = pair[1]
		default:
			return bad("field %s is not {\"name\", \"data_type\"}", compact(item))
		}
		if f.name == "" || seen[f.name] {
			return bad("field name %q is empty or repeated", f.name)
		}
		seen[f.name] = true
		if fn, fcfg, err := parseExtension("field "+f.name, typ); err == nil && (fn == "struct" || fn == "structured") {
			if f.fields, err = parseV3Fields(fn, fcfg, n, depth+1); err != nil {
				return nil, err
			}
		} else {
			t, err := parseV3DataType(typ)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.name, err)
			}
			if t.Variable() {
				return bad("field %q has the variable-length type %s", f.name, t.Name)
			}
			f.leaf = t
		}
		if err := f.measure(); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// structFill returns the fill value of a record type: null (zeros), base64
// text of the packed record as stored (v2, and legacy v3 "structured"), or
// (v3) an object giving every field's fill value.
func structFill(t dtype, raw json.RawMessage, format Format) ([]byte, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != t.Size {
			return nil, fmt.Errorf("not base64 text of %d bytes", t.Size)
		}
		swapFields(b, t.fields)
		return b, nil
	}
	if format == FormatV2 {
		if string(raw) == "0" {
			return make([]byte, t.Size), nil // as older hand-written metadata has it
		}
		return nil, fmt.Errorf("a structured fill value is base64 text")
	}
	out := make([]byte, 0, t.Size)
	return fieldsFill(out, t.fields, raw)
}

func fieldsFill(out []byte, fields []structField, raw json.RawMessage) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("a struct fill value is an object of field values")
	}
	if len(obj) != len(fields) {
		return nil, fmt.Errorf("a struct fill value needs exactly one value per field")
	}
	for _, f := range fields {
		v, ok := obj[f.name]
		if !ok {
			return nil, fmt.Errorf("no fill value for field %q", f.name)
		}
		var err error
		if f.fields != nil {
			out, err = fieldsFill(out, f.fields, v)
		} else {
			var b []byte
			if b, err = fillValue(f.leaf, v, FormatV3); err == nil && len(b) != f.leaf.Size {
				err = fmt.Errorf("field %q: a fill value of %d bytes", f.name, len(b))
			}
			out = append(out, b...)
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	return out, nil
}

// swapFields turns packed records of fields in place from their stored
// byte order to little-endian (and back: it is its own inverse).
func swapFields(b []byte, fields []structField) {
	for off := 0; off < len(b); {
		for _, f := range fields {
			swapField(b[off:off+f.size], f)
			off += f.size
		}
	}
}

func swapField(b []byte, f structField) {
	if f.fields != nil {
		swapFields(b, f.fields)
		return
	}
	if !f.leaf.bigEndian {
		return
	}
	unit := f.leaf.Size
	switch f.leaf.kind {
	case 'c':
		unit /= 2
	case 'U':
		unit = 4
	}
	for i := 0; i+unit <= len(b); i += unit {
		for x, y := i, i+unit-1; x < y; x, y = x+1, y-1 {
			b[x], b[y] = b[y], b[x]
		}
	}
}

// structBytes is the array→bytes codec of v2 (and v1, draft) records:
// packed records whose fields each keep the byte order their typestr
// gives, turned into little-endian fields.
type structBytes struct{ fields []structField }

// Name implements codec.Codec.
func (structBytes) Name() string { return "bytes" }

// EncodedSize implements codec.ArrayToBytes.
func (structBytes) EncodedSize(decoded codec.ArraySpec) int { return decoded.ByteSize() }

// Encode implements codec.ArrayToBytes.
func (c structBytes) Encode(chunk []byte, decoded codec.ArraySpec) ([]byte, error) {
	return c.convert(chunk, decoded)
}

// Decode implements codec.ArrayToBytes.
func (c structBytes) Decode(data []byte, decoded codec.ArraySpec) ([]byte, error) {
	return c.convert(data, decoded)
}

func (c structBytes) convert(data []byte, spec codec.ArraySpec) ([]byte, error) {
	if len(data) != spec.ByteSize() {
		return nil, codec.Corruptf("bytes", "%d bytes of records, want %d", len(data), spec.ByteSize())
	}
	out := make([]byte, len(data))
	copy(out, data)
	swapFields(out, c.fields)
	return out, nil
}

// structCodec returns c, or for a record type serialised big-endian by the
// bytes codec the codec that swaps each field of the records.
func structCodec(c codec.Codec, t dtype) codec.Codec {
	if b, ok := c.(codec.BytesCodec); ok && b.Big && t.fields != nil {
		return structBytes{bigFields(t.fields)}
	}
	return c
}

// bigFields returns a copy of fields with every leaf stored big-endian.
func bigFields(fields []structField) []structField {
	out := make([]structField, len(fields))
	for i, f := range fields {
		out[i] = f
		if f.fields != nil {
			out[i].fields = bigFields(f.fields)
		} else {
			out[i].leaf.bigEndian = f.leaf.Size > 1 && f.leaf.kind != 'S' && f.leaf.kind != 'V' && f.leaf.kind != 'b'
		}
	}
	return out
}

// parseV3ExtType parses the v3 data types dtype.go does not know: records
// ("struct", "structured") and zarr-python 3's fixed-size byte strings
// ("null_terminated_bytes", "raw_bytes" with length_bytes).
func parseV3ExtType(name string, cfg codec.Config) (dtype, error) {
	switch name {
	case "struct", "structured":
		return parseV3Struct(name, cfg)
	case "null_terminated_bytes", "raw_bytes":
		var n int64
		if ok, err := cfg.Decode(name, "length_bytes", &n); err != nil || !ok || n <= 0 || n > maxStringItem {
			return dtype{}, fmt.Errorf("%w: data_type %s: length_bytes must be a positive integer", ErrInvalidMetadata, name)
		}
		kind := byte('S')
		if name == "raw_bytes" {
			kind = 'V'
		}
		t := dtype{kind: kind, spelling: name}
		t.Name, t.Size = name, int(n)
		t.setNumPy(kind, int(n), "")
		return t, nil
	}
	return dtype{}, codec.Unsupportedf("data type %q", name)
}
