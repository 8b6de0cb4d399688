package zarr

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestStoreTimes: a store counts as near once nearLoads of its last
// recentLoads chunk loads took less than nearTime, and not before it has
// answered that many.
func TestStoreTimes(t *testing.T) {
	var s storeTimes
	quick, slow := 100*time.Microsecond, 50*time.Millisecond
	for i := range recentLoads {
		if s.near() {
			t.Fatalf("near after %d loads", i)
		}
		s.note(quick)
	}
	steps := []struct {
		d    time.Duration
		n    int
		near bool
	}{
		{slow, recentLoads - nearLoads, true}, // a few spikes
		{slow, 1, false},                      // one too many
		{quick, nearLoads - 1, false},         // the slow ones still among the last
		{quick, 1, true},
	}
	for i, st := range steps {
		for range st.n {
			s.note(st.d)
		}
		if got := s.near(); got != st.near {
			t.Errorf("step %d (%d loads of %v): near %v, want %v", i, st.n, st.d, got, st.near)
		}
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
	meta := ArrayMeta{Format: FormatV3, Shape: []int64{2 * recentLoads * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}
	for _, c := range []struct {
		name  string
		delay time.Duration
		far   bool
	}{{"near", 0, false}, {"far", nearTime + time.Millisecond, true}} {
		// In a bubble, time passes only in slowChunks' sleeps: the loads
		// of the near store take no time however busy the machine.
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
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
		})
	}
}
