package zarr

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/zarrfs/zarrfs/store"
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
	want := refFill(int(a.Size()/4), a.FillElement())
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

// rangeCounter counts whole and ranged reads of chunk keys.
type rangeCounter struct {
	*memory.Store
	mu            sync.Mutex
	whole, ranged int
}

func (c *rangeCounter) Get(ctx context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	c.whole++
	c.mu.Unlock()
	return c.Store.Get(ctx, key)
}

func (c *rangeCounter) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if key != "zarr.json" {
		c.mu.Lock()
		c.ranged++
		c.mu.Unlock()
	}
	return c.Store.GetRange(ctx, key, r)
}

func TestShardedPartialReads(t *testing.T) {
	// Rows of 40 cross shards; rows of 32 are whole in a shard, so runs
	// wrap from row to row.
	for _, cols := range []int64{40, 32} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) { testShardedPartialReads(t, cols) })
	}
}

func testShardedPartialReads(t *testing.T, cols int64) {
	ctx := context.Background()
	mem := memory.New()
	a, err := CreateArray(ctx, mem, "", ArrayMeta{Format: FormatV3, Shape: []int64{50, cols}, ChunkShape: []int64{32, 32}, DataType: "uint16", FillValue: 1,
		Codecs: []CodecSpec{shardingSpec([]int64{8, 8})}})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, a.Size())
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range want {
		want[i] = byte(rng.IntN(256))
	}
	// Leave the last rows unwritten: missing inner chunks and a missing shard.
	if _, err := a.WriteAt(ctx, want[:2*cols*20], 0); err != nil {
		t.Fatal(err)
	}
	copy(want[2*cols*20:], refFill(int(cols*30), a.FillElement()))
	st := &rangeCounter{Store: mem}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		off := rng.Int64N(a.Size())
		k := min(rng.Int64N(90)+1, a.Size()-off)
		p := make([]byte, k)
		if _, err := n.Array.ReadAt(ctx, p, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, want[off:off+k]) {
			t.Fatalf("ReadAt(%d bytes at %d) differs", k, off)
		}
	}
	if st.whole != 0 || st.ranged == 0 {
		t.Errorf("small random reads made %d whole reads and %d range reads; want only range reads", st.whole, st.ranged)
	}
	// A whole read still reads whole shards and agrees.
	got := make([]byte, a.Size())
	if _, err := n.Array.ReadAt(ctx, got, 0); err != nil || !bytes.Equal(got, want) {
		t.Errorf("whole read differs (%v)", err)
	}
}
