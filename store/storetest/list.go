package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

func testListDir(t *testing.T, s store.Store) {
	l := implements[store.Lister](t, s)
	ctx := context.Background()
	tests := []struct {
		dir            string
		keys, prefixes []string
	}{
		{"", []string{"a-b", "empty", "zarr.json"}, []string{"a", "a.b", "b", "deep", "unicode"}},
		{"a", []string{"zarr.json"}, []string{"c"}},
		{"a/c", []string{}, []string{"0", "1"}},
		{"a/c/0", []string{"0", "1"}, []string{}},
		{"b", []string{".zarray", ".zattrs"}, []string{}},
		{"deep/1/2", []string{}, []string{"3"}},
		{"unicode", []string{"ü-ß"}, []string{}},
		{"missing", []string{}, []string{}},
		{"zarr.json", []string{}, []string{}},
		{"a/c/0/0", []string{}, []string{}},
	}
	for _, tt := range tests {
		keys, prefixes, err := l.ListDir(ctx, tt.dir)
		if err != nil {
			t.Errorf("%s: ListDir(%q): %v", s, tt.dir, err)
			continue
		}
		if !slices.Equal(keys, tt.keys) || !slices.Equal(prefixes, tt.prefixes) {
			t.Errorf("%s: ListDir(%q) = keys %q prefixes %q; want keys %q prefixes %q",
				s, tt.dir, keys, prefixes, tt.keys, tt.prefixes)
		}
	}
}

func testListPrefix(t *testing.T, s store.Store) {
	l := implements[store.Lister](t, s)
	ctx := context.Background()
	all := slices.Sorted(maps.Keys(Data()))
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"a/", []string{"a/c/0/0", "a/c/0/1", "a/c/1/0", "a/zarr.json"}},
		{"a/c/0", []string{"a/c/0/0", "a/c/0/1"}},
		{"a/c/0/", []string{"a/c/0/0", "a/c/0/1"}},
		{"b/", []string{"b/.zarray", "b/.zattrs"}},
		{"deep", []string{"deep/1/2/3/4/5/v"}},
		{"missing", []string{}},
		{"missing/", []string{}},
		{"zarr.json", []string{"zarr.json"}},
	}
	for _, tt := range tests {
		got, err := l.ListPrefix(ctx, tt.prefix)
		if err != nil {
			t.Errorf("%s: ListPrefix(%q): %v", s, tt.prefix, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: ListPrefix(%q) = %q; want %q", s, tt.prefix, got, tt.want)
		}
	}
	// "a" as a string prefix also matches "a-b" and "a.b/x"; stores may
	// treat it as a string or as a folder, but must include a's own keys,
	// sorted.
	got, err := l.ListPrefix(ctx, "a")
	if err != nil {
		t.Fatalf("%s: ListPrefix(a): %v", s, err)
	}
	if !slices.IsSorted(got) {
		t.Errorf("%s: ListPrefix(a) = %q: not sorted", s, got)
	}
	for _, k := range []string{"a/c/0/0", "a/c/0/1", "a/c/1/0", "a/zarr.json"} {
		if !slices.Contains(got, k) {
			t.Errorf("%s: ListPrefix(a) = %q: missing %q", s, got, k)
		}
	}
}

// testListPrefixPage pages through listings: the pages, each asked for
// after the last key of the one before until one reports no more, make up
// ListPrefix's answer.
func testListPrefixPage(t *testing.T, s store.Store) {
	pl := implements[store.PageLister](t, s)
	l := implements[store.Lister](t, s)
	ctx := context.Background()
	for _, prefix := range []string{"", "a/", "a/c/0/", "b/", "deep", "missing/", "zarr.json"} {
		want, err := l.ListPrefix(ctx, prefix)
		if err != nil {
			t.Fatalf("%s: ListPrefix(%q): %v", s, prefix, err)
		}
		var got []string
		for after, pages := "", 0; ; pages++ {
			if pages > len(want) {
				t.Fatalf("%s: ListPrefixPage(%q, …): more pages than keys", s, prefix)
			}
			keys, more, err := pl.ListPrefixPage(ctx, prefix, after)
			if err != nil {
				t.Fatalf("%s: ListPrefixPage(%q, %q): %v", s, prefix, after, err)
			}
			if !slices.IsSorted(keys) || len(keys) > 0 && keys[0] <= after && after != "" {
				t.Fatalf("%s: ListPrefixPage(%q, %q) = %q: unsorted, or not after %q", s, prefix, after, keys, after)
			}
			got = append(got, keys...)
			if !more {
				break
			}
			if len(keys) == 0 {
				t.Fatalf("%s: ListPrefixPage(%q, %q): an empty page with more to come", s, prefix, after)
			}
			after = keys[len(keys)-1]
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: pages of %q = %q; ListPrefix: %q", s, prefix, got, want)
		}
	}
	if _, _, err := pl.ListPrefixPage(ctx, "../x", ""); err == nil {
		t.Errorf("%s: ListPrefixPage(\"../x\") did not fail", s)
	}
	if _, _, err := pl.ListPrefixPage(cancelledContext(), "a/", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("%s: ListPrefixPage with a cancelled context: %v, want context.Canceled", s, err)
	}
}

func testListEmpty(t *testing.T, s store.Store) {
	l := implements[store.Lister](t, s)
	ctx := context.Background()
	keys, prefixes, err := l.ListDir(ctx, "")
	if err != nil || len(keys) != 0 || len(prefixes) != 0 {
		t.Errorf("%s: ListDir(\"\") on an empty store = %q, %q, %v; want empty lists", s, keys, prefixes, err)
	}
	all, err := l.ListPrefix(ctx, "")
	if err != nil || len(all) != 0 {
		t.Errorf("%s: ListPrefix(\"\") on an empty store = %q, %v; want empty", s, all, err)
	}
	if _, err := s.Get(ctx, "zarr.json"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("%s: Get on an empty store: %v; want ErrNotExist", s, err)
	}
}
