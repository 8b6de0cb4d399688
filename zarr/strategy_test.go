package zarr

import (
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/fault"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestReadStrategy: an array's reads take the way its pipeline and store
// allow, chosen when it is opened: straight from the store for chunks
// stored as their little-endian bytes in a store that reads into the
// caller's buffer (the dir store, and decorators that keep that), parts
// of chunks where the codecs decode parts (shards, Blosc), whole chunks
// otherwise.
func TestReadStrategy(t *testing.T) {
	arrays := map[string]ArrayMeta{}
	for _, ar := range append(dirReadPathArrays[:len(dirReadPathArrays):len(dirReadPathArrays)], readPathArrays...) {
		arrays[ar.name] = ar.meta
	}
	stores := map[string]func(t *testing.T, meta ArrayMeta) store.Store{
		"dir": func(t *testing.T, meta ArrayMeta) store.Store {
			d, err := dir.Open(t.TempDir(), dir.Options{})
			if err != nil {
				t.Fatal(err)
			}
			writeReadPathArray(t, d, meta, 1)
			return d
		},
		"memory": func(t *testing.T, meta ArrayMeta) store.Store {
			m := memory.New()
			writeReadPathArray(t, m, meta, 1)
			return m
		},
	}
	stores["fault over dir"] = func(t *testing.T, meta ArrayMeta) store.Store {
		_, s := fault.New(stores["dir"](t, meta))
		return s
	}
	stores["deadline over dir"] = func(t *testing.T, meta ArrayMeta) store.Store {
		return deadline.New(stores["dir"](t, meta), time.Minute)
	}
	for _, c := range []struct {
		array, store string
		want         readStrategy
	}{
		{"v2-raw-rows", "dir", readDirect},
		{"v3-raw-1d", "dir", readDirect},
		{"tiles", "dir", readDirect},
		{"tiles", "fault over dir", readDirect},
		// deadline cannot lend the caller's buffer to a call it may
		// abandon: no store.ReaderInto through it.
		{"tiles", "deadline over dir", readWhole},
		{"tiles", "memory", readWhole},
		{"v2-raw-big-endian", "dir", readWhole},
		{"rows-gzip", "dir", readWhole},
		{"v2-zstd", "dir", readWhole},
		{"sharded", "dir", readPartial},
		{"sharded", "memory", readPartial},
		{"v2-blosc", "memory", readPartial},
		{"v2-blosc", "deadline over dir", readPartial},
	} {
		t.Run(c.array+"/"+c.store, func(t *testing.T) {
			meta, ok := arrays[c.array]
			if !ok {
				t.Fatalf("no array %q", c.array)
			}
			n := openArrayNode(t, stores[c.store](t, meta), Options{})
			if got := n.Array.strategy; got != c.want {
				t.Errorf("strategy %d, want %d", got, c.want)
			}
			if got := n.Array.raw != nil; got != (c.want == readDirect) {
				t.Errorf("store.ReaderInto kept: %v, want %v", got, c.want == readDirect)
			}
		})
	}
}
