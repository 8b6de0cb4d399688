package zarr

import (
	"context"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

func init() {
	// Every test of the package: a buffer used after it went back to the
	// pool reads as 0xa5 bytes.
	poisonFreed = true
}

func TestSizeClass(t *testing.T) {
	for _, n := range []int{1, 4096, poolMin, poolMin + 1, 100003, 1 << 20, 1<<20 + 1, 2 << 20, 3<<20 + 12345, 1 << 30} {
		c := sizeClass(n)
		if c < n || c > n+n/8 {
			t.Errorf("sizeClass(%d) = %d", n, c)
		}
		if sizeClass(c) != c {
			t.Errorf("sizeClass(sizeClass(%d) = %d) = %d", n, c, sizeClass(c))
		}
	}
}

// getThenPut takes n buffers of size bytes from p, then gives them all
// back (the pool keeps what its limit allows).
func getThenPut(p *bufPool, n, size int) {
	got := make([][]byte, n)
	for i := range got {
		got[i] = p.get(size)
	}
	for _, b := range got {
		p.put(b)
	}
}

func TestBufPoolBounded(t *testing.T) {
	p := newBufPool(5 << 20)
	getThenPut(p, 4, 2<<20)
	if p.bytes != 4<<20 {
		t.Errorf("pool holds %d bytes, want 4 MiB (two buffers of 2 MiB)", p.bytes)
	}
	b := p.get(2<<20 - 100)
	if len(b) != 2<<20-100 || cap(b) != 2<<20 {
		t.Errorf("get: len %d cap %d", len(b), cap(b))
	}
	p.put(make([]byte, 3<<20+5)) // not a size class: not kept
	if p.bytes != 2<<20 {
		t.Errorf("pool holds %d bytes, want 2 MiB", p.bytes)
	}
}

// TestBufPoolDropsOldest: a full pool takes a buffer of another size class
// in place of the free buffers given back longest ago. It once refused the
// newcomer, so a pool full of decoded chunks' buffers refused every stored
// chunk's, and each chunk read allocated one.
func TestBufPoolDropsOldest(t *testing.T) {
	const decoded, stored = 1 << 20, 1<<20 + 64<<10
	p := newBufPool(4 << 20)
	getThenPut(p, 4, decoded)
	if p.bytes != 4<<20 {
		t.Fatalf("pool holds %d bytes, want 4 MiB", p.bytes)
	}
	in := p.get(stored)
	in[0] = 1
	p.put(in)
	if n := len(p.free[sizeClass(stored)]); n != 1 {
		t.Errorf("pool holds %d buffers of the stored chunk's class, want 1", n)
	}
	if n := len(p.free[decoded]); n != 2 {
		t.Errorf("pool holds %d buffers of the decoded chunk's class, want 2 (two oldest dropped)", n)
	}
	if p.bytes > p.limit {
		t.Errorf("pool holds %d bytes, beyond its limit of %d", p.bytes, p.limit)
	}
	if b := p.get(stored); &b[0] != &in[0] {
		t.Error("get of the stored chunk's size allocated a buffer; the pool holds one")
	}
	p.put(make([]byte, 5<<20)) // larger than the limit: not kept, nothing dropped
	if n := len(p.free[decoded]); n != 2 {
		t.Errorf("a buffer beyond the limit dropped free buffers: %d left, want 2", n)
	}
}

// TestCachePoolLimit: a cache's pool keeps a quarter of the cache's size,
// at most poolLimit (the stress test's 8 MiB cache once shared a pool that
// kept up to 32 MiB of free buffers, and its mount's peak RSS passed the
// bound).
func TestCachePoolLimit(t *testing.T) {
	for _, tc := range []struct{ cache, pool int64 }{
		{8 << 20, 2 << 20},
		{64 << 20, 16 << 20},
		{1 << 30, poolLimit},
		{0, 0},
		{-1, 0},
	} {
		if got := newChunkCache(tc.cache).pool.limit; got != tc.pool {
			t.Errorf("cache of %d bytes: pool limit %d, want %d", tc.cache, got, tc.pool)
		}
	}
	p := newChunkCache(8 << 20).pool
	getThenPut(p, 3, 1<<20)
	if p.bytes != 2<<20 {
		t.Errorf("pool of an 8 MiB cache holds %d bytes, want 2 MiB", p.bytes)
	}
	if p := (*chunkCache)(nil).buffers(); p != unpooled || p.limit != 0 {
		t.Errorf("no cache: pool %p limit %d, want unpooled, keeping nothing", p, p.limit)
	}
}

// TestOpenPoolPerHierarchy: each hierarchy's pool is sized by its own
// cache; one opened with a small cache does not shrink another's.
func TestOpenPoolPerHierarchy(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	big, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	small, err := Open(ctx, st, Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if big.cache.pool == small.cache.pool {
		t.Fatal("two hierarchies share a pool")
	}
	if big.cache.pool.limit != poolLimit || small.cache.pool.limit != 2<<20 {
		t.Errorf("pool limits %d (default cache) and %d (8 MiB cache), want %d and %d",
			big.cache.pool.limit, small.cache.pool.limit, poolLimit, 2<<20)
	}
}

// TestPooledValueHeldByReader: a chunk the cache drops while a reader
// holds it goes back to the pool only when the reader releases it.
func TestPooledValueHeldByReader(t *testing.T) {
	c := newChunkCache(64 << 20)
	buf := c.pool.get(1 << 20)
	for i := range buf {
		buf[i] = 7
	}
	load := func(context.Context) (*chunkValue, func() bool, error) {
		return pooledValue(buf, buf, c.pool), nil, nil
	}
	v, err := c.get(context.Background(), chunkID{}, load)
	if err != nil {
		t.Fatal(err)
	}
	if n := v.refs.Load(); n != 2 {
		t.Fatalf("%d references after a load, want 2 (cache and reader)", n)
	}
	w, err := c.get(context.Background(), chunkID{}, load)
	if err != nil || w != v {
		t.Fatalf("second get: %v %v", w, err)
	}
	c.drop(chunkID{})
	w.release()
	if v.fixed[0] != 7 || v.fixed[len(v.fixed)-1] != 7 {
		t.Fatal("buffer reused while a reader holds it")
	}
	v.release()
	if v.refs.Load() != 0 || buf[0] != 0xa5 {
		t.Errorf("buffer not given back after the last release (refs %d)", v.refs.Load())
	}
}
