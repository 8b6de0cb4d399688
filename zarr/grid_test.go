package zarr

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/zarrfs/zarrfs/zarr/meta"
)

// TestChunkLayoutChunkOf checks the layout's ChunkOf, ChunkLastElem,
// Linear, ChunkIndex, Chunks and SlabChunks against the chunks that runs
// finds for every element of a few layouts.
func TestChunkLayoutChunkOf(t *testing.T) {
	for _, c := range []struct {
		shape, chunks []int64
		nchunks, slab int64
	}{
		{[]int64{10}, []int64{3}, 4, 1},
		{[]int64{5, 7}, []int64{2, 3}, 9, 3},
		{[]int64{4, 6}, []int64{4, 6}, 1, 1},
		{[]int64{3, 5, 4}, []int64{2, 2, 3}, 12, 6},
		{[]int64{}, []int64{}, 1, 1},
	} {
		shape, _ := json.Marshal(c.shape)
		chunks, _ := json.Marshal(c.chunks)
		a, err := newArray(meta.ParseV2Array([]byte(fmt.Sprintf(`{"zarr_format": 2, "shape": %s, "chunks": %s, "dtype": "|u1", "compressor": null, "filters": null, "fill_value": 0}`, shape, chunks)), nil))
		if err != nil {
			t.Fatal(err)
		}
		l := a.Layout()
		if l.Chunks() != c.nchunks || l.SlabChunks() != c.slab {
			t.Errorf("shape %v, chunks %v: nchunks %d, slabChunks %d; want %d, %d", c.shape, c.chunks, l.Chunks(), l.SlabChunks(), c.nchunks, c.slab)
		}
		lastElem := map[int64]int64{}
		for e := range l.Elems() {
			_ = a.runs(e, e+1, func(r run) error {
				if got := l.ChunkOf(e); got != r.chunk {
					t.Errorf("shape %v, chunks %v: element %d is in chunk %d, chunkOf says %d", c.shape, c.chunks, e, r.chunk, got)
				}
				lastElem[r.chunk] = e
				return nil
			})
		}
		idx := make([]int64, len(c.shape)) // chunk lin's grid index, counted in C order
		for lin := range l.Chunks() {
			if got := l.ChunkLastElem(lin); got != lastElem[lin] {
				t.Errorf("shape %v, chunks %v: chunk %d ends at element %d, chunkLastElem says %d", c.shape, c.chunks, lin, lastElem[lin], got)
			}
			if got := l.ChunkIndex(lin); !slices.Equal(got, idx) {
				t.Errorf("shape %v, chunks %v: chunk %d is chunk %v, ChunkIndex says %v", c.shape, c.chunks, lin, idx, got)
			}
			if got := l.Linear(idx); got != lin {
				t.Errorf("shape %v, chunks %v: chunk %v is chunk %d, linear says %d", c.shape, c.chunks, idx, lin, got)
			}
			for i := len(idx) - 1; i >= 0; i-- {
				if idx[i]++; idx[i] < (c.shape[i]+c.chunks[i]-1)/c.chunks[i] {
					break
				}
				idx[i] = 0
			}
		}
	}
}
