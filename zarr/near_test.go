package zarr

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestStoreTimes: the average follows the loads, 1/8 to each, and a store
// counts as near only once it has answered, on average within nearTime.
func TestStoreTimes(t *testing.T) {
	var s storeTimes
	if s.near() {
		t.Fatal("near before any load")
	}
	steps := []struct {
		d    time.Duration
		near bool
	}{
		{100 * time.Microsecond, true},
		{50 * time.Millisecond, false}, // 1/8 of a round trip is over nearTime
		{100 * time.Microsecond, false},
	}
	for i, st := range steps {
		s.note(st.d)
		if got := s.near(); got != st.near {
			t.Errorf("after load %d (%v): near %v, want %v", i, st.d, got, st.near)
		}
	}
	for range 40 {
		s.note(100 * time.Microsecond)
	}
	if !s.near() {
		t.Error("not near again after 40 quick loads")
	}
}

// slowChunks delays every chunk read by delay.
type slowChunks struct {
	store.Store
	delay time.Duration
}

func (s slowChunks) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, "a/c/") {
		time.Sleep(s.delay)
	}
	return s.Store.Get(ctx, key)
}

// TestNearRemoteReadsAheadAsLocal: a remote hierarchy whose store answers
// chunk loads as a local disk does (a disk cache's hits) loads one chunk
// a core at once and reads ahead without the remote window; one whose
// store takes a round trip keeps Options.Concurrency and the window.
func TestNearRemoteReadsAheadAsLocal(t *testing.T) {
	const chunk = 16 << 10
	meta := ArrayMeta{Format: FormatV3, Shape: []int64{8 * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}
	for _, c := range []struct {
		name  string
		delay time.Duration
		far   bool
	}{{"near", 0, false}, {"far", 3 * time.Millisecond, true}} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.New()
			want := writeReadPathArray(t, mem, meta, 3)
			n := openArrayNode(t, slowChunks{mem, c.delay}, Options{Concurrency: 16, Remote: true})
			cache := n.Array.cache
			if !cache.far() || cache.aheadWorkers() != 16 {
				t.Fatalf("before any load: far %v, %d workers; want far, 16", cache.far(), cache.aheadWorkers())
			}
			got := make([]byte, len(want))
			if _, err := n.Array.ReadAt(context.Background(), got, 0); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read: %v (or wrong bytes)", err)
			}
			wantWorkers := 16
			if !c.far {
				wantWorkers = min(16, runtime.GOMAXPROCS(0))
			}
			if cache.far() != c.far || cache.aheadWorkers() != wantWorkers || n.Array.fetchWorkers() != wantWorkers {
				t.Errorf("after a read: far %v, %d workers (%d fetching); want %v, %d", cache.far(), cache.aheadWorkers(), n.Array.fetchWorkers(), c.far, wantWorkers)
			}
		})
	}
}
