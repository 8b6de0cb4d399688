package view

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/zarrfs/zarrfs/internal/pyjson"
	"github.com/zarrfs/zarrfs/zarr"
)

// This file turns attributes into dataset.nc's (netcdf.go): each JSON
// value, in document order, as a NetCDF attribute, the type hints NetCDF
// readers expect, and each variable's _FillValue.

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
