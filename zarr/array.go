package zarr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// arrayIO is an array's binding to its store and cache (bind) and the
// state of its reads and writes.
type arrayIO struct {
	st    store.Store
	path  string
	cache *chunkCache
	id    uint64 // distinguishes arrays in a shared cache
	// live: the store may change (Options.Live); prevIDs are the arrays
	// of the hierarchies this one's replaced whose chunks it takes over
	// where they did not change (Options.Previous), newest first.
	live    bool
	prevIDs []uint64

	// strategy is how reads of the array's bytes get their elements,
	// and raw the store's store.ReaderInto when they copy them from it
	// (readDirect); both are chosen once, by bind (read.go).
	strategy readStrategy
	raw      store.ReaderInto

	writeMu sync.Mutex
	// writes counts chunk writes, so that a chunk loaded while one was
	// written is not cached.
	writes atomic.Uint64
	// readers recognises sequential readers, to read ahead of them
	// (readahead.go).
	readers
	// absent holds listings of the chunk directories, to find chunks
	// the store does not hold without asking for each (absent.go).
	absent absentChunks
}

var arrayIDs atomic.Uint64

// bind attaches the array to the store it lives in.
func (a *Array) bind(st store.Store, path string, cache *chunkCache) {
	if sh := a.DraftShards(); sh != nil {
		st = &draftShards{Store: st, DraftShards: sh}
	}
	a.st, a.path, a.cache = st, path, cache
	a.id = arrayIDs.Add(1)
	a.strategy, a.raw = a.chooseStrategy()
}

// readable reports why the array's contents cannot be read, if they cannot.
func (a *Array) readable() error {
	if a.Err != nil {
		return a.Err
	}
	if a.Pipeline() == nil || a.st == nil {
		return fmt.Errorf("array %q: %w: no codec pipeline", a.path, ErrUnsupported)
	}
	return nil
}

// chunkKeyAt returns the store key of the chunk with C-order index lin
// in the chunk grid.
func (a *Array) chunkKeyAt(lin int64) string {
	return a.chunkKey(a.Layout().ChunkIndex(lin))
}

// chunkKey returns the store key of the chunk at idx.
func (a *Array) chunkKey(idx []int64) string {
	return a.ChunkKey(a.path, idx)
}

// chunkError wraps err with the store, the array and the chunk key.
func (a *Array) chunkError(key string, err error) error {
	return store.Errorf(a.st, a.ExplainChunkError(err), "array %q: chunk %q", "/"+a.path, key)
}

// getStored returns the stored bytes of the chunk at key. When the store
// reads into a buffer of the caller's (store.AllocGetter), and the elements have a fixed size
// (so that nothing decoded from it points into it), they lie in buf, a
// buffer from the array's pool; buf is nil otherwise.
func (a *Array) getStored(ctx context.Context, key string) (data, buf []byte, err error) {
	g, ok := a.st.(store.AllocGetter)
	if !ok || a.Variable() {
		data, err = a.st.Get(ctx, key)
		return data, nil, err
	}
	pool := a.cache.buffers()
	data, err = g.GetAlloc(ctx, key, func(n int) []byte {
		buf = pool.get(n)
		return buf
	})
	if err != nil {
		pool.put(buf)
		return nil, nil, err
	}
	return data, buf, nil
}

// getLive reads the chunk key (linear index lin) of a live hierarchy's
// array with what the store says of it (ig). When the array took over the
// chunks of earlier ones (prevIDs) and one of those has chunk lin cached
// with what the store said of it then, the chunk is read only if it
// changed: otherwise getLive returns the cached value as old (with a
// reference, which passes to the caller), moved to this array. A cached
// value is returned so too when the store cannot answer (staleIfError).
func (a *Array) getLive(ctx context.Context, ig store.InfoGetter, lin int64, key string) (data []byte, info store.Info, old *chunkValue, err error) {
	// stale, from prevKey, is a cached value without validators (a chunk
	// found missing): served as it was if the store cannot answer.
	var stale *chunkValue
	var staleKey chunkID
	for _, id := range a.prevIDs {
		prevKey := chunkID{array: id, chunk: lin}
		v := a.cache.cached(prevKey)
		if v == nil {
			continue
		}
		if !v.stored.Validates() {
			stale, staleKey = v, prevKey
			break
		}
		if a.cache.servingStale() {
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		data, info, err = ig.GetIfChanged(ctx, key, v.stored)
		if errors.Is(err, store.ErrNotModified) {
			a.cache.revalidated()
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		if a.staleIfError(ctx, key, err) {
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		v.release()
		return data, info, nil, err
	}
	data, info, err = ig.GetRangeInfo(ctx, key, store.All)
	if stale != nil {
		if a.staleIfError(ctx, key, err) {
			a.cache.drop(staleKey)
			return nil, stale.stored, stale, nil
		}
		stale.release()
	}
	return data, info, nil, err
}

// decodeFixed decodes the stored chunk data of fixed-size elements, which
// lies in in when in is not nil (a buffer from the array's pool, which
// decodeFixed takes over). Where the codecs allow it the chunk is decoded
// into a pooled buffer, and an input the decoded chunk is part of becomes
// the chunk's buffer: the value returned then holds a pooled buffer, with
// one reference (the caller's).
func (a *Array) decodeFixed(lin int64, key string, data, in []byte) (*chunkValue, error) {
	want := a.Layout().ChunkElemsOf(lin) * int64(a.DataType().Size)
	pool := a.cache.buffers()
	pipe, err := a.PipelineOf(lin) // the array's, but for a rectilinear grid
	if err != nil {
		pool.put(in)
		return nil, a.chunkError(key, err)
	}
	if pipe.CanDecodeInto() {
		dst := pool.get(int(want))
		err := pipe.DecodeInto(dst, data)
		pool.put(in)
		if err != nil {
			pool.put(dst)
			return nil, a.chunkError(key, err)
		}
		return pooledValue(dst, dst, pool), nil
	}
	dec, err := pipe.Decode(data)
	if err == nil && int64(len(dec)) != want {
		err = codec.Corruptf("pipeline", "decoded %d bytes, want %d", len(dec), want)
	}
	if err != nil {
		pool.put(in)
		return nil, a.chunkError(key, err)
	}
	if in != nil {
		if overlaps(dec, in) {
			return pooledValue(dec, in, pool), nil
		}
		pool.put(in)
	}
	return &chunkValue{fixed: dec}, nil
}

// loadChunk returns the decoded chunk with linear index lin, from the
// cache or the store. The caller holds a reference to it: release it when
// done.
func (a *Array) loadChunk(ctx context.Context, lin int64) (*chunkValue, error) {
	return a.loadChunkAs(ctx, lin, false)
}

// loadChunkAs is loadChunk; a read-ahead load (ahead) of a cache that
// orders their decoding waits for a slot between reading the chunk and
// decoding it (decodeSlots).
func (a *Array) loadChunkAs(ctx context.Context, lin int64, ahead bool) (*chunkValue, error) {
	if a.knownAbsent(lin) {
		return absentValue, nil
	}
	load := func(ctx context.Context) (*chunkValue, func() bool, error) {
		key := a.chunkKeyAt(lin)
		writes := a.writes.Load()
		valid := func() bool { return a.writes.Load() == writes }
		var data, in []byte
		var stored store.Info
		var err error
		if ig, ok := a.st.(store.InfoGetter); ok && a.live {
			var old *chunkValue
			data, stored, old, err = a.getLive(ctx, ig, lin, key)
			if old != nil {
				return old, valid, nil
			}
		} else {
			t0 := time.Now()
			data, in, err = a.getStored(ctx, key)
			if err == nil && a.cache != nil && a.cache.aheadTime > 0 {
				a.cache.storeTime.note(time.Since(t0)) // a remote store's, for near.go
			}
		}
		if errors.Is(err, store.ErrNotExist) {
			return &chunkValue{missing: true}, valid, nil
		}
		if err != nil {
			return nil, nil, a.chunkError(key, err)
		}
		if ahead && a.cache != nil && a.cache.decoding != nil {
			slots := a.cache.decoding
			if err := slots.acquire(ctx, lin); err != nil {
				a.cache.buffers().put(in)
				return nil, nil, err
			}
			defer slots.release()
		}
		var v *chunkValue
		if !a.Variable() {
			if v, err = a.decodeFixed(lin, key, data, in); err != nil {
				return nil, nil, err
			}
		} else {
			pipe, err := a.PipelineOf(lin)
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			dec, err := pipe.Decode(data)
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			elems, err := splitVlen(dec, a.Layout().ChunkElemsOf(lin))
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			v = &chunkValue{vlen: elems}
		}
		v.stored = stored
		return v, valid, nil
	}
	if a.cache == nil {
		v, _, err := load(ctx)
		return v, err
	}
	return a.cache.get(ctx, a.cacheID(lin), load)
}

// cacheID names the decoded chunk with linear index lin in the cache.
func (a *Array) cacheID(lin int64) chunkID {
	return chunkID{array: a.id, chunk: lin}
}

// splitVlen splits the numcodecs variable-length layout (uint32 count, then
// uint32 length and bytes per element) into n elements.
func splitVlen(b []byte, n int64) ([][]byte, error) {
	if len(b) < 4 {
		return nil, codec.Corruptf("vlen", "%d bytes, no element count", len(b))
	}
	if got := int64(binary.LittleEndian.Uint32(b)); got != n {
		return nil, codec.Corruptf("vlen", "%d elements, want %d", got, n)
	}
	b = b[4:]
	out := make([][]byte, n)
	for i := range out {
		if len(b) < 4 {
			return nil, codec.Corruptf("vlen", "truncated at element %d", i)
		}
		l := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(l) > uint64(len(b)) {
			return nil, codec.Corruptf("vlen", "element %d of %d bytes overruns the chunk", i, l)
		}
		out[i] = b[:l:l]
		b = b[l:]
	}
	return out, nil
}

// elementsBlock is how many bytes of fixed-size elements Elements reads at
// once (one element at least).
const elementsBlock = 1 << 20

// Elements calls fn with every element in C order: the bytes of a
// variable-length element, or the little-endian bytes of a fixed-size one.
// fn must not keep or modify elem after it returns.
func (a *Array) Elements(ctx context.Context, fn func(elem []byte) error) error {
	if err := a.readable(); err != nil {
		return err
	}
	if a.Variable() {
		each := func(fn func(run) error) error { return a.runs(0, a.Layout().Elems(), fn) }
		fill := a.FillElement()
		return a.forRuns(ctx, each, wholeChunks{a}, func(r run, v *chunkValue) error {
			for i := range r.n {
				e := fill
				if !v.missing {
					e = v.vlen[r.inOff+i]
				}
				if err := fn(e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	item := int64(a.DataType().Size)
	block := max(elementsBlock/item, 1)
	buf := make([]byte, min(block, a.Layout().Elems())*item)
	for e := int64(0); e < a.Layout().Elems(); e += block {
		end := min(e+block, a.Layout().Elems())
		b := buf[:(end-e)*item]
		if err := a.readElements(ctx, b, e, end, false, nil); err != nil {
			return err
		}
		for i := int64(0); i < int64(len(b)); i += item {
			if err := fn(b[i : i+item]); err != nil {
				return err
			}
		}
	}
	return nil
}
