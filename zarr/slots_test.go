package zarr

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// decodeSlots grants its slots at once while they last, then to the
// waiting loads lowest chunk first; a load whose context ends stops
// waiting and takes no slot. It runs in a synctest bubble: synctest.Wait,
// not polling, sees a load waiting, and the last timeout passes at once.
func TestDecodeSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newDecodeSlots(2)
		for _, lin := range []int64{40, 41} {
			if err := s.acquire(ctx, lin); err != nil {
				t.Fatal(err)
			}
		}
		waiting := func() int {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.waiting)
		}
		granted := make(chan int64, 8)
		wait := func(ctx context.Context, lin int64) {
			n := waiting()
			go func() {
				if err := s.acquire(ctx, lin); err == nil {
					granted <- lin
				}
			}()
			synctest.Wait()
			if waiting() == n {
				t.Fatalf("chunk %d never waited", lin)
			}
		}
		gone, cancel := context.WithCancel(ctx)
		for _, lin := range []int64{7, 3} {
			wait(ctx, lin)
		}
		wait(gone, 1)
		wait(ctx, 5)
		cancel()
		synctest.Wait()
		if waiting() != 3 {
			t.Fatal("the cancelled load still waits")
		}
		var got []int64
		for range 3 {
			s.release()
			got = append(got, <-granted)
		}
		if want := []int64{3, 5, 7}; !slices.Equal(got, want) {
			t.Errorf("granted %v; want %v", got, want)
		}
		// The two slots given back, two are free, and no third.
		s.release()
		s.release()
		for _, lin := range []int64{9, 10} {
			c, stop := context.WithTimeout(ctx, time.Second)
			if err := s.acquire(c, lin); err != nil {
				t.Errorf("chunk %d: %v, want a free slot", lin, err)
			}
			stop()
		}
		c, stop := context.WithTimeout(ctx, 20*time.Millisecond)
		defer stop()
		if err := s.acquire(c, 11); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("no slot free: %v, want DeadlineExceeded", err)
		}
	})
}
