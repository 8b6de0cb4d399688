package deadline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return New(memory.New(), time.Minute) })
}

// hung is a store whose every request blocks forever, ignoring its context.
type hung struct{ release chan struct{} }

func (h hung) Get(context.Context, string) ([]byte, error) { <-h.release; return nil, nil }
func (h hung) GetRange(context.Context, string, store.ByteRange) ([]byte, error) {
	<-h.release
	return nil, nil
}
func (h hung) String() string { return "hung" }

// TestHungStoreTimesOut runs in a synctest bubble: the 50 ms pass on the
// bubble's clock, at once, and the timeout is exactly the one given.
func TestHungStoreTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := hung{release: make(chan struct{})}
		defer close(h.release)
		s := New(h, 50*time.Millisecond)
		start := time.Now()
		_, err := s.Get(context.Background(), "a")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get on a hung store: %v; want DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("Get returned after %v; want the timeout, 50ms", d)
		}
		_, err = s.GetRange(context.Background(), "a", store.SuffixRange(4))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("GetRange on a hung store: %v; want DeadlineExceeded", err)
		}
	})
}

func TestCallerCancelReleasesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := hung{release: make(chan struct{})}
		defer close(h.release)
		s := New(h, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		start := time.Now()
		if _, err := s.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get after cancel: %v; want Canceled", err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("Get returned %v after the call; want 20ms, when the caller cancelled", d)
		}
	})
}

// readOnly hides the memory store's writer and stater.
type readOnly struct{ s *memory.Store }

func (r readOnly) Get(ctx context.Context, k string) ([]byte, error) { return r.s.Get(ctx, k) }
func (r readOnly) GetRange(ctx context.Context, k string, br store.ByteRange) ([]byte, error) {
	return r.s.GetRange(ctx, k, br)
}
func (r readOnly) String() string { return "read-only" }

// hungInfo is a hung store that describes values as it reads them.
type hungInfo struct{ hung }

func (h hungInfo) GetRangeInfo(context.Context, string, store.ByteRange) ([]byte, store.Info, error) {
	<-h.release
	return nil, store.Info{}, nil
}

func (h hungInfo) GetIfChanged(context.Context, string, store.Info) ([]byte, store.Info, error) {
	<-h.release
	return nil, store.Info{}, nil
}

// TestKeepsCapabilities checks that the decorated store has exactly the
// optional interfaces of the store it wraps (store.Decorate; its own test
// covers every combination), store.InfoGetter included, but for
// store.ReaderInto and store.AllocGetter, which it cannot serve: a call
// it gave up on would write into the caller's buffer after returning.
func TestKeepsCapabilities(t *testing.T) {
	mem := memory.New()
	d, err := dir.Open(t.TempDir(), dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withheld := map[string]bool{"ReaderInto": true, "AllocGetter": true}
	for _, c := range []struct {
		name  string
		inner store.Store
	}{
		{"memory", mem},
		{"dir", d},
		{"get-only", readOnly{mem}},
		{"hung with info", hungInfo{}},
	} {
		s := New(c.inner, time.Second)
		var want []string
		for _, name := range storetest.Capabilities(c.inner) {
			if !withheld[name] {
				want = append(want, name)
			}
		}
		if got := storetest.Capabilities(s); !slices.Equal(got, want) {
			t.Errorf("%s: decorated store implements %v; want %v (the store itself: %v)", c.name, got, want, storetest.Capabilities(c.inner))
		}
		if _, ok := s.(io.Closer); !ok {
			t.Errorf("%s: decorated store is no io.Closer", c.name)
		}
	}
	if got := storetest.Capabilities(d); !slices.Contains(got, "ReaderInto") || !slices.Contains(got, "AllocGetter") {
		t.Errorf("the dir store implements %v; want ReaderInto and AllocGetter among them", got)
	}
	if New(mem, 0) != store.Store(mem) {
		t.Error("New with no timeout should return the store itself")
	}
}

// TestGetRangeInfo reads through the decorator's store.InfoGetter: the
// wrapped store's answer, or the deadline when it hangs.
func TestGetRangeInfo(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "k"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, info, err := New(d, time.Minute).(store.InfoGetter).GetRangeInfo(context.Background(), "k", store.Range(1, 3))
	if err != nil || string(b) != "ell" || info.Size != 5 || info.ModTime.IsZero() {
		t.Errorf("GetRangeInfo = %q, %+v, %v; want \"ell\", size 5 with a time", b, info, err)
	}
	h := hungInfo{hung{release: make(chan struct{})}}
	defer close(h.release)
	_, _, err = New(h, 50*time.Millisecond).(store.InfoGetter).GetRangeInfo(context.Background(), "a", store.Range(0, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetRangeInfo on a hung store: %v; want DeadlineExceeded", err)
	}
	if _, _, err := New(h, time.Minute).(store.InfoGetter).GetRangeInfo(context.Background(), "../a", store.Range(0, 1)); !errors.As(err, new(*store.InvalidKeyError)) {
		t.Errorf("GetRangeInfo of an invalid key: %v; want *store.InvalidKeyError", err)
	}
}
