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
// It holds at most limit bytes: a buffer given back to a full pool takes
// the place of the free buffers given back longest ago, whatever their
// size, which go to the garbage collector. (Refusing the newcomer instead
// let a pool filled with the decoded chunks that drop-behind lets go of
// refuse every stored chunk's buffer, of another size class, so that each
// chunk read allocated and cleared a fresh one.) Each chunk cache has its
// own (chunkCache.buffers).
type bufPool struct {
	mu    sync.Mutex
	free  map[int][]freeBuf // by capacity (a size class), oldest first
	bytes int64
	limit int64
	seq   uint64 // puts so far: the age of a free buffer
}

// freeBuf is a buffer in the pool, with the number of the put that gave
// it back.
type freeBuf struct {
	b   []byte
	seq uint64
}

// poolMin is the smallest buffer the pool deals in: smaller ones are cheap
// to allocate. It is the Go runtime's largest small object: a larger
// allocation takes pages of its own and clears them (the stored chunks of
// 64 KiB chunks, compressed a little, were allocated and cleared anew for
// every read when the pool began at 64 KiB).
const poolMin = 32 << 10

// poolLimit bounds the bytes of free buffers a pool keeps: a few chunks
// per core of the usual sizes (1–8 MiB), small beside the default cache.
// A smaller cache's pool keeps a quarter of its size (newChunkCache): the
// memory a hierarchy may use is bounded by its cache's size (Options), and
// a pool the size of a small cache would double it.
const poolLimit = 32 << 20

// newBufPool returns a pool that keeps at most limit bytes of free buffers
// (none when limit ≤ 0).
func newBufPool(limit int64) *bufPool {
	return &bufPool{free: map[int][]freeBuf{}, limit: max(limit, 0)}
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
		b := l[len(l)-1].b
		l[len(l)-1] = freeBuf{}
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
	if int64(c) > p.limit {
		return
	}
	for p.bytes+int64(c) > p.limit {
		p.dropOldest()
	}
	p.seq++
	p.free[c] = append(p.free[c], freeBuf{b[:c], p.seq})
	p.bytes += int64(c)
}

// dropOldest lets go of the free buffer given back longest ago. The pool
// holds a few size classes (an array's stored and decoded chunks), so the
// search is short.
func (p *bufPool) dropOldest() {
	oldest := -1
	for c, l := range p.free {
		if len(l) > 0 && (oldest < 0 || l[0].seq < p.free[oldest][0].seq) {
			oldest = c
		}
	}
	l := p.free[oldest]
	l[0] = freeBuf{}
	if len(l) == 1 {
		delete(p.free, oldest)
	} else {
		p.free[oldest] = l[1:]
	}
	p.bytes -= int64(oldest)
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
