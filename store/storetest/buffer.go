package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

// testReadInto: ReadInto fills the caller's buffer with the part of the
// value asked for and reports the whole value's size; a part past the end
// is io.ErrUnexpectedEOF, a missing key ErrNotExist, an invalid key an
// *InvalidKeyError, a cancelled context context.Canceled.
func testReadInto(t *testing.T, s store.Store) {
	ri := implements[store.ReaderInto](t, s)
	ctx := context.Background()
	for k, v := range Data() {
		for _, part := range [][2]int{{0, len(v)}, {min(1, len(v)), min(3, len(v))}, {len(v), len(v)}} {
			p := bytes.Repeat([]byte{0xee}, part[1]-part[0])
			size, err := ri.ReadInto(ctx, k, p, int64(part[0]))
			if err != nil || size != int64(len(v)) || !bytes.Equal(p, v[part[0]:part[1]]) {
				t.Errorf("%s: ReadInto(%q, %d bytes at %d) = %d, %v, %q; want %d, %q", s, k, len(p), part[0], size, err, p, len(v), v[part[0]:part[1]])
			}
		}
		if _, err := ri.ReadInto(ctx, k, make([]byte, 1), int64(len(v))); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: ReadInto(%q) of a byte past the end: %v; want io.ErrUnexpectedEOF", s, k, err)
		}
	}
	for _, k := range missingKeys {
		if _, err := ri.ReadInto(ctx, k, make([]byte, 1), 0); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s: ReadInto(%q) of a missing key: %v; want ErrNotExist", s, k, err)
		}
	}
	for _, k := range InvalidKeys {
		_, err := ri.ReadInto(ctx, k, make([]byte, 1), 0)
		wantInvalid(t, s, "ReadInto", k, err)
	}
	_, err := ri.ReadInto(cancelledContext(), "a/c/0/0", make([]byte, 2), 1)
	wantCancelled(t, s, "ReadInto", err)
}

// testGetAlloc: GetAlloc asks alloc once for a buffer of the value's size
// and returns the value in it, at a second read of each value too (which
// a store that keeps what it read, a disk cache, may serve from that; at
// the first, such a store may return the value it fetched without asking
// alloc); a missing key is ErrNotExist, an invalid key an
// *InvalidKeyError, a cancelled context context.Canceled.
func testGetAlloc(t *testing.T, s store.Store) {
	ag := implements[store.AllocGetter](t, s)
	ctx := context.Background()
	read := map[string]bool{}
	for k, v := range twice(Data()) {
		again := read[k]
		read[k] = true
		var bufs [][]byte
		alloc := func(n int) []byte {
			b := bytes.Repeat([]byte{0xee}, n)
			bufs = append(bufs, b)
			return b
		}
		b, err := ag.GetAlloc(ctx, k, alloc)
		switch {
		case err != nil || !bytes.Equal(b, v):
			t.Errorf("%s: GetAlloc(%q) = %q, %v; want %q", s, k, b, err, v)
		case len(bufs) == 0 && !again:
		case len(bufs) != 1 || len(bufs[0]) != len(v):
			t.Errorf("%s: GetAlloc(%q) called alloc %d times (%d bytes first); want once, for %d", s, k, len(bufs), len(firstOf(bufs)), len(v))
		case len(v) > 0 && &b[0] != &bufs[0][0]:
			t.Errorf("%s: GetAlloc(%q) returned a buffer other than alloc's", s, k)
		}
	}
	noAlloc := func(n int) []byte {
		t.Errorf("%s: GetAlloc called alloc(%d) for a key it cannot read", s, n)
		return make([]byte, n)
	}
	for _, k := range missingKeys {
		if _, err := ag.GetAlloc(ctx, k, noAlloc); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s: GetAlloc(%q) of a missing key: %v; want ErrNotExist", s, k, err)
		}
	}
	for _, k := range InvalidKeys {
		_, err := ag.GetAlloc(ctx, k, noAlloc)
		wantInvalid(t, s, "GetAlloc", k, err)
	}
	_, err := ag.GetAlloc(cancelledContext(), "zarr.json", func(n int) []byte { return make([]byte, n) })
	wantCancelled(t, s, "GetAlloc", err)
}

// twice yields each key and value of m, then each again.
func twice(m map[string][]byte) func(yield func(string, []byte) bool) {
	return func(yield func(string, []byte) bool) {
		for range 2 {
			for k, v := range m {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// firstOf returns the first of bufs, or nil.
func firstOf(bufs [][]byte) []byte {
	if len(bufs) == 0 {
		return nil
	}
	return bufs[0]
}

// Capabilities returns the names of the optional interfaces of package
// store that s implements ("Lister", "ReaderInto", …), so that a
// decorator's test can check that it keeps those of the store it wraps
// and claims no other.
func Capabilities(s store.Store) []string {
	var names []string
	for _, c := range []struct {
		name string
		has  bool
	}{
		{"Lister", is[store.Lister](s)},
		{"PageLister", is[store.PageLister](s)},
		{"Stater", is[store.Stater](s)},
		{"InfoGetter", is[store.InfoGetter](s)},
		{"Writer", is[store.Writer](s)},
		{"ReaderInto", is[store.ReaderInto](s)},
		{"AllocGetter", is[store.AllocGetter](s)},
		{"Holder", is[store.Holder](s)},
	} {
		if c.has {
			names = append(names, c.name)
		}
	}
	return names
}

// is reports whether s implements I.
func is[I any](s store.Store) bool {
	_, ok := s.(I)
	return ok
}
