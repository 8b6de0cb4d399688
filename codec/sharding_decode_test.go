package codec

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/zarrfs/zarrfs/internal/cores"
)

// TestShardParallel checks the bound and the cancellation of the inner
// chunk decoder pool: never more than cores.Workers() calls at once, every
// index called once when none fails, and, after a failure, the first error
// returned and the remaining indices not started.
func TestShardParallel(t *testing.T) {
	const n = 1000
	var running, peak, calls atomic.Int64
	seen := make([]atomic.Bool, n)
	err := shardParallel(n, func(i int) error {
		calls.Add(1)
		if seen[i].Swap(true) {
			t.Errorf("index %d called twice", i)
		}
		now := running.Add(1)
		for {
			p := peak.Load()
			if now <= p || peak.CompareAndSwap(p, now) {
				break
			}
		}
		running.Add(-1)
		return nil
	})
	if err != nil || calls.Load() != n {
		t.Fatalf("shardParallel: %d calls, %v; want %d calls, nil", calls.Load(), err, n)
	}
	if p := peak.Load(); p > int64(cores.Workers()) {
		t.Errorf("%d calls at once, want at most %d", p, cores.Workers())
	}

	boom := errors.New("boom")
	calls.Store(0)
	failed := make(chan struct{}) // the others wait for f(0), so it fails first
	err = shardParallel(n, func(i int) error {
		calls.Add(1)
		if i == 0 {
			close(failed)
			return boom
		}
		<-failed
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if c := calls.Load(); c >= n {
		t.Errorf("%d calls after the first failed, want the rest not started", c)
	}
}
