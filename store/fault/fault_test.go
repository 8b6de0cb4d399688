package fault

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// TestConformance: with no rules the decorator is the store it wraps.
func TestConformance(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		m, err := memory.FromMap(data)
		if err != nil {
			t.Fatal(err)
		}
		_, s := New(m)
		return s
	})
}

func fixture(t *testing.T) (*Store, store.Store) {
	t.Helper()
	m, err := memory.FromMap(map[string][]byte{"a/0": []byte("zero"), "a/1": []byte("one"), "b/0": []byte("b0")})
	if err != nil {
		t.Fatal(err)
	}
	return New(m)
}

func TestError(t *testing.T) {
	f, s := fixture(t)
	mine := errors.New("mine")
	f.Set(Rule{Kind: Error, Prefix: "a/"}, Rule{Kind: Error, Prefix: "b/", Err: mine})
	ctx := context.Background()
	if _, err := s.Get(ctx, "a/0"); !errors.Is(err, ErrInjected) {
		t.Errorf("Get a/0: %v, want ErrInjected", err)
	}
	if _, err := s.GetRange(ctx, "a/1", store.SuffixRange(2)); !errors.Is(err, ErrInjected) {
		t.Errorf("GetRange a/1: %v, want ErrInjected", err)
	}
	if _, err := s.Get(ctx, "b/0"); !errors.Is(err, mine) {
		t.Errorf("Get b/0: %v, want the rule's error", err)
	}
	if _, _, err := s.(store.Lister).ListDir(ctx, "a"); !errors.Is(err, ErrInjected) {
		t.Errorf("ListDir a: %v, want ErrInjected", err)
	}
	f.Clear()
	if v, err := s.Get(ctx, "a/0"); err != nil || string(v) != "zero" {
		t.Errorf("Get a/0 after Clear: %q, %v", v, err)
	}
	if f.Calls() != 5 || f.Active() != 0 {
		t.Errorf("Calls %d Active %d, want 5 and 0", f.Calls(), f.Active())
	}
}

func TestOps(t *testing.T) {
	f, s := fixture(t)
	f.Set(Rule{Kind: Error, Ops: []string{"stat"}})
	ctx := context.Background()
	if _, err := s.Get(ctx, "a/0"); err != nil {
		t.Errorf("Get under a stat-only rule: %v", err)
	}
	if _, err := s.(store.Stater).Stat(ctx, "a/0"); !errors.Is(err, ErrInjected) {
		t.Errorf("Stat: %v, want ErrInjected", err)
	}
}

// The hang and slow tests run in synctest bubbles: the waits pass on the
// bubble's clock at once, and synctest.Wait replaces polling for the
// request to arrive.

func TestHangUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, s := fixture(t)
		f.Set(Rule{Kind: Hang})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := s.Get(ctx, "a/0"); done <- err }()
		synctest.Wait()
		if f.Active() == 0 {
			t.Fatal("the hung Get is not active")
		}
		select {
		case err := <-done:
			t.Fatalf("a hung Get returned: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("hung Get after cancel: %v, want Canceled", err)
		}
		if !f.WaitIdle(time.Second) || f.Cancelled() != 1 {
			t.Errorf("Active %d Cancelled %d after cancel", f.Active(), f.Cancelled())
		}
	})
}

func TestHangIgnoringContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, s := fixture(t)
		f.Set(Rule{Kind: Hang, IgnoreContext: true})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := s.Get(ctx, "a/0"); done <- err }()
		time.Sleep(10 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			t.Fatalf("Get ignoring its context returned: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		f.Clear() // releases it: the store underneath then sees the cancelled context
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("released Get: %v, want the memory store's Canceled", err)
		}
	})
}

func TestSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, s := fixture(t)
		f.Set(Rule{Kind: Slow, Delay: 60 * time.Millisecond})
		start := time.Now()
		v, err := s.Get(context.Background(), "a/1")
		if err != nil || string(v) != "one" {
			t.Fatalf("slow Get: %q, %v", v, err)
		}
		if d := time.Since(start); d < 60*time.Millisecond {
			t.Errorf("slow Get took %v, want ≥ 60ms", d)
		}
	})
}

func TestFlap(t *testing.T) {
	f, s := fixture(t)
	f.Set(Rule{Kind: Flap, Up: 2, Down: 1})
	var got []bool
	for range 6 {
		_, err := s.Get(context.Background(), "a/0")
		got = append(got, err == nil)
	}
	want := []bool{true, true, false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("flap pattern %v, want %v", got, want)
		}
	}
}

// TestKeepsCapabilities: exactly the optional interfaces of the wrapped
// store (store.Decorate), and Close; a Set goes through the rules.
func TestKeepsCapabilities(t *testing.T) {
	f, s := New(memory.New())
	for name, ok := range map[string]bool{
		"Lister": is[store.Lister](s), "Stater": is[store.Stater](s), "Writer": is[store.Writer](s), "Closer": is[io.Closer](s),
	} {
		if !ok {
			t.Errorf("lost %s", name)
		}
	}
	if is[store.InfoGetter](s) {
		t.Error("invented InfoGetter")
	}
	f.Set(Rule{Kind: Error, Ops: []string{"set"}})
	if err := s.(store.Writer).Set(context.Background(), "a", nil); !errors.Is(err, ErrInjected) {
		t.Errorf("Set under an error rule: %v", err)
	}
	_, plain := New(struct{ store.Store }{memory.New()})
	if is[store.Lister](plain) || is[store.Stater](plain) || is[store.Writer](plain) {
		t.Error("invented an optional interface")
	}
}

// is reports whether s implements T.
func is[T any](s store.Store) bool {
	_, ok := s.(T)
	return ok
}

// TestConcurrentSet: rules change while requests run (run with -race).
func TestConcurrentSet(t *testing.T) {
	f, s := fixture(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				s.Get(ctx, "a/0")
				cancel()
			}
		}()
	}
	for i := range 50 {
		switch i % 4 {
		case 0:
			f.Set(Rule{Kind: Hang})
		case 1:
			f.Set(Rule{Kind: Flap, Up: 1, Down: 1})
		case 2:
			f.Set(Rule{Kind: Slow, Delay: time.Millisecond})
		default:
			f.Clear()
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if !f.WaitIdle(time.Second) {
		t.Errorf("%d requests still active", f.Active())
	}
}

// TestConformanceDir: over the directory store the decorator keeps its
// store.ReaderInto and store.AllocGetter, which the suite checks, and
// every other optional interface of it.
func TestConformanceDir(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		d, err := dir.Open(t.TempDir(), dir.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range data {
			if err := d.Set(context.Background(), k, v); err != nil {
				t.Fatal(err)
			}
		}
		_, s := New(d)
		if got, want := storetest.Capabilities(s), storetest.Capabilities(d); !slices.Equal(got, want) {
			t.Fatalf("decorated dir store implements %v; the store itself %v", got, want)
		}
		return s
	})
}

// TestReadIntoFaults: the reads into the caller's buffer obey the rules
// of "get" as Get does.
func TestReadIntoFaults(t *testing.T) {
	d, err := dir.Open(t.TempDir(), dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.Set(ctx, "a/0", []byte("zero")); err != nil {
		t.Fatal(err)
	}
	f, s := New(d)
	f.Set(Rule{Kind: Error, Ops: []string{"get"}})
	if _, err := s.(store.ReaderInto).ReadInto(ctx, "a/0", make([]byte, 2), 1); !errors.Is(err, ErrInjected) {
		t.Errorf("ReadInto under an Error rule: %v; want ErrInjected", err)
	}
	if _, err := s.(store.AllocGetter).GetAlloc(ctx, "a/0", func(n int) []byte { return make([]byte, n) }); !errors.Is(err, ErrInjected) {
		t.Errorf("GetAlloc under an Error rule: %v; want ErrInjected", err)
	}
	f.Set()
	p := make([]byte, 2)
	if size, err := s.(store.ReaderInto).ReadInto(ctx, "a/0", p, 1); err != nil || size != 4 || string(p) != "er" {
		t.Errorf("ReadInto with no rule = %d, %v, %q; want 4, nil, \"er\"", size, err, p)
	}
}
