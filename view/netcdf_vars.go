package view

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file chooses dataset.nc's variables (netcdf.go): which arrays of a
// group NetCDF has a type for, how 64-bit integers are narrowed for
// CDF-1/2 readers, and how an array's bytes become a variable's values
// (big-endian, UTF-32 as UTF-8).

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
