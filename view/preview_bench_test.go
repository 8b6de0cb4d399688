package view

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/zarrfs/zarrfs/zarr"
)

// BenchmarkPreview renders the preview of a 2048 × 2048 float32 array in
// 256 × 256 zstd chunks (16 MiB, every chunk under the sampled rows),
// from a fresh hierarchy each time: decoding included.
func BenchmarkPreview(b *testing.B) {
	const n = 2048
	st := newStore(b)
	data := make([]byte, 0, n*n*4)
	for i := range n * n {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(math.Sin(float64(i%n)/100)+math.Cos(float64(i/n)/50))))
	}
	writeArray(b, st, "a", zarr.ArrayMeta{Shape: []int64{n, n}, ChunkShape: []int64{256, 256}, DataType: "float32", FillValue: 0,
		Codecs: []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "zstd", Configuration: map[string]any{"level": 1}}}}, data)
	ctx := context.Background()
	b.SetBytes(n * n * 4)
	for b.Loop() {
		f := previewOf(b, st, "a", on)
		if _, err := f.ReadAt(ctx, make([]byte, 1), 0); err != nil {
			b.Fatal(err)
		}
	}
}
