// Package zarr is zarrfs's Zarr engine: metadata for every Zarr format (v1,
// v2, v3 and the v3 drafts of 2019 and 2022), data types and fill values,
// chunk grids and chunk key encodings, hierarchy discovery (listing and
// consolidated metadata), and reading and writing array contents through
// the codec pipeline with a decoded-chunk cache.
//
// The engine is a Go library; it knows nothing of FUSE. Its view of an array
// is the array's logical content: elements in C order, each little-endian,
// missing chunks read as the fill value.
package zarr

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// Sentinel errors. Errors from this package wrap one of them (or a store or
// codec error) with context naming the store, the node and the chunk key.
var (
	ErrNotExist    = store.ErrNotExist
	ErrUnsupported = codec.ErrUnsupported
	ErrCorrupt     = codec.ErrCorrupt
	// ErrInvalidMetadata marks a metadata document that is not valid for its format.
	ErrInvalidMetadata = errors.New("invalid metadata")
)

// Format is the Zarr format a node is stored in.
type Format int

const (
	FormatV1          Format = 1 + iota // zarr_format 1: meta/attrs
	FormatV2                            // zarr_format 2: .zarray/.zgroup/.zattrs
	FormatV3                            // zarr_format 3: zarr.json
	FormatV3Draft2019                   // the 2019 v3 draft: zarr.json entry point, meta/root.array …
	FormatV3Draft2022                   // the 2022 v3 draft (zarr-python 2.13 experimental v3)
)

// Kind tells groups from arrays.
type Kind int

const (
	// KindUnknown is the kind of a node whose metadata is too broken to
	// tell (not JSON, or no valid node_type); its Err says why.
	KindUnknown Kind = iota
	KindGroup
	KindArray
)

// Document is a metadata document as the mount shows it: the name it has in
// the node's directory (".zarray", "zarr.json", "array.json" …) and its
// bytes exactly as stored (or re-serialised from consolidated metadata).
type Document struct {
	Name string
	Data []byte
}

// Node is a group or an array of a hierarchy.
type Node struct {
	Path      string // "" for the root, "a/b" otherwise
	Kind      Kind
	Format    Format
	Documents []Document
	// Attributes are the node's user attributes as a JSON object ("{}" when none).
	Attributes json.RawMessage
	// ModTime is the modification time of the node's metadata in the store,
	// or zero when the store does not know it.
	ModTime time.Time
	// Array is set for arrays whose metadata could be parsed.
	Array *Array
	// Err is set when the node cannot be used: its metadata is invalid or
	// names something unsupported (then it matches ErrUnsupported). Such a
	// node still lists, with its Documents.
	Err error
}

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
}

// Array is an array node's metadata and the means to read and write it.
type Array struct {
	Shape      []int64
	ChunkShape []int64 // the regular chunk grid's chunk shape
	DataType   DataType
	// FillValue is the fill value as the metadata spells it (JSON).
	FillValue json.RawMessage
	// DimensionNames are the v3 dimension_names or the v2 _ARRAY_DIMENSIONS
	// attribute; nil when there are none.
	DimensionNames []string
	// Codecs is the codec chain as JSON: the v3 "codecs" list, or for v2
	// the filters and compressor in v3 form ({"name":…, "configuration":…}).
	Codecs json.RawMessage
	// Err is set when the array's contents cannot be read (an unsupported
	// codec or data type); the metadata above is still valid.
	Err error

	arrayState
}
