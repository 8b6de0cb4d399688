package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"math"
	"math/big"
	"strings"
	"testing"

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
