package zarr

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/fault"
	"github.com/zarrfs/zarrfs/store/memory"
)

// The timeout and cancellation tests run in synctest bubbles: store
// delays, timeouts and timeoutMemory pass on the bubble's clock at once, and
// synctest.Wait replaces polling for a load to start.

// faultArray writes a 64×64 float64 array of 32×32 chunks to a memory
// store and opens it through a fault injector and, when timeout > 0, the
// deadline decorator.
func faultArray(t *testing.T, timeout time.Duration) (*fault.Store, *Array) {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	a, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{64, 64}, ChunkShape: []int64{32, 32}, DataType: "float64", FillValue: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, a.Size())
	for i := range p {
		p[i] = byte(i * 7)
	}
	if _, err := a.WriteAt(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	f, st := fault.New(mem)
	h, err := Open(ctx, deadline.New(st, timeout), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	return f, n.Array
}

// TestHungStoreReadFails: a store request that times out fails the read
// (it is not retried forever as if another reader had been cancelled).
func TestHungStoreReadFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, a := faultArray(t, 100*time.Millisecond)
		f.Set(fault.Rule{Kind: fault.Hang, Prefix: "a/c/", IgnoreContext: true})
		defer f.Clear()
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := a.ReadAt(context.Background(), make([]byte, 64), 0)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("read from a hung store: %v, want DeadlineExceeded", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("read took %v with a 100ms store timeout", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a read from a hung store has not returned after 5 s (timeout 100ms)")
		}
	})
}

// TestCancelledReaderDoesNotFailOthers: of two readers waiting for the
// same slow chunk, the one cancelled returns at once with Canceled and the
// other still gets the bytes.
func TestCancelledReaderDoesNotFailOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, a := faultArray(t, 0)
		f.Set(fault.Rule{Kind: fault.Slow, Prefix: "a/c/0/0", Delay: 300 * time.Millisecond})
		defer f.Clear()
		ctx1, cancel1 := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var err1, err2 error
		got := make([]byte, 64)
		wg.Add(2)
		go func() { defer wg.Done(); _, err1 = a.ReadAt(ctx1, make([]byte, 64), 0) }()
		synctest.Wait() // every goroutine blocked: the load is under way
		if f.Active() == 0 {
			t.Fatal("no store request under way")
		}
		go func() { defer wg.Done(); _, err2 = a.ReadAt(context.Background(), got, 0) }()
		time.Sleep(20 * time.Millisecond)
		cancel1()
		wg.Wait()
		if !errors.Is(err1, context.Canceled) {
			t.Errorf("the cancelled reader: %v, want Canceled", err1)
		}
		if err2 != nil {
			t.Errorf("the other reader of the same chunk: %v", err2)
		}
		ref := make([]byte, 64)
		for i := range ref {
			ref[i] = byte(i * 7)
		}
		if string(got) != string(ref) {
			t.Errorf("the other reader got % x, want % x", got[:8], ref[:8])
		}
	})
}

// TestCancelledLoadStops: when every reader of a chunk has gone, its store
// request is cancelled, not left running.
func TestCancelledLoadStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, a := faultArray(t, time.Hour)
		f.Set(fault.Rule{Kind: fault.Hang, Prefix: "a/c/"})
		defer f.Clear()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := a.ReadAt(ctx, make([]byte, 64), 0); done <- err }()
		synctest.Wait() // every goroutine blocked: the load is under way
		if f.Active() == 0 {
			t.Fatal("no store request under way")
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled read: %v", err)
			}
		case <-time.After(time.Second):
			t.Fatal("a cancelled read has not returned after 1 s")
		}
		if !f.WaitIdle(time.Second) {
			t.Errorf("%d store requests still running 1 s after their only reader was cancelled", f.Active())
		}
		// The chunk reads fine afterwards.
		f.Clear()
		if _, err := a.ReadAt(context.Background(), make([]byte, 64), 0); err != nil {
			t.Errorf("read after the cancelled one: %v", err)
		}
	})
}

// TestTimeoutRemembered: right after a chunk's load timed out, reads of it
// fail at once (the kernel retries a failed read-ahead immediately); a
// second later the store is asked again.
func TestTimeoutRemembered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, a := faultArray(t, 100*time.Millisecond)
		f.Set(fault.Rule{Kind: fault.Hang, Prefix: "a/c/"})
		defer f.Clear()
		ctx := context.Background()
		if _, err := a.ReadAt(ctx, make([]byte, 64), 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("first read: %v, want DeadlineExceeded", err)
		}
		// Failing at once shows as no store request: one would hang until
		// the timeout.
		calls := f.Calls()
		if _, err := a.ReadAt(ctx, make([]byte, 64), 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read right after the timeout: %v, want DeadlineExceeded", err)
		}
		if f.Calls() != calls {
			t.Errorf("read right after the timeout made %d store requests; want none", f.Calls()-calls)
		}
		f.Clear()
		time.Sleep(timeoutMemory + 50*time.Millisecond)
		if _, err := a.ReadAt(ctx, make([]byte, 64), 0); err != nil {
			t.Errorf("read once the store answers again: %v", err)
		}
	})
}

// arrayAStore returns a memory store holding a v3 group with one small
// array, "a", whose metadata the lookup tests load.
func arrayAStore(t *testing.T) *memory.Store {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{4}, ChunkShape: []int64{2}, DataType: "int8", FillValue: 0}); err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestCancelledLookupDoesNotFailOthers: of two callers loading the same
// node's metadata, the one cancelled returns at once and the other still
// gets the node.
func TestCancelledLookupDoesNotFailOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f, st := fault.New(arrayAStore(t))
		h, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The load takes a second: a cancelled caller that waited for it
		// would return about then, one that did not returns at once (well
		// within half of it, even on a loaded machine).
		const delay = time.Second
		f.Set(fault.Rule{Kind: fault.Slow, Prefix: "a/", Delay: delay})
		defer f.Clear()
		ctx1, cancel1 := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var err1, err2 error
		var n2 *Node
		var done1 time.Time
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err1 = h.Node(ctx1, "a")
			done1 = time.Now()
		}()
		synctest.Wait() // every goroutine blocked: the load is under way
		if f.Active() == 0 {
			t.Fatal("no store request under way")
		}
		go func() { defer wg.Done(); n2, err2 = h.Node(ctx, "a") }()
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		cancel1()
		wg.Wait()
		if !errors.Is(err1, context.Canceled) {
			t.Errorf("the cancelled caller: %v, want Canceled", err1)
		}
		if d := done1.Sub(start); d > delay/2 {
			t.Errorf("the cancelled caller returned %v after its cancellation", d)
		}
		if err2 != nil || n2 == nil || n2.Array == nil {
			t.Errorf("the other caller: %v, %v; want the array", n2, err2)
		}
	})
}

// TestConcurrentLookupsOneLoad: callers asking for a node whose metadata
// is still being read wait for that load; the node's documents are read
// once, and every caller gets the same node.
func TestConcurrentLookupsOneLoad(t *testing.T) {
	ctx := context.Background()
	f, faulty := fault.New(arrayAStore(t))
	open := func() (*Hierarchy, *countingStore) {
		st := &countingStore{Store: faulty}
		h, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st.gets.Store(0)
		return h, st
	}
	h, st := open()
	if _, err := h.Node(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	one := st.gets.Load() // the reads of one load

	h, st = open()
	f.Set(fault.Rule{Kind: fault.Slow, Prefix: "a/", Delay: 100 * time.Millisecond})
	defer f.Clear()
	const callers = 16
	nodes := make([]*Node, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { nodes[i], errs[i] = h.Node(ctx, "a") })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || nodes[i] == nil || nodes[i] != nodes[0] {
			t.Fatalf("caller %d: %p, %v; want the node of caller 0 (%p)", i, nodes[i], errs[i], nodes[0])
		}
	}
	if got := st.gets.Load(); got != one {
		t.Errorf("%d callers at once made %d store reads; one load makes %d", callers, got, one)
	}
}
