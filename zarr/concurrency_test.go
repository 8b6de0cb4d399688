package zarr

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// flightStore delays every read and records the most reads in flight.
type flightStore struct {
	store.Store
	in, peak atomic.Int32
}

func (s *flightStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	return s.Store.GetRange(ctx, key, r)
}

func (s *flightStore) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

// TestConcurrencyOption: Options.Concurrency sets how many chunks one read
// fetches at once (remote stores raise it above the core count). It runs
// in a synctest bubble: flightStore's 20 ms pass on the bubble's clock, once
// every read has started, so the peak is exact and costs no real time.
func TestConcurrencyOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		a, err := CreateArray(ctx, mem, "", ArrayMeta{Format: FormatV3, Shape: []int64{24, 16}, ChunkShape: []int64{1, 16}, DataType: "int32", FillValue: 0})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 24*16*4)
		for i := range buf {
			buf[i] = byte(i)
		}
		if _, err := a.WriteAt(ctx, buf, 0); err != nil {
			t.Fatal(err)
		}
		for _, conc := range []int{1, 12} {
			st := &flightStore{Store: mem}
			h, err := Open(ctx, st, Options{Concurrency: conc})
			if err != nil {
				t.Fatal(err)
			}
			n, err := h.Node(ctx, "")
			if err != nil || n.Array == nil {
				t.Fatalf("root: %v", err)
			}
			st.peak.Store(0)
			got := make([]byte, len(buf))
			if _, err := n.Array.ReadAt(ctx, got, 0); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(buf) {
				t.Fatal("read back differs")
			}
			if p := st.peak.Load(); p != int32(conc) {
				t.Errorf("Concurrency %d: %d chunk reads in flight at most", conc, p)
			}
		}
	})
}
