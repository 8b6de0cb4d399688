package meta

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
)

// Layout is an array's chunk grid: its shape, its chunk shape and the
// sizes that follow from them.
type Layout struct {
	shape, chunks []int64
	grid          []int64 // chunks per dimension
	nelem         int64   // elements in the array
	size          int64   // bytes of the logical content (0 for variable-length types)
	chunkElems    int64   // elements in one chunk
	nchunks       int64   // chunks in the grid
	// slabChunks is the chunks of one step along the first dimension:
	// those a C-order reader meets in one row of chunks.
	slabChunks int64
	// edges, for a rectilinear grid, are per dimension the start of every
	// chunk and the end of the last (rectilinear.go); nil for a regular
	// grid, whose arithmetic below stays as it is.
	edges [][]int64
}

// newLayout checks a shape against its chunk shape and computes the
// layout.
func newLayout(shape, chunks []int64, itemSize int) (Layout, error) {
	if len(shape) != len(chunks) {
		return Layout{}, fmt.Errorf("%w: chunk shape %v does not match the rank of shape %v", ErrInvalidMetadata, chunks, shape)
	}
	l := Layout{shape: shape, chunks: chunks}
	var err error
	if l.nelem, err = Product("shape", shape, 1); err != nil {
		return l, err
	}
	if l.size, err = Product("shape", shape, int64(itemSize)); err != nil {
		return l, err
	}
	if l.chunkElems, err = Product("chunk shape", chunks, 1); err != nil {
		return l, err
	}
	item := int64(max(itemSize, 1))
	if cb, ok := nd.Mul(l.chunkElems, item); !ok || cb > MaxChunkBytes {
		return l, fmt.Errorf("%w: chunk shape %v of %d-byte elements is over the %d-byte chunk limit", codec.ErrUnsupported, chunks, item, MaxChunkBytes)
	}
	l.grid = make([]int64, len(shape))
	l.nchunks, l.slabChunks = 1, 1
	for i := range shape {
		l.grid[i] = ceilDiv(shape[i], chunks[i])
		// No more chunks than elements (a chunk holds one at least, or
		// the array none), so the products fit.
		l.nchunks *= l.grid[i]
		if i > 0 {
			l.slabChunks *= l.grid[i]
		}
	}
	return l, nil
}

// sizeLayout returns the layout of an array whose chunk grid is not
// known: its shape and sizes only, no chunks.
func sizeLayout(shape []int64, itemSize int) (Layout, error) {
	l := Layout{shape: shape}
	var err error
	if l.nelem, err = Product("shape", shape, 1); err != nil {
		return l, err
	}
	l.size, err = Product("shape", shape, int64(itemSize))
	return l, err
}

// Elems returns the number of elements of the array.
func (l *Layout) Elems() int64 { return l.nelem }

// ChunkElems returns the number of elements of one chunk.
func (l *Layout) ChunkElems() int64 { return l.chunkElems }

// Chunks returns the number of chunks of the grid.
func (l *Layout) Chunks() int64 { return l.nchunks }

// SlabChunks returns the chunks of one step along the first dimension:
// those a C-order reader meets in one row of chunks.
func (l *Layout) SlabChunks() int64 { return l.slabChunks }

// ChunkLastElem returns the C-order index of the last element of the
// chunk with linear index lin.
func (l *Layout) ChunkLastElem(lin int64) int64 {
	if l.edges != nil {
		return l.rectChunkLastElem(lin)
	}
	var e, stride int64 = 0, 1
	for i := len(l.shape) - 1; i >= 0; i-- {
		idx := lin % l.grid[i]
		lin /= l.grid[i]
		e += (min((idx+1)*l.chunks[i], l.shape[i]) - 1) * stride
		stride *= l.shape[i]
	}
	return e
}

// Linear returns the linear index of the chunk at idx (C order over the
// chunk grid).
func (l *Layout) Linear(idx []int64) int64 {
	var lin int64
	for i, n := range l.grid {
		lin = lin*n + idx[i]
	}
	return lin
}

// ChunkIndex returns the grid index of the chunk with linear index lin.
func (l *Layout) ChunkIndex(lin int64) []int64 {
	idx := make([]int64, len(l.grid))
	for i := len(idx) - 1; i >= 0; i-- {
		idx[i] = lin % l.grid[i]
		lin /= l.grid[i]
	}
	return idx
}

// ChunkOf returns the linear index of the chunk holding element e (a
// C-order index into the array).
func (l *Layout) ChunkOf(e int64) int64 {
	if l.edges != nil {
		return l.rectChunkOf(e)
	}
	var lin, stride int64 = 0, 1
	for i := len(l.shape) - 1; i >= 0; i-- {
		lin += e % l.shape[i] / l.chunks[i] * stride
		e /= l.shape[i]
		stride *= l.grid[i]
	}
	return lin
}

// chunkKeys encodes chunk coordinates as store keys below the array.
type chunkKeys struct {
	prefix string // "c" for the v3 default encoding, "" otherwise
	sep    string
	// glued joins the prefix to the first index ("c0/1", the v3 drafts).
	glued bool
	// dir, when set, is the store path the keys are below instead of the
	// array's own path (the data/… prefixes of the v3 drafts).
	dir string
}

// key returns the key of the chunk at idx relative to the array.
func (k chunkKeys) key(idx []int64) string {
	if k.glued && len(idx) == 0 {
		return k.prefix + "0" // zarr-python 2.13 writes the one chunk of a 0-d draft array as c0
	}
	var b strings.Builder
	b.WriteString(k.prefix)
	for i, x := range idx {
		if i > 0 || k.prefix != "" && !k.glued {
			b.WriteString(k.sep)
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	if b.Len() == 0 {
		return "0"
	}
	return b.String()
}

// parseSeparator checks a chunk key separator.
func parseSeparator(what string, raw json.RawMessage, def string) (string, error) {
	if raw == nil || string(raw) == "null" {
		return def, nil
	}
	if s, ok := plainString(raw); ok && (s == "." || s == "/") {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s != "." && s != "/" {
		return "", fmt.Errorf("%w: %s %s must be \".\" or \"/\"", ErrInvalidMetadata, what, compact(raw))
	}
	return s, nil
}
