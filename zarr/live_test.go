package zarr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
)

// revalidations counts how a live hierarchy reads chunks: whole reads with
// their validators (GetRangeInfo), and conditional ones (GetIfChanged) by
// outcome.
type revalidations struct {
	*dir.Store
	mu                        sync.Mutex
	reads, unchanged, changed map[string]int
}

func (r *revalidations) GetRangeInfo(ctx context.Context, key string, rng store.ByteRange) ([]byte, store.Info, error) {
	r.mu.Lock()
	r.reads[key]++
	r.mu.Unlock()
	return r.Store.GetRangeInfo(ctx, key, rng)
}

func (r *revalidations) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	b, info, err := r.Store.GetIfChanged(ctx, key, old)
	r.mu.Lock()
	if errors.Is(err, store.ErrNotModified) {
		r.unchanged[key]++
	} else {
		r.changed[key]++
	}
	r.mu.Unlock()
	return b, info, err
}

// counts returns and resets the counts.
func (r *revalidations) counts() (reads, unchanged, changed map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reads, unchanged, changed = r.reads, r.unchanged, r.changed
	r.reads, r.unchanged, r.changed = map[string]int{}, map[string]int{}, map[string]int{}
	return
}

// TestLiveTakesOverUnchangedChunks: a hierarchy opened again with Previous
// reads again only the chunks the store says changed, and takes over the
// decoded others; an array whose metadata changed is read afresh.
func TestLiveTakesOverUnchangedChunks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	ds, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	gzip := &CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}
	meta := ArrayMeta{Format: FormatV2, Shape: []int64{4, 8}, ChunkShape: []int64{1, 8}, DataType: "|u1", FillValue: 0, Compressor: gzip}
	want := writeReadPathArray(t, ds, meta, 3) // chunks 0-2 stored, chunk 3 missing
	st := &revalidations{Store: ds}
	st.counts()
	readAll := func(h *Hierarchy) []byte {
		t.Helper()
		n, err := h.Node(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n.Array.Size())
		if _, err := n.Array.ReadAt(ctx, got, 0); err != nil {
			t.Fatal(err)
		}
		return got
	}
	h1, err := Open(ctx, st, Options{Live: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(h1); !bytes.Equal(got, want) {
		t.Fatal("first read differs")
	}
	if reads, _, _ := st.counts(); reads["a/0.0"] != 1 || reads["a/2.0"] != 1 {
		t.Fatalf("first read: %v; want each stored chunk read once with its validator", reads)
	}

	// Chunk 1 changes (a later modification time, however coarse the
	// file system's clock).
	w, err := Open(ctx, ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wn, err := w.Node(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	row := bytes.Repeat([]byte{7}, 8)
	if _, err := wn.Array.WriteAt(ctx, row, 8); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(root, "a", "1.0"), later, later); err != nil {
		t.Fatal(err)
	}
	copy(want[8:16], row)

	h2, err := Open(ctx, st, Options{Live: true, Previous: h1})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(h2); !bytes.Equal(got, want) {
		t.Fatalf("read after the change: %v; want %v", got, want)
	}
	// (Documents are read again, and the missing chunk 3 is looked for
	// again: only stored chunks have validators.)
	reads, unchanged, changed := st.counts()
	if reads["a/0.0"]+reads["a/1.0"]+reads["a/2.0"] != 0 || unchanged["a/0.0"] != 1 || unchanged["a/2.0"] != 1 || len(unchanged) != 2 || changed["a/1.0"] != 1 || len(changed) != 1 {
		t.Errorf("read after the change: read %v, unchanged %v, changed %v; want 0.0 and 2.0 unchanged, 1.0 changed", reads, unchanged, changed)
	}

	// A generation that loads the array but reads none of it passes its
	// chunks on.
	skipped, err := Open(ctx, st, Options{Live: true, Previous: h2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := skipped.Node(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	h2, err = Open(ctx, st, Options{Live: true, Previous: skipped})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(h2); !bytes.Equal(got, want) {
		t.Fatal("read two generations later differs")
	}
	if reads, unchanged, _ := st.counts(); reads["a/0.0"]+reads["a/1.0"]+reads["a/2.0"] != 0 || len(unchanged) != 3 {
		t.Errorf("read two generations later: read %v, unchanged %v; want the 3 stored chunks taken over", reads, unchanged)
	}

	// The array grows: its chunks are read afresh.
	grown := meta
	grown.Shape = []int64{5, 8}
	if _, err := CreateArray(ctx, ds, "a", grown); err != nil {
		t.Fatal(err)
	}
	h3, err := Open(ctx, st, Options{Live: true, Previous: h2})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(h3); !bytes.Equal(got[:len(want)], want) {
		t.Fatal("read after the array grew differs")
	}
	if reads, unchanged, _ := st.counts(); reads["a/0.0"] != 1 || len(unchanged) != 0 {
		t.Errorf("read after the array grew: read %v, unchanged %v; want every chunk read afresh", reads, unchanged)
	}
}

// TestLiveLineageConcurrent loads and reads one array in three generations
// of a live hierarchy at once (the race detector watches the lineage they
// share); each reads the array's values.
func TestLiveLineageConcurrent(t *testing.T) {
	ctx := context.Background()
	ds, err := dir.Open(t.TempDir(), dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	gzip := &CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}
	want := writeReadPathArray(t, ds, ArrayMeta{Format: FormatV2, Shape: []int64{8, 8}, ChunkShape: []int64{1, 8}, DataType: "|u1", FillValue: 0, Compressor: gzip}, 5)
	var hs []*Hierarchy
	var prev *Hierarchy
	for range 3 {
		h, err := Open(ctx, ds, Options{Live: true, Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		hs, prev = append(hs, h), h
	}
	var wg sync.WaitGroup
	for range 4 {
		for _, h := range hs {
			wg.Go(func() {
				n, err := h.Node(ctx, "a")
				if err != nil {
					t.Error(err)
					return
				}
				got := make([]byte, n.Array.Size())
				if _, err := n.Array.ReadAt(ctx, got, 0); err != nil || !bytes.Equal(got, want) {
					t.Errorf("read: %v, %v", err, bytes.Equal(got, want))
				}
			})
		}
	}
	wg.Wait()
}

// failingChunks is a directory store whose chunk reads fail while down
// (the store died after the hierarchy was opened again); its documents
// still read.
type failingChunks struct {
	*dir.Store
	down   atomic.Bool
	failed atomic.Int64 // requests failed
}

func (f *failingChunks) failing(key string) bool {
	if f.down.Load() && strings.HasPrefix(key, "a/") && !strings.HasPrefix(path.Base(key), ".z") {
		f.failed.Add(1)
		return true
	}
	return false
}

func (f *failingChunks) GetRangeInfo(ctx context.Context, key string, rng store.ByteRange) ([]byte, store.Info, error) {
	if f.failing(key) {
		return nil, store.Info{}, fmt.Errorf("get %s: connection refused", key)
	}
	return f.Store.GetRangeInfo(ctx, key, rng)
}

func (f *failingChunks) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	if f.failing(key) {
		return nil, store.Info{}, fmt.Errorf("get %s: connection refused", key)
	}
	return f.Store.GetIfChanged(ctx, key, old)
}

// TestLiveStaleIfError: a live hierarchy opened again whose store then
// fails to answer for chunks serves the chunks the previous generation
// had decoded (stored or missing) as they were, and logs it once per
// outage; a chunk never read fails.
func TestLiveStaleIfError(t *testing.T) {
	ctx := context.Background()
	ds, err := dir.Open(t.TempDir(), dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	meta := ArrayMeta{Format: FormatV2, Shape: []int64{4, 8}, ChunkShape: []int64{1, 8}, DataType: "|u1", FillValue: 0}
	want := writeReadPathArray(t, ds, meta, 3) // chunks 0-2 stored, chunk 3 missing
	st := &failingChunks{Store: ds}
	var logged peertest.Buffer
	logf := func(format string, args ...any) { fmt.Fprintf(&logged, format+"\n", args...) }
	open := func(prev *Hierarchy) (*Hierarchy, *Array) {
		t.Helper()
		h, err := Open(ctx, st, Options{Live: true, Previous: prev, Logf: logf})
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		return h, n.Array
	}
	read := func(a *Array, off, n int64) ([]byte, error) {
		got := make([]byte, n)
		_, err := a.ReadAt(ctx, got, off)
		return got, err
	}
	h1, a1 := open(nil)
	if got, err := read(a1, 0, 32); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("first read: %v", err)
	}
	h2, a2 := open(h1)
	st.down.Store(true)
	start := time.Now()
	if got, err := read(a2, 0, 32); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read with the store down: %v, %v; want the cached chunks", got, err)
	}
	t.Logf("served stale in %v; logged: %s", time.Since(start), logged.String())
	if n := strings.Count(logged.String(), "serving cached chunks"); n != 1 || !strings.Contains(logged.String(), "connection refused") {
		t.Errorf("logged %q; want one line with the cause", logged.String())
	}
	// Once one revalidation has failed, the others wait for no store:
	// only those already asking fail on their own (one per core, or a
	// few more on a loaded machine, where the chunks' loads start before
	// the first failure returns), never one per chunk.
	if n := st.failed.Load(); n >= 4 {
		t.Errorf("%d requests failed for 4 chunks; want those under way at the first failure only", n)
	}
	// Back, then down again: a new outage, logged again. (Within
	// staleRetry of the failure cached chunks are served without asking.)
	st.down.Store(false)
	h2.cache.staleUntil.Store(0)
	h3, a3 := open(h2)
	if _, err := read(a3, 0, 32); err != nil {
		t.Fatal(err)
	}
	st.down.Store(true)
	_, a4 := open(h3)
	if got, err := read(a4, 0, 32); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read in the second outage: %v", err)
	}
	if n := strings.Count(logged.String(), "serving cached chunks"); n != 2 {
		t.Errorf("logged %d times over two outages; want 2:\n%s", n, logged.String())
	}
}
