// Package meta reads Zarr metadata: the documents of every format zarrfs
// knows (v1, v2, v3 and the v3 drafts of 2019 and 2022), their data types
// and fill values, chunk grids and chunk key encodings, into a parsed
// metadata value that never changes after.
//
// It sits between package zarr, which walks hierarchies and reads and
// writes array contents through stores and caches, and package codec,
// whose registry builds the codec pipeline an array's metadata names. It
// reads documents as bytes and knows nothing of stores beyond their key
// syntax.
package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// ErrInvalidMetadata marks a metadata document that is not valid for its format.
var ErrInvalidMetadata = errors.New("meta: invalid metadata")

// Format is the Zarr format a node is stored in.
type Format int

const (
	FormatV1          Format = 1 + iota // zarr_format 1: meta/attrs
	FormatV2                            // zarr_format 2: .zarray/.zgroup/.zattrs
	FormatV3                            // zarr_format 3: zarr.json
	FormatV3Draft2019                   // the 2019 v3 draft: zarr.json entry point, meta/root.array …
	FormatV3Draft2022                   // the 2022 v3 draft (zarr-python 2.13 experimental v3)
)

// String returns the format as shown to users: "v2", "v3", "v1",
// "v3-draft-2019", "v3-draft-2022".
func (f Format) String() string {
	switch f {
	case FormatV1:
		return "v1"
	case FormatV2:
		return "v2"
	case FormatV3:
		return "v3"
	case FormatV3Draft2019:
		return "v3-draft-2019"
	case FormatV3Draft2022:
		return "v3-draft-2022"
	}
	return "unknown(" + strconv.Itoa(int(f)) + ")"
}

// String returns "group", "array" or "unknown".
func (k Kind) String() string {
	switch k {
	case KindGroup:
		return "group"
	case KindArray:
		return "array"
	}
	return "unknown"
}

// Kind tells groups from arrays.
type Kind int

const (
	// KindUnknown is the kind of a node whose metadata is too broken to
	// tell (not JSON, or no valid node_type).
	KindUnknown Kind = iota
	KindGroup
	KindArray
)

// DataType describes the element type of an array as the engine exposes it.
type DataType struct {
	// Name is the v3 name of the type ("float32", "int16", "fixed_length_utf32" …).
	Name string
	// Size is the size of one element of the logical content in bytes; 0
	// for variable-length types.
	Size int
	// NumPy is the NumPy type string of the logical content ("<f4", "|u1",
	// "|S7", "<U7", "<M8[ns]"); empty for variable-length types.
	NumPy string
	// Kind is the NumPy kind character of the logical content (b i u f c
	// S U V M m) when NumPy is the type string of one kind, as the views
	// of foreign formats (NetCDF, ENVI, NRRD) need it; 0 for structured
	// types, ml_dtypes types and variable-length types.
	Kind byte
	// Unit is a datetime's or timedelta's unit ("ns", "10s"), else "".
	Unit string
	// mlFields marks a record type with a field of an ML type (its NumPy
	// string names it as ml_dtypes does: NumPy has no such record).
	mlFields bool
}

// HasNumPyType reports whether NumPy has the type: its NumPy string is a
// NumPy type string ("<f4", "|S7", a structured type's field list) rather
// than an ml_dtypes name ("bfloat16"), a record with such a field, or
// empty (variable-length types).
func (t DataType) HasNumPyType() bool {
	return t.NumPy != "" && !t.mlFields && strings.ContainsRune("<>|[", rune(t.NumPy[0]))
}

// Array is the parsed metadata of an array. It is set once by the parsers
// and never changes: its accessors return copies of what could be
// changed through them, so that any number of readers may share it.
type Array struct {
	format    Format
	shape     []int64
	chunks    []int64 // the regular chunk grid's chunk shape
	dataType  DataType
	fillValue json.RawMessage
	dimNames  []string
	codecs    json.RawMessage
	// err is set when the array's contents cannot be read (an
	// unsupported codec or data type); the metadata above is still valid.
	err error
	// note says how the array is read where its metadata is outside the
	// specification (GDAL's v3 arrays without codecs).
	note string

	keys   chunkKeys
	dt     dtype
	fill   []byte // one element of the logical content (the element's bytes for variable-length types)
	layout Layout
	pipe   *codec.Pipeline
	// edges, for a rectilinear chunk grid, are its chunk boundaries
	// (rectilinear.go); chunks is then the largest chunk's shape, and
	// each chunk shape has its own pipeline, built from codecs when first
	// needed and kept in pipes.
	edges       [][]int64
	chainCodecs []codec.Codec
	pipes       sync.Map // string(shape) → *codec.Pipeline
	// shards, when set, is the storage transformer between the array and
	// its store (the 2022 v3 draft's sharding).
	shards *DraftShards
}

// SameChunks reports whether b stores and encodes its chunks as a does:
// the same format, shape, chunk grid and keys, data type, fill value and
// codecs, so that a decoded chunk of one, its stored bytes unchanged, is
// the same chunk of the other. Arrays behind a draft's storage
// transformer are never the same.
func (a *Array) SameChunks(b *Array) bool {
	return a.edges == nil && b.edges == nil && a.format == b.format && a.keys == b.keys && a.dataType == b.dataType &&
		slices.Equal(a.shape, b.shape) && slices.Equal(a.chunks, b.chunks) &&
		bytes.Equal(a.fillValue, b.fillValue) && bytes.Equal(a.codecs, b.codecs) &&
		a.shards == nil && b.shards == nil
}

// Note says how the array is read where its metadata is outside the
// specification, or is "".
func (a *Array) Note() string { return a.note }

// Format returns the format of the array's metadata.
func (a *Array) Format() Format { return a.format }

// Shape returns the shape of the array (a copy).
func (a *Array) Shape() []int64 { return slices.Clone(a.shape) }

// ChunkShape returns the chunk shape of the regular chunk grid (a copy).
func (a *Array) ChunkShape() []int64 { return slices.Clone(a.chunks) }

// DataType returns the element type of the logical content.
func (a *Array) DataType() DataType { return a.dataType }

// FillValue returns the fill value as the metadata spells it (JSON, a copy).
func (a *Array) FillValue() json.RawMessage { return slices.Clone(a.fillValue) }

// DimensionNames returns the v3 dimension_names or the v2
// _ARRAY_DIMENSIONS attribute (a copy); nil when there are none.
func (a *Array) DimensionNames() []string { return slices.Clone(a.dimNames) }

// Codecs returns the codec chain as JSON (a copy): the v3 "codecs" list,
// or for the other formats the filters and compressor in v3 form
// ({"name":…, "configuration":…}).
func (a *Array) Codecs() json.RawMessage { return slices.Clone(a.codecs) }

// Unsupported returns why the array's contents cannot be read (an
// unsupported codec or data type, matching codec.ErrUnsupported), or nil.
func (a *Array) Unsupported() error { return a.err }

// Spelling returns the data type as the metadata spells it ("<f4",
// "float32", the JSON of a structured type …), or "" when it could not be
// parsed.
func (a *Array) Spelling() string { return a.dt.spelling }

// Size returns the size of the array's logical content in bytes:
// prod(shape) × DataType.Size; 0 for variable-length types.
func (a *Array) Size() int64 { return a.layout.size }

// Variable reports whether the array's elements are variable-length
// strings or byte strings.
func (a *Array) Variable() bool { return a.dt.Variable() }

// Layout returns the array's chunk grid.
func (a *Array) Layout() *Layout { return &a.layout }

// Pipeline returns the codec pipeline of one chunk, or nil when the
// array's contents cannot be read.
func (a *Array) Pipeline() *codec.Pipeline { return a.pipe }

// PipelineOf returns the codec pipeline of the chunk with linear index
// lin: the array's for a regular grid; for a rectilinear grid the one of
// that chunk's shape (an error when the codecs do not fit it, e.g. a shard
// shape that does not divide it).
func (a *Array) PipelineOf(lin int64) (*codec.Pipeline, error) {
	if a.edges == nil || a.pipe == nil {
		return a.pipe, nil
	}
	shape := a.layout.ChunkShapeOf(a.layout.ChunkIndex(lin))
	key := fmt.Sprint(shape)
	if p, ok := a.pipes.Load(key); ok {
		return p.(*codec.Pipeline), nil
	}
	p, err := codec.NewPipeline(a.chainCodecs, chunkSpec(a.dt, shape, a.fill))
	if err != nil {
		return nil, fmt.Errorf("%w: chunk shape %v: %w", ErrInvalidMetadata, shape, err)
	}
	a.pipes.Store(key, p)
	return p, nil
}

// DraftShards returns the 2022 v3 draft's sharding storage transformer
// the array's chunks are read through, or nil.
func (a *Array) DraftShards() *DraftShards { return a.shards }

// ChunkKey returns the store key of the chunk at idx of the array stored
// at path.
func (a *Array) ChunkKey(path string, idx []int64) string {
	if a.keys.dir != "" {
		path = a.keys.dir
	}
	return store.Join(path, a.keys.key(idx))
}

// FillElement returns the fill value as one element of the logical
// content: the element's bytes for variable-length types (a copy).
func (a *Array) FillElement() []byte { return slices.Clone(a.fill) }

// FillElements sets dst to repetitions of the fill element.
func (a *Array) FillElements(dst []byte) {
	allZero := true
	for _, b := range a.fill {
		if b != 0 {
			allZero = false
			break
		}
	}
	if allZero || len(dst) == 0 {
		clear(dst)
		return
	}
	n := copy(dst, a.fill)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}
