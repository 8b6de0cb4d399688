package zarr

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// keyCounter counts Get calls per key.
type keyCounter struct {
	store.Store
	mu   sync.Mutex
	gets map[string]int
}

func (c *keyCounter) Get(ctx context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	c.gets[key]++
	c.mu.Unlock()
	return c.Store.Get(ctx, key)
}

func TestChunkDecodedOnce(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	a, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{64, 64}, ChunkShape: []int64{32, 32}, DataType: "float64", FillValue: 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteAt(ctx, make([]byte, a.Size()), 0); err != nil {
		t.Fatal(err)
	}
	st := &keyCounter{Store: mem, gets: map[string]int{}}
	// Without read-ahead: the readers' rows follow one another, and a
	// sequential reader's next row of chunks would load too.
	h, err := Open(ctx, st, Options{NoReadAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 8*64)
			if _, err := n.Array.ReadAt(ctx, p, int64(i%4)*8*64); err != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		t.Fatal("a concurrent ReadAt failed")
	}
	for _, key := range []string{"a/c/0/0", "a/c/0/1"} {
		if st.gets[key] != 1 {
			t.Errorf("chunk %s read %d times, want 1", key, st.gets[key])
		}
	}
	if st.gets["a/c/1/0"] != 0 {
		t.Errorf("chunk a/c/1/0 read though not needed")
	}
}

func TestCacheBounded(t *testing.T) {
	// Room for a few entries of 100 bytes, each counted with its overhead.
	c := newChunkCache(10 * (entryOverhead + 100))
	ctx := context.Background()
	loads := 0
	for i := range 50 {
		_, err := c.get(ctx, chunkID{chunk: int64(i)}, func(context.Context) (*chunkValue, func() bool, error) {
			loads++
			return &chunkValue{fixed: make([]byte, 100)}, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if c.size > c.limit || c.lru.Len() != len(c.items) || c.lru.Len() == 0 {
		t.Errorf("size %d of limit %d with %d entries (%d in map)", c.size, c.limit, c.lru.Len(), len(c.items))
	}
	// The most recent entry is cached, the first one evicted.
	for _, step := range []struct {
		key  int64
		want int
	}{{49, 50}, {0, 51}} {
		key, want := step.key, step.want
		c.get(ctx, chunkID{chunk: key}, func(context.Context) (*chunkValue, func() bool, error) {
			loads++
			return &chunkValue{fixed: make([]byte, 100)}, nil, nil
		})
		if loads != want {
			t.Errorf("after get %d: %d loads, want %d", key, loads, want)
		}
	}
	// Values too big for the cache are not kept.
	big, stale, removed := chunkID{chunk: 100}, chunkID{chunk: 101}, chunkID{chunk: 49}
	c.get(ctx, big, func(context.Context) (*chunkValue, func() bool, error) {
		return &chunkValue{fixed: make([]byte, 9*(entryOverhead+100))}, nil, nil
	})
	if c.lookup(big) != nil {
		t.Error("a value of most of the cache's size was cached")
	}
	c.remove(removed, nil)
	// A load that a write overtook is returned but not cached.
	c.get(ctx, stale, func(context.Context) (*chunkValue, func() bool, error) {
		return &chunkValue{fixed: make([]byte, 10)}, func() bool { return false }, nil
	})
	if c.lookup(stale) != nil {
		t.Error("a load overtaken by a write was cached")
	}
	if c.lookup(removed) != nil {
		t.Error("remove did not remove")
	}
}

// The read-ahead tests run in synctest bubbles: synctest.Wait returns once
// every load has asked the store (or is blocked), where they polled or slept.

func TestReadAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV3}); err != nil {
			t.Fatal(err)
		}
		w, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV3, Shape: []int64{8 * 256}, ChunkShape: []int64{256}, DataType: "uint8", FillValue: 0})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteAt(ctx, make([]byte, w.Size()), 0); err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		a := n.Array
		p := make([]byte, 256)
		for _, off := range []int64{0, 256} {
			if _, err := a.ReadAt(ctx, p, off); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the read-ahead is done, or blocked
		if h.cache.lookup(a.cacheID(2)) == nil {
			t.Fatal("chunk 2 was not read ahead after two sequential reads")
		}
		if h.cache.lookup(a.cacheID(7)) != nil {
			t.Error("read ahead went further than one chunk per core")
		}
	})
}

// TestReadAheadNextChunkRow: in an array whose rows cross many chunks, a
// sequential reader in the first row of chunks has the next row's first
// chunks loading long before it gets there (a C-order reader meets chunk
// (1, 0) right after (0, 15)).
func TestReadAheadNextChunkRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		const rows, cols = 4, 64 // a chunk; the array is 2 × 16 of them
		writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{2 * rows, 16 * cols}, ChunkShape: []int64{rows, cols},
			DataType: "uint8", FillValue: 0}, 9)
		st := &keyCounter{Store: mem, gets: map[string]int{}}
		n := openArrayNode(t, st, Options{Concurrency: 2})
		row := make([]byte, 16*cols)
		for r := range 2 { // rows 0 and 1 of the 4 in the first row of chunks
			if _, err := n.Array.ReadAt(ctx, row, int64(r*len(row))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the read-ahead is done, or blocked
		st.mu.Lock()
		asked := st.gets["a/c/1/0"]
		st.mu.Unlock()
		if asked == 0 {
			t.Fatal("chunk (1, 0) was not read ahead by a reader in the row of chunks before it")
		}
	})
}

// TestDropBehind: a sequential reader's chunks leave the cache once the
// reader is well past them, and those it is reading stay.
func TestDropBehind(t *testing.T) {
	for _, c := range []struct {
		name          string
		shape, chunks []int64
		read          int     // bytes per read
		reads         int     // sequential reads from offset 0
		gone, kept    []int64 // linear chunk indices
	}{
		// Reads of one 1 KiB chunk each, 8 reads of slack (the first
		// read, small and at 0, is not yet known to be sequential).
		{"rows", []int64{64 << 10}, []int64{1 << 10}, 1 << 10, 32, []int64{1, 10, 20}, []int64{24, 31}},
		// Rows of 16 chunks of 4 x 64 bytes, read a row at a time: chunk
		// row 0 (rows 0-3) is more than 8 reads behind from row 12 on,
		// chunk row 1 (rows 4-7) not yet at row 15. Gone: chunks (0, 1)
		// and (0, 15); kept: (1, 0), (1, 15), (3, 0), (3, 15).
		{"tiles", []int64{32, 16 * 64}, []int64{4, 64}, 16 * 64, 16, []int64{1, 15}, []int64{16, 31, 48, 63}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.New()
			writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: c.shape, ChunkShape: c.chunks, DataType: "uint8", FillValue: 0}, 11)
			n := openArrayNode(t, mem, Options{Concurrency: 2})
			p := make([]byte, c.read)
			for r := range c.reads {
				if _, err := n.Array.ReadAt(ctx, p, int64(r*c.read)); err != nil {
					t.Fatal(err)
				}
			}
			cache := n.Array.cache
			for _, lin := range c.gone {
				if cache.lookup(n.Array.cacheID(lin)) != nil {
					t.Errorf("chunk %d, far behind the reader, is still cached", lin)
				}
			}
			for _, lin := range c.kept {
				if cache.lookup(n.Array.cacheID(lin)) == nil {
					t.Errorf("chunk %d, the reader's, is not cached", lin)
				}
			}
		})
	}
}

// gatedStore holds back the Get of one key until another key has been
// asked for (or a few seconds have passed, which fails the test).
type gatedStore struct {
	store.Store
	held, until string
	asked       chan struct{} // closed when until is asked for
	once        sync.Once
	timedOut    atomic.Bool
}

func (g *gatedStore) Get(ctx context.Context, key string) ([]byte, error) {
	switch key {
	case g.until:
		g.once.Do(func() { close(g.asked) })
	case g.held:
		select {
		case <-g.asked:
		case <-time.After(5 * time.Second):
			g.timedOut.Store(true)
		}
	}
	return g.Store.Get(ctx, key)
}

// TestReadAheadStartsWithTheRead: a read that continues a sequential
// reader starts loading the chunk after its own while its own still loads,
// not after (on two cores the chunks of a read then decode side by side).
func TestReadAheadStartsWithTheRead(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	const chunk = 64 << 10 // the smallest read at offset 0 that starts a sequential reader
	writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{6 * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}, 5)
	// The second read, of chunk 3 (within 8 reads of the first's end: the
	// kernel's read-ahead requests arrive out of order), gets its chunk
	// only once chunk 4 has been asked for.
	st := &gatedStore{Store: mem, held: "a/c/3", until: "a/c/4", asked: make(chan struct{})}
	n := openArrayNode(t, st, Options{Concurrency: 2})
	for _, off := range []int64{0, 3 * chunk} {
		if _, err := n.Array.ReadAt(ctx, make([]byte, chunk), off); err != nil {
			t.Fatal(err)
		}
	}
	if st.timedOut.Load() {
		t.Error("chunk 4 was not asked for while chunk 3 loaded")
	}
}

// TestReadAheadNotBeforeFirstRead: a reader's first read does not start
// loading the chunks after its own before it is done: it may be the only
// read, and given up (a process killed while its read waits on a hung
// store), and its read-ahead would then keep the store busy for nobody.
func TestReadAheadNotBeforeFirstRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		const chunk = 64 << 10
		writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{4 * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}, 7)
		st := &keyCounter{Store: mem, gets: map[string]int{}}
		n := openArrayNode(t, st, Options{Concurrency: 4})
		rctx, cancel := context.WithCancel(ctx)
		cancel() // the read gives up before it starts
		if _, err := n.Array.ReadAt(rctx, make([]byte, chunk), 0); err == nil {
			t.Fatal("a read with a cancelled context succeeded")
		}
		synctest.Wait() // a read-ahead load would have asked by now
		st.mu.Lock()
		defer st.mu.Unlock()
		for key, n := range st.gets {
			if strings.HasPrefix(key, "a/c/") && key != "a/c/0" {
				t.Errorf("chunk %s, after the read's own, asked for %d times by a read given up", key, n)
			}
		}
	})
}

// TestRemoteReadAheadWithFirstRead: on a remote store, where waiting costs
// a round trip, a sequential reader's first read starts loading the chunks
// after its own at once: chunk 0 is held until chunk 1 is asked for.
func TestRemoteReadAheadWithFirstRead(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	const chunk = 64 << 10
	writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{4 * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}, 7)
	st := &gatedStore{Store: mem, held: "a/c/0", until: "a/c/1", asked: make(chan struct{})}
	n := openArrayNode(t, st, Options{Concurrency: 4, Remote: true})
	if _, err := n.Array.ReadAt(ctx, make([]byte, chunk), 0); err != nil {
		t.Fatal(err)
	}
	if st.timedOut.Load() {
		t.Error("chunk 1 was not asked for while chunk 0, of a remote store's first read, loaded")
	}
}

// hangingStore holds every chunk read until its context ends, and counts
// those that end so.
type hangingStore struct {
	store.Store
	started, ended chan string
}

func (h *hangingStore) Get(ctx context.Context, key string) ([]byte, error) {
	if !strings.HasPrefix(key, "a/c/") {
		return h.Store.Get(ctx, key)
	}
	h.started <- key
	<-ctx.Done()
	h.ended <- key
	return nil, ctx.Err()
}

// TestRemoteReadAheadGivenUp: the loads a remote store's first read starts
// ahead of itself end when the read is given up (a process killed while
// its read waits on a hung store), rather than keep the store busy for
// nobody.
func TestRemoteReadAheadGivenUp(t *testing.T) {
	mem := memory.New()
	const chunk = 64 << 10
	writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{4 * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}, 7)
	st := &hangingStore{Store: mem, started: make(chan string, 16), ended: make(chan string, 16)}
	n := openArrayNode(t, st, Options{Concurrency: 4, Remote: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := n.Array.ReadAt(ctx, make([]byte, chunk), 0)
		done <- err
	}()
	// The read's chunk and the three after it are asked for, then the
	// read is given up.
	for range 4 {
		select {
		case <-st.started:
		case <-time.After(5 * time.Second):
			t.Fatal("the first read and its read-ahead did not ask for 4 chunks")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a read given up succeeded")
	}
	for i := range 4 {
		select {
		case <-st.ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 4 chunk reads ended with the read given up; the others still hold the store", i)
		}
	}
}

func TestWritesNotShadowedByCache(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	a, err := CreateArray(ctx, st, "", ArrayMeta{Format: FormatV3, Shape: []int64{64}, ChunkShape: []int64{8}, DataType: "uint8", FillValue: 0})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 64)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := a.ReadAt(ctx, p, 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	p := make([]byte, 64)
	for i := range 100 {
		for j := range p {
			p[j] = byte(i)
		}
		if _, err := a.WriteAt(ctx, p[:37], int64(i%27)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	// Every element was last written by one of the final writes.
	want := make([]byte, 64)
	for i := range 100 {
		for j := i % 27; j < i%27+37; j++ {
			want[j] = byte(i)
		}
	}
	got := make([]byte, 64)
	if _, err := a.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("after concurrent reads the array reads %v, want %v", got, want)
	}
}

// lookup returns the cached chunk for key, or nil, without a reference:
// only to see whether it is there.
func (c *chunkCache) lookup(key chunkID) *chunkValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).val
	}
	return nil
}

// TestEntryOverhead measures what a cached chunk costs besides its bytes
// (tiny chunks: a missing one holds none) and checks that entryOverhead,
// which the cache counts for each entry, covers it: otherwise a cache of
// one-element chunks holds far more memory than its size.
func TestEntryOverhead(t *testing.T) {
	const n = 50000
	c := newChunkCache(1 << 40)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		v, err := c.get(ctx, chunkID{array: 1, chunk: int64(i)}, func(context.Context) (*chunkValue, func() bool, error) {
			return &chunkValue{missing: true}, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		v.release()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("a cached entry holding no bytes: %.0f bytes of heap; counted %d", per, entryOverhead)
	if per > entryOverhead {
		t.Errorf("an entry costs %.0f bytes, more than entryOverhead (%d)", per, entryOverhead)
	}
	if c.size != n*entryOverhead {
		t.Errorf("cache size %d, want %d", c.size, n*entryOverhead)
	}
	runtime.KeepAlive(c)
}

// TestReadAheadPassed: a read-ahead that starts once every sequential
// reader is past its chunk does not load it (a goroutine left waiting on
// a busy machine would otherwise put back a chunk dropBehind let go of).
func TestReadAheadPassed(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{64 << 10}, ChunkShape: []int64{1 << 10}, DataType: "uint8", FillValue: 0}, 11)
	n := openArrayNode(t, mem, Options{Concurrency: 2})
	if n.Array.passed(0) {
		t.Error("chunk 0 passed before any read")
	}
	p := make([]byte, 1<<10)
	for r := range 12 {
		if _, err := n.Array.ReadAt(ctx, p, int64(r<<10)); err != nil {
			t.Fatal(err)
		}
	}
	for lin, want := range map[int64]bool{0: true, 10: true, 11: false, 12: false, 40: false} {
		if got := n.Array.passed(lin); got != want {
			t.Errorf("passed(%d) = %v after reading chunks 0-11, want %v", lin, got, want)
		}
	}
}
