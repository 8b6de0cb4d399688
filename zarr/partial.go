package zarr

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/codec/blosc"
	"github.com/zarrfs/zarrfs/store"
)

// bloscRanges reports whether the array's chunks are Blosc chunks of its
// little-endian elements (pipeline [bytes little-endian, blosc]): then a
// small read decodes only the Blosc blocks it needs.
func (a *Array) bloscRanges() bool {
	if a.pipe == nil || a.Variable() {
		return false
	}
	cs := a.pipe.Codecs()
	if len(cs) != 2 {
		return false
	}
	b, ok := cs[0].(codec.BytesCodec)
	if !ok || b.Big {
		return false
	}
	_, ok = cs[1].(codec.Blosc)
	return ok
}

// partialDecodes counts the reads of part of a Blosc chunk (for tests).
var partialDecodes atomic.Int64

// loadBloscRange decodes, of the Blosc chunk at key, only the elements
// from the first to the last that runs need (the blocks holding them).
// The value it returns holds those elements from base on; it is never
// cached.
func (a *Array) loadBloscRange(ctx context.Context, key string, runs []run) (*chunkValue, error) {
	first, last := runs[0].inOff, runs[0].inOff+runs[0].n
	for _, r := range runs[1:] {
		first, last = min(first, r.inOff), max(last, r.inOff+r.n)
	}
	data, err := a.st.Get(ctx, key)
	if errors.Is(err, store.ErrNotExist) {
		return &chunkValue{missing: true}, nil
	}
	if err != nil {
		return nil, a.chunkError(key, err)
	}
	size := int64(a.dt.Size)
	n, err := blosc.DecodedSize(data)
	if err != nil {
		return nil, a.chunkError(key, bloscRangeError(err))
	}
	if want := a.layout.chunkElems * size; int64(n) != want {
		return nil, a.chunkError(key, codec.Corruptf("blosc", "decoded size %d, want %d", n, want))
	}
	dst := make([]byte, (last-first)*size)
	if err := blosc.DecompressRange(dst, data, int(first*size)); err != nil {
		return nil, a.chunkError(key, bloscRangeError(err))
	}
	partialDecodes.Add(1)
	return &chunkValue{fixed: dst, base: first, ranged: true}, nil
}

// bloscRangeError turns an error of package blosc into codec's kinds.
func bloscRangeError(err error) error {
	if errors.Is(err, blosc.ErrUnsupported) {
		return codec.Unsupportedf("%v", err)
	}
	return codec.Corruptf("blosc", "%s", strings.TrimPrefix(err.Error(), blosc.ErrCorrupt.Error()+": "))
}
