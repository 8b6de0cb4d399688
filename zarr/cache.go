package zarr

import (
	"container/list"
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// chunkValue is a decoded chunk: the bytes of a fixed-size chunk or the
// elements of a variable-length one; missing marks a chunk absent from the
// store (read as the fill value).
type chunkValue struct {
	fixed   []byte
	vlen    [][]byte
	missing bool
	// placed marks the runs of the chunk a read needs decoded straight
	// into the read's output (chunkParts); such values hold nothing and
	// are never cached.
	placed bool
	// memo is what a codec's partial decoder keeps of the chunk (a shard's
	// index, a decoded inner chunk), cached under the chunk's chunkID with
	// memo set.
	memo codec.Memoized
	// stored is what the store said of the stored chunk when it was read
	// (Options.Live), to tell later whether it changed.
	stored store.Info

	// buf, when set, is the pooled buffer fixed lies in: it goes back to
	// pool when the last holder releases the value. refs counts the
	// holders: the cache while it keeps the value, and every reader
	// between getting it (loadChunk, chunkCache.get) and release. A
	// holder that never releases only keeps the buffer from the pool.
	buf  []byte
	pool *bufPool
	refs atomic.Int32
}

// pooledValue returns a value holding the decoded chunk fixed, which lies
// in buf (from pool), with one reference: the caller's.
func pooledValue(fixed, buf []byte, pool *bufPool) *chunkValue {
	v := &chunkValue{fixed: fixed, buf: buf, pool: pool}
	v.refs.Store(1)
	return v
}

// acquire adds a holder of v.
func (v *chunkValue) acquire() {
	if v != nil && v.buf != nil {
		v.refs.Add(1)
	}
}

// release drops a holder of v: the last gives its buffer back to the
// pool. Nothing may read v after releasing it.
func (v *chunkValue) release() {
	if v == nil || v.buf == nil {
		return
	}
	switch n := v.refs.Add(-1); {
	case n == 0:
		v.pool.put(v.buf)
	case n < 0:
		panic("zarr: chunk value released more often than acquired")
	}
}

// entryOverhead is what a cached chunk costs besides its bytes: the
// chunkValue, the cache's list element and entry, its slot in the cache's
// map, and the flight that loaded it while it ran (measured by
// TestEntryOverhead). Counting it keeps a cache of tiny chunks (one
// element each) within its size, which counting bytes alone did not.
const entryOverhead = 512

// cost returns the approximate memory held by v.
func (v *chunkValue) cost() int64 {
	n := int64(entryOverhead) + int64(cap(v.fixed))
	if v.memo != nil {
		n += int64(v.memo.Size())
	}
	n += int64(cap(v.vlen)) * 24
	for _, e := range v.vlen {
		n += int64(len(e))
	}
	return n
}

// chunkCache is an LRU cache of decoded chunks bounded in bytes; loads of
// the same key share one call (a flight).
type chunkCache struct {
	limit int64

	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cacheEntry, most recent first
	items map[chunkID]*list.Element

	flights map[chunkID]*flight // loads under way, under mu
	// timedOut remembers, for timeoutMemory, chunks whose load timed out:
	// the kernel retries a failed read-ahead at once with a read of its
	// own, which would otherwise wait for the store timeout again.
	timedOut map[chunkID]timeout

	// prefetch bounds the read-ahead loads running at once.
	prefetch chan struct{}
	// noReadAhead turns read-ahead and drop-behind off (Options.NoReadAhead).
	noReadAhead bool
	// aheadTime: a sequential reader's read-ahead covers at least what it
	// reads in this time (remote stores, Options.Remote; 0: no such bound).
	aheadTime time.Duration
	// decoding orders the read-ahead loads' decoding where many are in
	// flight (remote stores; nil: each decodes when its bytes arrive).
	decoding *decodeSlots
	// storeTime records which of a remote store's last chunk loads were
	// answered as a local disk answers (near.go).
	storeTime storeTimes

	// pool keeps the buffers of the chunks let go of, for the next loads:
	// a quarter of the cache's size at most (poolLimit).
	pool *bufPool

	// logf (Options.Logf) is told once per outage that a live hierarchy
	// serves cached chunks it could not revalidate (stale is set then,
	// cleared by a revalidation that succeeds): stale.go.
	logf  func(format string, args ...any)
	stale atomic.Bool
	// staleUntil (Unix nanoseconds) is when, after a revalidation failed,
	// the store is asked again: until then cached chunks are served
	// without asking, so that an outage costs a store timeout now and
	// then, not one per chunk.
	staleUntil atomic.Int64
}

// timeoutMemory is how long a chunk whose load timed out fails at once.
const timeoutMemory = time.Second

// maxTimedOut bounds the timeouts remembered.
const maxTimedOut = 4096

type timeout struct {
	err   error
	until time.Time
}

// chunkID names a chunk in the cache, which the arrays of a hierarchy
// share: the array (Array.id), the chunk's linear index (C order over the
// chunk grid), and, in memo, 0 for the decoded chunk or, for what the
// codecs keep of it for partial decodes (codec.Memo), their part plus 1.
// A comparable value, not a string: a read of many small chunks looks up
// each of them, and building a key string per lookup cost a tenth of it.
type chunkID struct {
	array uint64
	chunk int64
	memo  int64
}

type cacheEntry struct {
	key chunkID
	val *chunkValue
}

// newChunkCache returns a cache holding up to limit bytes (none when limit ≤ 0).
func newChunkCache(limit int64) *chunkCache {
	return &chunkCache{limit: limit, lru: list.New(), items: map[chunkID]*list.Element{}, flights: map[chunkID]*flight{}, timedOut: map[chunkID]timeout{},
		prefetch: make(chan struct{}, runtime.GOMAXPROCS(0)), pool: newBufPool(min(limit/4, poolLimit))}
}

// buffers returns the pool of the arrays using c: c's own, or one that
// keeps nothing when there is no cache.
func (c *chunkCache) buffers() *bufPool {
	if c == nil {
		return unpooled
	}
	return c.pool
}

// loader loads a chunk; it returns with it a check, run under the cache's
// lock, that the value may still be cached (no write happened meanwhile).
type loader func(context.Context) (*chunkValue, func() bool, error)

// flight is a chunk load shared by the readers waiting for it. It runs
// under its own context, cancelled when the last of its readers has gone:
// a reader that is cancelled neither fails the others nor leaves the load
// running for nobody.
type flight struct {
	done    chan struct{} // closed when val and err are set
	val     *chunkValue
	err     error
	waiters int // readers still waiting; under chunkCache.mu
	// finished is set, under chunkCache.mu, with val and err: every
	// reader then waiting holds a reference to val.
	finished bool
	cancel   context.CancelFunc
}

// get returns the cached chunk for key, or calls load once for all
// concurrent callers and caches what it returns. The caller holds a
// reference to the value it returns (release it when done).
func (c *chunkCache) get(ctx context.Context, key chunkID, load loader) (*chunkValue, error) {
	c.mu.Lock()
	if v := c.hitLocked(key); v != nil {
		c.mu.Unlock()
		return v, nil
	}
	if to, ok := c.timedOut[key]; ok {
		if time.Now().Before(to.until) {
			c.mu.Unlock()
			return nil, to.err
		}
		delete(c.timedOut, key)
	}
	if err := ctx.Err(); err != nil {
		// A reader that has gone already starts no load, and joins none:
		// with a load quick enough to be done before the select below,
		// it would otherwise get the chunk or the error by chance.
		c.mu.Unlock()
		return nil, err
	}
	f := c.flights[key]
	if f == nil {
		// The load has a context of its own, not the first reader's
		// (a FUSE request's): it ends when the last waiting reader goes.
		lctx, cancel := context.WithCancel(context.Background())
		f = &flight{done: make(chan struct{}), cancel: cancel}
		c.flights[key] = f
		go c.run(lctx, key, f, load)
	}
	f.waiters++
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		c.mu.Lock()
		if f.finished {
			f.val.release() // this reader's reference
		}
		if f.waiters--; f.waiters == 0 {
			f.cancel()
			if c.flights[key] == f {
				delete(c.flights, key) // a later reader starts afresh
			}
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// run runs the load of flight f and caches what it returns.
func (c *chunkCache) run(ctx context.Context, key chunkID, f *flight, load loader) {
	defer f.cancel()
	v, valid, err := load(ctx) // v comes with the load's reference
	if err == nil {
		c.add(key, v, valid)
	}
	c.mu.Lock()
	if c.flights[key] == f {
		delete(c.flights, key)
	}
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		c.rememberTimeout(key, err)
	}
	f.val, f.err = v, err
	f.finished = true
	for range f.waiters {
		v.acquire() // one for each reader waiting
	}
	c.mu.Unlock()
	// The load's reference goes before the readers wake, so that each
	// finds the value held only by the cache and the readers.
	v.release()
	close(f.done)
}

// rememberTimeout records that the load of key timed out; under c.mu.
func (c *chunkCache) rememberTimeout(key chunkID, err error) {
	now := time.Now()
	if len(c.timedOut) >= maxTimedOut {
		for k, to := range c.timedOut {
			if !now.Before(to.until) {
				delete(c.timedOut, k)
			}
		}
		if len(c.timedOut) >= maxTimedOut {
			clear(c.timedOut)
		}
	}
	c.timedOut[key] = timeout{err: err, until: now.Add(timeoutMemory)}
}

// cached returns the cached chunk for key, with a reference the caller
// releases, or nil: a read takes the chunks it finds cached without a
// goroutine each.
func (c *chunkCache) cached(key chunkID) *chunkValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hitLocked(key)
}

// hitLocked returns the cached chunk for key, with a reference, or nil;
// c.mu is held.
func (c *chunkCache) hitLocked(key chunkID) *chunkValue {
	if e, ok := c.items[key]; ok {
		c.lru.MoveToFront(e)
		v := e.Value.(*cacheEntry).val
		v.acquire()
		return v
	}
	return nil
}

// present reports whether key is cached or being loaded.
func (c *chunkCache) present(key chunkID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, cached := c.items[key]
	_, loading := c.flights[key]
	return cached || loading
}

// add caches v under key unless valid (when not nil) reports false.
func (c *chunkCache) add(key chunkID, v *chunkValue, valid func() bool) {
	cost := v.cost()
	if cost > c.limit/2 {
		return // too big to share the cache with anything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok || valid != nil && !valid() {
		return
	}
	v.acquire() // the cache's reference
	c.items[key] = c.lru.PushFront(&cacheEntry{key: key, val: v})
	c.size += cost
	for c.size > c.limit {
		e := c.lru.Back()
		c.removeElement(e)
	}
}

// remove drops key from the cache after a write; written, when not nil,
// runs under the cache's lock first (it marks loads that started before
// the write as not to be cached).
func (c *chunkCache) remove(key chunkID, written func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if written != nil {
		written()
	}
	if e, ok := c.items[key]; ok {
		c.removeElement(e)
	}
	delete(c.flights, key) // loads under way finish for their readers only
	delete(c.timedOut, key)
}

// drop removes key from the cache, leaving loads under way alone: a
// sequential reader has passed the chunk (the kernel's page cache keeps
// what it read), so its memory is better spent on the chunks ahead.
func (c *chunkCache) drop(key chunkID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.removeElement(e)
	}
}

func (c *chunkCache) removeElement(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.lru.Remove(e)
	delete(c.items, ce.key)
	c.size -= ce.val.cost()
	ce.val.release()
}
