//go:build linux

package fs

import (
	"context"
	"errors"
	"log"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// A live mount's view is renewed in the background: current answers from
// the old view while a renewal hangs, starts one renewal at a time, keeps
// the old view (and logs once) when the renewal fails, and answers from
// the new one once it succeeds.
func TestSnapshotsRenewInTheBackground(t *testing.T) {
	ctx := context.Background()
	st, err := memory.FromMap(map[string][]byte{"zarr.json": []byte(`{"zarr_format":3,"node_type":"group"}`)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		h   *zarr.Hierarchy
		err error
	}
	answers := make(chan answer)
	var calls atomic.Int32
	prevs := make(chan *zarr.Hierarchy, 3) // the hierarchy each renewal replaces
	var logged peertest.Buffer
	vs := &snapshots{ttl: time.Nanosecond, log: &errorLog{logger: log.New(&logged, "", 0)}, views: view.Config{},
		v: newSnapshot(h, 0, view.Config{}), at: time.Now().Add(-time.Hour),
		reopen: func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error) {
			prevs <- prev
			calls.Add(1)
			a := <-answers // hangs until the test answers
			return a.h, a.err
		}}
	old := vs.v
	for range 10 {
		if v := vs.current(ctx); v != old {
			t.Fatal("current changed the view while the renewal hangs")
		}
	}
	vs.mu.Lock()
	done := vs.renewed
	vs.mu.Unlock()
	answers <- answer{err: errors.New("store down")}
	<-done
	if calls.Load() != 1 {
		t.Errorf("%d renewals started while one hung; want 1", calls.Load())
	}
	if v := vs.current(ctx); v != old {
		t.Error("a failed renewal replaced the view")
	}
	if got := logged.String(); strings.Count(got, "store down") != 1 || !strings.Contains(got, "as it was read before") {
		t.Errorf("log after a failed renewal: %q", got)
	}
	// The TTL (1 ns) has passed again: that current started the next renewal.
	vs.mu.Lock()
	done = vs.renewed
	vs.mu.Unlock()
	h2, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	answers <- answer{h: h2}
	<-done
	if v := vs.current(ctx); v.h != h2 || v.gen != 1 {
		t.Errorf("after a renewal: view of gen %d; want the new hierarchy, gen 1", v.gen)
	}
	// Let the renewal that last current started end.
	vs.mu.Lock()
	done = vs.renewed
	vs.mu.Unlock()
	answers <- answer{h: h2}
	<-done
	for i, want := range []*zarr.Hierarchy{h, h, h2} {
		if got := <-prevs; got != want {
			t.Errorf("renewal %d was not given the hierarchy it replaces", i+1)
		}
	}
}
