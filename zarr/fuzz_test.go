package zarr

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

// FuzzReadChunk reads arrays whose stored chunks are arbitrary bytes
// (plain, gzip-compressed, or shards read whole and in part): the engine
// must fail cleanly, never panic or return short reads.
func FuzzReadChunk(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(0), uint8(0))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(1), uint8(3))
	f.Add(append(make([]byte, 8), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0), uint8(2), uint8(1))
	// The codec package's hostile chunks (made for other shapes, so
	// mostly wrong sizes here): raw, gzip and shard ones in their modes.
	for mode, glob := range []string{"raw-*", "gzip-*", "shard-*"} {
		paths, _ := filepath.Glob(filepath.Join("..", "codec", "testdata", "hostile", glob))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, uint8(mode), uint8(len(b)))
			}
		}
	}
	f.Fuzz(func(t *testing.T, chunk []byte, mode, off uint8) {
		ctx := context.Background()
		codecs := `[{"name": "bytes", "configuration": {"endian": "big"}}]`
		switch mode % 3 {
		case 1:
			codecs = `[{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}]`
		case 2:
			codecs = `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 2],
			"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "start"}}]`
		}
		doc := `{"zarr_format": 3, "node_type": "array", "shape": [3, 3], "data_type": "int16",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 1, "codecs": ` + codecs + `}`
		st, err := memory.FromMap(map[string][]byte{"zarr.json": []byte(doc), "c/0/0": chunk, "c/1/1": chunk})
		if err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node(ctx, "")
		if err != nil || n.Array == nil || n.Array.Err != nil {
			t.Fatalf("node: %v", err)
		}
		// A small read (part of a shard), then the whole array.
		o := int64(off % 18)
		for _, p := range [][]byte{make([]byte, 2), make([]byte, 18)} {
			k, err := n.Array.ReadAt(ctx, p, o)
			if err == nil && k != len(p) {
				t.Errorf("ReadAt = %d bytes without an error", k)
			}
			o = 0
		}
	})
}
