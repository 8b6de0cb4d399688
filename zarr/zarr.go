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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// ObjectType is the DataType.Name of object arrays read through numcodecs'
// json2 or msgpack2: variable-length elements, each one compact JSON value.
const ObjectType = codec.ObjectType

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
// bytes exactly as stored.
type Document struct {
	Name string
	// Data is the document's bytes as read when the node loaded. For a
	// document known from consolidated metadata it is the document
	// re-serialised from there, and Bytes fetches the stored bytes.
	Data   []byte
	stored *storedDocument
}

// Bytes returns the document's bytes exactly as the store holds them. A
// document known from consolidated metadata is fetched from the store
// at the first call (the node's load reads none of them), and when the
// store does not hold it (a store that cannot list, with only the
// consolidated metadata) it is Data, re-serialised.
func (d Document) Bytes(ctx context.Context) ([]byte, error) {
	if d.stored == nil {
		return d.Data, nil
	}
	return d.stored.get(ctx, d.Data)
}

// storedDocument fetches, once, the bytes the store holds under key.
type storedDocument struct {
	st  store.Store
	key string

	mu   sync.Mutex
	data []byte // set once fetched
}

func (s *storedDocument) get(ctx context.Context, reserialised []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data != nil {
		return s.data, nil
	}
	b, _, err := getDocument(ctx, s.st, s.key)
	switch {
	case errors.Is(err, store.ErrNotExist):
		b = reserialised
	case err != nil:
		return nil, fmt.Errorf("%s: %s: %w", s.st, s.key, err)
	}
	if b == nil {
		b = []byte{}
	}
	s.data = b
	return b, nil
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
// The metadata (the exported fields, and what the engine decodes of them)
// is set when the node loads and never changes after: callers read it,
// concurrently with reads and writes of the contents, and must not
// modify it.
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

	arrayMeta // the metadata decoded, set once by the parsers
	arrayIO   // the store, the cache and the state of reads and writes
}
