package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

func testGet(t *testing.T, s store.Store) {
	ctx := context.Background()
	for k, want := range Data() {
		got, err := s.Get(ctx, k)
		if err != nil {
			t.Errorf("%s: Get(%q): %v", s, k, err)
			continue
		}
		if got == nil {
			t.Errorf("%s: Get(%q) returned a nil slice; an empty value is []byte{}", s, k)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Get(%q) = %d bytes %.40q; want %d bytes %.40q", s, k, len(got), got, len(want), want)
		}
	}
}

func testGetRange(t *testing.T, s store.Store) {
	ctx := context.Background()
	big := Data()["a/c/0/0"] // 1000 bytes
	tests := []struct {
		name string
		key  string
		r    store.ByteRange
		want []byte
	}{
		{"head", "a/c/0/0", store.Range(0, 10), big[:10]},
		{"middle", "a/c/0/0", store.Range(100, 250), big[100:350]},
		{"exact end", "a/c/0/0", store.Range(990, 10), big[990:]},
		{"past end truncated", "a/c/0/0", store.Range(995, 100), big[995:]},
		{"offset at end", "a/c/0/0", store.Range(1000, 10), []byte{}},
		{"offset past end", "a/c/0/0", store.Range(5000, 1), []byte{}},
		{"to end", "a/c/0/0", store.Range(10, -1), big[10:]},
		{"all", "a/c/0/0", store.All, big},
		{"zero length", "a/c/0/0", store.Range(5, 0), []byte{}},
		{"suffix", "a/c/0/0", store.SuffixRange(16), big[984:]},
		{"suffix longer than value", "a/c/0/0", store.SuffixRange(2000), big},
		{"suffix zero", "a/c/0/0", store.SuffixRange(0), []byte{}},
		{"empty value all", "empty", store.All, []byte{}},
		{"empty value range", "empty", store.Range(0, 4), []byte{}},
		{"empty value suffix", "empty", store.SuffixRange(4), []byte{}},
		{"small value", "a-b", store.Range(1, 2), []byte("as")},
	}
	for _, tt := range tests {
		got, err := s.GetRange(ctx, tt.key, tt.r)
		if err != nil {
			t.Errorf("%s: %s: GetRange(%q, %v): %v", s, tt.name, tt.key, tt.r, err)
			continue
		}
		if got == nil {
			t.Errorf("%s: %s: GetRange(%q, %v) returned a nil slice", s, tt.name, tt.key, tt.r)
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s: %s: GetRange(%q, %v) = %d bytes; want %d bytes", s, tt.name, tt.key, tt.r, len(got), len(tt.want))
		}
	}
	for _, r := range []store.ByteRange{store.Range(-1, 5), store.SuffixRange(-1)} {
		if got, err := s.GetRange(ctx, "a/c/0/0", r); err == nil {
			t.Errorf("%s: GetRange(%v) = %d bytes, nil; want an error", s, r, len(got))
		}
	}
	if _, err := s.GetRange(ctx, "missing", store.Range(0, 1)); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("%s: GetRange(missing): %v; want ErrNotExist", s, err)
	}
}

// missingKeys are valid keys that Data does not hold, including names of
// folders and paths through values.
var missingKeys = []string{"missing", "a", "a/c", "a/c/0", "a/c/0/2", "zarr.json/x", "a/zarr.json/x", "deep/1/2", "A/zarr.json", "a.b/x/y"}

func testNotExist(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, k := range missingKeys {
		if got, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s: Get(%q) = %d bytes, %v; want an error matching ErrNotExist", s, k, len(got), err)
		}
		if got, err := s.GetRange(ctx, k, store.SuffixRange(4)); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s: GetRange(%q) = %d bytes, %v; want an error matching ErrNotExist", s, k, len(got), err)
		}
		if st, ok := s.(store.Stater); ok {
			if _, err := st.Stat(ctx, k); !errors.Is(err, store.ErrNotExist) {
				t.Errorf("%s: Stat(%q): %v; want an error matching ErrNotExist", s, k, err)
			}
		}
	}
}

func wantInvalid(t *testing.T, s store.Store, op, key string, err error) {
	t.Helper()
	var ike *store.InvalidKeyError
	if !errors.As(err, &ike) {
		t.Errorf("%s: %s(%.60q): %v; want *store.InvalidKeyError", s, op, key, err)
	}
}

func testInvalidKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, k := range InvalidKeys {
		_, err := s.Get(ctx, k)
		wantInvalid(t, s, "Get", k, err)
		_, err = s.GetRange(ctx, k, store.Range(0, 1))
		wantInvalid(t, s, "GetRange", k, err)
		if st, ok := s.(store.Stater); ok {
			_, err = st.Stat(ctx, k)
			wantInvalid(t, s, "Stat", k, err)
		}
		if l, ok := s.(store.Lister); ok {
			if k != "" {
				_, _, err = l.ListDir(ctx, k)
				wantInvalid(t, s, "ListDir", k, err)
			}
			if k != "" && k != "/" && k != "a/" {
				_, err = l.ListPrefix(ctx, k)
				wantInvalid(t, s, "ListPrefix", k, err)
			}
		}
	}
	// Validation happens even when the context is already cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := s.Get(cctx, "../x")
	wantInvalid(t, s, "Get (cancelled context)", "../x", err)
}

func testOwnedValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	const key = "a/c/0/0"
	want := Data()[key]
	for range 2 {
		got, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("%s: Get(%q): %v", s, key, err)
		}
		clear(got)
		part, err := s.GetRange(ctx, key, store.Range(10, 20))
		if err != nil {
			t.Fatalf("%s: GetRange(%q): %v", s, key, err)
		}
		clear(part)
	}
	if got, err := s.Get(ctx, key); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: value changed after the caller modified returned slices (err %v)", s, err)
	}
}

func testStat(t *testing.T, s store.Store) {
	st := implements[store.Stater](t, s)
	ctx := context.Background()
	for k, v := range Data() {
		info, err := st.Stat(ctx, k)
		if err != nil {
			t.Errorf("%s: Stat(%q): %v", s, k, err)
			continue
		}
		if info.Size != int64(len(v)) {
			t.Errorf("%s: Stat(%q).Size = %d; want %d", s, k, info.Size, len(v))
		}
	}
}

// testGetInfo: GetRangeInfo returns the bytes and the whole value's size;
// GetIfChanged with that Info answers ErrNotModified (when the store gave
// a validator), and with no Info reads the value.
func testGetInfo(t *testing.T, s store.Store) {
	ig := implements[store.InfoGetter](t, s)
	ctx := context.Background()
	for k, v := range Data() {
		want := v[min(1, len(v)):min(3, len(v))]
		b, info, err := ig.GetRangeInfo(ctx, k, store.Range(1, 2))
		if err != nil || !bytes.Equal(b, want) || info.Size != int64(len(v)) {
			t.Errorf("%s: GetRangeInfo(%q, 1-2) = %q, %+v, %v; want %q, size %d", s, k, b, info, err, want, len(v))
			continue
		}
		if info.Validates() {
			if b, _, err := ig.GetIfChanged(ctx, k, info); !errors.Is(err, store.ErrNotModified) || b != nil {
				t.Errorf("%s: GetIfChanged(%q) of an unchanged value = %q, %v; want ErrNotModified", s, k, b, err)
			}
		}
		if b, info2, err := ig.GetIfChanged(ctx, k, store.Info{}); err != nil || !bytes.Equal(b, v) || info2.Size != int64(len(v)) {
			t.Errorf("%s: GetIfChanged(%q) with no Info = %q, %+v, %v; want the value", s, k, b, info2, err)
		}
	}
	if _, _, err := ig.GetIfChanged(ctx, "missing/key", store.Info{ETag: `"x"`, ModTime: time.Unix(1, 0)}); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("%s: GetIfChanged of a missing key: %v; want ErrNotExist", s, err)
	}
}

func cancelledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func wantCancelled(t *testing.T, s store.Store, op string, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s: %s with a cancelled context: %v; want an error matching context.Canceled", s, op, err)
	}
}

func testCancelled(t *testing.T, s store.Store) {
	ctx := cancelledContext()
	_, err := s.Get(ctx, "zarr.json")
	wantCancelled(t, s, "Get", err)
	_, err = s.GetRange(ctx, "a/c/0/0", store.Range(1, 2))
	wantCancelled(t, s, "GetRange", err)
	if st, ok := s.(store.Stater); ok {
		_, err = st.Stat(ctx, "zarr.json")
		wantCancelled(t, s, "Stat", err)
	}
	if l, ok := s.(store.Lister); ok {
		_, _, err = l.ListDir(ctx, "a")
		wantCancelled(t, s, "ListDir", err)
		_, err = l.ListPrefix(ctx, "")
		wantCancelled(t, s, "ListPrefix", err)
	}
}

func testConcurrentRead(t *testing.T, s store.Store) {
	ctx := context.Background()
	data := Data()
	keys := slices.Sorted(maps.Keys(data))
	l, _ := s.(store.Lister)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				k := keys[(g+i)%len(keys)]
				got, err := s.GetRange(ctx, k, store.Range(int64(i%4), -1))
				want := data[k][min(i%4, len(data[k])):]
				if err != nil || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("GetRange(%q) = %d bytes, %v; want %d bytes", k, len(got), err, len(want))
					return
				}
				if l != nil && i%10 == 0 {
					if _, _, err := l.ListDir(ctx, "a/c/0"); err != nil {
						errs <- fmt.Errorf("ListDir: %w", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%s: concurrent read: %v", s, err)
	}
}
