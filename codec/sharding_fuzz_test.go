package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

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
