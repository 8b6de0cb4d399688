package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/internal/peertest"
)

// shardCodec builds a sharding codec from its JSON configuration.
func shardCodec(t testing.TB, config string) *Sharding {
	t.Helper()
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatalf("config %s: %v", config, err)
	}
	c, err := New("sharding_indexed", cfg)
	if err != nil {
		t.Fatalf("New(sharding_indexed, %s): %v", config, err)
	}
	return c.(*Sharding)
}

// shardSpec returns the spec of a shard of shape with elements of t and
// fill value fill (little-endian, t's size).
func shardSpec(shape []int, name string, size int, fill uint64) ArraySpec {
	f := binary.LittleEndian.AppendUint64(nil, fill)[:size]
	return ArraySpec{Shape: shape, DataType: DataType{Name: name, Size: size}, FillValue: f}
}

// shardArray returns a reproducible array for spec in which whole boxes of
// inner chunks of chunkShape hold the fill value (every third inner chunk
// in C order), so that encoders leave them out.
func shardArray(spec ArraySpec, chunkShape []int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	n := spec.NumElements()
	out := make([]byte, 0, n*spec.DataType.Size)
	rank := len(spec.Shape)
	idx := make([]int, rank)
	for range n {
		chunk := 0
		for d := range rank {
			chunk = chunk*(spec.Shape[d]/chunkShape[d]) + idx[d]/chunkShape[d]
		}
		if chunk%3 == 1 {
			out = append(out, spec.FillValue...)
		} else {
			for range spec.DataType.Size {
				out = append(out, byte(r.IntN(8)))
			}
		}
		for d := rank - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < spec.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// shardCrop cuts the box (start, size) out of a C-order array of shape.
func shardCrop(data []byte, shape, start, size []int, itemSize int) []byte {
	n := itemSize
	for _, s := range size {
		n *= s
	}
	out := make([]byte, n)
	shardBox(out, size, make([]int, len(size)), data, shape, start, size, itemSize)
	return out
}

// shardBox copies the box of size at srcStart in src (C order, srcShape)
// to dstStart in dst (dstShape), element by element.
func shardBox(dst []byte, dstShape, dstStart []int, src []byte, srcShape, srcStart, size []int, itemSize int) {
	n := 1
	for _, s := range size {
		n *= s
	}
	idx := make([]int, len(size))
	for range n {
		di, si := 0, 0
		for d := range size {
			di = di*dstShape[d] + dstStart[d] + idx[d]
			si = si*srcShape[d] + srcStart[d] + idx[d]
		}
		copy(dst[di*itemSize:(di+1)*itemSize], src[si*itemSize:(si+1)*itemSize])
		for d := len(size) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < size[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// shardRead is one read a countingReader served.
type shardRead struct {
	suffix bool
	off, n int64
}

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

// shardConfig returns a sharding configuration.
func shardConfig(chunkShape []int, codecs, indexCodecs, location string) string {
	cs, _ := json.Marshal(chunkShape)
	return fmt.Sprintf(`{"chunk_shape": %s, "codecs": %s, "index_codecs": %s, "index_location": %q}`,
		cs, codecs, indexCodecs, location)
}

const (
	shardBytesLE = `[{"name": "bytes", "configuration": {"endian": "little"}}]`
	shardCRC     = `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]`
)

func TestShardRoundTrip(t *testing.T) {
	type tc struct {
		name   string
		codecs string
		inner  []int
		spec   ArraySpec
	}
	f4 := shardSpec([]int{8, 6}, "float32", 4, 0)
	cases := []tc{
		{"bytes", shardBytesLE, []int{4, 3}, f4},
		{"gzip", `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}]`, []int{4, 3}, f4},
		{"zstd", `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]`, []int{2, 2}, f4},
		{"crc32c", `["bytes", "crc32c"]`, []int{8, 1}, f4},
		{"big-endian transpose", `[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}}]`, []int{4, 6}, f4},
		{"3d int16 fill 7", `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]`,
			[]int{2, 3, 1}, shardSpec([]int{4, 6, 3}, "int16", 2, 7)},
		{"1d uint8 fill 255", shardBytesLE, []int{5}, shardSpec([]int{20}, "uint8", 1, 255)},
		{"one inner chunk", shardBytesLE, []int{8, 6}, f4},
		{"nested", `[{"name": "sharding_indexed", "configuration": ` + shardConfig([]int{2, 3}, `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip"}]`, shardCRC, "start") + `}]`,
			[]int{4, 6}, f4},
		{"rank 0", shardBytesLE, []int{}, shardSpec([]int{}, "float64", 8, 0)},
	}
	if Registered("blosc") {
		cases = append(cases, tc{"blosc", `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]`, []int{4, 3}, f4})
	}
	for _, c := range cases {
		for _, loc := range []string{"end", "start"} {
			t.Run(c.name+"/"+loc, func(t *testing.T) {
				s := shardCodec(t, shardConfig(c.inner, c.codecs, shardCRC, loc))
				want := shardArray(c.spec, c.inner, 1)
				enc, err := s.Encode(want, c.spec)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Decode(enc, c.spec)
				if err != nil {
					t.Fatal(err)
				}
				equalShard(t, "Decode", got, want)
				// Into a buffer of garbage, the same bytes: inner chunks
				// left out are written with the fill value.
				dirty := bytes.Repeat([]byte{0xa5}, len(want))
				if err := s.DecodeInto(dirty, enc, c.spec); err != nil {
					t.Fatal(err)
				}
				equalShard(t, "DecodeInto", dirty, want)

				// The inner chunks of fill value are left out.
				idx, err := s.readIndex(context.Background(), &countingReader{data: enc}, c.spec)
				if err != nil {
					t.Fatal(err)
				}
				for i := range idx.numChunks {
					if _, _, ok := idx.chunk(i); ok == (i%3 == 1) {
						t.Errorf("inner chunk %d present = %v", i, ok)
					}
				}

				// Every region decodes to the crop of the whole shard.
				r := rand.New(rand.NewPCG(2, 3))
				for range 20 {
					start, shape := shardRandomRegion(r, c.spec.Shape)
					got, err := s.readRegion(context.Background(), &countingReader{data: enc}, c.spec, start, shape)
					if err != nil {
						t.Fatalf("region %v+%v: %v", start, shape, err)
					}
					equalShard(t, fmt.Sprintf("region %v+%v", start, shape), got, shardCrop(want, c.spec.Shape, start, shape, c.spec.DataType.Size))
				}
			})
		}
	}
}

// shardRandomRegion returns a random box inside shape.
func shardRandomRegion(r *rand.Rand, shape []int) (start, size []int) {
	start, size = make([]int, len(shape)), make([]int, len(shape))
	for d, n := range shape {
		start[d] = r.IntN(n)
		size[d] = 1 + r.IntN(n-start[d])
	}
	return start, size
}

// equalShard reports a difference between got and want.
func equalShard(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: got %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

// shardIndexBytes encodes an index of (offset, nbytes) pairs as uint64
// little-endian, followed by its CRC-32C when crc is set.
func shardIndexBytes(crc bool, pairs ...uint64) []byte {
	var b []byte
	for _, v := range pairs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	if crc {
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	}
	return b
}

const m64 = math.MaxUint64

// TestShardFormat checks the bytes of a shard against the format the
// specification describes, built by hand.
func TestShardFormat(t *testing.T) {
	spec := shardSpec([]int{6}, "uint8", 1, 9)
	// Inner chunks of 2: [1 2] [9 9] (fill: left out) [5 6].
	data := []byte{1, 2, 9, 9, 5, 6}
	cases := []struct {
		loc  string
		want []byte
	}{
		{"end", slices.Concat([]byte{1, 2, 5, 6}, shardIndexBytes(true, 0, 2, m64, m64, 2, 2))},
		{"start", slices.Concat(shardIndexBytes(true, 52, 2, m64, m64, 54, 2), []byte{1, 2, 5, 6})},
	}
	for _, c := range cases {
		t.Run(c.loc, func(t *testing.T) {
			s := shardCodec(t, shardConfig([]int{2}, `["bytes"]`, shardCRC, c.loc))
			got, err := s.Encode(data, spec)
			if err != nil {
				t.Fatal(err)
			}
			equalShard(t, "Encode", got, c.want)
		})
	}

	// Chunks stored out of order, with unused bytes between them, and a
	// missing one, as other writers may store them.
	s := shardCodec(t, shardConfig([]int{2}, `["bytes"]`, shardBytesLE, "end"))
	shard := slices.Concat([]byte{0xee, 5, 6, 0xee, 0xee, 1, 2}, shardIndexBytes(false, 5, 2, m64, m64, 1, 2))
	got, err := s.Decode(shard, spec)
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "Decode", got, data)
	if n, err := indexSize(s, spec); err != nil || n != 48 {
		t.Errorf("IndexSize = %d, %v; want 48", n, err)
	}
}

func TestShardAllMissing(t *testing.T) {
	spec := shardSpec([]int{4, 4}, "int16", 2, 0x0102)
	s := shardCodec(t, shardConfig([]int{2, 2}, shardBytesLE, shardCRC, "end"))
	fill := bytes.Repeat([]byte{2, 1}, 16)
	enc, err := s.Encode(fill, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := shardIndexBytes(true, m64, m64, m64, m64, m64, m64, m64, m64); !bytes.Equal(enc, want) {
		t.Errorf("Encode of fill value = %x, want the index alone %x", enc, want)
	}
	got, err := s.Decode(enc, spec)
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "Decode", got, fill)
	r := &countingReader{data: enc}
	idx, err := s.readIndex(context.Background(), r, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !idx.allMissing() {
		t.Error("allMissing = false for a shard of fill value")
	}
	got, err = s.decodeRegionWithIndex(context.Background(), r, idx, spec, []int{1, 1}, []int{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "region", got, fill[:12])
	if len(r.reads) != 1 {
		t.Errorf("%d reads, want 1 (the index only)", len(r.reads))
	}
}

// TestShardOverhang: a shard at the edge of an array is encoded and
// decoded whole; inner chunks entirely outside the array are fill value
// and not stored.
func TestShardOverhang(t *testing.T) {
	// An array of 5×5 in shards of 4×4 with inner chunks of 2×2: shard
	// (1, 1) holds the array's element (4, 4) only.
	spec := shardSpec([]int{4, 4}, "uint8", 1, 0)
	shard := make([]byte, 16)
	shard[0] = 42
	s := shardCodec(t, shardConfig([]int{2, 2}, shardBytesLE, shardCRC, "end"))
	enc, err := s.Encode(shard, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Concat([]byte{42, 0, 0, 0}, shardIndexBytes(true, 0, 4, m64, m64, m64, m64, m64, m64)); !bytes.Equal(enc, want) {
		t.Errorf("Encode = %x, want %x", enc, want)
	}
	got, err := s.Decode(enc, spec)
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "Decode", got, shard)
}

func TestShardCorrupt(t *testing.T) {
	spec := shardSpec([]int{4}, "uint8", 1, 0)
	body := []byte{1, 2, 3, 4} // two inner chunks of 2
	cases := []struct {
		name  string
		loc   string
		shard []byte
		// partial: readIndex/readRegion see the corruption too (they
		// cannot tell an inner chunk that runs into an index at the end).
		partial bool
	}{
		{"past the end", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 3, 2)), false},
		{"far past the end", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 1000, 2)), true},
		{"into the index at the end", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 2, 4)), false},
		{"into the index at the start", "start", slices.Concat(shardIndexBytes(true, 0, 2, 38, 2), body), true},
		{"offset+nbytes overflows", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 2, m64-1)), true},
		{"offset+nbytes overflows int64", "start", slices.Concat(shardIndexBytes(true, 36, 2, math.MaxInt64, 2), body), true},
		{"offset missing, nbytes not", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, m64, 2)), true},
		{"nbytes missing, offset not", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 2, m64)), true},
		{"bad crc", "end", slices.Concat(body, shardIndexBytes(false, 0, 2, 2, 2), []byte{1, 2, 3, 4}), true},
		{"shorter than the index", "end", shardIndexBytes(true, 0, 2, 2, 2)[1:], true},
		{"empty", "start", nil, true},
		{"inner chunk of the wrong size", "end", slices.Concat(body, shardIndexBytes(true, 0, 2, 2, 1)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := shardCodec(t, shardConfig([]int{2}, `["bytes"]`, shardCRC, c.loc))
			if got, err := s.Decode(c.shard, spec); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Decode = %v, %v; want ErrCorrupt", got, err)
			}
			if !c.partial {
				return
			}
			data := c.shard
			if data == nil {
				data = []byte{}
			}
			if got, err := s.readRegion(context.Background(), &countingReader{data: data}, spec, []int{0}, []int{4}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("readRegion = %v, %v; want ErrCorrupt", got, err)
			}
		})
	}
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

func TestShardConfig(t *testing.T) {
	bad := []struct {
		config      string
		unsupported bool
	}{
		{`{}`, false},
		{`{"chunk_shape": [0]}`, false},
		{`{"chunk_shape": [-2]}`, false},
		{`{"chunk_shape": "x"}`, false},
		{`{"chunk_shape": [2], "index_location": "middle"}`, false},
		{`{"chunk_shape": [2], "codecs": {"name": "bytes"}}`, false},
		{`{"chunk_shape": [2], "codecs": [{"configuration": {}}]}`, false},
		{`{"chunk_shape": [2], "codecs": []}`, false},
		{`{"chunk_shape": [2], "index_codecs": [{"name": "nope", "must_understand": false}]}`, false},
		{`{"chunk_shape": [2], "codecs": ["nope"]}`, true},
		{`{"chunk_shape": [2], "index_codecs": [{"name": "nope"}]}`, true},
		{`{"chunk_shape": [2], "shard_order": "morton"}`, true},
	}
	for _, c := range bad {
		var cfg Config
		if err := json.Unmarshal([]byte(c.config), &cfg); err != nil {
			t.Fatal(err)
		}
		_, err := New("sharding_indexed", cfg)
		if err == nil || errors.Is(err, ErrUnsupported) != c.unsupported {
			t.Errorf("New(%s) = %v, want an error (unsupported: %v)", c.config, err, c.unsupported)
		}
	}

	// Defaults: codecs [bytes], index_codecs [bytes, crc32c], index at
	// the end; an unknown codec that need not be understood is left out.
	s := shardCodec(t, `{"chunk_shape": [2], "codecs": ["bytes", {"name": "nope", "must_understand": false}]}`)
	spec := shardSpec([]int{4}, "uint8", 1, 0)
	if n, err := indexSize(s, spec); err != nil || n != 36 || s.location != IndexAtEnd || !slices.Equal(s.chunkShape, []int{2}) {
		t.Errorf("defaults: IndexSize %d, %v; location %v, chunk shape %v", n, err, s.location, s.chunkShape)
	}
	enc, err := s.Encode([]byte{1, 2, 3, 4}, spec)
	if err != nil || !bytes.Equal(enc, slices.Concat([]byte{1, 2, 3, 4}, shardIndexBytes(true, 0, 2, 2, 2))) {
		t.Errorf("defaults: Encode = %x, %v", enc, err)
	}

	// Checks against the shard's spec.
	specs := []struct {
		name        string
		config      string
		spec        ArraySpec
		unsupported bool
	}{
		{"rank", `{"chunk_shape": [2]}`, shardSpec([]int{4, 4}, "uint8", 1, 0), false},
		{"not dividing", `{"chunk_shape": [3]}`, shardSpec([]int{4}, "uint8", 1, 0), false},
		{"fill value size", `{"chunk_shape": [2]}`, ArraySpec{Shape: []int{4}, DataType: DataType{"int16", 2}, FillValue: []byte{0}}, false},
		{"compressed index", `{"chunk_shape": [2], "index_codecs": ["bytes", "gzip"]}`, shardSpec([]int{4}, "uint8", 1, 0), false},
		{"index without array→bytes codec", `{"chunk_shape": [2], "index_codecs": ["crc32c"]}`, shardSpec([]int{4}, "uint8", 1, 0), false},
		{"inner codecs in the wrong order", `{"chunk_shape": [2], "codecs": ["crc32c", "bytes"]}`, shardSpec([]int{4}, "uint8", 1, 0), false},
		{"huge index", `{"chunk_shape": [1, 1]}`, shardSpec([]int{1 << 20, 1 << 20}, "uint8", 1, 0), true},
	}
	for _, c := range specs {
		s := shardCodec(t, c.config)
		if _, err := s.Decode(make([]byte, 64), c.spec); err == nil || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported) != c.unsupported {
			t.Errorf("%s: Decode: %v, want a configuration error (unsupported: %v)", c.name, err, c.unsupported)
		}
		if _, err := s.Encode(make([]byte, 64), c.spec); err == nil {
			t.Errorf("%s: Encode succeeded", c.name)
		}
		if _, err := s.readIndex(context.Background(), &countingReader{data: make([]byte, 64)}, c.spec); err == nil {
			t.Errorf("%s: readIndex succeeded", c.name)
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

// FuzzShardIndex decodes arbitrary shards of 4×4 uint8 in inner chunks of
// 2×2, whole and through partial reads: no panic, the right size, and the
// same elements both ways.
func FuzzShardIndex(f *testing.F) {
	spec := shardSpec([]int{4, 4}, "uint8", 1, 3)
	codecs := []*Sharding{
		shardCodec(f, shardConfig([]int{2, 2}, `["bytes"]`, shardBytesLE, "end")),
		shardCodec(f, shardConfig([]int{2, 2}, `["bytes"]`, shardBytesLE, "start")),
		shardCodec(f, shardConfig([]int{2, 2}, `["bytes", "gzip"]`, shardCRC, "end")),
		shardCodec(f, shardConfig([]int{2, 2}, `[{"name": "sharding_indexed", "configuration": `+
			shardConfig([]int{1, 1}, `["bytes"]`, shardBytesLE, "end")+`}]`, shardBytesLE, "start")),
	}
	for i, s := range codecs {
		data := make([]byte, 16)
		for j := range data {
			data[j] = byte(j / 3)
		}
		enc, err := s.Encode(data, spec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), enc)
	}
	f.Add(uint8(0), slices.Concat([]byte{1, 1, 1, 1}, shardIndexBytes(false, 0, 4, m64, m64, 2, 4, m64-1, 2)))
	for _, b := range hostileSeeds(f, "shard-") {
		f.Add(uint8(2), b)
	}
	f.Fuzz(func(t *testing.T, which uint8, shard []byte) {
		s := codecs[int(which)%len(codecs)]
		whole, err := s.Decode(shard, spec)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode: %v, want ErrCorrupt", err)
			}
		} else if len(whole) != 16 {
			t.Fatalf("Decode: %d bytes, want 16", len(whole))
		}
		r := &countingReader{data: shard}
		part, perr := s.readRegion(context.Background(), r, spec, []int{1, 1}, []int{3, 2})
		switch {
		case perr != nil && !errors.Is(perr, ErrCorrupt):
			t.Fatalf("readRegion: %v, want ErrCorrupt", perr)
		case perr == nil && len(part) != 6:
			t.Fatalf("readRegion: %d bytes, want 6", len(part))
		case err == nil && perr != nil:
			t.Fatalf("Decode succeeded, readRegion: %v", perr)
		case err == nil && !bytes.Equal(part, shardCrop(whole, spec.Shape, []int{1, 1}, []int{3, 2}, 1)):
			t.Fatalf("readRegion = %v, Decode = %v", part, whole)
		}
		// Element (1, 1) through a Memo: its inner chunk decoded whole
		// and kept, read twice.
		m := &memoReader{countingReader: countingReader{data: shard}}
		for range 2 {
			elem := make([]byte, 1)
			merr := s.DecodeParts(context.Background(), m, spec, [][]byte{elem}, []int64{5})
			switch {
			case merr != nil && !errors.Is(merr, ErrCorrupt):
				t.Fatalf("DecodeParts: %v, want ErrCorrupt", merr)
			case err == nil && merr != nil:
				t.Fatalf("Decode succeeded, DecodeParts: %v", merr)
			case err == nil && elem[0] != whole[5]:
				t.Fatalf("DecodeParts = %v, Decode = %v", elem, whole)
			}
		}
	})
}

// FuzzShardVlen decodes arbitrary shards of four strings in inner chunks
// of two: no panic, only ErrCorrupt, and a well-formed result.
func FuzzShardVlen(f *testing.F) {
	spec := ArraySpec{Shape: []int{4}, DataType: DataType{"string", 0}}
	s := shardCodec(f, shardConfig([]int{2}, `["vlen-utf8"]`, shardBytesLE, "end"))
	enc, err := s.Encode(shardVlen([]string{"a", "", "", "bc"}), spec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	for _, b := range hostileSeeds(f, "shard-") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, shard []byte) {
		got, err := s.Decode(shard, spec)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode: %v, want ErrCorrupt", err)
		}
		if err == nil {
			if _, err := splitVlen("test", got, 4); err != nil {
				t.Fatalf("Decode = %x: %v", got, err)
			}
		}
		got, err = s.readRegion(context.Background(), &countingReader{data: shard}, spec, []int{1}, []int{2})
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("readRegion: %v, want ErrCorrupt", err)
		}
		if err == nil {
			if _, err := splitVlen("test", got, 2); err != nil {
				t.Fatalf("readRegion = %x: %v", got, err)
			}
		}
	})
}

// shardArrayMeta is what the sharding tests read of and write to a v3
// zarr.json.
type shardArrayMeta struct {
	ZarrFormat int             `json:"zarr_format"`
	NodeType   string          `json:"node_type"`
	Shape      []int           `json:"shape"`
	DataType   string          `json:"data_type"`
	ChunkGrid  json.RawMessage `json:"chunk_grid"`
	KeyEnc     json.RawMessage `json:"chunk_key_encoding"`
	FillValue  any             `json:"fill_value"`
	Codecs     json.RawMessage `json:"codecs"`
}

// shardTypeSizes are the element sizes of the data types in the tests.
var shardTypeSizes = map[string]int{
	"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4,
	"uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8,
}

// shardReadArray decodes the v3 array in dir, whose only codec is
// sharding_indexed, shard by shard through Sharding.Decode, and also
// element by element through readRegion, and returns its elements.
func shardReadArray(t *testing.T, dir string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta shardArrayMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	var grid struct {
		Configuration struct {
			ChunkShape []int `json:"chunk_shape"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(meta.ChunkGrid, &grid); err != nil {
		t.Fatal(err)
	}
	codecs, err := ParseCodecList(meta.Codecs)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := codecs[0].(*Sharding)
	if len(codecs) != 1 || !ok {
		t.Fatalf("codecs %s: want sharding_indexed alone", meta.Codecs)
	}
	size := shardTypeSizes[meta.DataType]
	if size == 0 {
		t.Fatalf("data type %q", meta.DataType)
	}
	if f, ok := meta.FillValue.(float64); (!ok || f != 0) && meta.FillValue != false {
		t.Fatalf("fill value %v: the test knows only zero", meta.FillValue)
	}
	shardShape := grid.Configuration.ChunkShape
	spec := ArraySpec{Shape: shardShape, DataType: DataType{meta.DataType, size}, FillValue: make([]byte, size)}
	rank := len(meta.Shape)
	out := make([]byte, size*shardNum(meta.Shape))
	grid0, gridHi := make([]int, rank), make([]int, rank)
	for d := range rank {
		gridHi[d] = (meta.Shape[d] - 1) / shardShape[d]
	}
	coord := slices.Clone(grid0)
	for {
		key := []string{"c"}
		start, crop := make([]int, rank), make([]int, rank)
		for d, c := range coord {
			key = append(key, strconv.Itoa(c))
			start[d] = c * shardShape[d]
			crop[d] = min(shardShape[d], meta.Shape[d]-start[d])
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.Join(key...)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// A missing shard is fill value: zero.
		case err != nil:
			t.Fatal(err)
		default:
			shard, err := s.Decode(data, spec)
			if err != nil {
				t.Fatalf("shard %v: %v", coord, err)
			}
			shardBox(out, meta.Shape, start, shard, shardShape, make([]int, rank), crop, size)
			// Element by element through partial reads, with one
			// index read.
			r := &countingReader{data: data}
			idx, err := s.readIndex(context.Background(), r, spec)
			if err != nil {
				t.Fatalf("shard %v: %v", coord, err)
			}
			at := make([]int, rank)
			ones := slices.Repeat([]int{1}, rank)
			for {
				got, err := s.decodeRegionWithIndex(context.Background(), r, idx, spec, at, ones)
				if err != nil {
					t.Fatalf("shard %v element %v: %v", coord, at, err)
				}
				if want := shardCrop(shard, shardShape, at, ones, size); !bytes.Equal(got, want) {
					t.Fatalf("shard %v element %v: %x, want %x", coord, at, got, want)
				}
				if !nd.Next(at, make([]int, rank), shardLast(crop)) {
					break
				}
			}
		}
		if !nd.Next(coord, grid0, gridHi) {
			break
		}
	}
	return out
}

// shardNum returns the product of shape.
func shardNum(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// shardLast returns the last position of a box of shape.
func shardLast(shape []int) []int {
	last := make([]int, len(shape))
	for d, n := range shape {
		last[d] = n - 1
	}
	return last
}

// TestShardCorpus decodes the sharded arrays of the public corpus
// (written by zarrita.js and zarrs) and compares them with what zarrita
// reads.
func TestShardCorpus(t *testing.T) {
	corpus := peertest.Corpus(t)
	dirs, err := filepath.Glob(filepath.Join(corpus, "zarrita.js", "v3", "data.zarr", "*sharded*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, filepath.Join(corpus, "zarrs", "sharded_array_write_read.zarr", "group", "array"))
	for _, dir := range dirs {
		name, _ := filepath.Rel(corpus, dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel() // most of the time goes to starting node
			got := shardReadArray(t, dir)
			want := peertest.RunNode(t, "read.mjs", dir, "")
			equalShard(t, "array", got, want)
		})
	}
}

// TestShardPeerZarrita writes sharded arrays with Sharding.Encode and has
// zarrita read them. zarrita 0.7.5 reads the index at the end only and
// knows codecs by their object form only.
func TestShardPeerZarrita(t *testing.T) {
	peertest.NeedNode(t)
	gzipInner := `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]`
	cases := []struct {
		name       string
		shape      []int
		shardShape []int
		inner      []int
		dataType   string
		codecs     string
		index      string
	}{
		{"2d int16 overhanging gzip", []int{7, 5}, []int{4, 4}, []int{2, 2}, "int16", gzipInner, shardCRC},
		{"3d float32 crc32c", []int{5, 4, 3}, []int{2, 4, 3}, []int{1, 2, 3}, "float32",
			`[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]`, shardCRC},
		{"1d uint8 raw index", []int{50}, []int{16}, []int{4}, "uint8", `[{"name": "bytes"}]`, shardBytesLE},
		{"2d float64 transpose", []int{6, 6}, []int{6, 6}, []int{3, 2}, "float64",
			`[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}]`, shardCRC},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			size := shardTypeSizes[c.dataType]
			full := ArraySpec{Shape: c.shape, DataType: DataType{c.dataType, size}, FillValue: make([]byte, size)}
			want := shardArray(full, c.inner, 5)
			spec := ArraySpec{Shape: c.shardShape, DataType: full.DataType, FillValue: full.FillValue}
			shardWriteArray(t, dir, shardConfig(c.inner, c.codecs, c.index, "end"), full, spec, 0, func(start, crop []int) []byte {
				shard := make([]byte, spec.ByteSize())
				shardBox(shard, c.shardShape, make([]int, len(start)), want, c.shape, start, crop, size)
				return shard
			})
			got := peertest.RunNode(t, "read.mjs", dir, "")
			equalShard(t, "zarrita's read", got, want)
			equalShard(t, "our read", shardReadArray(t, dir), want)
		})
	}
}

// TestShardPeerZarritaStrings writes a sharded array of strings and has
// zarrita read it.
func TestShardPeerZarritaStrings(t *testing.T) {
	peertest.NeedNode(t)
	dir := t.TempDir()
	shape, shardShape := []int{5, 7}, []int{4, 4}
	elems := make([]string, 35)
	var txt strings.Builder
	for i := range elems {
		if i%7 < 4 || i/7 == 4 {
			elems[i] = fmt.Sprintf("%d é %s", i, strings.Repeat("x", i%4))
		}
		txt.WriteString(elems[i] + "\n")
	}
	full := ArraySpec{Shape: shape, DataType: DataType{"string", 0}, FillValue: []byte{}}
	spec := ArraySpec{Shape: shardShape, DataType: full.DataType, FillValue: full.FillValue}
	codecs := `[{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 1}}]`
	shardWriteArray(t, dir, shardConfig([]int{2, 2}, codecs, shardCRC, "end"), full, spec, "", func(start, crop []int) []byte {
		shard := make([]string, 16)
		nd.Each(shardShape, []int{0, 0}, shape, start, crop, func(di, si int) { shard[di] = elems[si] })
		return shardVlen(shard)
	})
	got := peertest.RunNode(t, "read.mjs", dir, "")
	equalShard(t, "zarrita's read", got, []byte(txt.String()))
}

// shardWriteArray writes a v3 array full (shape, data type) to dir in
// shards of spec encoded by the sharding codec of configuration cfg;
// shard returns the decoded shard whose box (start, crop) lies in the
// array.
func shardWriteArray(t *testing.T, dir, cfg string, full, spec ArraySpec, fill any, shard func(start, crop []int) []byte) {
	t.Helper()
	grid, _ := json.Marshal(map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": spec.Shape}})
	meta, _ := json.Marshal(shardArrayMeta{
		ZarrFormat: 3, NodeType: "array", Shape: full.Shape, DataType: full.DataType.Name, ChunkGrid: grid,
		KeyEnc:    json.RawMessage(`{"name": "default", "configuration": {"separator": "/"}}`),
		FillValue: fill, Codecs: json.RawMessage(`[{"name": "sharding_indexed", "configuration": ` + cfg + `}]`),
	})
	if err := os.WriteFile(filepath.Join(dir, "zarr.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	s := shardCodec(t, cfg)
	rank := len(full.Shape)
	coord, hi := make([]int, rank), make([]int, rank)
	for d := range rank {
		hi[d] = (full.Shape[d] - 1) / spec.Shape[d]
	}
	for {
		key := []string{dir, "c"}
		start, crop := make([]int, rank), make([]int, rank)
		for d, k := range coord {
			key = append(key, strconv.Itoa(k))
			start[d] = k * spec.Shape[d]
			crop[d] = min(spec.Shape[d], full.Shape[d]-start[d])
		}
		enc, err := s.Encode(shard(start, crop), spec)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(key...)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, enc, 0o644); err != nil {
			t.Fatal(err)
		}
		if !nd.Next(coord, make([]int, rank), hi) {
			return
		}
	}
}

// TestNewSharding builds the codec in Go, as the engine does for the
// sharding storage transformer of the 2022 v3 draft (raw index at the end).
func TestNewSharding(t *testing.T) {
	raw, err := New("bytes", Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSharding([]int{1, 2}, []Codec{raw}, []Codec{raw}, IndexAtEnd)
	if err != nil {
		t.Fatal(err)
	}
	spec := shardSpec([]int{2, 2}, "uint8", 1, 0)
	// Chunk (1, 0) first, chunk (0, 0) after it.
	shard := slices.Concat([]byte{3, 4, 1, 2}, shardIndexBytes(false, 2, 2, 0, 2))
	got, err := s.Decode(shard, spec)
	if err != nil {
		t.Fatal(err)
	}
	equalShard(t, "Decode", got, []byte{1, 2, 3, 4})
	for _, c := range []struct {
		chunk        []int
		inner, index []Codec
		loc          IndexLocation
	}{
		{[]int{0}, []Codec{raw}, []Codec{raw}, IndexAtEnd},
		{[]int{1}, nil, []Codec{raw}, IndexAtEnd},
		{[]int{1}, []Codec{raw}, nil, IndexAtStart},
		{[]int{1}, []Codec{raw}, []Codec{raw}, IndexLocation(7)},
	} {
		if _, err := NewSharding(c.chunk, c.inner, c.index, c.loc); err == nil {
			t.Errorf("NewSharding(%v, %v, %v, %v): no error", c.chunk, c.inner, c.index, c.loc)
		}
	}
	if IndexAtStart.String() != "start" || IndexAtEnd.String() != "end" {
		t.Errorf("IndexLocation strings %q, %q", IndexAtStart, IndexAtEnd)
	}
}

// shardVlen returns elems in the vlen layout.
func shardVlen(elems []string) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(elems)))
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

func TestShardVlen(t *testing.T) {
	spec := ArraySpec{Shape: []int{4, 6}, DataType: DataType{"string", 0}}
	// Inner chunks of 2×3: (0, 1) and (1, 0) hold empty strings only.
	elems := make([]string, 24)
	for i := range elems {
		row, col := i/6, i%6
		if (row < 2) != (col < 3) {
			continue
		}
		elems[i] = strings.Repeat(string(rune('a'+i)), i%5) + "é\n"
	}
	nested := `[{"name": "sharding_indexed", "configuration": ` + shardConfig([]int{1, 1}, `["vlen-utf8"]`, shardBytesLE, "end") + `}]`
	for _, codecs := range []string{`["vlen-utf8"]`, `[{"name": "vlen-bytes"}, {"name": "gzip"}]`, nested} {
		for _, loc := range []string{"start", "end"} {
			s := shardCodec(t, shardConfig([]int{2, 3}, codecs, shardCRC, loc))
			enc, err := s.Encode(shardVlen(elems), spec)
			if err != nil {
				t.Fatal(err)
			}
			r := &countingReader{data: enc}
			idx, err := s.readIndex(context.Background(), r, spec)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				if _, _, ok := idx.chunk(i); ok != (i == 0 || i == 3) {
					t.Errorf("%s %s: inner chunk %d present = %v", codecs, loc, i, ok)
				}
			}
			got, err := s.Decode(enc, spec)
			if err != nil {
				t.Fatal(err)
			}
			equalShard(t, codecs+" Decode", got, shardVlen(elems))
			got, err = s.decodeRegionWithIndex(context.Background(), r, idx, spec, []int{1, 2}, []int{2, 3})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{elems[8], elems[9], elems[10], elems[14], elems[15], elems[16]}
			equalShard(t, codecs+" region", got, shardVlen(want))
		}
	}

	// Missing inner chunks read as FillValue when it is set.
	s := shardCodec(t, shardConfig([]int{1}, `["vlen-utf8"]`, shardBytesLE, "end"))
	fillSpec := ArraySpec{Shape: []int{3}, DataType: DataType{"string", 0}, FillValue: []byte("-")}
	enc, err := s.Encode(shardVlen([]string{"-", "x", "-"}), fillSpec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Decode(enc, fillSpec); err != nil || !bytes.Equal(got, shardVlen([]string{"-", "x", "-"})) {
		t.Errorf("Decode with fill value: %q, %v", got, err)
	}
	if got, err := s.Decode(enc, ArraySpec{Shape: []int{3}, DataType: DataType{"string", 0}}); err != nil || !bytes.Equal(got, shardVlen([]string{"", "x", ""})) {
		t.Errorf("Decode without fill value: %q, %v", got, err)
	}
	// Corrupt: the wrong element count in an inner chunk, bad input.
	bad := slices.Concat(shardVlen([]string{"a", "b"}), shardIndexBytes(false, m64, m64, 0, 14, m64, m64))
	if _, err := s.Decode(bad, fillSpec); !errors.Is(err, ErrCorrupt) {
		t.Errorf("inner chunk of two elements: %v, want ErrCorrupt", err)
	}
	if _, err := s.Encode(shardVlen([]string{"a"}), fillSpec); err == nil {
		t.Error("Encode of one element for three: no error")
	}
}

// BenchmarkShardDecode decodes a 256×256 float32 shard of 32×32 gzip inner
// chunks whole, and one element of it through a cached index.
func BenchmarkShardDecode(b *testing.B) {
	spec := shardSpec([]int{256, 256}, "float32", 4, 0)
	s := shardCodec(b, shardConfig([]int{32, 32}, `["bytes", {"name": "gzip", "configuration": {"level": 1}}]`, shardCRC, "end"))
	enc, err := s.Encode(shardArray(spec, []int{32, 32}, 9), spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(spec.ByteSize()))
		for b.Loop() {
			if _, err := s.Decode(enc, spec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("element", func(b *testing.B) {
		r := &countingReader{data: enc}
		idx, err := s.readIndex(context.Background(), r, spec)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			r.reads = r.reads[:0]
			if _, err := s.decodeRegionWithIndex(context.Background(), r, idx, spec, []int{100, 200}, []int{1, 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// indexSize returns the size in bytes of the encoded index of a shard
// described by decoded.
func indexSize(s *Sharding, decoded ArraySpec) (int, error) {
	l, err := s.layout(decoded)
	if err != nil {
		return 0, err
	}
	return l.indexSize, nil
}
