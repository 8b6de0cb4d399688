package view

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// This file lays out dataset.nc's header (netcdf.go): the dimensions from
// the arrays' dimension names, the format version (CDF-1, 2 or 5) the
// variables fit, the offsets of their values, and the header's bytes.

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
