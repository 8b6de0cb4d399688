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
	p := &bufPool{free: map[int][][]byte{}, limit: 5 << 20}
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

// TestBufPoolLimitTo: lowering the limit lets go of the free buffers
// beyond it at once and bounds what put keeps after; a higher limit asked
// for later does not raise it again.
func TestBufPoolLimitTo(t *testing.T) {
	p := &bufPool{free: map[int][][]byte{}, limit: 16 << 20}
	getThenPut(p, 6, 2<<20)
	if p.bytes != 12<<20 {
		t.Fatalf("pool holds %d bytes, want 12 MiB", p.bytes)
	}
	p.limitTo(5 << 20)
	if p.bytes != 4<<20 || len(p.free[2<<20]) != 2 {
		t.Errorf("after limitTo(5 MiB): %d bytes in %d buffers, want 4 MiB in 2", p.bytes, len(p.free[2<<20]))
	}
	p.limitTo(64 << 20)
	if p.limit != 5<<20 {
		t.Errorf("limitTo(64 MiB) after 5 MiB: limit %d, want 5 MiB", p.limit)
	}
	p.put(p.get(2 << 20))
	p.put(make([]byte, 2<<20))
	if p.bytes != 4<<20 {
		t.Errorf("put beyond the lowered limit: pool holds %d bytes, want 4 MiB", p.bytes)
	}
	p.limitTo(-1)
	if p.bytes != 0 || p.limit != 0 {
		t.Errorf("limitTo(-1): %d bytes kept, limit %d; want none", p.bytes, p.limit)
	}
}

// TestOpenLimitsPool: opening a hierarchy with a small cache lowers the
// shared pool to a quarter of it (the stress test's 8 MiB cache kept up to
// 32 MiB of free buffers, and its mount's peak RSS passed the bound).
func TestOpenLimitsPool(t *testing.T) {
	defer func(l int64) { bufs.mu.Lock(); bufs.limit = l; bufs.mu.Unlock() }(bufs.limit)
	bufs.mu.Lock()
	bufs.limit = poolLimit
	bufs.mu.Unlock()
	st := memory.New()
	if err := CreateGroup(context.Background(), st, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), st, Options{CacheSize: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	bufs.mu.Lock()
	defer bufs.mu.Unlock()
	if bufs.limit != 2<<20 {
		t.Errorf("pool limit %d after opening with an 8 MiB cache, want 2 MiB", bufs.limit)
	}
}

// TestPooledValueHeldByReader: a chunk the cache drops while a reader
// holds it goes back to the pool only when the reader releases it.
func TestPooledValueHeldByReader(t *testing.T) {
	c := newChunkCache(64 << 20)
	buf := bufs.get(1 << 20)
	for i := range buf {
		buf[i] = 7
	}
	load := func(context.Context) (*chunkValue, func() bool, error) { return pooledValue(buf, buf), nil, nil }
	v, err := c.get(context.Background(), "k", load)
	if err != nil {
		t.Fatal(err)
	}
	if n := v.refs.Load(); n != 2 {
		t.Fatalf("%d references after a load, want 2 (cache and reader)", n)
	}
	w, err := c.get(context.Background(), "k", load)
	if err != nil || w != v {
		t.Fatalf("second get: %v %v", w, err)
	}
	c.drop("k")
	w.release()
	if v.fixed[0] != 7 || v.fixed[len(v.fixed)-1] != 7 {
		t.Fatal("buffer reused while a reader holds it")
	}
	v.release()
	if v.refs.Load() != 0 || buf[0] != 0xa5 {
		t.Errorf("buffer not given back after the last release (refs %d)", v.refs.Load())
	}
}
