package zarr

import (
	"context"
	"testing"
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

func TestBufPoolBounded(t *testing.T) {
	p := &bufPool{free: map[int][][]byte{}, limit: 5 << 20}
	var got [][]byte
	for range 4 {
		got = append(got, p.get(2<<20))
	}
	for _, b := range got {
		p.put(b)
	}
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
