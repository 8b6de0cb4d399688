// Package storetest is the conformance suite every zarrfs store runs: the
// contract documented in package store, checked the same way for each
// implementation.
//
// A writable store runs everything with Run; a read-only store runs the read
// half with RunReadOnly, given a fixture function that builds a store holding
// exactly a given set of keys and values. Optional interfaces (Lister,
// PageLister, Stater, InfoGetter, ReaderInto, AllocGetter) are tested
// when the store implements them. Run the suite with
// -race: it reads and writes from many goroutines at once.
package storetest

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

// Fixture builds a store holding exactly data (keys to values). It may use
// t for temporary directories and cleanup.
type Fixture func(t *testing.T, data map[string][]byte) store.Store

// Data returns the key set the read tests use: nested folders, an empty
// value, names that sort differently as bytes and as paths, non-ASCII names
// and a value large enough for ranged reads. The caller may modify it.
func Data() map[string][]byte {
	return map[string][]byte{
		"zarr.json":        []byte(`{"zarr_format":3,"node_type":"group"}`),
		"a/zarr.json":      []byte(`{"zarr_format":3,"node_type":"array"}`),
		"a/c/0/0":          pattern(1000, 1),
		"a/c/0/1":          pattern(333, 2),
		"a/c/1/0":          pattern(17, 3),
		"a.b/x":            []byte("dot"),
		"a-b":              []byte("dash"),
		"b/.zarray":        []byte("{}"),
		"b/.zattrs":        []byte("{}"),
		"empty":            {},
		"unicode/ü-ß":      []byte("umlaut"),
		"deep/1/2/3/4/5/v": []byte("deep"),
	}
}

// pattern returns n bytes that differ from each other and from other seeds.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+int(seed)*31) ^ seed
	}
	return b
}

// InvalidKeys are keys every store must refuse with *store.InvalidKeyError.
var InvalidKeys = []string{
	"",
	".",
	"..",
	"../x",
	"a/../../x",
	"a/./b",
	"/abs",
	"/",
	"a\x00b",
	`a\b`,
	`..\x`,
	"a//b",
	"a/",
	strings.Repeat("k", store.MaxKeyLength+1),
}

// Run runs the whole suite against stores from newStore, which must return
// an empty store implementing store.Writer. The read tests populate it
// through Set.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	fixture := func(t *testing.T, data map[string][]byte) store.Store {
		t.Helper()
		s := newStore(t)
		w, ok := s.(store.Writer)
		if !ok {
			t.Fatalf("%s does not implement store.Writer; use RunReadOnly", s)
		}
		for k, v := range data {
			if err := w.Set(context.Background(), k, v); err != nil {
				t.Fatalf("%s: Set(%q): %v", s, k, err)
			}
		}
		return s
	}
	RunReadOnly(t, fixture)
	t.Run("Write", func(t *testing.T) { testWrite(t, newStore(t)) })
	t.Run("WriteInvalidKeys", func(t *testing.T) { testWriteInvalidKeys(t, fixture(t, Data())) })
	t.Run("WriteCancelled", func(t *testing.T) { testWriteCancelled(t, newStore(t)) })
	t.Run("ConcurrentReadWrite", func(t *testing.T) { testConcurrentReadWrite(t, newStore(t)) })
	t.Run("GetIfChangedAfterSet", func(t *testing.T) { testGetIfChangedAfterSet(t, newStore(t)) })
}

// RunReadOnly runs the read half of the suite against stores built by
// fixture.
func RunReadOnly(t *testing.T, fixture Fixture) {
	t.Helper()
	t.Run("Get", func(t *testing.T) { testGet(t, fixture(t, Data())) })
	t.Run("GetRange", func(t *testing.T) { testGetRange(t, fixture(t, Data())) })
	t.Run("NotExist", func(t *testing.T) { testNotExist(t, fixture(t, Data())) })
	t.Run("InvalidKeys", func(t *testing.T) { testInvalidKeys(t, fixture(t, Data())) })
	t.Run("OwnedValues", func(t *testing.T) { testOwnedValues(t, fixture(t, Data())) })
	t.Run("ListDir", func(t *testing.T) { testListDir(t, fixture(t, Data())) })
	t.Run("ListPrefix", func(t *testing.T) { testListPrefix(t, fixture(t, Data())) })
	t.Run("ListPrefixPage", func(t *testing.T) { testListPrefixPage(t, fixture(t, Data())) })
	t.Run("ListEmptyStore", func(t *testing.T) { testListEmpty(t, fixture(t, map[string][]byte{})) })
	t.Run("Stat", func(t *testing.T) { testStat(t, fixture(t, Data())) })
	t.Run("GetInfo", func(t *testing.T) { testGetInfo(t, fixture(t, Data())) })
	t.Run("ReadInto", func(t *testing.T) { testReadInto(t, fixture(t, Data())) })
	t.Run("GetAlloc", func(t *testing.T) { testGetAlloc(t, fixture(t, Data())) })
	t.Run("Cancelled", func(t *testing.T) { testCancelled(t, fixture(t, Data())) })
	t.Run("ConcurrentRead", func(t *testing.T) { testConcurrentRead(t, fixture(t, Data())) })
	t.Run("String", func(t *testing.T) {
		if s := fixture(t, Data()); s.String() == "" {
			t.Error("String() is empty; it must name the store")
		}
	})
}

// implements returns s as the optional interface I, skipping the test
// when s does not implement it.
func implements[I any](t *testing.T, s store.Store) I {
	t.Helper()
	i, ok := s.(I)
	if !ok {
		t.Skipf("%s does not implement %s", s, reflect.TypeFor[I]())
	}
	return i
}
