// Package zarr is zarrfs's Zarr engine: hierarchy discovery (listing and
// consolidated metadata) for every Zarr format (v1, v2, v3 and the v3
// drafts of 2019 and 2022), and reading and writing array contents through
// the codec pipeline with a decoded-chunk cache. The metadata documents,
// data types and fill values are read by package zarr/meta, whose types
// this package re-exports where its users need them.
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
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// Sentinel errors. Errors from this package wrap one of them (or a store or
// codec error) with context naming the store, the node and the chunk key.
var (
	ErrNotExist    = store.ErrNotExist
	ErrUnsupported = codec.ErrUnsupported
	ErrCorrupt     = codec.ErrCorrupt
	// ErrInvalidMetadata marks a metadata document that is not valid for its format.
	ErrInvalidMetadata = meta.ErrInvalidMetadata
)

// ObjectType is the DataType.Name of object arrays read through numcodecs'
// json2 or msgpack2: variable-length elements, each one compact JSON value.
const ObjectType = codec.ObjectType

// Format is the Zarr format a node is stored in.
type Format = meta.Format

const (
	FormatV1          = meta.FormatV1          // zarr_format 1: meta/attrs
	FormatV2          = meta.FormatV2          // zarr_format 2: .zarray/.zgroup/.zattrs
	FormatV3          = meta.FormatV3          // zarr_format 3: zarr.json
	FormatV3Draft2019 = meta.FormatV3Draft2019 // the 2019 v3 draft: zarr.json entry point, meta/root.array …
	FormatV3Draft2022 = meta.FormatV3Draft2022 // the 2022 v3 draft (zarr-python 2.13 experimental v3)
)

// Kind tells groups from arrays.
type Kind = meta.Kind

const (
	// KindUnknown is the kind of a node whose metadata is too broken to
	// tell (not JSON, or no valid node_type); its Err says why.
	KindUnknown = meta.KindUnknown
	KindGroup   = meta.KindGroup
	KindArray   = meta.KindArray
)

// Limits on what the engine accepts from metadata.
const (
	// MaxRank is the largest number of dimensions an array may have.
	MaxRank = meta.MaxRank
	// MaxChunkBytes bounds the decoded size of one chunk.
	MaxChunkBytes = meta.MaxChunkBytes
	// MaxDocumentSize bounds the size of a metadata document.
	MaxDocumentSize = meta.MaxDocumentSize
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
	// limit, when set, is the size limit of the document instead of
	// MaxDocumentSize (consolidated metadata, Options.ConsolidatedLimit).
	limit int64

	mu   sync.Mutex
	data []byte // set once fetched
}

func (s *storedDocument) get(ctx context.Context, reserialised []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data != nil {
		return s.data, nil
	}
	var b []byte
	var err error
	if s.limit > 0 {
		b, err = getLimited(ctx, s.st, s.key, s.limit)
	} else {
		b, _, err = getDocument(ctx, s.st, s.key)
	}
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
	// Array is set for arrays whose metadata could be parsed. It may also
	// be set on a group: a 2022-draft root that is both (GDAL's test.zr3).
	Array *Array
	// Note says what is unusual about the node and how zarrfs reads it;
	// info.txt shows it.
	Note string
	// Err is set when the node cannot be used: its metadata is invalid or
	// names something unsupported (then it matches ErrUnsupported). Such a
	// node still lists, with its Documents.
	Err error
}

// The names of the metadata documents, as package meta knows them.
const (
	v1MetaDoc      = meta.V1MetaDoc
	v1AttrsDoc     = meta.V1AttrsDoc
	v2ArrayDoc     = meta.V2ArrayDoc
	v2GroupDoc     = meta.V2GroupDoc
	v2AttrsDoc     = meta.V2AttrsDoc
	v2Consolidated = meta.V2Consolidated
	v3Doc          = meta.V3Doc
)

// DataType describes the element type of an array as the engine exposes it.
type DataType = meta.DataType

// Array is an array node's metadata and the means to read and write it.
// The metadata is a meta.Array, parsed when the node loads and never
// changed after; its accessors (Shape, ChunkShape, DataType, FillValue,
// DimensionNames, Codecs …) are the array's, and return copies, so that
// callers may read them concurrently with reads and writes of the
// contents and cannot change them.
type Array struct {
	// Err is set when the array's contents cannot be read from its store
	// (an unsupported codec or data type, the metadata's Unsupported
	// error, with the store and the array's path); the metadata is still
	// valid. It is the array's state in its hierarchy, not metadata: the
	// same metadata may be bound to different stores.
	Err error

	*arrayMeta // the parsed metadata
	arrayIO    // the store, the cache and the state of reads and writes
}

// Meta returns the array's parsed metadata.
func (a *Array) Meta() *meta.Array { return a.arrayMeta }

// arrayMeta names meta.Array for embedding in Array, whose field is
// then unexported: its methods are Array's, the value cannot be replaced.
type arrayMeta = meta.Array

// newArray returns the array of the parsed metadata m (nil for none) and
// err, as the parsers return them.
func newArray(m *meta.Array, err error) (*Array, error) {
	if m == nil {
		return nil, err
	}
	return &Array{Err: m.Unsupported(), arrayMeta: m}, err
}
