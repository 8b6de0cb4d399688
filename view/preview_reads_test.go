package view

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr"
)

// These tests check what drawing a preview costs: which chunks it reads
// (each once, only the plane's), its decoding budget, and how renders wait
// for each other and for the cores.

// hookedStore calls before with the key of every read (Get, GetRange),
// before it reads.
type hookedStore struct {
	store.Store
	before func(key string)
}

func (s hookedStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.before(key)
	return s.Store.Get(ctx, key)
}

func (s hookedStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.before(key)
	return s.Store.GetRange(ctx, key, r)
}

// countingStore counts the reads of each key.
type countingStore struct {
	hookedStore
	mu    sync.Mutex
	reads map[string]int
}

func newCountingStore(st store.Store) *countingStore {
	s := &countingStore{reads: map[string]int{}}
	s.hookedStore = hookedStore{st, s.note}
	return s
}

func (s *countingStore) note(key string) {
	s.mu.Lock()
	s.reads[key]++
	s.mu.Unlock()
}

// TestPreviewReadsPlane: a preview reads the chunks under its plane,
// once each, and no others (no read-ahead), also for a sharded array.
func TestPreviewReadsPlane(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		mem := newStore(t)
		m := zarr.ArrayMeta{Shape: []int64{5, 64, 64}, ChunkShape: []int64{1, 32, 32}, DataType: "uint16", FillValue: 0}
		if sharded {
			m.ChunkShape = []int64{5, 64, 64}
			m.Codecs = []zarr.CodecSpec{{Name: "sharding_indexed", Configuration: map[string]any{
				"chunk_shape": []int64{1, 32, 32}, "codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}},
				"index_codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}},
			}}}
		}
		writeArray(t, mem, "a", m, make([]byte, 5*64*64*2))
		st := newCountingStore(mem)
		f := previewOf(t, st, "a", Config{Previews: true, PreviewBudget: 4 * 32 * 32 * 2})
		if f == nil {
			t.Fatalf("sharded=%v: no preview within the budget of its four chunks", sharded)
		}
		readPreview(t, f)
		var keys []string
		for k, n := range st.reads {
			if strings.HasPrefix(k, "a/c/") {
				keys = append(keys, k)
				if n != 1 && !sharded {
					t.Errorf("%s read %d times", k, n)
				}
			}
		}
		slices.Sort(keys)
		want := []string{"a/c/2/0/0", "a/c/2/0/1", "a/c/2/1/0", "a/c/2/1/1"}
		if sharded {
			want = []string{"a/c/0/0/0"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("sharded=%v: read %v, want %v", sharded, keys, want)
		}
	}
}

// TestPreviewReadsEachChunkOnce: a plane of 1,024 rows drawn as 512, in
// chunks of 256 rows each compressed (Blosc, whose blocks decode in part;
// gzip; zstd), and a chart of a rank-1 array in chunks larger than a read
// piece: every chunk under the preview is got from the store once, not
// once per row drawn (issue 44: 1,024 requests for 16 chunks over HTTP).
func TestPreviewReadsEachChunkOnce(t *testing.T) {
	le := zarr.CodecSpec{Name: "bytes", Configuration: map[string]any{"endian": "little"}}
	for _, c := range []struct {
		name  string
		codec zarr.CodecSpec
	}{
		{"blosc", zarr.CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}},
		{"gzip", zarr.CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}},
		{"zstd", zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 1, "checksum": false}}},
	} {
		mem := newStore(t)
		data := make([]byte, 3*1024*64*2)
		for i := range data {
			data[i] = byte(i * 7 / 5)
		}
		writeArray(t, mem, "plane", zarr.ArrayMeta{Shape: []int64{3, 1024, 64}, ChunkShape: []int64{1, 256, 64},
			DataType: "uint16", FillValue: 0, Codecs: []zarr.CodecSpec{le, c.codec}}, data)
		writeArray(t, mem, "line", zarr.ArrayMeta{Shape: []int64{100000}, ChunkShape: []int64{40000},
			DataType: "uint16", FillValue: 0, Codecs: []zarr.CodecSpec{le, c.codec}}, data[:200000])
		for _, a := range []struct {
			path   string
			chunks []string
		}{
			{"plane", []string{"plane/c/1/0/0", "plane/c/1/1/0", "plane/c/1/2/0", "plane/c/1/3/0"}},
			{"line", []string{"line/c/0", "line/c/1", "line/c/2"}},
		} {
			st := newCountingStore(mem)
			f := previewOf(t, st, a.path, on)
			if f == nil {
				t.Fatalf("%s %s: no preview", c.name, a.path)
			}
			readPreview(t, f)
			var keys []string
			for k, n := range st.reads {
				if strings.HasPrefix(k, a.path+"/c/") {
					keys = append(keys, k)
					if n != 1 {
						t.Errorf("%s: %s read %d times", c.name, k, n)
					}
				}
			}
			slices.Sort(keys)
			if !slices.Equal(keys, a.chunks) {
				t.Errorf("%s: read %v, want %v", c.name, keys, a.chunks)
			}
		}
	}
}

// TestPreviewBudget: an array whose plane's chunks are over the budget has
// no preview.png; rows of chunks the sampled rows skip do not count.
func TestPreviewBudget(t *testing.T) {
	st := newStore(t)
	writeArray(t, st, "cube", zarr.ArrayMeta{Shape: []int64{4, 100, 100}, ChunkShape: []int64{1, 100, 100}, DataType: "float32", FillValue: 0}, nil)
	writeArray(t, st, "rows", zarr.ArrayMeta{Shape: []int64{2000, 10}, ChunkShape: []int64{1, 10}, DataType: "uint8", FillValue: 0}, nil)
	writeArray(t, st, "line", zarr.ArrayMeta{Shape: []int64{1000}, ChunkShape: []int64{100}, DataType: "int16", FillValue: 0}, nil)
	for _, c := range []struct {
		path   string
		budget int64
		want   bool
	}{
		{"cube", 40000, true}, {"cube", 39999, false},
		{"rows", 5120, true}, {"rows", 5119, false}, // 512 rows of one chunk of 10 bytes
		{"line", 2000, true}, {"line", 1999, false},
	} {
		if got := previewOf(t, st, c.path, Config{Previews: true, PreviewBudget: c.budget}) != nil; got != c.want {
			t.Errorf("%s with budget %d: preview %v, want %v", c.path, c.budget, got, c.want)
		}
	}
	if previewOf(t, st, "cube", Config{}) != nil {
		t.Error("a preview with previews off")
	}
}

// blockingStore holds every read of a chunk until release is closed.
type blockingStore struct {
	hookedStore
	started chan struct{} // receives once per chunk read begun
	release chan struct{}
}

// newBlockingStore returns a blockingStore over st that takes up to n
// chunk reads begun before one is received from started.
func newBlockingStore(st store.Store, n int) *blockingStore {
	s := &blockingStore{started: make(chan struct{}, n), release: make(chan struct{})}
	s.hookedStore = hookedStore{st, s.wait}
	return s
}

func (s *blockingStore) wait(key string) {
	if strings.Contains(key, "/c/") {
		s.started <- struct{}{}
		<-s.release
	}
}

// TestPreviewStatDuringRender: stat (Size) answers while the preview is
// being rendered, without waiting for the chunks.
func TestPreviewStatDuringRender(t *testing.T) {
	mem := newStore(t)
	writeArray(t, mem, "a", zarr.ArrayMeta{Shape: []int64{4, 4}, ChunkShape: []int64{4, 4}, DataType: "int16", FillValue: 0}, make([]byte, 32))
	st := newBlockingStore(mem, 16)
	f := previewOf(t, st, "a", on)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := f.ReadAt(ctx, make([]byte, 8), 0)
		done <- err
	}()
	<-st.started // the render is reading its chunk
	if size, err := f.Size(ctx); err != nil || size != pngSize(4, 4, 256, true) {
		t.Errorf("Size during the render: %d, %v", size, err)
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestPreviewRendersOnePerCore: of many previews read at once, one per
// core renders; the others wait for a render to end before reading
// chunks.
func TestPreviewRendersOnePerCore(t *testing.T) {
	mem := newStore(t)
	cores := runtime.NumCPU()
	n := cores + 3
	for i := range n {
		writeArray(t, mem, fmt.Sprintf("a%d", i), zarr.ArrayMeta{Shape: []int64{4, 4}, ChunkShape: []int64{4, 4}, DataType: "int16", FillValue: 0}, make([]byte, 32))
	}
	st := newBlockingStore(mem, n)
	ctx := context.Background()
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := New(h, on)
	done := make(chan error, n)
	for i := range n {
		node, err := h.Node(ctx, fmt.Sprintf("a%d", i))
		if err != nil {
			t.Fatal(err)
		}
		f := Find(v.Files(node, nil), "preview.png")
		go func() {
			_, err := f.ReadAt(ctx, make([]byte, 8), 0)
			done <- err
		}()
	}
	for range cores {
		<-st.started
	}
	select {
	case <-st.started:
		t.Errorf("more than %d renders read chunks at once", cores)
	case <-time.After(200 * time.Millisecond):
	}
	close(st.release)
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
