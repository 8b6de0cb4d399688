package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// writeArray creates an array in st and writes data (little-endian
// elements, C order) into it, unless data is nil.
func writeArray(t testing.TB, st zarr.WritableStore, path string, m zarr.ArrayMeta, data []byte) {
	t.Helper()
	ctx := context.Background()
	a, err := zarr.CreateArray(ctx, st, path, m)
	if err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if _, err := a.WriteAt(ctx, data, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// newStore returns a memory store holding an empty v3 root group.
func newStore(t testing.TB) *memory.Store {
	t.Helper()
	st := memory.New()
	if err := zarr.CreateGroup(context.Background(), st, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		t.Fatal(err)
	}
	return st
}

// float64s returns the little-endian bytes of vs.
func float64s(vs ...float64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// previewOf opens st and returns the preview.png of the node at path (nil
// when it has none), with the views it came from.
func previewOf(t testing.TB, st store.Store, path string, cfg Config) File {
	t.Helper()
	ctx := context.Background()
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return Find(New(h, cfg).Files(n, nil), "preview.png")
}

// readPreview reads the whole of f, checks that it is Size bytes, and
// decodes it.
func readPreview(t testing.TB, f File) *image.Paletted {
	t.Helper()
	ctx := context.Background()
	var b bytes.Buffer
	if err := Copy(ctx, &b, f); err != nil {
		t.Fatal(err)
	}
	if size, _ := f.Size(ctx); size != int64(b.Len()) {
		t.Fatalf("read %d bytes, Size %d", b.Len(), size)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	return img.(*image.Paletted)
}

var on = Config{Previews: true}

// TestPreviewPlane draws the middle plane of a 3-D array with NaN and
// ±Inf: pixel (r, c) is element (1, r, c) in viridis over the finite
// range, the non-finite ones transparent.
func TestPreviewPlane(t *testing.T) {
	st := newStore(t)
	const D, H, W = 3, 4, 6
	vals := make([]float64, D*H*W)
	for i := range vals {
		vals[i] = float64(i/(H*W)*100 + i/W%H*10 + i%W)
	}
	vals[H*W] = math.NaN()
	vals[H*W+H*W-1] = math.Inf(1)
	vals[H*W+7] = math.Inf(-1)
	writeArray(t, st, "a", zarr.ArrayMeta{Shape: []int64{D, H, W}, ChunkShape: []int64{1, 2, 4}, DataType: "float64",
		FillValue: 0, Codecs: []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "gzip", Configuration: map[string]any{"level": 1}}}}, float64s(vals...))
	img := readPreview(t, previewOf(t, st, "a", on))
	if img.Rect.Dx() != W || img.Rect.Dy() != H {
		t.Fatalf("image %v, want %d×%d", img.Rect, W, H)
	}
	lo, hi := 101.0, 134.0 // element (1, 0, 1) and (1, 3, 4)
	for r := range H {
		for c := range W {
			v := vals[H*W+r*W+c]
			want := uint8(0)
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				want = uint8(1 + math.Round((v-lo)/(hi-lo)*254))
			}
			if got := img.ColorIndexAt(c, r); got != want {
				t.Errorf("pixel (%d, %d): index %d, want %d (value %v)", r, c, got, want, v)
			}
		}
	}
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Errorf("NaN pixel has alpha %d, want 0", a)
	}
}

// TestPreviewSampling draws a 1000 × 3 plane as 512 × 2 pixels, each the
// element under its centre.
func TestPreviewSampling(t *testing.T) {
	st := newStore(t)
	const H, W = 1000, 3
	vals := make([]float64, H*W)
	for i := range vals {
		vals[i] = float64(i)
	}
	writeArray(t, st, "a", zarr.ArrayMeta{Shape: []int64{H, W}, ChunkShape: []int64{64, 3}, DataType: "float64", FillValue: 0}, float64s(vals...))
	img := readPreview(t, previewOf(t, st, "a", on))
	h, w := 512, 2
	if img.Rect.Dx() != w || img.Rect.Dy() != h {
		t.Fatalf("image %v, want %d×%d", img.Rect, w, h)
	}
	elem := func(r, c int) float64 { return float64(((2*r+1)*H/(2*h))*W + (2*c+1)*W/(2*w)) }
	lo, hi := elem(0, 0), elem(h-1, w-1)
	for r := range h {
		for c := range w {
			want := uint8(1 + math.Round((elem(r, c)-lo)/(hi-lo)*254))
			if got := img.ColorIndexAt(c, r); got != want {
				t.Fatalf("pixel (%d, %d): index %d, want %d", r, c, got, want)
			}
		}
	}
}

// TestPreviewTypes draws one-element arrays of every numeric type (a
// constant plane: the middle colour) and checks the element decoders.
func TestPreviewTypes(t *testing.T) {
	st := newStore(t)
	for name := range numericTypes {
		var fill any = 0
		switch name {
		case "bool":
			fill = false
		case "complex64", "complex128":
			fill = []any{0, 0}
		}
		writeArray(t, st, name, zarr.ArrayMeta{Shape: []int64{1, 1}, ChunkShape: []int64{1, 1}, DataType: name, FillValue: fill}, nil)
	}
	for name := range numericTypes {
		img := readPreview(t, previewOf(t, st, name, on))
		if img.Rect.Dx() != 1 || img.Rect.Dy() != 1 || img.ColorIndexAt(0, 0) != 128 {
			t.Errorf("%s: %v, index %d; want 1×1, 128", name, img.Rect, img.ColorIndexAt(0, 0))
		}
	}
	for _, c := range []struct {
		typ  string
		b    []byte
		want float64
	}{
		{"bool", []byte{1}, 1},
		{"int8", []byte{0xfe}, -2},
		{"uint16", []byte{0xfe, 0xff}, 65534},
		{"int64", []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -2},
		{"float16", []byte{0x00, 0x3c}, 1},
		{"float16", []byte{0x00, 0xc0}, -2},
		{"float16", []byte{0x01, 0x00}, math.Ldexp(1, -24)},
		{"float16", []byte{0x00, 0x7c}, math.Inf(1)},
		{"float16", []byte{0xff, 0x7b}, 65504},
		{"complex64", append(binary.LittleEndian.AppendUint32(nil, math.Float32bits(3)), binary.LittleEndian.AppendUint32(nil, math.Float32bits(-4))...), 5},
		{"complex128", float64s(-6, 8), 10},
	} {
		if got := numericTypes[c.typ](c.b); got != c.want {
			t.Errorf("%s % x: %v, want %v", c.typ, c.b, got, c.want)
		}
	}
	if v := numericTypes["float16"]([]byte{0x00, 0x7e}); !math.IsNaN(v) {
		t.Errorf("float16 NaN: %v", v)
	}
}

// TestPreviewChart draws a rank-1 ramp: its line rises from the bottom
// left corner to the top right one.
func TestPreviewChart(t *testing.T) {
	for _, n := range []int{1, 7, 512, 1000} {
		st := newStore(t)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(i)
		}
		if n > 2 {
			vals[1] = math.NaN()
		}
		writeArray(t, st, "a", zarr.ArrayMeta{Shape: []int64{int64(n)}, ChunkShape: []int64{100}, DataType: "float64", FillValue: 0}, float64s(vals...))
		img := readPreview(t, previewOf(t, st, "a", on))
		if img.Rect.Dx() != chartW || img.Rect.Dy() != chartH {
			t.Fatalf("n=%d: image %v", n, img.Rect)
		}
		// The topmost drawn pixel of each column never falls from left
		// to right, and the line spans the height. Columns of NaN only
		// are empty.
		top := func(c int) int {
			for r := range chartH {
				if img.ColorIndexAt(c, r) != 0 {
					return r
				}
			}
			return -1
		}
		prev := chartH
		for c := range chartW {
			r := top(c)
			if r < 0 && n > 2 && c*n/chartW == 1 {
				continue
			}
			if r < 0 || r > prev {
				t.Fatalf("n=%d: column %d: top %d after %d", n, c, r, prev)
			}
			prev = r
		}
		if n > 1 && (top(0) < chartH-3 || top(chartW-1) != 0) {
			t.Errorf("n=%d: line from row %d to row %d", n, top(0), top(chartW-1))
		}
	}
}

// hookedStore calls before with the key of every read (Get, GetRange),
// before it reads.
type hookedStore struct {
	store.Store
	before func(key string)
}

func (s hookedStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.before(key)
	return s.Store.Get(ctx, key)
}

func (s hookedStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.before(key)
	return s.Store.GetRange(ctx, key, r)
}

// countingStore counts the reads of each key.
type countingStore struct {
	hookedStore
	mu    sync.Mutex
	reads map[string]int
}

func newCountingStore(st store.Store) *countingStore {
	s := &countingStore{reads: map[string]int{}}
	s.hookedStore = hookedStore{st, s.note}
	return s
}

func (s *countingStore) note(key string) {
	s.mu.Lock()
	s.reads[key]++
	s.mu.Unlock()
}

// TestPreviewReadsPlane: a preview reads the chunks under its plane,
// once each, and no others (no read-ahead), also for a sharded array.
func TestPreviewReadsPlane(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		mem := newStore(t)
		m := zarr.ArrayMeta{Shape: []int64{5, 64, 64}, ChunkShape: []int64{1, 32, 32}, DataType: "uint16", FillValue: 0}
		if sharded {
			m.ChunkShape = []int64{5, 64, 64}
			m.Codecs = []zarr.CodecSpec{{Name: "sharding_indexed", Configuration: map[string]any{
				"chunk_shape": []int64{1, 32, 32}, "codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}},
				"index_codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}},
			}}}
		}
		writeArray(t, mem, "a", m, make([]byte, 5*64*64*2))
		st := newCountingStore(mem)
		f := previewOf(t, st, "a", Config{Previews: true, PreviewBudget: 4 * 32 * 32 * 2})
		if f == nil {
			t.Fatalf("sharded=%v: no preview within the budget of its four chunks", sharded)
		}
		readPreview(t, f)
		var keys []string
		for k, n := range st.reads {
			if strings.HasPrefix(k, "a/c/") {
				keys = append(keys, k)
				if n != 1 && !sharded {
					t.Errorf("%s read %d times", k, n)
				}
			}
		}
		slices.Sort(keys)
		want := []string{"a/c/2/0/0", "a/c/2/0/1", "a/c/2/1/0", "a/c/2/1/1"}
		if sharded {
			want = []string{"a/c/0/0/0"}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("sharded=%v: read %v, want %v", sharded, keys, want)
		}
	}
}

// TestPreviewReadsEachChunkOnce: a plane of 1,024 rows drawn as 512, in
// chunks of 256 rows each compressed (Blosc, whose blocks decode in part;
// gzip; zstd), and a chart of a rank-1 array in chunks larger than a read
// piece: every chunk under the preview is got from the store once, not
// once per row drawn (issue 44: 1,024 requests for 16 chunks over HTTP).
func TestPreviewReadsEachChunkOnce(t *testing.T) {
	le := zarr.CodecSpec{Name: "bytes", Configuration: map[string]any{"endian": "little"}}
	for _, c := range []struct {
		name  string
		codec zarr.CodecSpec
	}{
		{"blosc", zarr.CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}},
		{"gzip", zarr.CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}},
		{"zstd", zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 1, "checksum": false}}},
	} {
		mem := newStore(t)
		data := make([]byte, 3*1024*64*2)
		for i := range data {
			data[i] = byte(i * 7 / 5)
		}
		writeArray(t, mem, "plane", zarr.ArrayMeta{Shape: []int64{3, 1024, 64}, ChunkShape: []int64{1, 256, 64},
			DataType: "uint16", FillValue: 0, Codecs: []zarr.CodecSpec{le, c.codec}}, data)
		writeArray(t, mem, "line", zarr.ArrayMeta{Shape: []int64{100000}, ChunkShape: []int64{40000},
			DataType: "uint16", FillValue: 0, Codecs: []zarr.CodecSpec{le, c.codec}}, data[:200000])
		for _, a := range []struct {
			path   string
			chunks []string
		}{
			{"plane", []string{"plane/c/1/0/0", "plane/c/1/1/0", "plane/c/1/2/0", "plane/c/1/3/0"}},
			{"line", []string{"line/c/0", "line/c/1", "line/c/2"}},
		} {
			st := newCountingStore(mem)
			f := previewOf(t, st, a.path, on)
			if f == nil {
				t.Fatalf("%s %s: no preview", c.name, a.path)
			}
			readPreview(t, f)
			var keys []string
			for k, n := range st.reads {
				if strings.HasPrefix(k, a.path+"/c/") {
					keys = append(keys, k)
					if n != 1 {
						t.Errorf("%s: %s read %d times", c.name, k, n)
					}
				}
			}
			slices.Sort(keys)
			if !slices.Equal(keys, a.chunks) {
				t.Errorf("%s: read %v, want %v", c.name, keys, a.chunks)
			}
		}
	}
}

// TestPreviewBudget: an array whose plane's chunks are over the budget has
// no preview.png; rows of chunks the sampled rows skip do not count.
func TestPreviewBudget(t *testing.T) {
	st := newStore(t)
	writeArray(t, st, "cube", zarr.ArrayMeta{Shape: []int64{4, 100, 100}, ChunkShape: []int64{1, 100, 100}, DataType: "float32", FillValue: 0}, nil)
	writeArray(t, st, "rows", zarr.ArrayMeta{Shape: []int64{2000, 10}, ChunkShape: []int64{1, 10}, DataType: "uint8", FillValue: 0}, nil)
	writeArray(t, st, "line", zarr.ArrayMeta{Shape: []int64{1000}, ChunkShape: []int64{100}, DataType: "int16", FillValue: 0}, nil)
	for _, c := range []struct {
		path   string
		budget int64
		want   bool
	}{
		{"cube", 40000, true}, {"cube", 39999, false},
		{"rows", 5120, true}, {"rows", 5119, false}, // 512 rows of one chunk of 10 bytes
		{"line", 2000, true}, {"line", 1999, false},
	} {
		if got := previewOf(t, st, c.path, Config{Previews: true, PreviewBudget: c.budget}) != nil; got != c.want {
			t.Errorf("%s with budget %d: preview %v, want %v", c.path, c.budget, got, c.want)
		}
	}
	if previewOf(t, st, "cube", Config{}) != nil {
		t.Error("a preview with previews off")
	}
}

// TestPreviewPyramid: every level of an OME-Zarr pyramid (0.4 in .zattrs,
// 0.5 under "ome" in zarr.json) is drawn from the smallest level that
// covers 512 pixels, even level 0, which is over the budget; an array over
// the budget outside a pyramid has no preview.
func TestPreviewPyramid(t *testing.T) {
	datasets := []any{map[string]any{"path": "0"}, map[string]any{"path": "1"}, map[string]any{"path": "2"}, map[string]any{"path": "3"}}
	for _, format := range []zarr.Format{zarr.FormatV2, zarr.FormatV3} {
		st := memory.New()
		ctx := context.Background()
		attrs := map[string]any{"multiscales": []any{map[string]any{"version": "0.4", "datasets": datasets}}}
		dtype := "|u1"
		if format == zarr.FormatV3 {
			attrs = map[string]any{"ome": map[string]any{"version": "0.5", "multiscales": []any{map[string]any{"datasets": datasets}}}}
			dtype = "uint8"
		}
		if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: format}); err != nil {
			t.Fatal(err)
		}
		if err := zarr.CreateGroup(ctx, st, "img", zarr.GroupMeta{Format: format, Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
		for lvl, side := range []int64{2048, 1024, 600, 300} {
			var data []byte
			if side == 600 {
				data = make([]byte, side*side)
				for i := range data {
					data[i] = byte(i / int(side) / 3)
				}
			}
			writeArray(t, st, "img/"+string(rune('0'+lvl)), zarr.ArrayMeta{Format: format, Shape: []int64{side, side}, ChunkShape: []int64{256, 256}, DataType: dtype, FillValue: 0}, data)
		}
		writeArray(t, st, "big", zarr.ArrayMeta{Format: format, Shape: []int64{2048, 2048}, ChunkShape: []int64{256, 256}, DataType: dtype, FillValue: 0}, nil)
		cfg := Config{Previews: true, PreviewBudget: 1 << 20}
		if previewOf(t, st, "big", cfg) != nil {
			t.Errorf("v%d: big has a preview over the budget", format)
		}
		for lvl := range 4 {
			f := previewOf(t, st, "img/"+string(rune('0'+lvl)), cfg)
			if f == nil {
				t.Fatalf("v%d: level %d has no preview", format, lvl)
			}
			img := readPreview(t, f)
			// Level 2 (600 × 600) drawn: 512 × 512, rows rising.
			if img.Rect.Dx() != 512 || img.Rect.Dy() != 512 || img.ColorIndexAt(0, 0) != 1 || img.ColorIndexAt(0, 511) != 255 {
				t.Errorf("v%d: level %d: %v, corners %d %d", format, lvl, img.Rect, img.ColorIndexAt(0, 0), img.ColorIndexAt(0, 511))
			}
		}
	}
}

// TestChooseLevel picks among levels' plans.
func TestChooseLevel(t *testing.T) {
	lvl := func(side, cost int64) *plan { return &plan{H: side, W: side, cost: cost} }
	for _, c := range []struct {
		name   string
		plans  []*plan
		budget int64
		want   int // index; -1 for none
	}{
		{"smallest covering", []*plan{lvl(4096, 100), lvl(2048, 50), lvl(1024, 20), lvl(512, 5), lvl(256, 1)}, 1000, 3},
		{"covering over budget: smallest", []*plan{lvl(4096, 100), lvl(2048, 50), lvl(256, 1)}, 10, 2},
		{"pyramid under 512 px: its largest level", []*plan{lvl(300, 3), lvl(150, 1)}, 10, 0},
		{"all over budget", []*plan{lvl(4096, 100), lvl(2048, 50)}, 10, -1},
		{"levels without plans", []*plan{nil, lvl(1024, 5), nil}, 10, 1},
	} {
		got := chooseLevel(c.plans, c.budget)
		want := (*plan)(nil)
		if c.want >= 0 {
			want = c.plans[c.want]
		}
		if got != want {
			t.Errorf("%s: chose %v, want %v", c.name, got, want)
		}
	}
}

// TestPreviewCorrupt: a corrupt chunk under the plane fails the preview's
// read with the engine's error; the size is still known.
func TestPreviewCorrupt(t *testing.T) {
	st := newStore(t)
	writeArray(t, st, "a", zarr.ArrayMeta{Shape: []int64{8, 8}, ChunkShape: []int64{4, 4}, DataType: "float64", FillValue: 0,
		Codecs: []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "gzip", Configuration: map[string]any{"level": 1}}}}, make([]byte, 8*8*8))
	ctx := context.Background()
	if err := st.Set(ctx, "a/c/1/0", []byte("not gzip")); err != nil {
		t.Fatal(err)
	}
	f := previewOf(t, st, "a", on)
	if size, err := f.Size(ctx); err != nil || size != pngSize(8, 8, 256, true) {
		t.Errorf("Size %d, %v", size, err)
	}
	if _, err := f.ReadAt(ctx, make([]byte, 10), 0); !errors.Is(err, zarr.ErrCorrupt) {
		t.Errorf("ReadAt: %v, want ErrCorrupt", err)
	}
}

// TestGroupInfoChildren: a group's info.txt lists its children.
func TestGroupInfoChildren(t *testing.T) {
	_, files := exampleNode(t, "")
	var b bytes.Buffer
	if err := Copy(context.Background(), &b, Find(files, "info.txt")); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"\nchildren:\n", "\n  codecs/ group\n", "\n  temperature array 24 × 90 × 180 float32 bytes,zstd\n", "\n  stations array 6 string vlen-utf8\n"} {
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(text, "\n", " \n ")), " ")+" ", strings.Join(strings.Fields(strings.ReplaceAll(want, "\n", " \n ")), " ")) {
			t.Errorf("info.txt lacks %q:\n%s", want, text)
		}
	}
	_, files = exampleNode(t, "image")
	b.Reset()
	Copy(context.Background(), &b, Find(files, "info.txt"))
	if strings.Contains(b.String(), "children") {
		t.Errorf("an array's info.txt lists children:\n%s", b.String())
	}
}

// FuzzMultiscales: any attributes parse without panicking, to paths that
// stay inside the group.
func FuzzMultiscales(f *testing.F) {
	f.Add([]byte(`{"multiscales":[{"version":"0.4","datasets":[{"path":"0"},{"path":"1"}]}]}`))
	f.Add([]byte(`{"ome":{"version":"0.5","multiscales":[{"datasets":[{"path":"s0"},{"path":"../x"},{"path":"/abs"}]}]}}`))
	f.Add([]byte(`{"multiscales":7,"ome":{"multiscales":[{"datasets":[{"path":"a/./b/"}]}]}}`))
	f.Fuzz(func(t *testing.T, attrs []byte) {
		for _, paths := range multiscales(attrs) {
			for _, p := range paths {
				if p == "" || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") || slices.Contains(strings.Split(p, "/"), "") {
					t.Errorf("path %q from %s", p, attrs)
				}
			}
		}
	})
}

// blockingStore holds every read of a chunk until release is closed.
type blockingStore struct {
	hookedStore
	started chan struct{} // receives once per chunk read begun
	release chan struct{}
}

// newBlockingStore returns a blockingStore over st that takes up to n
// chunk reads begun before one is received from started.
func newBlockingStore(st store.Store, n int) *blockingStore {
	s := &blockingStore{started: make(chan struct{}, n), release: make(chan struct{})}
	s.hookedStore = hookedStore{st, s.wait}
	return s
}

func (s *blockingStore) wait(key string) {
	if strings.Contains(key, "/c/") {
		s.started <- struct{}{}
		<-s.release
	}
}

// TestPreviewStatDuringRender: stat (Size) answers while the preview is
// being rendered, without waiting for the chunks.
func TestPreviewStatDuringRender(t *testing.T) {
	mem := newStore(t)
	writeArray(t, mem, "a", zarr.ArrayMeta{Shape: []int64{4, 4}, ChunkShape: []int64{4, 4}, DataType: "int16", FillValue: 0}, make([]byte, 32))
	st := newBlockingStore(mem, 16)
	f := previewOf(t, st, "a", on)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := f.ReadAt(ctx, make([]byte, 8), 0)
		done <- err
	}()
	<-st.started // the render is reading its chunk
	if size, err := f.Size(ctx); err != nil || size != pngSize(4, 4, 256, true) {
		t.Errorf("Size during the render: %d, %v", size, err)
	}
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestPreviewRendersOnePerCore: of many previews read at once, one per
// core renders; the others wait for a render to end before reading
// chunks.
func TestPreviewRendersOnePerCore(t *testing.T) {
	mem := newStore(t)
	cores := runtime.NumCPU()
	n := cores + 3
	for i := range n {
		writeArray(t, mem, fmt.Sprintf("a%d", i), zarr.ArrayMeta{Shape: []int64{4, 4}, ChunkShape: []int64{4, 4}, DataType: "int16", FillValue: 0}, make([]byte, 32))
	}
	st := newBlockingStore(mem, n)
	ctx := context.Background()
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := New(h, on)
	done := make(chan error, n)
	for i := range n {
		node, err := h.Node(ctx, fmt.Sprintf("a%d", i))
		if err != nil {
			t.Fatal(err)
		}
		f := Find(v.Files(node, nil), "preview.png")
		go func() {
			_, err := f.ReadAt(ctx, make([]byte, 8), 0)
			done <- err
		}()
	}
	for range cores {
		<-st.started
	}
	select {
	case <-st.started:
		t.Errorf("more than %d renders read chunks at once", cores)
	case <-time.After(200 * time.Millisecond):
	}
	close(st.release)
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestPreviewHugeShapes: shapes near the largest an array may have, with
// no chunks stored, draw the fill value without overflowing.
func TestPreviewHugeShapes(t *testing.T) {
	st := newStore(t)
	writeArray(t, st, "tall", zarr.ArrayMeta{Shape: []int64{1 << 61, 2}, ChunkShape: []int64{1, 2}, DataType: "uint8", FillValue: 3}, nil)
	writeArray(t, st, "long", zarr.ArrayMeta{Shape: []int64{1 << 62}, ChunkShape: []int64{1 << 30}, DataType: "uint8", FillValue: 3}, nil)
	img := readPreview(t, previewOf(t, st, "tall", on))
	if img.Rect.Dx() != 1 || img.Rect.Dy() != 512 || img.ColorIndexAt(0, 100) != 128 {
		t.Errorf("tall: %v, index %d", img.Rect, img.ColorIndexAt(0, 100))
	}
	if previewOf(t, st, "long", on) != nil {
		t.Error("long: a preview of 4 EiB of chunks")
	}
	for _, c := range [][4]int64{{1 << 62, 512, 1 << 62, 0}, {511, 1<<62 - 1, 512, 0}, {3, 5, 4, 2}} {
		want := new(big.Int).Div(new(big.Int).Add(new(big.Int).Mul(big.NewInt(c[0]), big.NewInt(c[1])), big.NewInt(c[3])), big.NewInt(c[2]))
		if got := mulDiv(c[0], c[1], c[2], c[3]); got != want.Int64() {
			t.Errorf("mulDiv%v = %d, want %v", c, got, want)
		}
	}
}

// TestPreviewNorthUp: a plane whose row dimension has a coordinate that
// points north and increases (latitude by standard_name, units or name; a
// projected y; axis Y) is drawn north up, its last row at the top; one
// whose coordinate decreases, or is no northing, or has none, row 0 at
// the top.
func TestPreviewNorthUp(t *testing.T) {
	for _, c := range []struct {
		name  string
		coord string
		attrs map[string]any
		north []float64 // the coordinate's values
		flip  bool
	}{
		{"lat by name, south to north", "lat", nil, []float64{-60, 0, 60}, true},
		{"latitude by name, north to south", "latitude", nil, []float64{60, 0, -60}, false},
		{"by standard_name", "y0", map[string]any{"standard_name": "latitude"}, []float64{1, 2, 3}, true},
		{"by units", "phi", map[string]any{"units": "degrees_north"}, []float64{1, 2, 3}, true},
		{"projected y", "y", map[string]any{"standard_name": "projection_y_coordinate", "units": "m"}, []float64{4e6, 4.1e6, 4.2e6}, true},
		{"axis Y", "row", map[string]any{"axis": "Y"}, []float64{0, 1, 2}, true},
		{"not a northing", "depth", map[string]any{"units": "m"}, []float64{0, 10, 20}, false},
		{"lat with other units", "lat", map[string]any{"units": "m"}, []float64{1, 2, 3}, false},
	} {
		st := newStore(t)
		writeArray(t, st, c.coord, zarr.ArrayMeta{Shape: []int64{3}, ChunkShape: []int64{3}, DataType: "float64", FillValue: 0,
			DimensionNames: []string{c.coord}, Attributes: c.attrs}, float64s(c.north...))
		writeArray(t, st, "v", zarr.ArrayMeta{Shape: []int64{3, 2}, ChunkShape: []int64{3, 2}, DataType: "float64", FillValue: 0,
			DimensionNames: []string{c.coord, "x"}}, float64s(0, 0, 1, 1, 2, 2))
		img := readPreview(t, previewOf(t, st, "v", on))
		top := img.ColorIndexAt(0, 0)
		if want := map[bool]uint8{false: 1, true: 255}[c.flip]; top != want {
			t.Errorf("%s: top row colour %d, want %d (flipped: %v)", c.name, top, want, c.flip)
		}
	}
}
