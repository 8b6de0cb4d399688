package zarr

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// listingCounter is a memory store (which lists) that counts its reads
// and listings.
type listingCounter struct {
	*memory.Store
	gets, lists atomic.Int64
}

func (c *listingCounter) Get(ctx context.Context, key string) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *listingCounter) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.GetRange(ctx, key, r)
}

func (c *listingCounter) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	c.lists.Add(1)
	return c.Store.ListDir(ctx, dir)
}

func (c *listingCounter) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	c.lists.Add(1)
	return c.Store.ListPrefixPage(ctx, prefix, startAfter)
}

// noPages is a listing counter that lists whole directories only (as the
// directory store does), not by pages.
type noPages struct {
	store.Store
	c *listingCounter
}

func (p noPages) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	return p.c.ListDir(ctx, dir)
}

func (p noPages) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	return p.c.ListPrefix(ctx, prefix)
}

func (p noPages) Set(ctx context.Context, key string, value []byte) error {
	return p.c.Set(ctx, key, value)
}

func (p noPages) Delete(ctx context.Context, key string) error { return p.c.Delete(ctx, key) }

// unlisted hides the store's listing.
type unlisted struct{ store.Store }

// TestAbsentChunksListed: a read of many one-element chunks, of which the
// store holds a few, lists the chunks' directory once instead of asking
// for every chunk, reads the stored ones and fills the others; a chunk
// written afterwards is read, not taken for absent from the old listing.
// The same read through a store that cannot list gives the same bytes.
func TestAbsentChunksListed(t *testing.T) {
	ctx := context.Background()
	for _, sep := range []string{"/", "."} {
		t.Run("separator "+sep, func(t *testing.T) {
			mem := memory.New()
			if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
				t.Fatal(err)
			}
			const n = 30000
			w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{10 * n}, ChunkShape: []int64{1},
				DataType: "uint8", FillValue: 7, Separator: sep})
			if err != nil {
				t.Fatal(err)
			}
			stored := []int64{3, 999, 20000, n - 1}
			for _, i := range stored {
				if _, err := w.WriteAt(ctx, []byte{byte(i%200 + 20)}, i); err != nil {
					t.Fatal(err)
				}
			}
			want := bytes.Repeat([]byte{7}, n)
			for _, i := range stored {
				want[i] = byte(i%200 + 20)
			}
			st := &listingCounter{Store: mem}
			a := openArrayNode(t, st, Options{NoReadAhead: true}).Array
			got := make([]byte, n)
			if _, err := a.ReadAt(ctx, got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("read differs from what was written")
			}
			t.Logf("%d chunks: %d reads, %d listings", n, st.gets.Load(), st.lists.Load())
			if g, l := st.gets.Load(), st.lists.Load(); g > int64(len(stored))+2 || l == 0 || l > 16 {
				t.Errorf("%d reads and %d listings for %d chunks of which %d stored; want a few listings and the stored chunks", g, l, n, len(stored))
			}
			// Written after the listing: read, not taken for absent.
			if _, err := a.WriteAt(ctx, []byte{1}, 5); err != nil {
				t.Skipf("the array cannot be written through the counting store: %v", err)
			}
			want[5] = 1
			if _, err := a.ReadAt(ctx, got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Error("a chunk written after the listing reads as absent")
			}
			// A store that cannot list: the same bytes, a read per chunk.
			b := openArrayNode(t, unlisted{mem}, Options{NoReadAhead: true}).Array
			if _, err := b.ReadAt(ctx, got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Error("read through a store that cannot list differs")
			}
		})
	}
}

// BenchmarkAbsentChunks reads 1 MiB of an array of one-element chunks
// that the store holds none of (every element the fill value).
func BenchmarkAbsentChunks(b *testing.B) {
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		b.Fatal(err)
	}
	if _, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{1e11}, ChunkShape: []int64{1},
		DataType: "uint8", FillValue: 7}); err != nil {
		b.Fatal(err)
	}
	a := openArrayNode(b, mem, Options{NoReadAhead: true}).Array
	p := make([]byte, 1<<20)
	b.SetBytes(int64(len(p)))
	for i := 0; b.Loop(); i++ {
		if _, err := a.ReadAt(ctx, p, int64(i)<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNoneStored: a read of many chunks of an array the store holds no
// chunk of is the fill value from one listing and no chunk read, in every
// chunk key layout, for reads that start and end inside an element too;
// once a chunk is written, reads see it.
func TestNoneStored(t *testing.T) {
	ctx := context.Background()
	for _, m := range []ArrayMeta{
		{Format: FormatV3, Shape: []int64{1 << 20}, ChunkShape: []int64{1}, DataType: "float64", FillValue: 1.5},
		{Format: FormatV3, Shape: []int64{1 << 10, 1 << 10}, ChunkShape: []int64{1, 2}, DataType: "float64", FillValue: 1.5, Separator: "."},
		{Format: FormatV2, Shape: []int64{1 << 10, 1 << 10}, ChunkShape: []int64{2, 1}, DataType: "<f8", FillValue: 1.5},
		{Format: FormatV2, Shape: []int64{1 << 10, 1 << 10}, ChunkShape: []int64{2, 1}, DataType: "<f8", FillValue: 1.5, DimensionSeparator: "/"},
	} {
		t.Run(fmt.Sprintf("v%d %v %s%s", m.Format, m.ChunkShape, m.Separator, m.DimensionSeparator), func(t *testing.T) {
			mem := memory.New()
			if err := CreateGroup(ctx, mem, "", GroupMeta{Format: m.Format}); err != nil {
				t.Fatal(err)
			}
			if _, err := CreateArray(ctx, mem, "a", m); err != nil {
				t.Fatal(err)
			}
			// A sibling with chunks: its keys are not this array's.
			if err := mem.Set(ctx, "a2/c/0", []byte{1}); err != nil {
				t.Fatal(err)
			}
			for _, paged := range []bool{true, false} {
				t.Run(fmt.Sprintf("paged %v", paged), func(t *testing.T) { checkNoneStored(t, mem, paged) })
			}
		})
	}
}

// checkNoneStored is TestNoneStored for one array "a" with no chunk in
// mem, listed by pages or by directories.
func checkNoneStored(t *testing.T, mem *memory.Store, paged bool) {
	ctx := context.Background()
	st := &listingCounter{Store: mem}
	var s store.Store = st
	if !paged {
		s = noPages{st, st}
	}
	a := openArrayNode(t, s, Options{NoReadAhead: true}).Array
	fill := binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5))
	want := bytes.Repeat(fill, 1<<15)
	got := make([]byte, len(want))
	for _, off := range []int64{0, 8 << 15, 3} {
		gets := st.gets.Load()
		if _, err := a.ReadAt(ctx, got[:len(got)-5], off); err != nil {
			t.Fatal(err)
		}
		if w := want[off%8 : off%8+int64(len(got))-5]; !bytes.Equal(got[:len(got)-5], w) {
			t.Fatalf("read at %d is not the fill value", off)
		}
		if d := st.gets.Load() - gets; d != 0 {
			t.Errorf("read at %d: %d chunk reads, want none", off, d)
		}
	}
	if l := st.lists.Load(); l != 1 {
		t.Errorf("%d listings, want 1", l)
	}
	if _, err := a.WriteAt(ctx, []byte{9, 9, 9, 9, 9, 9, 9, 9}, 8); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[8:16], []byte{9, 9, 9, 9, 9, 9, 9, 9}) || !bytes.Equal(got[:8], fill) {
		t.Errorf("after a write: % x", got[:16])
	}
	// Undo the write for the next run.
	if _, err := a.WriteAt(ctx, fill, 8); err != nil {
		t.Fatal(err)
	}
	keys, _ := mem.ListPrefix(ctx, "a/")
	for _, k := range keys {
		if !metadataNames[strings.TrimPrefix(k, "a/")] {
			mem.Delete(ctx, k)
		}
	}
}

// TestAbsentChunksFullPage: a chunk directory holding more keys than a
// page of its store's listing is not listed further (S3 would take a
// request per page): its chunks are asked for, and read right.
func TestAbsentChunksFullPage(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	const n, stored = 4000, memory.PageSize + 500
	w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{n}, ChunkShape: []int64{1}, DataType: "uint8", FillValue: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{7}, n)
	for i := range stored {
		want[i] = byte(i%200 + 20)
	}
	if _, err := w.WriteAt(ctx, want[:stored], 0); err != nil {
		t.Fatal(err)
	}
	st := &listingCounter{Store: mem}
	a := openArrayNode(t, st, Options{NoReadAhead: true}).Array
	got := make([]byte, n)
	if _, err := a.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("read differs from what was written")
	}
	t.Logf("%d chunks, %d stored: %d reads, %d listings", n, stored, st.gets.Load(), st.lists.Load())
	if g := st.gets.Load(); g < n {
		t.Errorf("%d reads; want every chunk asked for", g)
	}
}
