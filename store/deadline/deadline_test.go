package deadline

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
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

func TestHungStoreTimesOut(t *testing.T) {
	h := hung{release: make(chan struct{})}
	defer close(h.release)
	s := New(h, 50*time.Millisecond)
	start := time.Now()
	_, err := s.Get(context.Background(), "a")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get on a hung store: %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Get returned after %v", d)
	}
	_, err = s.GetRange(context.Background(), "a", store.SuffixRange(4))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetRange on a hung store: %v; want DeadlineExceeded", err)
	}
}

func TestCallerCancelReleasesAtOnce(t *testing.T) {
	h := hung{release: make(chan struct{})}
	defer close(h.release)
	s := New(h, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := s.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get after cancel: %v; want Canceled", err)
	}
}

// readOnly hides the memory store's writer and stater.
type readOnly struct{ s *memory.Store }

func (r readOnly) Get(ctx context.Context, k string) ([]byte, error) { return r.s.Get(ctx, k) }
func (r readOnly) GetRange(ctx context.Context, k string, br store.ByteRange) ([]byte, error) {
	return r.s.GetRange(ctx, k, br)
}
func (r readOnly) String() string { return "read-only" }

func TestKeepsCapabilities(t *testing.T) {
	mem := memory.New()
	for _, c := range []struct {
		name                   string
		inner                  store.Store
		lister, stater, writer bool
	}{
		{"memory", mem, true, true, true},
		{"get-only", readOnly{mem}, false, false, false},
	} {
		s := New(c.inner, time.Second)
		_, l := s.(store.Lister)
		_, st := s.(store.Stater)
		_, w := s.(store.Writer)
		_, cl := s.(io.Closer)
		_, il := c.inner.(store.Lister)
		_, ist := c.inner.(store.Stater)
		_, iw := c.inner.(store.Writer)
		if l != il || st != ist || w != iw || !cl {
			t.Errorf("%s: lister %v stater %v writer %v closer %v; inner %v %v %v", c.name, l, st, w, cl, il, ist, iw)
		}
	}
	if New(mem, 0) != store.Store(mem) {
		t.Error("New with no timeout should return the store itself")
	}
}
