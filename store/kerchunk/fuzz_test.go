package kerchunk

import (
	"context"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/kerchunk/kerchunktest"
	"github.com/zarrfs/zarrfs/store/memory"
)

// FuzzOpenJSON opens arbitrary reference files and reads every key they
// list: errors, never a panic, and a missing key is never a bad one.
func FuzzOpenJSON(f *testing.F) {
	for _, b := range peertest.Files(f, "store/kerchunk/testdata/hostile/*.json") {
		f.Add(b)
	}
	f.Add([]byte(`{"version": 1, "templates": {"u": "s3://b/f"}, "gen": [{"key": "g/{{i}}", "url": "{{u}}", "offset": "{{i*2}}", "length": "2", "dimensions": {"i": {"stop": 40}}}], "refs": {"a": ["{{u}}", 1, 2]}}`))
	f.Add([]byte(`{"a/.zarray": "{}", "a/0": ["f", 0, 4], "b": "base64:AAA="}`))
	file := make([]byte, 64)
	f.Fuzz(func(t *testing.T, data []byte) {
		ts := newTargets(t, map[string][]byte{"s3://b/f": file, "https://refs.example/f": file})
		s, err := OpenJSON(data, Options{Base: mustURL(t, "https://refs.example/refs.json"), Open: ts.open})
		if err != nil {
			return
		}
		ctx := context.Background()
		keys, err := s.ListPrefix(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if _, err := s.Get(ctx, k); errors.Is(err, store.ErrNotExist) {
				t.Fatalf("listed key %q: %v", k, err)
			}
			s.GetRange(ctx, k, store.SuffixRange(3))
		}
		s.ListDir(ctx, "")
	})
}

// FuzzParquetRecord decodes arbitrary refs.N.parq files, and opens
// arbitrary .zmetadata documents as Parquet reference directories.
func FuzzParquetRecord(f *testing.F) {
	u := "s3://b/f"
	for _, rows := range [][]kerchunktest.Row{
		{{Path: &u, Offset: 1, Size: 2}, {Raw: []byte("x")}, {}},
		{{Path: &u}, {Path: &u, Offset: -1, Size: 3}},
	} {
		b, err := kerchunktest.EncodeRecord(rows)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"metadata": {"a/.zarray": {"shape": [10, 10], "chunks": [3, 3]}, ".zgroup": {}}, "record_size": 2}`))
	f.Add([]byte(`{"metadata": {"a/.zarray": {"shape": [1e300], "chunks": [-1]}}, "record_size": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, _, err := decodeRecord(data, 100)
		if err == nil && len(rows) > 100 {
			t.Fatalf("%d rows past the record size", len(rows))
		}
		// The same bytes as a directory's .zmetadata.
		if IsParquetIndex(data) {
			dir, _ := memory.FromMap(map[string][]byte{".zmetadata": data})
			s, err := OpenParquet(data, dir, Options{})
			if err != nil {
				return
			}
			ctx := context.Background()
			keys, _ := s.ListPrefix(ctx, "")
			for _, k := range keys {
				s.Get(ctx, k)
				s.Get(ctx, k+"/0.0")
			}
		}
	})
}
