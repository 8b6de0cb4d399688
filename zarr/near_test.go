package zarr

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
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
				if !cache.far() || cache.aheadWorkers(cache.far()) != 16 {
					t.Fatalf("before any load: far %v, %d workers; want far, 16", cache.far(), cache.aheadWorkers(cache.far()))
				}
				got := make([]byte, len(want))
				if _, err := n.Array.ReadAt(context.Background(), got, 0); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("read: %v (or wrong bytes)", err)
				}
				wantWorkers := 16
				if !c.far {
					wantWorkers = min(16, runtime.GOMAXPROCS(0))
				}
				if cache.far() != c.far || cache.aheadWorkers(cache.far()) != wantWorkers || n.Array.fetchWorkers() != wantWorkers {
					t.Errorf("after a read: far %v, %d workers (%d fetching); want %v, %d", cache.far(), cache.aheadWorkers(cache.far()), n.Array.fetchWorkers(), c.far, wantWorkers)
				}
			})
		})
	}
}

// heldChunks is a store that holds close by (store.Holder) the chunks
// held says, each chunk read taking delay, and records the most chunk
// reads in flight at once.
type heldChunks struct {
	store.Store
	delay    time.Duration
	held     bool
	in, most atomic.Int64
}

func (s *heldChunks) Holds(key string) bool { return s.held }

func (s *heldChunks) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, "a/c/") {
		n := s.in.Add(1)
		defer s.in.Add(-1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		time.Sleep(s.delay)
	}
	return s.Store.Get(ctx, key)
}

// TestHeldReadsAheadAsLocal: before a remote store's loads have told how
// it answers, a reader of chunks it holds close by (a disk cache's) is
// read ahead as a local store's, a chunk a core at once, where one of
// chunks it does not hold starts with Options.Concurrency loads.
func TestHeldReadsAheadAsLocal(t *testing.T) {
	const chunk = 16 << 10
	meta := ArrayMeta{Format: FormatV3, Shape: []int64{2 * recentLoads * chunk}, ChunkShape: []int64{chunk}, DataType: "uint8", FillValue: 0}
	for _, held := range []bool{true, false} {
		t.Run(fmt.Sprint("held=", held), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := memory.New()
				want := writeReadPathArray(t, mem, meta, 3)
				st := &heldChunks{Store: mem, delay: time.Millisecond, held: held}
				n := openArrayNode(t, st, Options{Concurrency: 16, Remote: true})
				if got := n.Array.farFrom(0); got == held {
					t.Fatalf("farFrom(0) before any load: %v; want %v", got, !held)
				}
				got := make([]byte, chunk/2)
				for off := int64(0); off < 8*chunk; off += int64(len(got)) {
					if _, err := n.Array.ReadAt(context.Background(), got, off); err != nil || !bytes.Equal(got, want[off:off+int64(len(got))]) {
						t.Fatalf("read at %d: %v (or wrong bytes)", off, err)
					}
				}
				local := int64(min(16, runtime.GOMAXPROCS(0))) + 1 // the read's own and those ahead
				if m := st.most.Load(); held && m > local || !held && m <= local {
					t.Errorf("most chunk reads at once: %d; want %s %d", m, map[bool]string{true: "at most", false: "over"}[held], local)
				}
				time.Sleep(time.Second) // the loads still ahead end
				synctest.Wait()
			})
		})
	}
}
