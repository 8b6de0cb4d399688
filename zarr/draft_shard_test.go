package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// writeDraftSharded writes, as the 2022 draft's sharding storage
// transformer describes it, a 5×6 >i2 array of the values 0…29 in 2×2
// gzip chunks, 2×2 chunks per shard, into a zarr-python 2.13 layout: each
// shard holds its chunks in reverse order after 3 unused bytes, then the
// index of (offset, nbytes) little-endian uint64 pairs in C order, 2^64-1
// for chunks not stored. Chunk (1, 1) and shard (1, 1) are not stored. It
// returns the store and the expected content (fill 7 where nothing is stored).
func writeDraftSharded(t *testing.T, sep string) (*memory.Store, []byte) {
	t.Helper()
	ctx := t.Context()
	st := memory.New()
	entry := `{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`
	meta := `{"shape": [5, 6], "data_type": ">i2", "chunk_grid": {"type": "regular", "chunk_shape": [2, 2], "separator": "` + sep + `"},
		"chunk_memory_layout": "C", "compressor": {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 1}},
		"fill_value": 7, "extensions": [], "attributes": {},
		"storage_transformers": [{"extension": "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0", "type": "indexed", "configuration": {"chunks_per_shard": [2, 2]}}]}`
	must(t, st.Set(ctx, "zarr.json", []byte(entry)))
	must(t, st.Set(ctx, "meta/root/s.array.json", []byte(meta)))
	gz, err := codec.New("gzip", codec.Config{"level": json.RawMessage("1")})
	must(t, err)
	want := make([]byte, 2*30)
	for i := range 30 {
		binary.LittleEndian.PutUint16(want[2*i:], uint16(i))
	}
	stored := func(r, c int64) bool { return r < 3 && c < 3 && !(r == 1 && c == 1) && !(r >= 2 && c >= 2) }
	for r := range int64(3) {
		for c := range int64(3) {
			for i := r * 2; i < min(r*2+2, 5); i++ {
				for j := c * 2; j < min(c*2+2, 6); j++ {
					if !stored(r, c) {
						binary.LittleEndian.PutUint16(want[2*(i*6+j):], 7)
					}
				}
			}
		}
	}
	for sr := range int64(2) {
		for sc := range int64(2) {
			if sr == 1 && sc == 1 {
				continue
			}
			body := []byte{0xee, 0xee, 0xee}
			index := bytes.Repeat([]byte{0xff}, 16*4)
			for pos := 3; pos >= 0; pos-- {
				r, c := sr*2+int64(pos/2), sc*2+int64(pos%2)
				if !stored(r, c) {
					continue
				}
				var chunk []byte
				for i := r * 2; i < r*2+2; i++ {
					for j := c * 2; j < c*2+2; j++ {
						v := uint16(7)
						if i < 5 && j < 6 {
							v = uint16(i*6 + j)
						}
						chunk = binary.BigEndian.AppendUint16(chunk, v)
					}
				}
				enc, err := gz.(codec.BytesToBytes).Encode(chunk)
				must(t, err)
				binary.LittleEndian.PutUint64(index[16*pos:], uint64(len(body)))
				binary.LittleEndian.PutUint64(index[16*pos+8:], uint64(len(enc)))
				body = append(body, enc...)
			}
			key := fmt.Sprintf("data/root/s/c%d%s%d", sr, sep, sc)
			must(t, st.Set(ctx, key, append(body, index...)))
		}
	}
	return st, want
}

func TestDraftSharding(t *testing.T) {
	for _, sep := range []string{"/", "."} {
		t.Run("separator "+sep, func(t *testing.T) {
			st, want := writeDraftSharded(t, sep)
			h, err := Open(t.Context(), st, Options{})
			must(t, err)
			_, got := readArray(t, h, "s")
			if !bytes.Equal(got, want) {
				t.Errorf("content\n got %x\nwant %x", got, want)
			}
		})
	}
}

func TestDraftShardingCorrupt(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name   string
		damage func(shard []byte) []byte
	}{
		{"shorter than its index", func(b []byte) []byte { return b[:20] }},
		{"chunk past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-64:], uint64(len(b)))
			return b
		}},
		{"offset overflows", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-64:], math.MaxUint64-1)
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _ := writeDraftSharded(t, "/")
			shard, err := st.Get(ctx, "data/root/s/c0/0")
			must(t, err)
			must(t, st.Set(ctx, "data/root/s/c0/0", c.damage(bytes.Clone(shard))))
			h, err := Open(ctx, st, Options{})
			must(t, err)
			n, err := h.Node(ctx, "s")
			if err != nil || n.Array == nil || n.Array.Err != nil {
				t.Fatalf("node: %v %+v", err, n)
			}
			buf := make([]byte, 4)
			if _, err := n.Array.ReadAt(ctx, buf, 0); !errors.Is(err, codec.ErrCorrupt) {
				t.Errorf("ReadAt: %v, want codec.ErrCorrupt", err)
			}
		})
	}
}

// FuzzDraftShards reads a chunk of a 2022-draft array whose
// storage_transformers are arbitrary, through the store of shards they
// describe, whose one shard is arbitrary.
func FuzzDraftShards(f *testing.F) {
	f.Add([]byte(`[{"extension": "https://purl.org/zarr/spec/extensions/storage_transformers/sharding/1.0", "type": "indexed", "configuration": {"chunks_per_shard": [2, 2]}}]`), "data/root/s/c3/1", []byte{1, 2, 3})
	l, err := meta.DetectDraft([]byte(`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte, key string, shard []byte) {
		doc := `{"shape": [6, 6], "data_type": "<i2", "chunk_grid": {"type": "regular", "chunk_shape": [1, 1], "separator": "/"},
			"chunk_memory_layout": "C", "compressor": null, "fill_value": 0, "extensions": [], "attributes": {},
			"storage_transformers": ` + string(raw) + `}`
		_, a, err := l.ParseNode("array.json", KindArray, []byte(doc), "s")
		if err != nil {
			if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if a.DraftShards() == nil {
			return
		}
		st := memory.New()
		s := &draftShards{Store: st, DraftShards: a.DraftShards()}
		if k, _, ok := s.Locate(key); ok {
			must(t, st.Set(t.Context(), k, shard))
		}
		// Any shard content reads as a chunk, a missing chunk or an error; never a panic.
		_, _ = s.Get(t.Context(), key)
	})
}
