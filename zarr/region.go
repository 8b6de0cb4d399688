package zarr

import (
	"context"
	"fmt"
	"slices"

	"github.com/zarrfs/zarrfs/internal/nd"
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
// column of it for a preview. It reads through the chunk cache, gets only
// the chunks that hold elements it reads, one chunk at a time, and of a
// chunk it needs little of decodes only that part where the codecs can
// (Blosc blocks, a shard's inner chunks); it starts no read-ahead.
func (a *Array) ReadStrided(ctx context.Context, start, shape, step []int64, dst []byte) error {
	if err := a.readable(); err != nil {
		return err
	}
	if a.Variable() {
		return fmt.Errorf("array %q: %w: variable-length elements have no byte content (use Elements)", "/"+a.path, ErrUnsupported)
	}
	r := len(a.Shape)
	if step == nil {
		step = slices.Repeat([]int64{1}, r)
	}
	if len(start) != r || len(shape) != r || len(step) != r {
		return fmt.Errorf("array %q: region start %v, shape %v and step %v must have rank %d", "/"+a.path, start, shape, step, r)
	}
	for i := range r {
		if start[i] < 0 || shape[i] < 0 || step[i] < 1 || start[i] > a.Shape[i] ||
			shape[i] > 0 && (shape[i]-1 > (a.Shape[i]-1-start[i])/step[i] || start[i] == a.Shape[i]) {
			return fmt.Errorf("array %q: region at %v of shape %v, step %v, is outside shape %v", "/"+a.path, start, shape, step, a.Shape)
		}
	}
	size := int64(a.dt.Size)
	n, err := product("region shape", shape, size)
	if err != nil || n != int64(len(dst)) {
		return fmt.Errorf("array %q: region of shape %v needs %d bytes, got %d", "/"+a.path, shape, n, len(dst))
	}
	if n == 0 {
		return nil
	}
	each := func(fn func(run) error) error { return a.stridedRuns(start, shape, step, fn) }
	out := func(r run) []byte { return dst[r.outOff*size : (r.outOff+r.n)*size] }
	return a.forRuns(ctx, each, a.loader(true, out), func(r run, v *chunkValue) error {
		switch {
		case v.placed:
		case v.missing:
			fillElements(out(r), a.fill)
		default:
			copy(out(r), v.fixed[r.inOff*size:])
		}
		return nil
	})
}

// stridedRuns calls fn for the runs of a strided region (see ReadStrided;
// the region is not empty) chunk by chunk, in the C order of the chunk
// grid, so that each chunk is got once: runs are contiguous in the chunk,
// and outOff is the run's first element in the region's C order. With a
// step of 1 along the last dimension a run is the region's row in the
// chunk; otherwise one element. A run's valid is not set (reads need it
// not).
func (a *Array) stridedRuns(start, shape, step []int64, fn func(run) error) error {
	r := len(shape)
	if r == 0 {
		return fn(run{n: 1})
	}
	chunks := a.ChunkShape
	cstride := nd.Strides(chunks, 1)
	ostride := nd.Strides(shape, 1)
	// The chunks the region's bounding box touches; some may hold none of
	// its elements when a step is larger than a chunk.
	first, last := make([]int64, r), make([]int64, r)
	for i := range r {
		first[i] = start[i] / chunks[i]
		last[i] = (start[i] + (shape[i]-1)*step[i]) / chunks[i]
	}
	// lo[i], hi[i]: the region's indices along i in the current chunk.
	lo, hi := make([]int64, r), make([]int64, r)
	k := make([]int64, r)
	cidx := slices.Clone(first)
	for {
		empty := false
		for i := range r {
			origin := cidx[i] * chunks[i]
			lo[i] = 0
			if origin > start[i] {
				lo[i] = ceilDiv(origin-start[i], step[i])
			}
			hi[i] = min((origin+chunks[i]-1-start[i])/step[i], shape[i]-1)
			empty = empty || lo[i] > hi[i]
		}
		if !empty {
			lin := a.layout.linear(cidx)
			copy(k, lo)
			for {
				// The element at region index k: its offset in the chunk,
				// and in the region.
				var in, out int64
				for i := range r {
					in += ((start[i] + k[i]*step[i]) % chunks[i]) * cstride[i]
					out += k[i] * ostride[i]
				}
				n := int64(1)
				if step[r-1] == 1 {
					n = hi[r-1] - lo[r-1] + 1
					k[r-1] = hi[r-1]
				}
				if err := fn(run{chunk: lin, inOff: in, outOff: out, n: n}); err != nil {
					return err
				}
				if !nd.Next(k, lo, hi) {
					break
				}
			}
		}
		if !nd.Next(cidx, first, last) {
			return nil
		}
	}
}
