package zarr

import (
	"context"
	"fmt"
	"slices"

	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// ReadRegion reads the box of the array that starts at start and has the
// given shape into dst (C order, little-endian elements): the reading
// counterpart of WriteRegion. See ReadStrided.
func (a *Array) ReadRegion(ctx context.Context, start, shape []int64, dst []byte) error {
	return a.ReadStrided(ctx, start, shape, nil, dst)
}

// ReadStrided reads, along each dimension i, shape[i] elements from
// start[i] on, step[i] apart (step nil: 1 for every dimension), into dst
// in C order, little-endian: a plane of a volume, or every k-th row and
// column of it. See ReadOrthogonal.
func (a *Array) ReadStrided(ctx context.Context, start, shape, step []int64, dst []byte) error {
	dims := a.Shape()
	r := len(dims)
	if step == nil {
		step = slices.Repeat([]int64{1}, r)
	}
	if len(start) != r || len(shape) != r || len(step) != r {
		return fmt.Errorf("array %q: region start %v, shape %v and step %v must have rank %d", "/"+a.path, start, shape, step, r)
	}
	for i := range r {
		if start[i] < 0 || shape[i] < 0 || step[i] < 1 || start[i] > dims[i] ||
			shape[i] > 0 && (shape[i]-1 > (dims[i]-1-start[i])/step[i] || start[i] == dims[i]) {
			return fmt.Errorf("array %q: region at %v of shape %v, step %v, is outside shape %v", "/"+a.path, start, shape, step, dims)
		}
	}
	if n, err := meta.Product("region shape", shape, int64(max(a.DataType().Size, 1))); err != nil || n != int64(len(dst)) {
		return fmt.Errorf("array %q: region of shape %v needs %d bytes, got %d", "/"+a.path, shape, n, len(dst))
	}
	indices := make([][]int64, r)
	for i := range r {
		indices[i] = make([]int64, shape[i])
		for k := range indices[i] {
			indices[i][k] = start[i] + int64(k)*step[i]
		}
	}
	return a.ReadOrthogonal(ctx, indices, dst)
}

// ReadOrthogonal reads the elements at every combination of the indices
// along each dimension (indices[i], strictly increasing, for dimension i)
// into dst, in C order, little-endian: what NumPy's and zarr-python's
// orthogonal indexing select, such as the rows and columns a preview
// samples. It reads through the chunk cache, gets only the chunks that
// hold elements it reads, each once, and of a chunk it needs little of
// decodes only that part where the codecs can (Blosc blocks, a shard's
// inner chunks); it starts no read-ahead.
func (a *Array) ReadOrthogonal(ctx context.Context, indices [][]int64, dst []byte) error {
	if err := a.readable(); err != nil {
		return err
	}
	if a.Variable() {
		return fmt.Errorf("array %q: %w: variable-length elements have no byte content (use Elements)", "/"+a.path, ErrUnsupported)
	}
	dims := a.Shape()
	r := len(dims)
	if len(indices) != r {
		return fmt.Errorf("array %q: indices of rank %d for rank %d", "/"+a.path, len(indices), r)
	}
	shape := make([]int64, r)
	for i, idx := range indices {
		for k, x := range idx {
			if x < 0 || x >= dims[i] || k > 0 && x <= idx[k-1] {
				return fmt.Errorf("array %q: indices along dimension %d are not strictly increasing inside 0 … %d", "/"+a.path, i, dims[i]-1)
			}
		}
		shape[i] = int64(len(idx))
	}
	size := int64(a.DataType().Size)
	n, err := meta.Product("region shape", shape, size)
	if err != nil || n != int64(len(dst)) {
		return fmt.Errorf("array %q: region of shape %v needs %d bytes, got %d", "/"+a.path, shape, n, len(dst))
	}
	if n == 0 {
		return nil
	}
	each := func(fn func(run) error) error { return a.orthogonalRuns(indices, fn) }
	out := func(r run) []byte { return dst[r.outOff*size : (r.outOff+r.n)*size] }
	return a.forRuns(ctx, each, a.loader(true, out), func(r run, v *chunkValue) error {
		switch {
		case v.placed:
		case v.missing:
			a.FillElements(out(r))
		default:
			copy(out(r), v.fixed[r.inOff*size:])
		}
		return nil
	})
}

// indexGroup is the indices along one dimension that lie in one chunk:
// positions [lo, hi) of the index list, in chunk index chunk.
type indexGroup struct {
	chunk, lo, hi int64
}

// orthogonalRuns calls fn for the runs of an orthogonal selection (see
// ReadOrthogonal; it is not empty) chunk by chunk, in the C order of the
// chunk grid, so that each chunk is got once: runs are contiguous in the
// chunk, and outOff is the run's first element in the selection's C
// order. Along the last dimension a run is the indices that follow one
// another in the chunk. A run's valid is not set (reads need it not).
func (a *Array) orthogonalRuns(indices [][]int64, fn func(run) error) error {
	r := len(indices)
	if r == 0 {
		return fn(run{n: 1})
	}
	chunks := a.ChunkShape()
	cstride := nd.Strides(chunks, 1)
	rect := a.Layout().Rectilinear()
	shape := make([]int64, r)
	groups := make([][]indexGroup, r)
	for i, idx := range indices {
		shape[i] = int64(len(idx))
		for k, x := range idx {
			c := x / chunks[i]
			if rect {
				c, _, _ = a.Layout().Locate(i, x)
			}
			if g := len(groups[i]) - 1; g >= 0 && groups[i][g].chunk == c {
				groups[i][g].hi++
			} else {
				groups[i] = append(groups[i], indexGroup{chunk: c, lo: int64(k), hi: int64(k) + 1})
			}
		}
	}
	ostride := nd.Strides(shape, 1)
	// g walks the chunks that hold selected elements: g[i] is a group of
	// dimension i; k walks the selected elements of the chunk.
	g, gfirst, glast := make([]int, r), make([]int, r), make([]int, r)
	for i := range r {
		glast[i] = len(groups[i]) - 1
	}
	cidx, lo, hi, k := make([]int64, r), make([]int64, r), make([]int64, r), make([]int64, r)
	last := indices[r-1]
	for {
		for i := range r {
			gr := groups[i][g[i]]
			cidx[i], lo[i], hi[i] = gr.chunk, gr.lo, gr.hi-1
		}
		lin := a.Layout().Linear(cidx)
		var cstart []int64 // a rectilinear grid's chunk: its start and strides
		if rect {
			cstart = make([]int64, r)
			for i := range r {
				_, cstart[i], _ = a.Layout().Locate(i, indices[i][lo[i]])
			}
			cstride = nd.Strides(a.Layout().ChunkShapeOf(cidx), 1)
		}
		copy(k, lo)
		for {
			var in, out int64
			for i := range r {
				if rect {
					in += (indices[i][k[i]] - cstart[i]) * cstride[i]
				} else {
					in += (indices[i][k[i]] % chunks[i]) * cstride[i]
				}
				out += k[i] * ostride[i]
			}
			// The run goes on while the next index is the next element.
			n := int64(1)
			for k[r-1] < hi[r-1] && last[k[r-1]+1] == last[k[r-1]]+1 {
				k[r-1]++
				n++
			}
			if err := fn(run{chunk: lin, inOff: in, outOff: out, n: n}); err != nil {
				return err
			}
			if !nd.Next(k, lo, hi) {
				break
			}
		}
		if !nd.Next(g, gfirst, glast) {
			return nil
		}
	}
}
