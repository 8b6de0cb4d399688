package zarr

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

func shardingSpec(inner []int64) CodecSpec {
	return CodecSpec{Name: "sharding_indexed", Configuration: map[string]any{
		"chunk_shape":    inner,
		"codecs":         []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}, map[string]any{"name": "gzip", "configuration": map[string]any{"level": 1}}},
		"index_codecs":   []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}, map[string]any{"name": "crc32c"}},
		"index_location": "end",
	}}
}

func TestShardedRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	a, err := CreateArray(ctx, st, "", ArrayMeta{Format: FormatV3, Shape: []int64{37, 21}, ChunkShape: []int64{16, 12}, DataType: "int32", FillValue: 4,
		Codecs: []CodecSpec{shardingSpec([]int64{4, 3})}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	want := refFill(int(a.Size()/4), a.fill)
	for range 10 {
		off := rng.Int64N(a.Size()/4) * 4
		n := min(rng.Int64N(400)*4+4, a.Size()-off)
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		if _, err := a.WriteAt(ctx, p, off); err != nil {
			t.Fatal(err)
		}
		copy(want[off:], p)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int64{4, 52, 1000, a.Size()} {
		var buf bytes.Buffer
		for off := int64(0); off < a.Size(); off += step {
			p := make([]byte, min(step, a.Size()-off))
			if _, err := n.Array.ReadAt(ctx, p, off); err != nil {
				t.Fatalf("step %d off %d: %v", step, off, err)
			}
			buf.Write(p)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("step %d: content differs", step)
		}
	}
}
