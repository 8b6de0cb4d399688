package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/zarrfs/zarrfs/codec"
)

// The rectilinear chunk grid of zarr-extensions (chunk-grids/rectilinear):
// along each dimension a list of chunk edge lengths, "kind": "inline",
// "chunk_shapes" with one entry per dimension: an integer (a regular step
// repeated until the sum reaches the array's length), or a list of
// integers and run-length pairs [V, N] (N repetitions of V). Chunks
// overhanging the array's end are allowed.

// maxRectChunks bounds the chunks along one dimension of a rectilinear
// grid (each needs its boundary in memory).
const maxRectChunks = 1 << 22

// parseRectilinear parses a rectilinear grid's configuration for an array
// of shape and returns, per dimension, the start of every chunk followed
// by the end of the last (which may be past the array's length). Edges
// listed after the array is covered are ignored; every sum is checked for
// overflow.
func parseRectilinear(cfg codec.Config, shape []int64) ([][]int64, error) {
	bad := func(format string, args ...any) ([][]int64, error) {
		return nil, fmt.Errorf("%w: rectilinear chunk grid: %s", ErrInvalidMetadata, fmt.Sprintf(format, args...))
	}
	for k := range cfg {
		if k != "kind" && k != "chunk_shapes" {
			return bad("unknown configuration member %q", k)
		}
	}
	var kind string
	if err := json.Unmarshal(cfg["kind"], &kind); err != nil || kind != "inline" {
		if err == nil {
			return nil, codec.Unsupportedf("rectilinear chunk grid of kind %q", kind)
		}
		return bad(`kind must be "inline"`)
	}
	var dims []json.RawMessage
	if err := json.Unmarshal(cfg["chunk_shapes"], &dims); err != nil || len(dims) != len(shape) {
		return bad("chunk_shapes must be a list of %d entries, one per dimension", len(shape))
	}
	edges := make([][]int64, len(shape))
	for i, raw := range dims {
		length := shape[i]
		starts := []int64{0}
		var end int64
		add := func(v, n int64) error {
			if v < 1 || n < 1 {
				return fmt.Errorf("edge lengths and repetitions must be positive")
			}
			for ; n > 0 && end < length; n-- {
				if len(starts) > maxRectChunks {
					return codec.Unsupportedf("rectilinear chunk grid of more than %d chunks along dimension %d", maxRectChunks, i)
				}
				if end > math.MaxInt64-v {
					return fmt.Errorf("edge lengths overflow")
				}
				end += v
				starts = append(starts, end)
			}
			return nil
		}
		var step int64
		var list []json.RawMessage
		switch {
		case json.Unmarshal(raw, &step) == nil:
			if step < 1 {
				return bad("dimension %d: edge length %d is not positive", i, step)
			}
			if err := add(step, ceilDiv(length, step)); errors.Is(err, codec.ErrUnsupported) {
				return nil, err
			} else if err != nil {
				return bad("dimension %d: %v", i, err)
			}
		case json.Unmarshal(raw, &list) == nil:
			for _, item := range list {
				var v int64
				var pair []int64
				var err error
				switch {
				case json.Unmarshal(item, &v) == nil:
					err = add(v, 1)
				case json.Unmarshal(item, &pair) == nil && len(pair) == 2:
					err = add(pair[0], pair[1])
				default:
					err = fmt.Errorf("%s is neither an edge length nor a pair [length, count]", compact(item))
				}
				if errors.Is(err, codec.ErrUnsupported) {
					return nil, err
				}
				if err != nil {
					return bad("dimension %d: %v", i, err)
				}
			}
		default:
			return bad("dimension %d: %s is neither an integer nor a list", i, compact(raw))
		}
		if end < length {
			return bad("dimension %d: edge lengths sum to %d, less than the length %d", i, end, length)
		}
		if length == 0 {
			starts = starts[:1]
		}
		edges[i] = starts
	}
	return edges, nil
}

// newRectLayout computes the layout of a rectilinear grid (edges from
// parseRectilinear). Its chunk shape (ChunkShape) is the largest chunk
// along each dimension, which bounds every chunk.
func newRectLayout(shape []int64, edges [][]int64, itemSize int) (Layout, []int64, error) {
	chunks := make([]int64, len(shape))
	for i, e := range edges {
		chunks[i] = 1
		for k := 1; k < len(e); k++ {
			chunks[i] = max(chunks[i], e[k]-e[k-1])
		}
	}
	l, err := newLayout(shape, chunks, itemSize)
	if err != nil {
		return l, nil, err
	}
	l.edges = edges
	l.nchunks, l.slabChunks = 1, 1
	for i, e := range edges {
		l.grid[i] = int64(len(e) - 1)
		l.nchunks *= l.grid[i] // at most shape[i] chunks each: fits
		if i > 0 {
			l.slabChunks *= l.grid[i]
		}
	}
	return l, chunks, nil
}

// Rectilinear reports whether the grid is rectilinear (chunks of several
// shapes).
func (l *Layout) Rectilinear() bool { return l.edges != nil }

// Locate returns the chunk along dimension i that holds index x, the
// chunk's start and its length (the edge length, which may overhang the
// array).
func (l *Layout) Locate(i int, x int64) (chunk, start, length int64) {
	if l.edges == nil {
		c := l.chunks[i]
		return x / c, x / c * c, c
	}
	e := l.edges[i]
	k := sort.Search(len(e)-1, func(k int) bool { return e[k+1] > x })
	return int64(k), e[k], e[k+1] - e[k]
}

// ChunkShapeOf returns the shape of the chunk with grid index idx: its
// edge lengths, overhang included.
func (l *Layout) ChunkShapeOf(idx []int64) []int64 {
	s := make([]int64, len(idx))
	for i, c := range idx {
		if l.edges == nil {
			s[i] = l.chunks[i]
		} else {
			s[i] = l.edges[i][c+1] - l.edges[i][c]
		}
	}
	return s
}

// ChunkElemsOf returns the number of elements of the chunk with linear
// index lin.
func (l *Layout) ChunkElemsOf(lin int64) int64 {
	if l.edges == nil {
		return l.chunkElems
	}
	n := int64(1)
	for _, d := range l.ChunkShapeOf(l.ChunkIndex(lin)) {
		n *= d // bounded by the largest chunk, checked in newLayout
	}
	return n
}

// rectChunkLastElem is ChunkLastElem of a rectilinear grid.
func (l *Layout) rectChunkLastElem(lin int64) int64 {
	var e, stride int64 = 0, 1
	for i := len(l.shape) - 1; i >= 0; i-- {
		idx := lin % l.grid[i]
		lin /= l.grid[i]
		e += (min(l.edges[i][idx+1], l.shape[i]) - 1) * stride
		stride *= l.shape[i]
	}
	return e
}

// rectChunkOf is ChunkOf of a rectilinear grid.
func (l *Layout) rectChunkOf(e int64) int64 {
	var lin, stride int64 = 0, 1
	for i := len(l.shape) - 1; i >= 0; i-- {
		c, _, _ := l.Locate(i, e%l.shape[i])
		lin += c * stride
		e /= l.shape[i]
		stride *= l.grid[i]
	}
	return lin
}
