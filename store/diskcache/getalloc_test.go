package diskcache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

// allocs records the buffers an AllocGetter asked for.
type allocs [][]byte

func (a *allocs) alloc(n int) []byte {
	b := bytes.Repeat([]byte{0xee}, n)
	*a = append(*a, b)
	return b
}

// getAlloc reads key through s's GetAlloc and checks that the value is
// want, read into the one buffer GetAlloc asked for, or with own set
// into a buffer of its own without asking.
func getAlloc(t *testing.T, s store.Store, key string, want []byte, own bool) {
	t.Helper()
	ag, ok := s.(store.AllocGetter)
	if !ok {
		t.Fatalf("the cached far store is no store.AllocGetter")
	}
	var a allocs
	b, err := ag.GetAlloc(context.Background(), key, a.alloc)
	switch {
	case err != nil || !bytes.Equal(b, want):
		t.Fatalf("GetAlloc(%q) = %d bytes, %v; want %d bytes", key, len(b), err, len(want))
	case own:
		if len(a) != 0 {
			t.Fatalf("GetAlloc(%q) asked alloc for %d buffers; want none", key, len(a))
		}
	case len(a) != 1 || len(a[0]) != len(want):
		t.Fatalf("GetAlloc(%q) asked alloc for %d buffers; want one of %d bytes", key, len(a), len(want))
	case &b[0] != &a[0][0]:
		t.Fatalf("GetAlloc(%q) returned a buffer other than alloc's", key)
	}
}

// TestGetAllocHit: over a far store without store.AllocGetter the cache
// has it (store.Extender); a miss returns the buffer the store read the
// value into; a hit is read into the caller's buffer with no request, a
// missing key's entry answers without asking for a buffer, a
// damaged entry (its data, past the first read of the file, or its
// header) is read again from the store into that buffer and written
// again, and with Live a 304 serves the entry as it was read.
func TestGetAllocHit(t *testing.T) {
	dir := t.TempDir()
	f := newFar(2)
	big := bytes.Repeat([]byte("0123456789abcdefg"), 20000) // past headRead
	f.set("a/c/big", big)
	_, s := open(t, dir, f, Options{})
	getAlloc(t, s, "a/c/big", big, true) // a miss
	readAll(t, s, f, 2)
	if f.reqs.Load() != 4 {
		t.Fatalf("first reads: %d requests; want 4", f.reqs.Load())
	}

	f.reqs.Store(0)
	c, s := open(t, dir, f, Options{})
	getAlloc(t, s, "a/c/big", big, false)
	getAlloc(t, s, "a/c/0", f.m["a/c/0"], false)
	noAlloc := func(n int) []byte { t.Errorf("GetAlloc of a missing key asked alloc(%d)", n); return make([]byte, n) }
	if _, err := s.(store.AllocGetter).GetAlloc(context.Background(), "a/c/missing", noAlloc); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("GetAlloc of a missing key: %v; want ErrNotExist", err)
	}
	if st := c.Stats(); f.reqs.Load() != 0 || st.Hits != 3 || st.Corrupt != 0 {
		t.Errorf("hits: %d requests, stats %+v; want none, 3 hits", f.reqs.Load(), st)
	}

	for _, at := range []int{len(big) - 5, 20} { // in the data, in the header
		p := f.pathOf(dir, "a/c/big")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := bytes.Clone(b)
		d[at] ^= 0x40
		os.WriteFile(p, d, 0o644)
		f.reqs.Store(0)
		c, s = open(t, dir, f, Options{})
		getAlloc(t, s, "a/c/big", big, at == 20) // a damaged header: found before alloc is asked
		if st := c.Stats(); f.reqs.Load() != 1 || st.Corrupt != 1 || st.Hits != 0 {
			t.Errorf("damaged at %d: %d requests, stats %+v; want it read again (1), counted corrupt", at, f.reqs.Load(), st)
		}
		if b2, _ := os.ReadFile(p); !bytes.Equal(b2, b) {
			t.Errorf("damaged at %d: the entry was not written again", at)
		}
	}

	f.reqs.Store(0)
	c, s = open(t, dir, f, Options{Live: true})
	getAlloc(t, s, "a/c/big", big, true)
	if st := c.Stats(); f.reqs.Load() != 0 || f.conds.Load() != 1 || st.Revalidated != 1 {
		t.Errorf("live: %d requests, %d answered 304, stats %+v; want 0, 1, 1 revalidated", f.reqs.Load(), f.conds.Load(), st)
	}
}

// TestHolds: the cache holds a key once its whole value was read (not
// when only a range of it was; a missing key too, its answer kept), and
// not while entries must be revalidated (Live).
func TestHolds(t *testing.T) {
	dir := t.TempDir()
	f := newFar(3)
	ctx := context.Background()
	_, s := open(t, dir, f, Options{})
	h := s.(store.Holder)
	if h.Holds("a/c/0") {
		t.Errorf("an empty folder holds a/c/0")
	}
	s.Get(ctx, "a/c/0")
	s.GetRange(ctx, "a/c/1", store.Range(0, 10))
	s.Get(ctx, "a/c/missing")
	for key, want := range map[string]bool{"a/c/0": true, "a/c/1": false, "a/c/2": false, "a/c/missing": true} {
		if got := h.Holds(key); got != want {
			t.Errorf("Holds(%q) = %v; want %v", key, got, want)
		}
	}
	_, live := open(t, dir, f, Options{Live: true})
	if live.(store.Holder).Holds("a/c/0") {
		t.Errorf("a live cache holds a/c/0 (to revalidate first)")
	}
}
