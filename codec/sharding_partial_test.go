package codec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"
)

// countingReader serves ranged reads of data, with store semantics
// (ranges truncated at the end), and records them. A nil data is a
// missing shard.
type countingReader struct {
	data  []byte
	mu    sync.Mutex // guards reads
	reads []shardRead
}

func (r *countingReader) Read(ctx context.Context) ([]byte, error) {
	return r.ReadRange(ctx, 0, int64(len(r.data)))
}

func (r *countingReader) ReadRange(_ context.Context, off, n int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, shardRead{off: off, n: n})
	if r.data == nil {
		return nil, fmt.Errorf("shard: %w", fs.ErrNotExist)
	}
	size := int64(len(r.data))
	start := min(off, size)
	return r.data[start:min(start+n, size)], nil
}

func (r *countingReader) ReadSuffix(_ context.Context, n int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, shardRead{suffix: true, n: n})
	if r.data == nil {
		return nil, fmt.Errorf("shard: %w", fs.ErrNotExist)
	}
	return r.data[max(0, int64(len(r.data))-n):], nil
}

// TestShardRangeReads counts the range reads of partial decodes.
func TestShardRangeReads(t *testing.T) {
	// 4×4 inner chunks of 8×8 float64 (512 bytes each), uncompressed.
	spec := shardSpec([]int{32, 32}, "float64", 8, 0)
	want := make([]byte, spec.ByteSize())
	for i := range want {
		want[i] = byte(i*7 + i/8)
	}
	const innerBytes = 512
	const indexBytes = 16*16 + 4
	ctx := context.Background()
	cases := []struct {
		name  string
		start []int
		shape []int
		reads []shardRead // after the index read
	}{
		{"one element", []int{9, 17}, []int{1, 1}, []shardRead{{off: 6 * innerBytes, n: innerBytes}}},
		{"one inner chunk", []int{8, 16}, []int{8, 8}, []shardRead{{off: 6 * innerBytes, n: innerBytes}}},
		{"a row of inner chunks", []int{9, 0}, []int{2, 32}, []shardRead{{off: 4 * innerBytes, n: 4 * innerBytes}}},
		{"a column, coalesced over gaps", []int{0, 3}, []int{32, 2}, []shardRead{{off: 0, n: 13 * innerBytes}}},
		{"whole shard", []int{0, 0}, []int{32, 32}, []shardRead{{off: 0, n: 16 * innerBytes}}},
	}
	s := shardCodec(t, shardConfig([]int{8, 8}, shardBytesLE, shardCRC, "end"))
	enc, err := s.Encode(want, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &countingReader{data: enc}
			got, err := s.readRegion(ctx, r, spec, c.start, c.shape)
			if err != nil {
				t.Fatal(err)
			}
			equalShard(t, "region", got, shardCrop(want, spec.Shape, c.start, c.shape, 8))
			wantReads := append([]shardRead{{suffix: true, n: indexBytes}}, c.reads...)
			if !slices.Equal(r.reads, wantReads) {
				t.Errorf("reads %+v, want %+v", r.reads, wantReads)
			}
		})
	}

	// Index at the start: readIndex reads it with one ranged read; with
	// the cached index, each region reads only its inner chunks.
	big := shardSpec([]int{2048}, "uint8", 1, 0)
	data := make([]byte, 2048)
	for i := range data {
		data[i] = byte(i%251 + 1)
	}
	s = shardCodec(t, shardConfig([]int{512}, `["bytes"]`, shardBytesLE, "start"))
	if enc, err = s.Encode(data, big); err != nil {
		t.Fatal(err)
	}
	r := &countingReader{data: enc}
	idx, err := s.readIndex(ctx, r, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.reads) != 1 || r.reads[0] != (shardRead{off: 0, n: 64}) {
		t.Errorf("readIndex reads %+v, want one of 64 bytes at 0", r.reads)
	}
	r.reads = nil
	for _, region := range [][2]int{{0, 1}, {2047, 1}} {
		got, err := s.decodeRegionWithIndex(ctx, r, idx, big, []int{region[0]}, []int{region[1]})
		if err != nil {
			t.Fatal(err)
		}
		equalShard(t, "element", got, data[region[0]:region[0]+region[1]])
	}
	got, err := s.decodeRegionWithIndex(ctx, r, idx, big, []int{500}, []int{1548})
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "region", got, data[500:])
	if want := []shardRead{{off: 64, n: 512}, {off: 64 + 1536, n: 512}, {off: 64, n: 2048}}; !slices.Equal(r.reads, want) {
		t.Errorf("reads %+v, want %+v", r.reads, want)
	}

	// Nested sharding: one element costs the outer index, the inner index
	// and the innermost chunk.
	nested := shardCodec(t, shardConfig([]int{8, 8}, `[{"name": "sharding_indexed", "configuration": `+
		shardConfig([]int{2, 4}, shardBytesLE, shardCRC, "end")+`}]`, shardCRC, "end"))
	if enc, err = nested.Encode(want, spec); err != nil {
		t.Fatal(err)
	}
	r = &countingReader{data: enc}
	if got, err = nested.readRegion(ctx, r, spec, []int{9, 17}, []int{1, 1}); err != nil {
		t.Fatal(err)
	}
	equalShard(t, "nested element", got, shardCrop(want, spec.Shape, []int{9, 17}, []int{1, 1}, 8))
	// Inner shards: 8 inner-inner chunks of 64 bytes and a 132-byte index.
	const innerShard = 8*64 + 8*16 + 4
	if want := []shardRead{{suffix: true, n: indexBytes}, {off: 6*innerShard + 8*64, n: 132}, {off: 6 * innerShard, n: 64}}; !slices.Equal(r.reads, want) {
		t.Errorf("nested: reads %+v, want %+v", r.reads, want)
	}

	// A column of two inner chunks with another stored between them: one
	// read when the gap is at most shardCoalesceGap, two otherwise.
	for _, n := range []int{shardCoalesceGap, shardCoalesceGap + 1} {
		spec := shardSpec([]int{2, 2 * n}, "uint8", 1, 0)
		s := shardCodec(t, shardConfig([]int{1, n}, `["bytes"]`, shardBytesLE, "end"))
		data := bytes.Repeat([]byte{1, 2, 3}, 4*n)[:4*n]
		enc, err := s.Encode(data, spec)
		if err != nil {
			t.Fatal(err)
		}
		r := &countingReader{data: enc}
		got, err := s.readRegion(ctx, r, spec, []int{0, 0}, []int{2, 1})
		if err != nil {
			t.Fatal(err)
		}
		equalShard(t, "column", got, []byte{data[0], data[2*n]})
		want := []shardRead{{suffix: true, n: 64}, {off: 0, n: 3 * int64(n)}}
		if n > shardCoalesceGap {
			want = []shardRead{{suffix: true, n: 64}, {off: 0, n: int64(n)}, {off: 2 * int64(n), n: int64(n)}}
		}
		if !slices.Equal(r.reads, want) {
			t.Errorf("inner chunks of %d bytes: reads %+v, want %+v", n, r.reads, want)
		}
	}
}

func TestShardRegionErrors(t *testing.T) {
	spec := shardSpec([]int{4, 4}, "uint8", 1, 0)
	s := shardCodec(t, shardConfig([]int{2, 2}, `["bytes"]`, shardCRC, "end"))
	enc, err := s.Encode(bytes.Repeat([]byte{1}, 16), spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, region := range [][2][]int{
		{{0}, {1}},
		{{0, 0}, {5, 1}},
		{{-1, 0}, {1, 1}},
		{{3, 3}, {2, 1}},
		{{0, 0}, {1, -1}},
	} {
		if _, err := s.readRegion(ctx, &countingReader{data: enc}, spec, region[0], region[1]); err == nil {
			t.Errorf("region %v+%v: no error", region[0], region[1])
		}
	}
	// An empty region reads nothing but the index.
	r := &countingReader{data: enc}
	if got, err := s.readRegion(ctx, r, spec, []int{4, 0}, []int{0, 4}); err != nil || len(got) != 0 || len(r.reads) != 1 {
		t.Errorf("empty region: %v, %v after %d reads", got, err, len(r.reads))
	}

	// A missing shard is fs.ErrNotExist, for the engine to read as fill.
	if _, err := s.readRegion(ctx, &countingReader{}, spec, []int{0, 0}, []int{1, 1}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing shard: %v, want fs.ErrNotExist", err)
	}

	// An index of another shape.
	other := shardSpec([]int{2, 4}, "uint8", 1, 0)
	oenc, err := s.Encode(bytes.Repeat([]byte{1}, 8), other)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := s.readIndex(ctx, &countingReader{data: oenc}, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.decodeRegionWithIndex(ctx, &countingReader{data: enc}, idx, spec, []int{0, 0}, []int{1, 1}); err == nil {
		t.Error("index of a 2×4 shard used for a 4×4 one: no error")
	}

	// An inner chunk that the shard is too short to hold, seen on reading.
	short := slices.Concat([]byte{1, 1, 1, 1}, shardIndexBytes(true, 0, 4, 0, 4, 0, 4, 100, 4))
	if _, err := s.Decode(short, spec); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode: %v, want ErrCorrupt", err)
	}
	if got, err := s.readRegion(ctx, &countingReader{data: short}, spec, []int{0, 0}, []int{2, 2}); err != nil || !bytes.Equal(got, []byte{1, 1, 1, 1}) {
		t.Errorf("readRegion of a sound inner chunk: %v, %v", got, err)
	}
	if _, err := s.readRegion(ctx, &countingReader{data: short}, spec, []int{3, 3}, []int{1, 1}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("readRegion of the truncated inner chunk: %v, want ErrCorrupt", err)
	}
}
