package zarr

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store/dir"
)

// openDir opens the hierarchy in the directory root.
func openDir(t *testing.T, root string) *Hierarchy {
	t.Helper()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(context.Background(), st, Options{CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// readArray returns the readable array at p and its whole content.
func readArray(t *testing.T, h *Hierarchy, p string) (*Node, []byte) {
	t.Helper()
	ctx := context.Background()
	n, err := h.Node(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if n.Err != nil || n.Array == nil || n.Array.Err != nil {
		t.Fatalf("node %q: error %v, array %+v", p, n.Err, n.Array)
	}
	got := make([]byte, n.Array.Size())
	if k, err := n.Array.ReadAt(ctx, got, 0); k != len(got) || err != nil && len(got) > 0 {
		t.Fatalf("node %q: ReadAt = %d, %v", p, k, err)
	}
	return n, got
}

// v1Store describes an array for writeV1.
type v1Store struct {
	shape, chunks []int64
	dtype         string
	item, swap    int // element size; size of the parts a big-endian dtype swaps (0: none)
	order         string
	compression   string
	opts          any
	fill          any
	fillElem      []byte // the fill value as one little-endian element
	sep           string // the chunk key separator of a v3 draft grid ("" for the default)
	missing       map[string]bool
}

// writeV1 writes a v1 array holding data (little-endian, C order) as the
// v1 persistence document describes it: "meta" with the mandatory fields,
// "attrs", and one file per chunk named by the chunk indices joined with
// ".", each the chunk's elements in the array's order and byte order,
// compressed. Edge chunks are padded with the fill value; chunks named in
// s.missing are not written. It returns the array's expected content.
func writeV1(t *testing.T, root string, s v1Store, data []byte, attrs string) []byte {
	t.Helper()
	meta := map[string]any{
		"shape": s.shape, "chunks": s.chunks, "dtype": s.dtype, "fill_value": s.fill,
		"compression": s.compression, "compression_opts": s.opts, "order": s.order, "zarr_format": 1,
	}
	doc, err := json.MarshalIndent(meta, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(root, "meta"), doc, 0o644))
	must(t, os.WriteFile(filepath.Join(root, "attrs"), []byte(attrs), 0o644))
	return writeChunks(t, root, s, data, ".")
}

// writeChunks writes the chunks of the array s holding data into dir, one
// file per chunk named by its indices joined with sep (a "/" makes
// directories), as writeV1 describes, and returns the expected content.
func writeChunks(t *testing.T, dir string, s v1Store, data []byte, sep string) []byte {
	t.Helper()
	var err error
	var comp codec.BytesToBytes
	switch s.compression {
	case "none":
	case "blosc", "lzma":
		cfg := codec.Config{}
		b, _ := json.Marshal(s.opts)
		must(t, json.Unmarshal(b, &cfg))
		c, err := codec.New(s.compression, cfg)
		must(t, err)
		comp = c.(codec.BytesToBytes)
	case "gzip":
		c, err := codec.New("gzip", codec.Config{"level": json.RawMessage("1")})
		must(t, err)
		comp = c.(codec.BytesToBytes)
	default:
		c, err := codec.New(s.compression, codec.Config{"level": json.RawMessage(strconv.Itoa(s.opts.(int)))})
		must(t, err)
		comp = c.(codec.BytesToBytes)
	}
	want := bytes.Clone(data)
	rank := len(s.shape)
	grid := make([]int64, rank)
	for i := range grid {
		grid[i] = (s.shape[i] + s.chunks[i] - 1) / s.chunks[i]
	}
	nchunk := int64(1)
	for _, g := range grid {
		nchunk *= g
	}
	cidx := make([]int64, rank)
	for lin := int64(0); lin < nchunk; lin++ {
		q := lin
		for i := rank - 1; i >= 0; i-- {
			cidx[i] = q % grid[i]
			q /= grid[i]
		}
		parts := make([]string, rank)
		for i, c := range cidx {
			parts[i] = strconv.FormatInt(c, 10)
		}
		name := strings.Join(parts, sep)
		// Walk the chunk's elements in storage order (C or F).
		var chunk []byte
		inner := make([]int64, rank)
		for {
			off, inside := int64(0), true
			for i := range rank {
				x := cidx[i]*s.chunks[i] + inner[i]
				if x >= s.shape[i] {
					inside = false
				}
				off = off*s.shape[i] + x
			}
			if inside {
				if s.missing[name] {
					copy(want[off*int64(s.item):], s.fillElem)
				}
				chunk = append(chunk, data[off*int64(s.item):(off+1)*int64(s.item)]...)
			} else {
				chunk = append(chunk, s.fillElem...)
			}
			if !v1Next(inner, s.chunks, s.order == "F") {
				break
			}
		}
		if s.missing[name] {
			continue
		}
		if s.swap > 1 {
			for i := 0; i < len(chunk); i += s.swap {
				for a, b := i, i+s.swap-1; a < b; a, b = a+1, b-1 {
					chunk[a], chunk[b] = chunk[b], chunk[a]
				}
			}
		}
		if comp != nil {
			chunk, err = comp.Encode(chunk)
			must(t, err)
		}
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), chunk, 0o644))
	}
	return want
}

// v1Next advances idx inside shape, last dimension fastest (first for F).
func v1Next(idx, shape []int64, fortran bool) bool {
	for k := range idx {
		i := len(idx) - 1 - k
		if fortran {
			i = k
		}
		idx[i]++
		if idx[i] < shape[i] {
			return true
		}
		idx[i] = 0
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// le returns n elements produced by f as little-endian bytes of size item.
func le(n, item int, f func(i int) uint64) []byte {
	out := make([]byte, n*item)
	for i := range n {
		v := f(i)
		for j := range item {
			out[i*item+j] = byte(v >> (8 * j))
		}
	}
	return out
}

func TestV1WrittenPerSeed(t *testing.T) {
	f64 := func(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }
	cases := []struct {
		name string
		s    v1Store
		data func(n int) []byte
	}{
		{"blosc-i4-seed", v1Store{shape: []int64{25, 13}, chunks: []int64{10, 5}, dtype: "<i4", item: 4, order: "C",
			compression: "blosc", opts: map[string]any{"cname": "lz4", "clevel": 3, "shuffle": 1}, fill: 42,
			fillElem: le(1, 4, func(int) uint64 { return 42 }), missing: map[string]bool{"1.1": true, "2.2": true}},
			func(n int) []byte { return le(n, 4, func(i int) uint64 { return uint64(i * 7) }) }},
		{"blosc-defaults-u2", v1Store{shape: []int64{9}, chunks: []int64{4}, dtype: "<u2", item: 2, order: "C",
			compression: "blosc", fill: 0, fillElem: []byte{0, 0}, missing: map[string]bool{"1": true}},
			func(n int) []byte { return le(n, 2, func(i int) uint64 { return uint64(i + 1000) }) }},
		{"zlib-f8-big-F", v1Store{shape: []int64{7, 6, 3}, chunks: []int64{3, 4, 2}, dtype: ">f8", item: 8, swap: 8, order: "F",
			compression: "zlib", opts: 1, fill: -1.5, fillElem: f64(-1.5), missing: map[string]bool{"2.1.1": true}},
			func(n int) []byte { return le(n, 8, func(i int) uint64 { return math.Float64bits(float64(i) / 3) }) }},
		{"bz2-c16-big", v1Store{shape: []int64{5, 5}, chunks: []int64{2, 3}, dtype: ">c16", item: 16, swap: 8, order: "C",
			compression: "bz2", opts: 9, fill: nil, fillElem: make([]byte, 16), missing: map[string]bool{"0.1": true}},
			func(n int) []byte {
				return le(2*n, 8, func(i int) uint64 { return math.Float64bits(float64(i) - 3.25) })
			}},
		{"lzma-S3", v1Store{shape: []int64{11}, chunks: []int64{4}, dtype: "|S3", item: 3, order: "C",
			compression: "lzma", opts: map[string]any{"format": 1, "check": -1, "preset": nil, "filters": nil}, fill: "YWI=",
			fillElem: []byte("ab\x00"), missing: map[string]bool{"2": true}},
			func(n int) []byte {
				return le(n, 3, func(i int) uint64 { return uint64('a'+i%26) | uint64('A'+i%26)<<8 | 0x30<<16 })
			}},
		{"none-U2-big-F", v1Store{shape: []int64{3, 5}, chunks: []int64{2, 2}, dtype: ">U2", item: 8, swap: 4, order: "F",
			compression: "none", fill: "é", fillElem: []byte{0xe9, 0, 0, 0, 0, 0, 0, 0}, missing: map[string]bool{"1.2": true}},
			func(n int) []byte { return le(2*n, 4, func(i int) uint64 { return uint64(0x41 + i) }) }},
		{"none-b1", v1Store{shape: []int64{10}, chunks: []int64{3}, dtype: "|b1", item: 1, order: "C",
			compression: "none", fill: true, fillElem: []byte{1}, missing: map[string]bool{"0": true}},
			func(n int) []byte { return le(n, 1, func(i int) uint64 { return uint64(i % 2) }) }},
		{"zlib-M8", v1Store{shape: []int64{6}, chunks: []int64{4}, dtype: "<M8[ns]", item: 8, order: "C",
			compression: "zlib", opts: 5, fill: nil, fillElem: make([]byte, 8), missing: map[string]bool{"1": true}},
			func(n int) []byte { return le(n, 8, func(i int) uint64 { return uint64(i) * 1e9 }) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			n := 1
			for _, d := range c.s.shape {
				n *= int(d)
			}
			want := writeV1(t, root, c.s, c.data(n), `{"foo": 42}`)
			h := openDir(t, root)
			if h.Format() != FormatV1 {
				t.Fatalf("Format = %v, want v1", h.Format())
			}
			node, got := readArray(t, h, "")
			if !bytes.Equal(got, want) {
				t.Errorf("content differs:\n got %x\nwant %x", got, want)
			}
			if node.Format != FormatV1 || node.Kind != KindArray || string(node.Attributes) != `{"foo": 42}` {
				t.Errorf("node: format %v kind %v attributes %s", node.Format, node.Kind, node.Attributes)
			}
			if len(node.Documents) != 2 || node.Documents[0].Name != "meta" || node.Documents[1].Name != "attrs" {
				t.Errorf("documents %v, want meta and attrs", docNames(node))
			}
			if kids, err := h.Children(context.Background(), ""); err != nil || len(kids) != 0 {
				t.Errorf("Children of a v1 array = %v, %v", kids, err)
			}
		})
	}
}

func docNames(n *Node) []string {
	var s []string
	for _, d := range n.Documents {
		s = append(s, d.Name)
	}
	return s
}

// TestV1SeedExample reads testdata/v1/seed_example: the seed's example
// array (shape 1000000×1000 of <i4 in 10000×100 chunks, blosc lz4, fill
// 42) with its meta and attrs documents as the seed prints them, and the
// chunks "0.0" (zeros, as after z[:] = 0) and "4.2" (sevens, the first
// row 0…99) compressed by numcodecs.Blosc; every other chunk is missing.
func TestV1SeedExample(t *testing.T) {
	h := openDir(t, filepath.Join("testdata", "v1", "seed_example"))
	ctx := context.Background()
	n, err := h.Node(ctx, "/")
	if err != nil || n.Err != nil || n.Array == nil || n.Array.Err != nil {
		t.Fatalf("root: %v %+v", err, n)
	}
	a := n.Array
	if a.Size() != 1000000*1000*4 || a.DataType().NumPy != "<i4" || a.ChunkShape()[0] != 10000 {
		t.Fatalf("array: size %d dtype %+v chunks %v", a.Size(), a.DataType(), a.ChunkShape())
	}
	if got, want := string(compactJSON(n.Attributes)), `{"bar":4.2,"baz":"quux","foo":42}`; got != want {
		t.Errorf("attributes %s, want %s", got, want)
	}
	if got := string(compactJSON(a.Codecs())); got != `[{"name":"blosc","configuration":{"clevel":3,"cname":"lz4","shuffle":1}}]` {
		t.Errorf("codecs %s", got)
	}
	for _, c := range []struct {
		row, col int64
		want     int32
	}{
		{0, 0, 0}, {9999, 99, 0}, {0, 100, 42}, {10000, 0, 42}, {999999, 999, 42},
		{40000, 200, 0}, {40000, 299, 99}, {40000, 217, 17}, {40001, 200, 7}, {49999, 299, 7}, {50000, 200, 42},
	} {
		var b [4]byte
		if _, err := a.ReadAt(ctx, b[:], (c.row*1000+c.col)*4); err != nil {
			t.Fatalf("[%d, %d]: %v", c.row, c.col, err)
		}
		if got := int32(binary.LittleEndian.Uint32(b[:])); got != c.want {
			t.Errorf("[%d, %d] = %d, want %d", c.row, c.col, got, c.want)
		}
	}
}

// TestV1PythonNaN reads testdata/v1/zlib_f_nan: a 3×4 >f8 array in F order
// with zlib and a fill value written the way Python's json writes NaN (a
// bare NaN token); chunks 0.0 and 1.1 exist.
func TestV1PythonNaN(t *testing.T) {
	h := openDir(t, filepath.Join("testdata", "v1", "zlib_f_nan"))
	_, got := readArray(t, h, "")
	nan := math.NaN()
	want := []float64{0.5, 1.5, 2.5, nan, 4.5, 5.5, 6.5, nan, nan, nan, nan, 11.5}
	for i, w := range want {
		g := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
		if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("element %d = %v, want %v", i, g, w)
		}
	}
}
