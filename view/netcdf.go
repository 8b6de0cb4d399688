package view

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/internal/pyjson"
	"github.com/zarrfs/zarrfs/zarr"
)

// This file makes a group's dataset.nc: the group's arrays as the variables
// of a NetCDF classic file (docs/file_format_specifications.md of netCDF-c;
// CDF-5 as PnetCDF defines it). The header is built from metadata alone;
// each variable's values are the array's `data` byte-swapped to big-endian
// as a read asks for them, so a read decodes only the chunks under it.

// NetCDF external types (nc_type).
const (
	ncByte   = 1
	ncChar   = 2
	ncShort  = 3
	ncInt    = 4
	ncFloat  = 5
	ncDouble = 6
	ncUbyte  = 7
	ncUshort = 8
	ncUint   = 9
	ncInt64  = 10
	ncUint64 = 11
)

// Header tags.
const (
	ncDimensionTag = 0x0a
	ncVariableTag  = 0x0b
	ncAttributeTag = 0x0c
)

// Limits of the classic (CDF-1) and 64-bit offset (CDF-2) formats, as
// netCDF-c's NC_check_vlens applies them: every fixed-size variable but the
// last is at most vlen_max bytes (X_INT_MAX-3, X_UINT_MAX-3); CDF-1's
// offsets are 32-bit signed integers; both formats' dimension lengths are.
const (
	cdf1MaxVar    = math.MaxInt32 - 3
	cdf2MaxVar    = math.MaxUint32 - 3
	cdf1MaxOffset = math.MaxInt32
	cdf12MaxDim   = math.MaxInt32
	// vsizeTooBig is the vsize CDF-1/2 write for a variable over 2^32-4 bytes.
	vsizeTooBig = math.MaxUint32
)

// ncTypeOf returns the NetCDF type of elements of type t: the type, the
// size of one value, and whether only CDF-5 has it. ok is false for types
// NetCDF lacks (complex, float16, UTF-32 strings, structs, variable-length).
// A bool is a byte (xarray writes bools so, with the attribute dtype =
// "bool" that xarray reads back); fixed-size bytes (|S7) are characters
// along an extra last dimension, as NetCDF stores strings, and so are
// fixed-size Unicode strings (<U7), in UTF-8 within their 28 bytes, with
// the attribute _Encoding = "utf-8" that xarray decodes; datetimes and
// timedeltas are int64 counts of their unit.
func ncTypeOf(t elemType) (typ int32, cdf5, ok bool) {
	switch {
	case t.kind == 'S', t.kind == 'U':
		return ncChar, false, true
	case (t.kind == 'M' || t.kind == 'm') && t.size == 8 && cfTimeUnits[t.unit] != "":
		return ncInt64, true, true
	}
	c := t.codes()
	return c.nc, c.cdf5, c.nc != 0
}

// cfTimeUnits spells NumPy's datetime units as CF (UDUNITS) units.
var cfTimeUnits = map[string]string{
	"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds",
	"s": "seconds", "m": "minutes", "h": "hours", "D": "days",
}

// ncVarSpec is an array as a variable of dataset.nc.
type ncVarSpec struct {
	name     string
	elem     elemType
	shape    []int64
	dimNames []string       // the array's dimension names ("" where unnamed); nil when none
	attrs    []pyjson.Field // the array's attributes
	fill     []byte         // one little-endian element; nil when there is none
	array    *zarr.Array    // where the values come from (nil in tests of the header)
	// as is how the file stores 64-bit integers that need not be NC_INT64
	// (ncNarrow); unsigned marks an unsigned type of 1 to 4 bytes stored
	// as the signed type of its size with _Unsigned = "true", the NetCDF
	// convention that netCDF4-python, xarray and GDAL decode (set by
	// layoutNetCDF when the file needs no CDF-5 otherwise).
	as       ncAs
	unsigned bool
}

// ncAs is how dataset.nc stores a variable of 64-bit integers (int64,
// datetimes, timedeltas) whose values all fit a classic type.
type ncAs int

const (
	asNative ncAs = iota // NC_INT64 (CDF-5)
	asInt32              // NC_INT: every value (and the fill) fits in 32 bits
	asDouble             // NC_DOUBLE: every value is exact as a double (|v| ≤ 2^53), as CF allows for times
)

// fileType returns the NetCDF type the file stores v's elements as, the
// size of one, and whether only CDF-5 has that type.
func (v ncVarSpec) fileType() (typ int32, size int, cdf5 bool) {
	switch {
	case v.as == asInt32:
		return ncInt, 4, false
	case v.as == asDouble:
		return ncDouble, 8, false
	case v.unsigned:
		return map[int]int32{1: ncByte, 2: ncShort, 4: ncInt}[v.elem.size], v.elem.size, false
	}
	typ, cdf5, _ = ncTypeOf(v.elem)
	return typ, v.elem.size, cdf5
}

// smallUnsigned reports whether t is an unsigned integer type that a
// classic file stores as the signed type of its size with _Unsigned.
func smallUnsigned(t elemType) bool { return t.kind == 'u' && t.size <= 4 }

// ncVar is a variable of a laid-out dataset.nc.
type ncVar struct {
	array *zarr.Array
	unit  int // the size of the array's elements
	fUnit int // the size of the file's elements (less than unit for asInt32)
	// convert turns the array's elements in src (little-endian) into the
	// file's in dst, which is src itself when the sizes are equal: it
	// reverses the bytes of numbers, re-encodes UTF-32 as UTF-8, turns
	// 64-bit integers into 32-bit ones or doubles.
	convert func(src, dst []byte)
	begin   int64 // the file offset of the first value
	size    int64 // the values' bytes
	vsize   int64 // size rounded up to a multiple of 4
}

// ncLayout is a laid-out dataset.nc: its header and where each variable's
// values are.
type ncLayout struct {
	version byte // 1, 2 or 5
	header  []byte
	vars    []ncVar
	size    int64
}

type ncDim struct {
	name string
	len  int64
}

type ncAttr struct {
	name string
	typ  int32
	n    int64
	data []byte // big-endian values, unpadded
}

// ncVarHeader is what the header says of a variable.
type ncVarHeader struct {
	name string
	dims []int
	typ  int32
	size int64
}

// layoutNetCDF lays out the NetCDF file of a group with attributes gattrs
// and the arrays vars (each of a type ncTypeOf has, with no zero-length
// dimension), smallest first (bySize): CDF-1 when it can hold them, else
// CDF-2, else CDF-5.
//
// Unsigned types of 1 to 4 bytes are the signed types of their size with
// _Unsigned = "true" unless the file needs CDF-5 anyway (for NC_INT64,
// NC_UINT64 or a dimension over 2^31-1), where they keep their own types.
func layoutNetCDF(gattrs []pyjson.Field, vars []ncVarSpec) (*ncLayout, error) {
	vars = slices.Clone(vars)
	dims, hvars := ncDimensions(vars) // in the group's order: the first use of a name keeps it
	need5 := false
	for i, v := range vars {
		if _, _, cdf5 := v.fileType(); cdf5 && !smallUnsigned(v.elem) {
			need5 = true
		}
		for _, d := range hvars[i].dims {
			if dims[d].len > cdf12MaxDim {
				need5 = true
			}
		}
	}
	if !need5 {
		for i := range vars {
			vars[i].unsigned = smallUnsigned(vars[i].elem)
			hvars[i].typ, _, _ = vars[i].fileType()
		}
	}
	vars, hvars = bySize(vars, hvars)
	for _, version := range []byte{1, 2, 5} {
		if need5 && version != 5 {
			continue
		}
		l, err := ncLay(version, gattrs, vars, dims, hvars)
		if err != nil {
			return nil, err
		}
		if l.fits() {
			return l, nil
		}
	}
	return nil, errors.New("the arrays are too large even for NetCDF's CDF-5 format")
}

// bySize orders the variables (and their headers) by their size,
// smallest first (a stable sort: equal sizes keep the group's order). Only
// the last variable may be over CDF-1's and CDF-2's limit, so this order
// lets the most groups fit them; and the coordinates that tools read first (cdo, ncview, xarray
// read every 1-D coordinate on opening) lie together after the header,
// where the kernel's read-ahead of the header finds them, not in the
// chunks of a large variable.
func bySize(vars []ncVarSpec, hvars []ncVarHeader) ([]ncVarSpec, []ncVarHeader) {
	order := make([]int, len(vars))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(hvars[a].size, hvars[b].size) })
	v, h := make([]ncVarSpec, len(vars)), make([]ncVarHeader, len(vars))
	for i, k := range order {
		v[i], h[i] = vars[k], hvars[k]
	}
	return v, h
}

// fits reports whether the layout keeps its format's limits.
func (l *ncLayout) fits() bool {
	for i, v := range l.vars {
		last := i == len(l.vars)-1
		switch l.version {
		case 1:
			if v.begin > cdf1MaxOffset || !last && v.size > cdf1MaxVar {
				return false
			}
		case 2:
			if !last && v.size > cdf2MaxVar {
				return false
			}
		}
	}
	return l.size >= 0 // no overflow
}

// ncDimensions names the dimensions of vars and gives each variable its
// header: a dimension is the array's dimension name ("NAME_dimI" when
// unnamed); a name already used with another length keeps it, and this
// length gets "NAME_LENGTH" (docs/ARCHITECTURE.md, "The views of an array
// as files"). Fixed-size bytes get a last dimension "stringN", as xarray
// names it.
func ncDimensions(vars []ncVarSpec) ([]ncDim, []ncVarHeader) {
	var dims []ncDim
	byName := map[string]int{}
	dimID := func(name string, n int64) int {
		for k := 0; ; k++ {
			try := name
			if k > 0 {
				try = name + "_" + strconv.FormatInt(n, 10)
				if k > 1 {
					try += "_" + strconv.Itoa(k)
				}
			}
			id, used := byName[try]
			if !used {
				byName[try] = len(dims)
				dims = append(dims, ncDim{try, n})
				return len(dims) - 1
			}
			if dims[id].len == n {
				return id
			}
		}
	}
	varNames := uniqueNames{}
	hvars := make([]ncVarHeader, len(vars))
	for i, v := range vars {
		h := &hvars[i]
		h.name = varNames.add(ncName(v.name))
		var fsize int
		h.typ, fsize, _ = v.fileType()
		for j, n := range v.shape {
			name := ""
			if j < len(v.dimNames) {
				name = v.dimNames[j]
			}
			if name == "" {
				name = v.name + "_dim" + strconv.Itoa(j)
			}
			h.dims = append(h.dims, dimID(ncName(name), n))
		}
		h.size = int64(fsize)
		for _, n := range v.shape {
			h.size = mulSat(h.size, n)
		}
		if v.elem.kind == 'S' || v.elem.kind == 'U' {
			h.dims = append(h.dims, dimID("string"+strconv.Itoa(v.elem.size), int64(v.elem.size)))
		}
	}
	return dims, hvars
}

// ncLay lays out the file in the given format.
func ncLay(version byte, gattrs []pyjson.Field, vars []ncVarSpec, dims []ncDim, hvars []ncVarHeader) (*ncLayout, error) {
	w := ncWriter{version: version}
	w.b = append(w.b, 'C', 'D', 'F', version)
	w.nonNeg(0) // numrecs: there is no record dimension
	if len(dims) == 0 {
		w.absent()
	} else {
		w.u32(ncDimensionTag)
		w.nonNeg(int64(len(dims)))
		for _, d := range dims {
			w.name(d.name)
			w.nonNeg(d.len)
		}
	}
	w.attrs(ncAttributes(gattrs, version == 5, nil))
	w.u32(ncVariableTag)
	w.nonNeg(int64(len(vars)))
	type fixup struct{ at, vsize int }
	fix := make([]fixup, len(vars))
	for i, v := range vars {
		h := hvars[i]
		w.name(h.name)
		w.nonNeg(int64(len(h.dims)))
		for _, d := range h.dims {
			w.nonNeg(int64(d))
		}
		w.attrs(ncAttributes(v.attrs, version == 5, &v))
		w.u32(uint32(h.typ))
		fix[i].vsize = len(w.b)
		w.nonNeg(0)
		fix[i].at = len(w.b)
		w.offset(0)
	}
	l := &ncLayout{version: version, header: w.b}
	pos := int64(len(w.b))
	for i, v := range vars {
		size := hvars[i].size
		vsize := size + (4-size%4)%4
		if size == math.MaxInt64 || pos > math.MaxInt64-vsize {
			return nil, errors.New("the arrays are too large for a NetCDF file")
		}
		_, fsize, _ := v.fileType()
		l.vars = append(l.vars, ncVar{array: v.array, unit: v.elem.size, fUnit: fsize, convert: converter(v), begin: pos, size: size, vsize: vsize})
		// The header's vsize: CDF-1/2 write 2^32-1 for variables over
		// 2^32-4 bytes (the field is 32 bits).
		hv := vsize
		if version != 5 && size > cdf2MaxVar {
			hv = vsizeTooBig
		}
		w.putNonNeg(fix[i].vsize, hv)
		w.putOffset(fix[i].at, pos)
		pos += vsize
	}
	l.size = pos
	return l, nil
}

// swapSize is the size of the numbers of an element type whose bytes a
// big-endian file reverses.
func swapSize(t elemType) int {
	if t.kind == 'S' || t.kind == 'U' {
		return 1
	}
	return t.size
}

// converter returns how a variable's elements become the file's (see
// ncVar.convert).
func converter(v ncVarSpec) func(src, dst []byte) {
	t := v.elem
	switch {
	case v.as == asInt32:
		return func(src, dst []byte) {
			for i, j := 0, 0; i+8 <= len(src); i, j = i+8, j+4 {
				binary.BigEndian.PutUint32(dst[j:], uint32(int32(int64(binary.LittleEndian.Uint64(src[i:])))))
			}
		}
	case v.as == asDouble:
		return func(src, dst []byte) {
			for i := 0; i+8 <= len(src); i += 8 {
				f := float64(int64(binary.LittleEndian.Uint64(src[i:])))
				binary.BigEndian.PutUint64(dst[i:], math.Float64bits(f))
			}
		}
	case t.kind == 'U':
		return func(src, dst []byte) { utf32ToUTF8(src, t.size); copy(dst, src) }
	}
	size := swapSize(t)
	return func(src, dst []byte) { swapInPlace(src, size); copy(dst, src) }
}

// utf32ToUTF8 re-encodes in place each size-byte element of b, a NumPy
// Unicode string (UTF-32LE code points, NUL-padded), as UTF-8 padded with
// NULs to the same size. UTF-8 never takes more bytes than UTF-32, so each
// code point is written at or before where it was read. An invalid code
// point becomes U+FFFD.
func utf32ToUTF8(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		e := b[i : i+size]
		w := 0
		for j := 0; j+4 <= size; j += 4 {
			r := rune(binary.LittleEndian.Uint32(e[j:]))
			if r == 0 {
				break
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			w += utf8.EncodeRune(e[w:], r)
		}
		clear(e[w:])
	}
}

// ncWriter writes a header: 32-bit tags and types, and NON_NEG and OFFSET
// integers of the format's width.
type ncWriter struct {
	b       []byte
	version byte
}

func (w *ncWriter) u32(x uint32) { w.b = binary.BigEndian.AppendUint32(w.b, x) }

// nonNeg writes a count or length: 64-bit in CDF-5, 32-bit before.
func (w *ncWriter) nonNeg(x int64) {
	if w.version == 5 {
		w.b = binary.BigEndian.AppendUint64(w.b, uint64(x))
	} else {
		w.u32(uint32(x))
	}
}

func (w *ncWriter) putNonNeg(at int, x int64) {
	if w.version == 5 {
		binary.BigEndian.PutUint64(w.b[at:], uint64(x))
	} else {
		binary.BigEndian.PutUint32(w.b[at:], uint32(x))
	}
}

// offset writes a variable's begin: 32-bit in CDF-1, 64-bit after.
func (w *ncWriter) offset(x int64) {
	if w.version == 1 {
		w.u32(uint32(x))
	} else {
		w.b = binary.BigEndian.AppendUint64(w.b, uint64(x))
	}
}

func (w *ncWriter) putOffset(at int, x int64) {
	if w.version == 1 {
		binary.BigEndian.PutUint32(w.b[at:], uint32(x))
	} else {
		binary.BigEndian.PutUint64(w.b[at:], uint64(x))
	}
}

// absent writes an empty list: ZERO and a zero NON_NEG.
func (w *ncWriter) absent() {
	w.u32(0)
	w.nonNeg(0)
}

func (w *ncWriter) pad() {
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *ncWriter) name(s string) {
	w.nonNeg(int64(len(s)))
	w.b = append(w.b, s...)
	w.pad()
}

func (w *ncWriter) attrs(list []ncAttr) {
	if len(list) == 0 {
		w.absent()
		return
	}
	w.u32(ncAttributeTag)
	w.nonNeg(int64(len(list)))
	for _, a := range list {
		w.name(a.name)
		w.u32(uint32(a.typ))
		w.nonNeg(a.n)
		w.b = append(w.b, a.data...)
		w.pad()
	}
}

// uniqueNames hands out names not handed out before: a repeated name gets
// a suffix "_2", "_3" …
type uniqueNames map[string]bool

func (u uniqueNames) add(name string) string {
	try := name
	for k := 2; u[try]; k++ {
		try = name + "_" + strconv.Itoa(k)
	}
	u[try] = true
	return try
}

// ncName turns a Zarr name (any string but "/"-free node names) into a
// name NetCDF accepts: valid UTF-8, no control characters or "/", a first
// character that is a letter, a digit, "_" or multi-byte, and no trailing
// space. Each offending byte becomes "_"; an empty name is "_". (Names
// are not NFC-normalised: Zarr writers store what their users typed.)
func ncName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1,
			r < 0x20, r == 0x7f, r == '/',
			i == 0 && r < 0x80 && !isAlnum(byte(r)) && r != '_':
			b.WriteByte('_')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	out := b.String()
	if trimmed := strings.TrimRight(out, " "); len(trimmed) < len(out) {
		out = trimmed + strings.Repeat("_", len(out)-len(trimmed))
	}
	if out == "" {
		return "_"
	}
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ncAttributes encodes attributes. v, when set, is the variable they
// belong to: then _ARRAY_DIMENSIONS is left out, and the variable's fill
// value and type hints are added. Attribute values become NetCDF values
// thus: a string is characters (UTF-8); a number an int (an int64 in
// CDF-5, a double in CDF-1/2, when it needs more than 32 bits) or a double
// (NaN and the infinities included); a bool a byte 1 or 0; a list of
// numbers (or of bools) a list of them; null is left out; anything else
// (objects, lists of strings, mixed or empty lists) is its compact JSON
// text.
func ncAttributes(members []pyjson.Field, cdf5 bool, v *ncVarSpec) []ncAttr {
	var out []ncAttr
	names := uniqueNames{}
	var fill *ncAttr
	if v != nil {
		fill = ncFillAttr(*v)
	}
	for _, m := range members {
		// A variable's _FillValue is the typed one ncFill chose, or none:
		// an attribute NetCDF readers would misread (a float's base64
		// spelling, a bool's) is left out.
		if v != nil && (m.Name == "_ARRAY_DIMENSIONS" || m.Name == "_FillValue") {
			continue
		}
		a, ok := ncAttrValue(m.Value, cdf5)
		if !ok {
			continue
		}
		a.name = names.add(ncName(m.Name))
		out = append(out, a)
	}
	if v == nil {
		return out
	}
	if fill != nil {
		fill.name = names.add("_FillValue")
		out = append(out, *fill)
	}
	if v.unsigned && !names["_Unsigned"] {
		out = append(out, ncText(names.add("_Unsigned"), "true"))
	}
	switch v.elem.kind {
	case 'U':
		if !names["_Encoding"] {
			out = append(out, ncText(names.add("_Encoding"), "utf-8"))
		}
	case 'b':
		if !names["dtype"] {
			out = append(out, ncText(names.add("dtype"), "bool"))
		}
	case 'M', 'm':
		if !names["units"] {
			units := cfTimeUnits[v.elem.unit]
			if v.elem.kind == 'M' {
				units += " since 1970-01-01"
			}
			out = append(out, ncText(names.add("units"), units))
		}
	}
	return out
}

func ncText(name, s string) ncAttr {
	return ncAttr{name: name, typ: ncChar, n: int64(len(s)), data: []byte(s)}
}

// ncFillAttr returns the variable's _FillValue, of its own type, or nil
// when it has none. Bools and characters have none: NetCDF readers would
// hide every false, and a character variable's fill is one character.
func ncFillAttr(v ncVarSpec) *ncAttr {
	if v.fill == nil || v.elem.kind == 'b' || v.elem.kind == 'S' || v.elem.kind == 'U' || len(v.fill) != v.elem.size {
		return nil
	}
	typ, size, _ := v.fileType()
	data := make([]byte, size)
	converter(v)(slices.Clone(v.fill), data)
	return &ncAttr{typ: typ, n: 1, data: data}
}

func swapInPlace(b []byte, size int) {
	if size <= 1 {
		return
	}
	for i := 0; i+size <= len(b); i += size {
		e := b[i : i+size]
		for j, k := 0, size-1; j < k; j, k = j+1, k-1 {
			e[j], e[k] = e[k], e[j]
		}
	}
}

// ncAttrValue encodes one attribute value (see ncAttributes); ok is false
// for null.
func ncAttrValue(v pyjson.Value, cdf5 bool) (ncAttr, bool) {
	switch v.Kind {
	case pyjson.Null:
		return ncAttr{}, false
	case pyjson.Str:
		return ncText("", v.Str), true
	case pyjson.Bool, pyjson.Num:
		return ncNumbers([]pyjson.Value{v}, cdf5)
	case pyjson.Array:
		if a, ok := ncNumbers(v.Items, cdf5); ok {
			return a, true
		}
	}
	var b bytes.Buffer
	v.Compact(&b)
	return ncText("", b.String()), true
}

// ncNumbers encodes a non-empty list of numbers, or of bools, as one
// attribute; ok is false for any other list.
func ncNumbers(items []pyjson.Value, cdf5 bool) (ncAttr, bool) {
	if len(items) == 0 {
		return ncAttr{}, false
	}
	kind := items[0].Kind
	if kind != pyjson.Bool && kind != pyjson.Num {
		return ncAttr{}, false
	}
	ints, int32s := true, true
	for _, it := range items {
		if it.Kind != kind {
			return ncAttr{}, false
		}
		if kind == pyjson.Num {
			i, ok := it.Int()
			ints = ints && ok
			int32s = int32s && ok && i >= math.MinInt32 && i <= math.MaxInt32
		}
	}
	a := ncAttr{n: int64(len(items))}
	switch {
	case kind == pyjson.Bool:
		a.typ = ncByte
		for _, it := range items {
			if it.Bool {
				a.data = append(a.data, 1)
			} else {
				a.data = append(a.data, 0)
			}
		}
	case int32s:
		a.typ = ncInt
		for _, it := range items {
			i, _ := it.Int()
			a.data = binary.BigEndian.AppendUint32(a.data, uint32(int32(i)))
		}
	case ints && cdf5:
		a.typ = ncInt64
		for _, it := range items {
			i, _ := it.Int()
			a.data = binary.BigEndian.AppendUint64(a.data, uint64(i))
		}
	default:
		a.typ = ncDouble
		for _, it := range items {
			a.data = binary.BigEndian.AppendUint64(a.data, math.Float64bits(it.Float()))
		}
	}
	return a, true
}

// ncVariable returns the array node c as a variable of its group's
// dataset.nc, or why it is left out.
func ncVariable(c *zarr.Node) (ncVarSpec, string) {
	a := c.Array
	switch {
	case c.Err != nil || a == nil:
		return ncVarSpec{}, "its metadata cannot be read"
	case a.Err != nil:
		return ncVarSpec{}, "zarrfs cannot decode it"
	}
	t, ok := elemOf(a.DataType())
	if ok {
		_, _, ok = ncTypeOf(t)
	}
	if !ok {
		return ncVarSpec{}, "NetCDF has no type " + a.DataType().Name
	}
	for _, n := range a.Shape() {
		if n == 0 {
			return ncVarSpec{}, "it has no elements (NetCDF has no empty fixed-size dimension)"
		}
	}
	attrs := c.OrderedAttributes()
	dims := a.DimensionNames()
	if len(dims) == 0 {
		dims = attrDimensions(attrs, len(a.Shape()))
	}
	return ncVarSpec{
		name: c.Name(), elem: t, shape: a.Shape(), dimNames: dims,
		attrs: attrs, fill: ncFill(a.Format(), a.Fill(), attrs, t), array: a,
	}, ""
}

// attrDimensions returns the _ARRAY_DIMENSIONS attribute xarray writes in
// every format (the v3 drafts have no dimension names of their own) when
// it is a list of rank strings; else nil.
func attrDimensions(attrs []pyjson.Field, rank int) []string {
	for _, m := range attrs {
		if m.Name != "_ARRAY_DIMENSIONS" || m.Value.Kind != pyjson.Array || len(m.Value.Items) != rank {
			continue
		}
		dims := make([]string, rank)
		for i, it := range m.Value.Items {
			if it.Kind != pyjson.Str {
				return nil
			}
			dims[i] = it.Str
		}
		return dims
	}
	return nil
}

// ncFill returns the element a variable's _FillValue holds (little-endian,
// of type t), or nil for none, as xarray reads each format
// (use_zarr_fill_value_as_mask, pydata/xarray#10269): in Zarr v1 and v2 the
// optional fill_value is the mask, as it always was; in v3 and its drafts,
// where fill_value is mandatory and only says what an unwritten chunk
// holds (an integer array's is 0 unless told otherwise), the mask is the
// array's `_FillValue` attribute, or failing that its `missing_value`, as
// xarray writes them. So a v3 coordinate variable, which CF says has no
// missing values, gets one only where its attributes ask. A v2 array
// without a fill_value takes its attribute too.
func ncFill(f zarr.Format, fill []byte, attrs []pyjson.Field, t elemType) []byte {
	if (f == zarr.FormatV1 || f == zarr.FormatV2) && fill != nil {
		return fill
	}
	for _, name := range []string{"_FillValue", "missing_value"} {
		for _, m := range attrs {
			if m.Name == name {
				return attrElement(m.Value, t)
			}
		}
	}
	return nil
}

// attrElement returns an attribute's number as one little-endian element
// of type t, or nil when it is not one number that t holds exactly. A
// float's may be spelled as xarray's FillValueCoder writes it for v3 (the
// base64 of a little-endian float64), as "NaN", "Infinity", "-Infinity",
// or as a JSON number; a one-item list counts as its item.
func attrElement(v pyjson.Value, t elemType) []byte {
	if v.Kind == pyjson.Array && len(v.Items) == 1 {
		v = v.Items[0]
	}
	switch t.kind {
	case 'f':
		var f float64
		switch v.Kind {
		case pyjson.Num:
			f = v.Float()
		case pyjson.Str:
			switch v.Str {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				b, err := base64.StdEncoding.DecodeString(v.Str)
				if err != nil || len(b) != 8 {
					return nil
				}
				f = math.Float64frombits(binary.LittleEndian.Uint64(b))
			}
		default:
			return nil
		}
		switch t.size {
		case 4:
			return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(f)))
		case 8:
			return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))
		}
	case 'i', 'u', 'M', 'm':
		if v.Kind != pyjson.Num {
			return nil
		}
		var u uint64
		if i, ok := v.Int(); ok {
			bits := uint(8 * t.size)
			if t.kind == 'u' && (i < 0 || bits < 64 && i >= 1<<bits) ||
				t.kind != 'u' && bits < 64 && (i < -(1<<(bits-1)) || i >= 1<<(bits-1)) {
				return nil
			}
			u = uint64(i)
		} else if x, err := strconv.ParseUint(v.Str, 10, 64); err == nil && t.kind == 'u' && t.size == 8 {
			u = x
		} else {
			return nil
		}
		b := binary.LittleEndian.AppendUint64(nil, u)
		return b[:t.size]
	}
	return nil
}

// netcdfVariables returns the variables of a group with children children,
// and the arrays left out, each with why.
func netcdfVariables(children []*zarr.Node) (vars []ncVarSpec, left []string) {
	for _, c := range children {
		if c.Kind != zarr.KindArray {
			continue
		}
		v, why := ncVariable(c)
		if why != "" {
			left = append(left, c.Name()+": "+why)
			continue
		}
		vars = append(vars, v)
	}
	return vars, left
}

// netcdfInfo is what a group's info.txt says of its dataset.nc: the
// arrays it leaves out and why ("" when it leaves none out).
func netcdfInfo(left []string) string {
	if len(left) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\ndataset.nc leaves out:\n")
	for _, l := range left {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}

// ncSmall is the most elements of a 64-bit integer variable whose values
// dataset.nc reads to store it in a classic type (512 KiB): coordinates
// such as xarray's time and rioxarray's spatial_ref, not data variables.
const ncSmall = 1 << 16

// ncNarrow returns vars with each small 64-bit integer variable (at most
// ncSmall elements) stored as NC_INT when its values and fill fit 32
// bits, else as NC_DOUBLE when they are exact as doubles: Debian 12's
// GDAL 3.6 (and so QGIS) cannot open CDF-5, and ncview 2.1.8 misreads
// 64-bit times, while nearly every store has an int64 time coordinate.
// It reads those variables' values (their chunks are then in the cache).
// A variable that cannot be read stays NC_INT64; only the caller giving up
// is an error.
func ncNarrow(ctx context.Context, vars []ncVarSpec) ([]ncVarSpec, error) {
	vars = slices.Clone(vars)
	for i := range vars {
		v := &vars[i]
		if v.array == nil || v.elem.size != 8 || v.elem.kind != 'i' && v.elem.kind != 'M' && v.elem.kind != 'm' {
			continue
		}
		n := int64(1)
		for _, d := range v.shape {
			n = mulSat(n, d)
		}
		if n > ncSmall {
			continue
		}
		buf := make([]byte, n*8)
		if k, _ := v.array.ReadAt(ctx, buf, 0); k < len(buf) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if v.fill != nil {
			buf = append(buf, v.fill...)
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for j := 0; j+8 <= len(buf); j += 8 {
			x := int64(binary.LittleEndian.Uint64(buf[j:]))
			lo, hi = min(lo, x), max(hi, x)
		}
		switch {
		case lo >= math.MinInt32 && hi <= math.MaxInt32:
			v.as = asInt32
		case lo >= -1<<53 && hi <= 1<<53:
			v.as = asDouble
		}
	}
	return vars, nil
}

// netcdfFile is a group's dataset.nc. Its layout is made at the first
// call that needs it, from metadata and the values of its small 64-bit
// integer variables (ncNarrow), and kept once made.
type netcdfFile struct {
	node *zarr.Node
	vars []ncVarSpec

	mu     sync.Mutex
	layout *ncLayout
	err    error
}

func (f *netcdfFile) Name() string { return "dataset.nc" }

func (f *netcdfFile) lay(ctx context.Context) (*ncLayout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.layout != nil || f.err != nil {
		return f.layout, f.err
	}
	vars, err := ncNarrow(ctx, f.vars)
	if err != nil {
		return nil, err // the caller gave up: the next one tries again
	}
	f.layout, f.err = layoutNetCDF(f.node.OrderedAttributes(), vars)
	if f.err != nil {
		f.err = fmt.Errorf("group %q: dataset.nc: %w: %v", f.node.Path, zarr.ErrUnsupported, f.err)
	}
	return f.layout, f.err
}

// Size is the header's length and the variables'.
func (f *netcdfFile) Size(ctx context.Context) (int64, error) {
	l, err := f.lay(ctx)
	if err != nil {
		return 0, err
	}
	return l.size, nil
}

// Check fails only when the arrays do not fit any NetCDF format.
func (f *netcdfFile) Check(ctx context.Context) error {
	_, err := f.lay(ctx)
	return err
}

// ReadAt copies the header's bytes, then each variable's values in turn:
// the array's elements under the bytes asked for, converted, and the
// zero padding to a multiple of four bytes after them.
func (f *netcdfFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	l, err := f.lay(ctx)
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("read at %d: negative offset", off)
	}
	if off >= l.size {
		return 0, io.EOF
	}
	want := int(min(int64(len(p)), l.size-off))
	done, _ := readBytes(l.header, p[:want], off)
	pos := off + int64(done)
	i := sort.Search(len(l.vars), func(i int) bool { return l.vars[i].begin+l.vars[i].vsize > pos })
	for done < want {
		v := l.vars[i]
		var k int
		if end := v.begin + v.size; pos < end {
			k = int(min(int64(want-done), end-pos))
			if err := v.read(ctx, p[done:done+k], pos-v.begin); err != nil {
				return done, err
			}
		} else {
			k = int(min(int64(want-done), v.begin+v.vsize-pos))
			clear(p[done : done+k])
		}
		done += k
		pos += int64(k)
		if pos == v.begin+v.vsize {
			i++
		}
	}
	if want < len(p) {
		return want, io.EOF
	}
	return want, nil
}

// read fills p with the variable's values from byte off: the elements
// under them read from the array (through its cache) and converted. A
// read that starts or ends inside an element, or of elements the file
// stores smaller, reads the elements into a buffer of its own.
func (v ncVar) read(ctx context.Context, p []byte, off int64) error {
	fu, su := int64(v.fUnit), int64(v.unit)
	e0 := off / fu
	e1 := (off + int64(len(p)) + fu - 1) / fu
	src := p
	inPlace := fu == su && e0*fu == off && e1*fu == off+int64(len(p))
	if !inPlace {
		src = make([]byte, (e1-e0)*su)
	}
	if n, err := v.array.ReadAt(ctx, src, e0*su); n < len(src) {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("variable data at %d: %w", e0*su, io.ErrUnexpectedEOF)
		}
		return err
	}
	dst := src
	if fu != su {
		dst = make([]byte, (e1-e0)*fu)
	}
	v.convert(src, dst)
	if !inPlace {
		copy(p, dst[off-e0*fu:])
	}
	return nil
}
