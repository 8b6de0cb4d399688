package zarr

import (
	"context"
	"errors"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// shardReader reads byte ranges of one shard from the store.
type shardReader struct {
	st  store.Store
	key string
}

func (r shardReader) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	return r.st.GetRange(ctx, r.key, store.Range(off, n))
}

func (r shardReader) ReadSuffix(ctx context.Context, n int64) ([]byte, error) {
	return r.st.GetRange(ctx, r.key, store.SuffixRange(n))
}

// sharding returns the sharding codec when it is the array's whole
// pipeline and the elements have a fixed size: then a small read can
// fetch the shard index and only the inner chunks it needs.
func (a *Array) sharding() *codec.Sharding {
	if a.pipe == nil || a.Variable() {
		return nil
	}
	cs := a.pipe.Codecs()
	if len(cs) != 1 {
		return nil
	}
	s, _ := cs[0].(*codec.Sharding)
	return s
}

// box is a region of a chunk: lo and shape in elements.
type box struct {
	lo, shape []int64
}

// offset returns the position in the box's C-order elements of the
// element at chunk offset off, which lies inside the box.
func (b *box) offset(chunk []int64, off int64) int64 {
	var pos int64
	stride := int64(1)
	for i := len(chunk) - 1; i >= 0; i-- {
		pos += (off%chunk[i] - b.lo[i]) * stride
		stride *= b.shape[i]
		off /= chunk[i]
	}
	return pos
}

// runsBox returns the smallest box of the chunk holding every element of
// runs (all of one chunk). A run that wraps from one row of dimension j to
// the next covers the whole extent of the dimensions after j.
func (a *Array) runsBox(runs []run) *box {
	chunk := a.ChunkShape
	r := len(chunk)
	lo, hi := make([]int64, r), make([]int64, r)
	for i := range r {
		lo[i], hi[i] = chunk[i], -1
	}
	first, last := make([]int64, r), make([]int64, r)
	for _, run := range runs {
		s, e := run.inOff, run.inOff+run.n-1
		for i := r - 1; i >= 0; i-- {
			first[i], last[i] = s%chunk[i], e%chunk[i]
			s /= chunk[i]
			e /= chunk[i]
		}
		wrapped := false
		for i := range r {
			if wrapped {
				lo[i], hi[i] = 0, chunk[i]-1
				continue
			}
			lo[i] = min(lo[i], first[i], last[i])
			hi[i] = max(hi[i], first[i], last[i])
			wrapped = first[i] != last[i]
		}
	}
	b := &box{lo: lo, shape: make([]int64, r)}
	for i := range r {
		b.shape[i] = hi[i] - lo[i] + 1
	}
	return b
}

// loadRegion reads the box of the shard with linear index lin holding
// runs: the shard index (cached) and the inner chunks the box needs.
func (a *Array) loadRegion(ctx context.Context, s *codec.Sharding, lin int64, runs []run) (*chunkValue, error) {
	key := a.chunkKeyAt(lin)
	rd := shardReader{st: a.st, key: key}
	spec := a.pipe.Spec()
	id := a.cacheID(lin)
	id.shardIndex = true
	iv, err := a.cache.get(ctx, id, func(ctx context.Context) (*chunkValue, func() bool, error) {
		writes := a.writes.Load()
		valid := func() bool { return a.writes.Load() == writes }
		idx, err := s.ReadIndex(ctx, rd, spec)
		if errors.Is(err, store.ErrNotExist) {
			return &chunkValue{missing: true}, valid, nil
		}
		if err != nil {
			return nil, nil, a.chunkError(key, err)
		}
		return &chunkValue{index: idx}, valid, nil
	})
	if err != nil {
		return nil, err
	}
	if iv.missing || iv.index.AllMissing() {
		return &chunkValue{missing: true}, nil
	}
	b := a.runsBox(runs)
	start, shape := make([]int, len(b.lo)), make([]int, len(b.lo))
	for i := range b.lo {
		start[i], shape[i] = int(b.lo[i]), int(b.shape[i])
	}
	data, err := s.DecodeRegionWithIndex(ctx, rd, iv.index, spec, start, shape)
	if err != nil {
		return nil, a.chunkError(key, err)
	}
	n := int64(a.dt.Size)
	for _, d := range b.shape {
		n *= d
	}
	if int64(len(data)) != n {
		return nil, a.chunkError(key, codec.Corruptf("sharding_indexed", "region decoded to %d bytes, want %d", len(data), n))
	}
	return &chunkValue{fixed: data, box: b}, nil
}
