// Command benchdata writes the arrays of the zarrfs benchmark that zarrfs
// itself writes (through its engine, zarr.CreateArray and WriteRegion):
//
//	benchdata convert SRC DST zstd|sharded   copy SRC's array "arr" (any format zarrfs reads) to a v3 array DST/arr
//	benchdata synth DST MIB                  a v3 zstd float32 array DST/arr of about MIB MiB (smooth field plus noise)
//	benchdata tree DST N                     a v2 hierarchy of N small arrays in groups of 100, each with 8 chunks
//	benchdata consolidated DST N [bare]      the same hierarchy of metadata only (no chunks), with a .zmetadata as
//	                                         zarr-python writes it (bare: only the root's .zgroup and .zmetadata)
//	benchdata icechunk SRC DST               an Icechunk repository DST holding SRC's v2 zstd float32 array "arr" as
//	                                         a v3 array with the same chunks, native (bench/remote.py)
//
// bench/bench.py runs it; see BENCH.md.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/internal/treegen"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// Columns and rows per chunk of the benchmark arrays: float32 chunks of
// 512 × 1024 elements, 2 MiB each. Shards hold 4 of them (8 MiB).
const (
	cols        = 1024
	chunkRows   = 512
	shardRows   = 4 * chunkRows
	slabRows    = 8192 // rows copied at once (32 MiB)
	zstdLevel   = 3
	arrayName   = "arr"
	treeGroup   = 100
	treeElems   = 64
	treeChunk   = 8
	float32Size = 4
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchdata:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	ctx := context.Background()
	switch {
	case len(args) == 4 && args[0] == "convert":
		return convert(ctx, args[1], args[2], args[3])
	case len(args) == 3 && args[0] == "synth":
		mib, err := strconv.Atoi(args[2])
		if err != nil || mib <= 0 {
			return fmt.Errorf("synth: bad size %q", args[2])
		}
		return synth(ctx, args[1], mib)
	case len(args) == 3 && args[0] == "tree":
		n, err := strconv.Atoi(args[2])
		if err != nil || n <= 0 {
			return fmt.Errorf("tree: bad count %q", args[2])
		}
		return tree(ctx, args[1], n)
	case len(args) == 3 && args[0] == "icechunk":
		return icechunkCopy(args[1], args[2])
	case (len(args) == 3 || len(args) == 4 && args[3] == "bare") && args[0] == "consolidated":
		n, err := strconv.Atoi(args[2])
		if err != nil || n <= 0 {
			return fmt.Errorf("consolidated: bad count %q", args[2])
		}
		return treegen.Tree{Arrays: n, GroupSize: treeGroup, Documents: len(args) == 3}.Write(args[1])
	}
	return fmt.Errorf("usage: benchdata convert SRC DST zstd|sharded | synth DST MIB | tree DST N | consolidated DST N [bare] | icechunk SRC DST")
}

func zstdSpec() zarr.CodecSpec {
	return zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": zstdLevel, "checksum": false}}
}

var bytesLE = map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}

// create makes DST (which must not exist) a v3 group holding an empty
// float32 array arr of the given rows, zstd-compressed or sharded.
func create(ctx context.Context, dst string, rows int64, kind string) (*zarr.Array, error) {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, err
	}
	st, err := dir.Open(dst, dir.Options{})
	if err != nil {
		return nil, err
	}
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		return nil, err
	}
	m := zarr.ArrayMeta{Format: zarr.FormatV3, Shape: []int64{rows, cols}, DataType: "float32", FillValue: 0}
	switch kind {
	case "zstd":
		m.ChunkShape = []int64{chunkRows, cols}
		m.Codecs = []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, zstdSpec()}
	case "sharded":
		m.ChunkShape = []int64{shardRows, cols}
		m.Codecs = []zarr.CodecSpec{{Name: "sharding_indexed", Configuration: map[string]any{
			"chunk_shape":    []int64{chunkRows, cols},
			"codecs":         []any{bytesLE, map[string]any{"name": "zstd", "configuration": map[string]any{"level": zstdLevel, "checksum": false}}},
			"index_codecs":   []any{bytesLE, map[string]any{"name": "crc32c"}},
			"index_location": "end",
		}}}
	default:
		return nil, fmt.Errorf("unknown kind %q (zstd or sharded)", kind)
	}
	return zarr.CreateArray(ctx, st, arrayName, m)
}

// convert copies SRC/arr into a new v3 array DST/arr.
func convert(ctx context.Context, src, dst, kind string) error {
	sst, err := dir.Open(src, dir.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	h, err := zarr.Open(ctx, sst, zarr.Options{CacheSize: -1})
	if err != nil {
		return err
	}
	n, err := h.Node(ctx, arrayName)
	if err != nil {
		return err
	}
	in := n.Array
	if in == nil || len(in.Shape()) != 2 || in.Shape()[1] != cols || in.DataType().NumPy != "<f4" {
		return fmt.Errorf("%s: want a float32 array %s of %d columns", src, arrayName, cols)
	}
	out, err := create(ctx, dst, in.Shape()[0], kind)
	if err != nil {
		return err
	}
	buf := make([]byte, slabRows*cols*float32Size)
	for r := int64(0); r < in.Shape()[0]; r += slabRows {
		rows := min(slabRows, in.Shape()[0]-r)
		b := buf[:rows*cols*float32Size]
		if _, err := in.ReadAt(ctx, b, r*cols*float32Size); err != nil {
			return err
		}
		if err := out.WriteRegion(ctx, []int64{r, 0}, []int64{rows, cols}, b); err != nil {
			return err
		}
	}
	return nil
}

// field fills b (whole rows from row r0) with the benchmark's values: a
// smooth field plus noise, quantised to 1/4096 so that it compresses
// moderately (bench/gen.py makes the same kind of data).
func field(b []byte, r0 int64, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(r0)))
	for i := 0; i < len(b)/float32Size; i++ {
		r, c := r0+int64(i/cols), float64(i%cols)
		v := math.Sin(float64(r)/500)*math.Cos(c/70) + 0.05*rng.NormFloat64()
		v = math.Round(v*4096) / 4096
		binary.LittleEndian.PutUint32(b[i*float32Size:], math.Float32bits(float32(v)))
	}
}

// synth writes a v3 zstd array of about mib MiB.
func synth(ctx context.Context, dst string, mib int) error {
	rows := int64(mib) << 20 / (cols * float32Size)
	out, err := create(ctx, dst, rows, "zstd")
	if err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	for r := int64(0); r < rows; r += slabRows {
		n := min(slabRows, rows-r)
		b := make([]byte, n*cols*float32Size)
		g := new(errgroup.Group)
		per := (n + int64(workers) - 1) / int64(workers)
		for w := int64(0); w < n; w += per {
			g.Go(func() error {
				hi := min(w+per, n)
				field(b[w*cols*float32Size:hi*cols*float32Size], r+w, 1)
				return nil
			})
		}
		g.Wait()
		if err := out.WriteRegion(ctx, []int64{r, 0}, []int64{n, cols}, b); err != nil {
			return err
		}
	}
	return nil
}

// tree writes n int32 arrays of treeElems elements in treeChunk-element
// chunks, all chunks present, in groups of treeGroup: g0000/a000 …
func tree(ctx context.Context, dst string, n int) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	st, err := dir.Open(dst, dir.Options{})
	if err != nil {
		return err
	}
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
		return err
	}
	data := make([]byte, treeElems*4)
	for i := range treeElems {
		binary.LittleEndian.PutUint32(data[i*4:], uint32(i))
	}
	g := new(errgroup.Group)
	g.SetLimit(runtime.GOMAXPROCS(0) * 2)
	for i := 0; i < n; i++ {
		grp := fmt.Sprintf("g%04d", i/treeGroup)
		if i%treeGroup == 0 {
			if err := zarr.CreateGroup(ctx, st, grp, zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
				return err
			}
		}
		path := fmt.Sprintf("%s/a%03d", grp, i%treeGroup)
		g.Go(func() error {
			a, err := zarr.CreateArray(ctx, st, path, zarr.ArrayMeta{Format: zarr.FormatV2, Shape: []int64{treeElems},
				ChunkShape: []int64{treeChunk}, DataType: "<i4", FillValue: 0})
			if err != nil {
				return err
			}
			_, err = a.WriteAt(ctx, data, 0)
			return err
		})
	}
	return g.Wait()
}
