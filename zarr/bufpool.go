package zarr

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/zarrfs/zarrfs/internal/hugemem"
)

// bufPool keeps the buffers of chunks the cache has let go of, and of
// stored chunks already decoded, for the next chunks to be read: fresh
// memory costs a page fault per page, or clearing, and garbage collection.
// The buffers it makes are backed ahead of their first write (hugemem),
// which costs far less than faulting them in page by page.
// It holds at most limit bytes; buffers beyond that are left to the
// garbage collector. Each chunk cache has its own (chunkCache.buffers).
type bufPool struct {
	mu    sync.Mutex
	free  map[int][][]byte // by capacity (a size class)
	bytes int64
	limit int64
}

// poolMin is the smallest buffer the pool deals in: smaller ones are cheap
// to allocate.
const poolMin = 64 << 10

// poolLimit bounds the bytes of free buffers a pool keeps: a few chunks
// per core of the usual sizes (1–8 MiB), small beside the default cache.
// A smaller cache's pool keeps a quarter of its size (newChunkCache): the
// memory a hierarchy may use is bounded by its cache's size (Options), and
// a pool the size of a small cache would double it.
const poolLimit = 32 << 20

// newBufPool returns a pool that keeps at most limit bytes of free buffers
// (none when limit ≤ 0).
func newBufPool(limit int64) *bufPool {
	return &bufPool{free: map[int][][]byte{}, limit: max(limit, 0)}
}

// unpooled serves arrays without a cache: it keeps nothing.
var unpooled = newBufPool(0)

// poisonFreed makes put overwrite every buffer it is given (tests set it:
// a reader still using a buffer it released then reads garbage, which
// the byte-for-byte tests see).
var poisonFreed bool

// sizeClass rounds n up to the capacity of the buffers that serve it:
// a multiple of a sixteenth of the power of two at or above n (at most
// 1/16 wasted), so that stored chunks of slightly different sizes share
// buffers.
func sizeClass(n int) int {
	if n <= poolMin {
		return n
	}
	step := 1 << (bits.Len(uint(n-1)) - 4)
	return (n + step - 1) / step * step
}

// get returns a buffer of n bytes whose contents are undefined: the
// caller overwrites all of it.
func (p *bufPool) get(n int) []byte {
	if n < poolMin {
		return make([]byte, n)
	}
	c := sizeClass(n)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.bytes -= int64(c)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return hugemem.Alloc(n, c)
}

// put gives back a buffer from get that nothing uses any more.
func (p *bufPool) put(b []byte) {
	c := cap(b)
	if c < poolMin || sizeClass(c) != c {
		return
	}
	if poisonFreed {
		for i := range b[:c] {
			b[:c][i] = 0xa5
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+int64(c) > p.limit {
		return
	}
	p.free[c] = append(p.free[c], b[:c])
	p.bytes += int64(c)
}

// overlaps reports whether a and b share memory (within their capacities).
func overlaps(a, b []byte) bool {
	if cap(a) == 0 || cap(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(cap(b)) && b0 < a0+uintptr(cap(a))
}
