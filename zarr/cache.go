package zarr

import (
	"container/list"
	"context"
	"errors"
	"runtime"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/zarrfs/zarrfs/codec"
)

// chunkValue is a decoded chunk: the bytes of a fixed-size chunk or the
// elements of a variable-length one; missing marks a chunk absent from the
// store (read as the fill value).
type chunkValue struct {
	fixed   []byte
	vlen    [][]byte
	missing bool
	// box is set when fixed holds only this region of the chunk (a
	// partial read of a shard); such values are never cached.
	box *box
	// index is a shard index (cached under the shard's key + "\x00index").
	index *codec.ShardIndex
}

// cost returns the approximate memory held by v.
func (v *chunkValue) cost() int64 {
	n := int64(64 + len(v.fixed))
	if v.index != nil {
		n += int64(v.index.Size())
	}
	for _, e := range v.vlen {
		n += int64(24 + len(e))
	}
	return n
}

// chunkCache is an LRU cache of decoded chunks bounded in bytes; loads of
// the same key share one call (singleflight).
type chunkCache struct {
	limit int64

	mu    sync.Mutex
	size  int64
	lru   *list.List // of *cacheEntry, most recent first
	items map[string]*list.Element

	group singleflight.Group

	// prefetch bounds the read-ahead loads running at once.
	prefetch chan struct{}
}

type cacheEntry struct {
	key string
	val *chunkValue
}

// newChunkCache returns a cache holding up to limit bytes (none when limit ≤ 0).
func newChunkCache(limit int64) *chunkCache {
	return &chunkCache{limit: limit, lru: list.New(), items: map[string]*list.Element{},
		prefetch: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// loader loads a chunk; it returns with it a check, run under the cache's
// lock, that the value may still be cached (no write happened meanwhile).
type loader func(context.Context) (*chunkValue, func() bool, error)

// get returns the cached chunk for key, or calls load once for all
// concurrent callers and caches what it returns.
func (c *chunkCache) get(ctx context.Context, key string, load loader) (*chunkValue, error) {
	if v := c.lookup(key); v != nil {
		return v, nil
	}
	for {
		ch := c.group.DoChan(key, func() (any, error) {
			if v := c.lookup(key); v != nil {
				return v, nil
			}
			v, valid, err := load(ctx)
			if err != nil {
				return nil, err
			}
			c.add(key, v, valid)
			return v, nil
		})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case r := <-ch:
			if r.Err != nil {
				// Another caller's cancellation is not ours: try again.
				if (errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)) && ctx.Err() == nil {
					continue
				}
				return nil, r.Err
			}
			return r.Val.(*chunkValue), nil
		}
	}
}

func (c *chunkCache) lookup(key string) *chunkValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).val
	}
	return nil
}

// add caches v under key unless valid (when not nil) reports false.
func (c *chunkCache) add(key string, v *chunkValue, valid func() bool) {
	cost := v.cost()
	if cost > c.limit/2 {
		return // too big to share the cache with anything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok || valid != nil && !valid() {
		return
	}
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
func (c *chunkCache) remove(key string, written func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if written != nil {
		written()
	}
	if e, ok := c.items[key]; ok {
		c.removeElement(e)
	}
	c.group.Forget(key)
}

func (c *chunkCache) removeElement(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.lru.Remove(e)
	delete(c.items, ce.key)
	c.size -= ce.val.cost()
}
