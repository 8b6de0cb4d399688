package codec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/internal/peertest"
)

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
			want := peertest.Oracle(t, "js/read.mjs", dir, "")
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
			got := peertest.Oracle(t, "js/read.mjs", dir, "")
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
	got := peertest.Oracle(t, "js/read.mjs", dir, "")
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
