package zarr

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
)

// unpoisoned turns off, for one benchmark, the poisoning of freed buffers
// that the package's tests turn on: it costs a write of every byte freed
// and would dominate the profile of a read.
func unpoisoned(b *testing.B) {
	poisonFreed = false
	b.Cleanup(func() { poisonFreed = true })
}

// benchArray creates a written float64 array of the given shape and chunks.
func benchArray(b *testing.B, shape, chunks []int64) *Array {
	ctx := context.Background()
	st := memory.New()
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV3}); err != nil {
		b.Fatal(err)
	}
	a, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV3, Shape: shape, ChunkShape: chunks, DataType: "float64", FillValue: 0})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.WriteAt(ctx, make([]byte, a.Size()), 0); err != nil {
		b.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil {
		b.Fatal(err)
	}
	return n.Array
}

func benchRead(b *testing.B, shape, chunks []int64) {
	unpoisoned(b)
	benchReadArray(b, benchArray(b, shape, chunks))
}

// BenchmarkReadAtTilesRectilinear is BenchmarkReadAtTiles with the same
// chunks declared as a rectilinear grid (run-length pairs [128, 8]): the
// same bytes and chunks through the rectilinear read path.
func BenchmarkReadAtTilesRectilinear(b *testing.B) {
	unpoisoned(b)
	ctx := context.Background()
	a := benchArray(b, []int64{1024, 1024}, []int64{128, 128})
	st := a.st.(*memory.Store)
	doc, err := st.Get(ctx, "a/zarr.json")
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		b.Fatal(err)
	}
	m["chunk_grid"] = map[string]any{"name": "rectilinear", "configuration": map[string]any{
		"kind": "inline", "chunk_shapes": [][][]int{{{128, 8}}, {{128, 8}}}}}
	if doc, err = json.Marshal(m); err != nil {
		b.Fatal(err)
	}
	if err := st.Set(ctx, "a/zarr.json", doc); err != nil {
		b.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := h.Node(ctx, "a")
	if err != nil || n.Array == nil || !n.Array.Layout().Rectilinear() {
		b.Fatalf("%v %v", err, n)
	}
	benchReadArray(b, n.Array)
}

func benchReadArray(b *testing.B, a *Array) {
	ctx := context.Background()
	p := make([]byte, 1<<20)
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	off := int64(0)
	for b.Loop() {
		if off+int64(len(p)) > a.Size() {
			off = 0
		}
		if _, err := a.ReadAt(ctx, p, off); err != nil {
			b.Fatal(err)
		}
		off += int64(len(p))
	}
}

func BenchmarkReadAtRows(b *testing.B)   { benchRead(b, []int64{1024, 1024}, []int64{128, 1024}) }
func BenchmarkReadAtTiles(b *testing.B)  { benchRead(b, []int64{1024, 1024}, []int64{128, 128}) }
func BenchmarkReadAtNarrow(b *testing.B) { benchRead(b, []int64{1 << 17, 3}, []int64{4096, 2}) }

// fieldStore returns a store holding a v2 float32 array "a" of 64 MiB
// (rows of 1024, chunks of 512 rows = 2 MiB) with the given compressor:
// a smooth field plus quantised noise, like bench/gen.py's.
func fieldStore(b *testing.B, comp *CodecSpec) store.Store {
	ctx := context.Background()
	st := memory.New()
	const rows, cols = 16384, 1024
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV2}); err != nil {
		b.Fatal(err)
	}
	a, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV2, Shape: []int64{rows, cols}, ChunkShape: []int64{512, cols},
		DataType: "<f4", FillValue: 0, Compressor: comp})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, rows*cols*4)
	for i := range rows * cols {
		v := math.Sin(float64(i/cols)/500)*math.Cos(float64(i%cols)/70) + 0.05*rng.NormFloat64()
		binary.LittleEndian.PutUint32(buf[i*4:], math.Float32bits(float32(math.Round(v*4096)/4096)))
	}
	if _, err := a.WriteAt(ctx, buf, 0); err != nil {
		b.Fatal(err)
	}
	return st
}

// benchSequential reads the whole array in 1 MiB reads, as a FUSE reader
// does, from a freshly opened hierarchy each time (every chunk decoded once).
func benchSequential(b *testing.B, comp *CodecSpec, opts Options) {
	unpoisoned(b)
	st := fieldStore(b, comp)
	ctx := context.Background()
	p := make([]byte, 1<<20)
	for b.Loop() {
		h, err := Open(ctx, st, opts)
		if err != nil {
			b.Fatal(err)
		}
		n, err := h.Node(ctx, "a")
		if err != nil {
			b.Fatal(err)
		}
		a := n.Array
		b.SetBytes(a.Size())
		for off := int64(0); off < a.Size(); off += int64(len(p)) {
			if _, err := a.ReadAt(ctx, p, off); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkSequentialRaw(b *testing.B) { benchSequential(b, nil, Options{}) }
func BenchmarkSequentialZstd(b *testing.B) {
	benchSequential(b, &CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 3}}, Options{})
}
func BenchmarkSequentialGzip(b *testing.B) {
	benchSequential(b, &CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 5}}, Options{})
}
func BenchmarkSequentialZstdNoCache(b *testing.B) {
	benchSequential(b, &CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 3}}, Options{CacheSize: -1})
}

// BenchmarkStore reads the array "arr" of the directory store named by
// ZARRFS_BENCH_STORE (e.g. one that make bench generated) in 1 MiB reads,
// as the mount does; with -cpuprofile it shows where a read's time goes.
func BenchmarkStore(b *testing.B) {
	path := os.Getenv("ZARRFS_BENCH_STORE")
	if path == "" {
		b.Skip("ZARRFS_BENCH_STORE is not set")
	}
	unpoisoned(b)
	st, err := dir.Open(path, dir.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p := make([]byte, 1<<20)
	for b.Loop() {
		h, err := Open(ctx, st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n, err := h.Node(ctx, "arr")
		if err != nil {
			b.Fatal(err)
		}
		a := n.Array
		b.SetBytes(a.Size())
		for off := int64(0); off < a.Size(); off += int64(len(p)) {
			if _, err := a.ReadAt(ctx, p, off); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRandomReads reads 4 KiB at random offsets, as a program
// seeking in the file does: the reads that decode part of a chunk (a
// Blosc chunk's blocks, a shard's inner chunks) or read uncompressed
// chunk files straight into the reply.
func BenchmarkRandomReads(b *testing.B) {
	shard := CodecSpec{Name: "sharding_indexed", Configuration: map[string]any{"chunk_shape": []int64{64, 64},
		"codecs": []any{map[string]any{"name": "bytes"}, map[string]any{"name": "zstd", "configuration": map[string]any{"level": 1}}}}}
	cases := []struct {
		name string
		meta ArrayMeta
		dir  bool
	}{
		{"blosc", ArrayMeta{Format: FormatV2, Shape: []int64{4096, 1024}, ChunkShape: []int64{512, 1024}, DataType: "<f4", FillValue: 0,
			Compressor: &CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "lz4", "clevel": 5, "shuffle": 1}}}, false},
		{"sharded", ArrayMeta{Format: FormatV3, Shape: []int64{4096, 1024}, ChunkShape: []int64{1024, 1024}, DataType: "float32", FillValue: 0,
			Codecs: []CodecSpec{shard}}, false},
		{"raw-dir", ArrayMeta{Format: FormatV2, Shape: []int64{4096, 1024}, ChunkShape: []int64{512, 1024}, DataType: "<f4", FillValue: 0}, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			unpoisoned(b)
			ctx := context.Background()
			var st WritableStore = memory.New()
			if c.dir {
				d, err := dir.Open(b.TempDir(), dir.Options{})
				if err != nil {
					b.Fatal(err)
				}
				st = d
			}
			if err := CreateGroup(ctx, st, "", GroupMeta{Format: c.meta.Format}); err != nil {
				b.Fatal(err)
			}
			w, err := CreateArray(ctx, st, "a", c.meta)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, w.Size())
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < len(buf); i += 4 {
				binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(float32(rng.NormFloat64())))
			}
			if _, err := w.WriteAt(ctx, buf, 0); err != nil {
				b.Fatal(err)
			}
			h, err := Open(ctx, st, Options{})
			if err != nil {
				b.Fatal(err)
			}
			n, err := h.Node(ctx, "a")
			if err != nil {
				b.Fatal(err)
			}
			a := n.Array
			p := make([]byte, 4096)
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				off := rng.Int64N(a.Size()/4096-1) * 4096
				if _, err := a.ReadAt(ctx, p, off+1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadV2Tree loads every node of a v2 hierarchy of 1,000 arrays
// (10 groups of 100, as make bench's tree) in a directory store, each
// time in a freshly opened hierarchy: the documents' reads and their
// parsing, what listing a fresh mount costs per node.
func BenchmarkLoadV2Tree(b *testing.B) {
	const groups, per = 10, 100
	ctx := context.Background()
	st, err := dir.Open(b.TempDir(), dir.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV2}); err != nil {
		b.Fatal(err)
	}
	for g := range groups {
		grp := fmt.Sprintf("g%02d", g)
		if err := CreateGroup(ctx, st, grp, GroupMeta{Format: FormatV2}); err != nil {
			b.Fatal(err)
		}
		for a := range per {
			if _, err := CreateArray(ctx, st, fmt.Sprintf("%s/a%03d", grp, a), ArrayMeta{Format: FormatV2,
				Shape: []int64{64}, ChunkShape: []int64{8}, DataType: "<i4", FillValue: 0}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := Open(ctx, st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		grps, err := h.Children(ctx, "")
		if err != nil || len(grps) != groups {
			b.Fatal(len(grps), err)
		}
		for _, g := range grps {
			if arrs, err := h.Children(ctx, g.Path); err != nil || len(arrs) != per {
				b.Fatal(len(arrs), err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*groups*per), "ns/array")
}

// BenchmarkOpenConsolidated opens a v2 hierarchy of 10,000 arrays whose
// .zmetadata (zarr-python's layout) holds every document, and loads one
// array: what opening a large remote hierarchy costs, the store aside.
func BenchmarkOpenConsolidated(b *testing.B) {
	const arrays = 10000
	ctx := context.Background()
	// The .zarray of BenchmarkLoadV2Tree's arrays, as CreateArray writes it.
	one := memory.New()
	if _, err := CreateArray(ctx, one, "a", ArrayMeta{Format: FormatV2,
		Shape: []int64{64}, ChunkShape: []int64{8}, DataType: "<i4", FillValue: 0}); err != nil {
		b.Fatal(err)
	}
	zarray, err := one.Get(ctx, "a/.zarray")
	if err != nil {
		b.Fatal(err)
	}
	var doc bytes.Buffer
	doc.WriteString("{\n    \"metadata\": {\n        \".zgroup\": {\n            \"zarr_format\": 2\n        }")
	for i := range arrays {
		fmt.Fprintf(&doc, ",\n        \"a%05d/.zarray\": %s", i, strings.ReplaceAll(string(zarray), "\n", "\n        "))
	}
	doc.WriteString("\n    },\n    \"zarr_consolidated_format\": 1\n}")
	st := memory.New()
	if err := st.Set(ctx, ".zmetadata", doc.Bytes()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := Open(ctx, st, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Node(ctx, "a01234"); err != nil {
			b.Fatal(err)
		}
	}
}
