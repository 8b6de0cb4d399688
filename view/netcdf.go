package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"

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
