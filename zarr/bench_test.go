package zarr

import (
	"context"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

// benchArray creates a written float64 array of the given shape and chunks.
func benchArray(b *testing.B, shape, chunks []int64) *Array {
	ctx := context.Background()
	st := memory.New()
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV3}); err != nil {
		b.Fatal(err)
	}
	a, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV3, Shape: shape, ChunkShape: chunks, DataType: "float64", FillValue: 0})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.WriteAt(ctx, make([]byte, a.Size()), 0); err != nil {
		b.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil {
		b.Fatal(err)
	}
	return n.Array
}

func benchRead(b *testing.B, shape, chunks []int64) {
	a := benchArray(b, shape, chunks)
	ctx := context.Background()
	p := make([]byte, 1<<20)
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	off := int64(0)
	for b.Loop() {
		if off+int64(len(p)) > a.Size() {
			off = 0
		}
		if _, err := a.ReadAt(ctx, p, off); err != nil {
			b.Fatal(err)
		}
		off += int64(len(p))
	}
}

func BenchmarkReadAtRows(b *testing.B)   { benchRead(b, []int64{1024, 1024}, []int64{128, 1024}) }
func BenchmarkReadAtTiles(b *testing.B)  { benchRead(b, []int64{1024, 1024}, []int64{128, 128}) }
func BenchmarkReadAtNarrow(b *testing.B) { benchRead(b, []int64{1 << 17, 3}, []int64{4096, 2}) }
