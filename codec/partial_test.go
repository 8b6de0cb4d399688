package codec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"testing"
)

// intoReader is a countingReader that also reads into the caller's buffer
// and reports the value's size, as the directory store's files do.
type intoReader struct{ countingReader }

func (r *intoReader) ReadInto(_ context.Context, p []byte, off int64) (int64, error) {
	if r.data == nil {
		return 0, fmt.Errorf("chunk: %w", fs.ErrNotExist)
	}
	size := int64(len(r.data))
	if off+int64(len(p)) > size {
		return size, io.ErrUnexpectedEOF
	}
	copy(p, r.data[off:])
	return size, nil
}

// memoReader is a countingReader that is also a Memo, remembering a value
// per part.
type memoReader struct {
	countingReader
	mu    sync.Mutex
	kept  map[int64]Memoized
	loads map[int64]int
}

func (r *memoReader) Remember(ctx context.Context, part int64, load func(context.Context) (Memoized, error)) (Memoized, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.kept[part]; ok {
		return v, nil
	}
	if r.kept == nil {
		r.kept, r.loads = map[int64]Memoized{}, map[int64]int{}
	}
	r.loads[part]++
	v, err := load(ctx)
	if err == nil {
		r.kept[part] = v
	}
	return v, err
}

// TestPipelineParts: which chains decode parts of a chunk, and how.
func TestPipelineParts(t *testing.T) {
	spec := ArraySpec{Shape: []int{8, 8}, DataType: DataType{Name: "uint16", Size: 2}, FillValue: []byte{0, 0}}
	vlen := ArraySpec{Shape: []int{8}, DataType: DataType{Name: "string"}}
	shard := mustParse(t, `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4]}}]`)[0]
	blosc := mustNew(t, `{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}`)
	for _, c := range []struct {
		name   string
		codecs []Codec
		spec   ArraySpec
		want   Parts
	}{
		{"bytes", []Codec{BytesCodec{}}, spec, PartsStored},
		{"big-endian bytes", []Codec{BytesCodec{Big: true}}, spec, PartsNone},
		{"sharding", []Codec{shard}, spec, PartsDecoded},
		{"bytes, blosc", []Codec{BytesCodec{}, blosc}, spec, PartsDecoded},
		{"big-endian bytes, blosc", []Codec{BytesCodec{Big: true}, blosc}, spec, PartsNone},
		{"bytes, gzip", []Codec{BytesCodec{}, mustNew(t, `{"id": "gzip", "level": 1}`)}, spec, PartsNone},
		{"bytes, blosc, crc32c", []Codec{BytesCodec{}, blosc, mustNew(t, `{"id": "crc32c"}`)}, spec, PartsNone},
		{"transpose, bytes", []Codec{mustParse(t, `[{"name": "transpose", "configuration": {"order": [1, 0]}}]`)[0], BytesCodec{}}, spec, PartsNone},
		{"vlen", []Codec{mustNew(t, `{"id": "vlen-utf8"}`)}, vlen, PartsNone},
	} {
		p, err := NewPipeline(c.codecs, c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.Parts(); got != c.want {
			t.Errorf("%s: Parts = %v, want %v", c.name, got, c.want)
		}
		if c.want == PartsNone {
			if err := p.DecodeParts(context.Background(), &countingReader{}, [][]byte{make([]byte, 2)}, []int64{0}); err == nil {
				t.Errorf("%s: DecodeParts succeeded", c.name)
			}
		}
	}
}

// mustParse builds a v3 codec list.
func mustParse(t *testing.T, list string) []Codec {
	t.Helper()
	cs, err := ParseCodecList([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestDecodeParts decodes parts of chunks through every partial decoder
// and compares them with the same bytes of the whole decoded chunk.
func TestDecodeParts(t *testing.T) {
	spec := ArraySpec{Shape: []int{16, 24}, DataType: DataType{Name: "uint16", Size: 2}, FillValue: []byte{7, 0}}
	chunk := testData(spec.ByteSize(), 3)
	copy(chunk[2*(8*24):], bytes.Repeat([]byte{7, 0}, 4*24)) // rows 8-11: an inner chunk row of fill value
	// Parts in bytes: one, several in one row, wrapping rows, far apart.
	parts := [][][2]int64{
		{{100, 6}},
		{{2, 4}, {10, 2}, {40, 8}},
		{{46, 100}},
		{{0, 2}, {700, 68}},
		{{2 * 8 * 24, 2 * 24}}, // in the fill-value rows
	}
	for _, c := range []struct {
		name   string
		codecs string
		reader func(data []byte) RangeReader
	}{
		{"bytes", `[{"name": "bytes", "configuration": {"endian": "little"}}]`, func(d []byte) RangeReader { return &intoReader{countingReader{data: d}} }},
		{"bytes by ranges", `[{"name": "bytes"}]`, func(d []byte) RangeReader { return &countingReader{data: d} }},
		{"blosc", `["bytes", {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 64}}]`,
			func(d []byte) RangeReader { return &countingReader{data: d} }},
		{"sharding", `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 6]}}]`, func(d []byte) RangeReader { return &countingReader{data: d} }},
		{"sharding, memo", `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 6]}}]`, func(d []byte) RangeReader { return &memoReader{countingReader: countingReader{data: d}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPipeline(mustParse(t, c.codecs), spec)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := p.Encode(chunk)
			if err != nil {
				t.Fatal(err)
			}
			r := c.reader(enc)
			for _, ps := range parts {
				dsts, offs := make([][]byte, len(ps)), make([]int64, len(ps))
				for i, pt := range ps {
					dsts[i], offs[i] = make([]byte, pt[1]), pt[0]
				}
				if err := p.DecodeParts(context.Background(), r, dsts, offs); err != nil {
					t.Fatalf("DecodeParts %v: %v", ps, err)
				}
				for i, pt := range ps {
					if !bytes.Equal(dsts[i], chunk[pt[0]:pt[0]+pt[1]]) {
						t.Errorf("part %v differs", pt)
					}
				}
			}
			if m, ok := r.(*memoReader); ok && m.loads[0] != 1 {
				t.Errorf("the shard index was read %d times, want once", m.loads[0])
			}
			// A missing chunk is the reader's error.
			if err := p.DecodeParts(context.Background(), c.reader(nil), [][]byte{make([]byte, 2)}, []int64{0}); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("missing chunk: %v, want fs.ErrNotExist", err)
			}
			// Parts outside the chunk are refused.
			if err := p.DecodeParts(context.Background(), r, [][]byte{make([]byte, 4)}, []int64{int64(len(chunk)) - 2}); err == nil {
				t.Error("a part past the end of the chunk decoded")
			}
		})
	}
}

// TestDecodePartsWrongSize: a stored chunk of another size than the
// decoded one is corrupt for a partial decode too, where the decoder can
// tell.
func TestDecodePartsWrongSize(t *testing.T) {
	spec := ArraySpec{Shape: []int{64}, DataType: DataType{Name: "uint8", Size: 1}, FillValue: []byte{0}}
	ctx := context.Background()
	p, err := NewPipeline([]Codec{BytesCodec{}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{make([]byte, 63), make([]byte, 65)} {
		err := p.DecodeParts(ctx, &intoReader{countingReader{data: data}}, [][]byte{make([]byte, 4)}, []int64{0})
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("bytes, %d stored: %v, want ErrCorrupt", len(data), err)
		}
	}
	if err := p.DecodeParts(ctx, &countingReader{data: make([]byte, 10)}, [][]byte{make([]byte, 4)}, []int64{8}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bytes by ranges, too short: %v, want ErrCorrupt", err)
	}
	if err := (BytesCodec{Big: true}).DecodeParts(ctx, &countingReader{data: make([]byte, 64)}, spec, [][]byte{make([]byte, 4)}, []int64{0}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("big-endian bytes: %v, want ErrUnsupported", err)
	}
	bp, err := NewPipeline([]Codec{BytesCodec{}, mustNew(t, `{"id": "blosc", "cname": "lz4"}`)}, ArraySpec{Shape: []int{32}, DataType: spec.DataType, FillValue: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := p.Encode(make([]byte, 64)) // 64 bytes through bytes alone: no Blosc header
	if err != nil {
		t.Fatal(err)
	}
	if err := bp.DecodeParts(ctx, &countingReader{data: enc}, [][]byte{make([]byte, 4)}, []int64{0}); err == nil {
		t.Error("blosc, not a Blosc chunk: decoded")
	}
	bigger, err := NewPipeline([]Codec{BytesCodec{}, mustNew(t, `{"id": "blosc", "cname": "lz4"}`)}, spec)
	if err != nil {
		t.Fatal(err)
	}
	enc, err = bigger.Encode(make([]byte, 64))
	if err != nil {
		t.Fatal(err)
	}
	if err := bp.DecodeParts(ctx, &countingReader{data: enc}, [][]byte{make([]byte, 4)}, []int64{0}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("blosc, 64 bytes for 32: %v, want ErrCorrupt", err)
	}
}

// TestDecodePartsRemembersInnerChunks: through a Memo, a part that lies
// in one inner chunk decodes that inner chunk whole, once; another part
// of the same inner chunk then reads nothing. A part spanning inner
// chunks, or with no Memo, is read as before.
func TestDecodePartsRemembersInnerChunks(t *testing.T) {
	spec := ArraySpec{Shape: []int{16, 24}, DataType: DataType{Name: "uint16", Size: 2}, FillValue: []byte{7, 0}}
	chunk := testData(spec.ByteSize(), 5)
	p, err := NewPipeline(mustParse(t, `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 6], "codecs": ["bytes", {"name": "gzip"}]}}]`), spec)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := p.Encode(chunk)
	if err != nil {
		t.Fatal(err)
	}
	r := &memoReader{countingReader: countingReader{data: enc}}
	read := func(off, n int64) int {
		t.Helper()
		before := len(r.reads)
		dst := make([]byte, n)
		if err := p.DecodeParts(context.Background(), r, [][]byte{dst}, []int64{off}); err != nil {
			t.Fatalf("DecodeParts %d+%d: %v", off, n, err)
		}
		if !bytes.Equal(dst, chunk[off:off+n]) {
			t.Errorf("part %d+%d differs", off, n)
		}
		return len(r.reads) - before
	}
	row := int64(2 * 24) // bytes per row of the shard
	// Inner chunk (1, 1): rows 4-7, columns 6-11.
	if n := read(5*row+2*7, 2*3); n != 2 {
		t.Errorf("first part of inner chunk (1, 1): %d reads, want 2 (index, inner chunk)", n)
	}
	if n := read(7*row+2*6, 2*6); n != 0 {
		t.Errorf("second part of inner chunk (1, 1): %d reads, want none", n)
	}
	if r.loads[1*4+1+1] != 1 {
		t.Errorf("inner chunk (1, 1) decoded %d times, want once", r.loads[1*4+1+1])
	}
	// Columns 10-13 span inner chunks (1, 1) and (1, 2): read, not kept.
	if n := read(4*row+2*10, 2*4); n != 1 {
		t.Errorf("part spanning inner chunks: %d reads, want 1", n)
	}
	if len(r.kept) != 2 {
		t.Errorf("%d parts kept, want 2 (index, one inner chunk)", len(r.kept))
	}
	// Without a Memo every part reads its inner chunk.
	plain := &countingReader{data: enc}
	for range 2 {
		if err := p.DecodeParts(context.Background(), plain, [][]byte{make([]byte, 6)}, []int64{5*row + 2*7}); err != nil {
			t.Fatal(err)
		}
	}
	if len(plain.reads) != 4 {
		t.Errorf("no memo: %d reads for two parts, want 4", len(plain.reads))
	}
}
