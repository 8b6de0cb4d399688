package zarr

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// stallingStore answers chunk keys other than the first chunk only when
// the request is given up, counting those waiting.
type stallingStore struct {
	store.Store
	waiting atomic.Int64
}

func (s *stallingStore) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, "a/c/") && key != "a/c/0" {
		s.waiting.Add(1)
		defer s.waiting.Add(-1)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.Get(ctx, key)
}

// TestSessionEndsReadAhead: the read-ahead a sequential read starts runs
// in the read's session (an open file), and stops when it ends (the file
// released, the reader killed): no load is left waiting on the store.
func TestSessionEndsReadAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		const chunk = 64 << 10
		writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{16 * chunk}, ChunkShape: []int64{chunk},
			DataType: "uint8", FillValue: 0}, 3)
		st := &stallingStore{Store: mem}
		a := openArrayNode(t, st, Options{Concurrency: 4}).Array
		session, end := context.WithCancel(context.Background())
		defer end()
		if _, err := a.ReadAt(WithSession(ctx, session), make([]byte, chunk), 0); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // every read-ahead load is started and waits on the store
		if st.waiting.Load() == 0 {
			t.Fatal("a sequential read started no read-ahead")
		}
		t.Logf("%d chunks loading ahead", st.waiting.Load())
		end()
		synctest.Wait()
		if n := st.waiting.Load(); n != 0 {
			t.Fatalf("%d read-ahead loads still wait on the store after the session ended", n)
		}
	})
}
