package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
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

// indexSize returns the size in bytes of the encoded index of a shard
// described by decoded.
func indexSize(s *Sharding, decoded ArraySpec) (int, error) {
	l, err := s.layout(decoded)
	if err != nil {
		return 0, err
	}
	return l.indexSize, nil
}
