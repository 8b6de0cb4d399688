package zarr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
)

// readPathArrays are the arrays of TestReadPathByteForByte: written with
// random bytes, some chunks left missing (fill value).
var readPathArrays = []struct {
	name string
	meta ArrayMeta
}{
	{"rows-gzip", ArrayMeta{Format: FormatV3, Shape: []int64{512, 256}, ChunkShape: []int64{64, 256}, DataType: "uint32", FillValue: 7,
		Codecs: []CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "gzip", Configuration: map[string]any{"level": 1}}}}},
	// C-order rows cross several chunks; the last chunks overhang.
	{"tiles", ArrayMeta{Format: FormatV3, Shape: []int64{300, 500}, ChunkShape: []int64{64, 128}, DataType: "uint16", FillValue: 1}},
	{"sharded", ArrayMeta{Format: FormatV3, Shape: []int64{256, 384}, ChunkShape: []int64{64, 128}, DataType: "float32", FillValue: 0,
		Codecs: []CodecSpec{shardingSpec([]int64{16, 32})}}},
	// Random small reads decode only the Blosc blocks they need.
	{"v2-blosc", ArrayMeta{Format: FormatV2, Shape: []int64{256, 300}, ChunkShape: []int64{64, 300}, DataType: "<f4", FillValue: 0,
		Compressor: &CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 4096}}}},
	{"v2-F", ArrayMeta{Format: FormatV2, Shape: []int64{200, 300}, ChunkShape: []int64{50, 64}, DataType: "<i8", FillValue: 3, Order: "F"}},
}

// readPathOptions are the read paths every array is read through: cache
// and read-ahead on, off and with a tiny cache.
var readPathOptions = []struct {
	name string
	opts Options
}{
	{"default", Options{}},
	{"no-cache", Options{CacheSize: -1}},
	{"tiny-cache", Options{CacheSize: 4096}},
	{"two-chunk-cache", Options{CacheSize: 160 << 10}},
	{"no-read-ahead", Options{NoReadAhead: true}},
}

// TestReadPathByteForByte reads arrays sequentially (in reads of many
// sizes, in order and a little out of order as the kernel's concurrent
// read-ahead sends them), at random and with concurrent readers through
// every read path, and compares every byte with what was written.
func TestReadPathByteForByte(t *testing.T) {
	for _, ar := range readPathArrays {
		mem := memory.New()
		want := writeReadPathArray(t, mem, ar.meta, 1)
		rng := rand.New(rand.NewPCG(2, 3)) // the offsets of random reads
		for _, o := range readPathOptions {
			t.Run(ar.name+"/"+o.name, func(t *testing.T) {
				n := openArrayNode(t, mem, o.opts)
				before := partialDecodes.Load()
				checkReadPath(t, n.Array, want, rng)
				if n.Array.Pipeline().Parts() == codec.PartsDecoded && o.opts.CacheSize >= 0 && partialDecodes.Load() == before {
					t.Error("no random read decoded part of a chunk (Blosc blocks, a shard's inner chunks)")
				}
			})
		}
	}
}

func checkReadPath(t *testing.T, a *Array, want []byte, rng *rand.Rand) {
	ctx := context.Background()
	size := int64(len(want))
	check := func(what string, off, k int64) {
		t.Helper()
		p := make([]byte, k)
		m, err := a.ReadAt(ctx, p, off)
		if err != nil && !(off+k > size && m == int(size-off)) {
			t.Fatalf("%s: ReadAt(%d bytes at %d): %d, %v", what, k, off, m, err)
		}
		if !bytes.Equal(p[:m], want[off:off+int64(m)]) {
			t.Fatalf("%s: ReadAt(%d bytes at %d) differs", what, k, off)
		}
		vec, m2, release, err := a.ReadSlices(ctx, make([]byte, k), off)
		if m2 != m || (err == nil) != (m == int(k)) {
			t.Fatalf("%s: ReadSlices(%d bytes at %d): %d, %v; ReadAt read %d", what, k, off, m2, err, m)
		}
		if got := bytes.Join(vec, nil); !bytes.Equal(got, want[off:off+int64(m)]) {
			t.Fatalf("%s: ReadSlices(%d bytes at %d) differs", what, k, off)
		}
		release()
	}
	// Sequential, in reads of several sizes (odd ones cut elements).
	for _, step := range []int64{4096, 64 << 10, 100003, 128 << 10} {
		for off := int64(0); off < size; off += step {
			check(fmt.Sprintf("sequential by %d", step), off, min(step, size-off))
		}
	}
	// Sequential in 64 KiB reads, each pair swapped (out of order).
	const r = 64 << 10
	for off := int64(0); off < size; off += 2 * r {
		if off+r < size {
			check("swapped pairs", off+r, min(r, size-off-r))
		}
		check("swapped pairs", off, min(r, size-off))
	}
	// At random.
	for range 200 {
		off := rng.Int64N(size)
		check("random", off, min(rng.Int64N(200<<10)+1, size-off))
	}
	// Concurrent sequential readers, started at different places.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad string
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 128<<10)
			for off := int64(i) * size / 4; off < size; off += int64(len(p)) {
				m, err := a.ReadAt(ctx, p, off)
				if (err != nil && m != int(size-off)) || !bytes.Equal(p[:m], want[off:off+int64(m)]) {
					mu.Lock()
					bad = fmt.Sprintf("reader %d at %d: %d bytes, %v", i, off, m, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if bad != "" {
		t.Fatal("concurrent: " + bad)
	}
	// The whole array in one read.
	check("whole", 0, size)
}

// slowStore makes every Get wait, so that concurrent readers overlap, and
// counts the Gets of each key.
type slowStore struct {
	store.Store
	delay time.Duration
	mu    sync.Mutex
	gets  map[string]int
}

func (s *slowStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	s.gets[key]++
	s.mu.Unlock()
	time.Sleep(s.delay)
	return s.Store.Get(ctx, key)
}

// TestConcurrentReadersOneDecode: many readers asking for the same chunk
// at once, some of them sequential (so that read-ahead runs too), cause
// one load and one decode of it.
func TestConcurrentReadersOneDecode(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{4 << 10}, ChunkShape: []int64{1 << 10}, DataType: "float64", FillValue: 0,
		Codecs: []CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "zstd", Configuration: map[string]any{"level": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(ctx, bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 4<<10), 0); err != nil {
		t.Fatal(err)
	}
	st := &slowStore{Store: mem, delay: 50 * time.Millisecond, gets: map[string]int{}}
	n := openArrayNode(t, st, Options{})
	var failed atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Every reader reads inside chunk 0; odd ones twice in a
			// row, which makes them sequential and starts read-ahead of
			// chunks 1 and 2.
			p := make([]byte, 512)
			off := int64(i%8) * 512
			if _, err := n.Array.ReadAt(ctx, p, off); err != nil {
				failed.Add(1)
			}
			if i%2 == 1 {
				if _, err := n.Array.ReadAt(ctx, p, off+512); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d reads failed", failed.Load())
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if got := st.gets["a/c/0"]; got != 1 {
		t.Errorf("chunk 0 loaded and decoded %d times by 32 concurrent readers, want 1", got)
	}
	for key, k := range st.gets {
		if k > 1 {
			t.Errorf("chunk %s loaded %d times", key, k)
		}
	}
}

// TestTwoSequentialReaders: two readers reading one array sequentially in
// alternation, far apart, are both recognised as sequential and neither
// drops the other's chunks from the cache.
func TestTwoSequentialReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
			t.Fatal(err)
		}
		const size, chunk, step = 16 << 20, 128 << 10, 64 << 10
		w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{size}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i * 7 / 5)
		}
		if _, err := w.WriteAt(ctx, want, 0); err != nil {
			t.Fatal(err)
		}
		st := &slowStore{Store: mem, gets: map[string]int{}}
		n := openArrayNode(t, st, Options{})
		a := n.Array
		p := make([]byte, step)
		read := func(off int64) {
			t.Helper()
			if _, err := a.ReadAt(ctx, p, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p, want[off:off+step]) {
				t.Fatalf("read at %d differs", off)
			}
		}
		half := int64(size / 2)
		for off := int64(0); off < half; off += step {
			read(off)
			read(half + off)
		}
		// Each reader kept its own stream all along.
		if !slices.Contains(a.streams[:], half) || !slices.Contains(a.streams[:], size) {
			t.Errorf("streams %v: want the ends of both readers, %d and %d", a.streams, half, int64(size))
		}
		// Read-ahead still running finishes before counting.
		synctest.Wait()
		st.mu.Lock()
		defer st.mu.Unlock()
		// A few chunks may load twice: A's read-ahead past the end of its half
		// (B's first chunks, dropped once B passed them), and a read-ahead
		// goroutine that only ran after its reader had read and passed the
		// chunk. A reader dropping the other's chunks would reload dozens.
		loads := 0
		for _, k := range st.gets {
			loads += k
		}
		if chunks := size / chunk; loads > chunks+8 {
			t.Errorf("%d chunk loads for %d chunks: %v", loads, chunks, st.gets)
		}
	})
}

// dirReadPathArrays are uncompressed arrays, whose reads from a directory
// store copy runs straight from the chunk files (readDirect), beside
// ones that cannot (big-endian, tiles, F order).
var dirReadPathArrays = []struct {
	name string
	meta ArrayMeta
}{
	{"v2-raw-rows", ArrayMeta{Format: FormatV2, Shape: []int64{300, 1000}, ChunkShape: []int64{64, 1000}, DataType: "<f4", FillValue: 2}},
	{"v3-raw-1d", ArrayMeta{Format: FormatV3, Shape: []int64{1 << 20}, ChunkShape: []int64{100003}, DataType: "uint8", FillValue: 9}},
	{"v3-raw-3d", ArrayMeta{Format: FormatV3, Shape: []int64{7, 50, 300}, ChunkShape: []int64{2, 50, 300}, DataType: "int16", FillValue: 0}},
	{"v2-raw-big-endian", ArrayMeta{Format: FormatV2, Shape: []int64{300, 1000}, ChunkShape: []int64{64, 1000}, DataType: ">i4", FillValue: 5}},
	{"v2-zstd", ArrayMeta{Format: FormatV2, Shape: []int64{300, 1000}, ChunkShape: []int64{64, 1000}, DataType: "<f4", FillValue: 0,
		Compressor: &CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 1}}}},
	{"v2-lz4", ArrayMeta{Format: FormatV2, Shape: []int64{300, 1000}, ChunkShape: []int64{64, 1000}, DataType: "<u2", FillValue: 0,
		Compressor: &CodecSpec{Name: "lz4"}}},
	{"v2-blosc", ArrayMeta{Format: FormatV2, Shape: []int64{300, 1000}, ChunkShape: []int64{64, 1000}, DataType: "<f4", FillValue: 0,
		Compressor: &CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "lz4", "clevel": 5, "shuffle": 1}}}},
}

// TestReadPathDirStore is TestReadPathByteForByte on a directory store.
func TestReadPathDirStore(t *testing.T) {
	arrays := append(dirReadPathArrays[:len(dirReadPathArrays):len(dirReadPathArrays)], readPathArrays...)
	for _, ar := range arrays {
		st, err := dir.Open(t.TempDir(), dir.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := writeReadPathArray(t, st, ar.meta, 3)
		rng := rand.New(rand.NewPCG(4, 5)) // the offsets of random reads
		for _, o := range readPathOptions {
			t.Run(ar.name+"/"+o.name, func(t *testing.T) {
				n := openArrayNode(t, st, o.opts)
				direct := strings.Contains(ar.name, "-raw-") && !strings.HasSuffix(ar.name, "big-endian") || ar.name == "tiles"
				if got := n.Array.strategy == readDirect; got != direct {
					t.Errorf("read straight from the chunk files: %v, want %v", got, direct)
				}
				checkReadPath(t, n.Array, want, rng)
			})
		}
	}
}

// TestReadDirectWrongSize: an uncompressed chunk file of the wrong size
// is corrupt, whether the read goes straight to the file or through the
// cache, and a missing one reads as the fill value.
func TestReadDirectWrongSize(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir()
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV2}); err != nil {
		t.Fatal(err)
	}
	w, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV2, Shape: []int64{4, 1 << 16}, ChunkShape: []int64{1, 1 << 16}, DataType: "<u2", FillValue: 0x0101})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(ctx, bytes.Repeat([]byte{1, 2}, 3<<16), 0); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{1, 2}, 1<<16)
	if err := st.Set(ctx, "a/0.0", chunk[:len(chunk)-2]); err != nil { // short
		t.Fatal(err)
	}
	if err := st.Set(ctx, "a/1.0", append(chunk, 0, 0)); err != nil { // long
		t.Fatal(err)
	}
	n := openArrayNode(t, st, Options{})
	if n.Array.strategy != readDirect {
		t.Fatal("an uncompressed array in a directory store is not read directly")
	}
	for _, k := range []int64{100 << 10, 16, 128 << 10} {
		for _, off := range []int64{0, 128 << 10} {
			p := make([]byte, k)
			if _, err := n.Array.ReadAt(ctx, p, off); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%d bytes at %d of a chunk of the wrong size: %v, want ErrCorrupt", k, off, err)
			}
		}
	}
	// Chunk 2 is whole, chunk 3 missing.
	p := make([]byte, 256<<10)
	if _, err := n.Array.ReadAt(ctx, p, 256<<10); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p[:128<<10], chunk) || !bytes.Equal(p[128<<10:], bytes.Repeat([]byte{1}, 128<<10)) {
		t.Error("whole and missing chunks read wrong")
	}
}

// TestReadSlicesHeld: the chunks a read's slices lie in are not reused,
// however many reads and cache evictions follow, until it releases them.
func TestReadSlicesHeld(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{64, 1 << 16}, ChunkShape: []int64{2, 1 << 16}, DataType: "uint8", FillValue: 0,
		Codecs: []CodecSpec{{Name: "bytes"}, {Name: "zstd", Configuration: map[string]any{"level": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, w.Size())
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range want {
		want[i] = byte(rng.IntN(4))
	}
	if _, err := w.WriteAt(ctx, want, 0); err != nil {
		t.Fatal(err)
	}
	for _, o := range readPathOptions {
		t.Run(o.name, func(t *testing.T) {
			n := openArrayNode(t, mem, o.opts)
			a := n.Array
			type held struct {
				off     int64
				vec     [][]byte
				release func()
			}
			var hs []held
			p := make([]byte, 96<<10)
			for off := int64(0); off+int64(len(p)) <= a.Size(); off += int64(len(p)) {
				vec, _, release, err := a.ReadSlices(ctx, make([]byte, len(p)), off)
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, held{off, vec, release})
				// Other reads meanwhile, sequential and random, that make
				// the cache drop and evict chunks.
				if _, err := a.ReadAt(ctx, p, rng.Int64N(a.Size()-int64(len(p)))); err != nil {
					t.Fatal(err)
				}
			}
			for _, h := range hs {
				if !bytes.Equal(bytes.Join(h.vec, nil), want[h.off:h.off+int64(len(p))]) {
					t.Fatalf("slices of the read at %d changed before they were released", h.off)
				}
				h.release()
			}
		})
	}
}

// writeReadPathArray writes, in st, a root group and the array "a" with
// meta, filled with random bytes (seeded by seed) but for its last rows of
// chunks, so that some chunks are missing, and returns what the array
// reads as: the bytes written, then the fill value.
func writeReadPathArray(t *testing.T, st WritableStore, meta ArrayMeta, seed uint64) []byte {
	t.Helper()
	ctx := context.Background()
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: meta.Format}); err != nil {
		t.Fatal(err)
	}
	w, err := CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	want := make([]byte, w.Size())
	for i := range want {
		want[i] = byte(rng.IntN(256))
	}
	rows := meta.Shape[0] - meta.ChunkShape[0]
	rowBytes := w.Size() / meta.Shape[0]
	if _, err := w.WriteAt(ctx, want[:rows*rowBytes], 0); err != nil {
		t.Fatal(err)
	}
	copy(want[rows*rowBytes:], refFill(int((w.Size()-rows*rowBytes)/int64(len(w.FillElement()))), w.FillElement()))
	return want
}

// openArrayNode opens the hierarchy in st with opts and returns its node
// "a", the array the read-path tests write.
func openArrayNode(t testing.TB, st store.Store, opts Options) *Node {
	t.Helper()
	ctx := context.Background()
	h, err := Open(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	return n
}
