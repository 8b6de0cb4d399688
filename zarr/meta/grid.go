package zarr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/internal/nd"
)

// chunkLayout is an array's chunk grid and sizes.
type chunkLayout struct {
	grid       []int64 // chunks per dimension
	nelem      int64   // elements in the array
	size       int64   // bytes of the logical content (0 for variable-length types)
	chunkElems int64   // elements in one chunk
	nchunks    int64   // chunks in the grid
	// slabChunks is the chunks of one step along the first dimension:
	// those a C-order reader meets in one row of chunks.
	slabChunks int64
}

// newChunkLayout checks a shape against its chunk shape and computes the
// layout.
func newChunkLayout(shape, chunks []int64, itemSize int) (chunkLayout, error) {
	if len(shape) != len(chunks) {
		return chunkLayout{}, fmt.Errorf("%w: chunk shape %v does not match the rank of shape %v", ErrInvalidMetadata, chunks, shape)
	}
	var l chunkLayout
	var err error
	if l.nelem, err = product("shape", shape, 1); err != nil {
		return l, err
	}
	if l.size, err = product("shape", shape, int64(itemSize)); err != nil {
		return l, err
	}
	if l.chunkElems, err = product("chunk shape", chunks, 1); err != nil {
		return l, err
	}
	item := int64(max(itemSize, 1))
	if cb, ok := nd.Mul(l.chunkElems, item); !ok || cb > MaxChunkBytes {
		return l, fmt.Errorf("%w: chunk shape %v of %d-byte elements is over the %d-byte chunk limit", ErrUnsupported, chunks, item, MaxChunkBytes)
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

// chunkLastElem returns the C-order index of the last element of the
// chunk with linear index lin (in an array of the given shape and chunk
// shape).
func (l chunkLayout) chunkLastElem(shape, chunks []int64, lin int64) int64 {
	var e, stride int64 = 0, 1
	for i := len(shape) - 1; i >= 0; i-- {
		idx := lin % l.grid[i]
		lin /= l.grid[i]
		e += (min((idx+1)*chunks[i], shape[i]) - 1) * stride
		stride *= shape[i]
	}
	return e
}

// linear returns the linear index of the chunk at idx (C order over the
// chunk grid).
func (l chunkLayout) linear(idx []int64) int64 {
	var lin int64
	for i, n := range l.grid {
		lin = lin*n + idx[i]
	}
	return lin
}

// chunkOf returns the linear index of the chunk holding element e (a
// C-order index into an array of the given shape and chunk shape).
func (l chunkLayout) chunkOf(shape, chunks []int64, e int64) int64 {
	var lin, stride int64 = 0, 1
	for i := len(shape) - 1; i >= 0; i-- {
		lin += e % shape[i] / chunks[i] * stride
		e /= shape[i]
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
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s != "." && s != "/" {
		return "", fmt.Errorf("%w: %s %s must be \".\" or \"/\"", ErrInvalidMetadata, what, compact(raw))
	}
	return s, nil
}
