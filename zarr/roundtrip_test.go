package zarr

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

// reference is a plain C-order model of an array's logical content.
func refFill(n int, fill []byte) []byte {
	out := make([]byte, n*len(fill))
	for i := 0; i < n; i++ {
		copy(out[i*len(fill):], fill)
	}
	return out
}

func TestWriteReadRoundTrip(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		meta ArrayMeta
	}{
		{"v3 2d edge", ArrayMeta{Format: FormatV3, Shape: []int64{7, 5}, ChunkShape: []int64{3, 2}, DataType: "int16", FillValue: -3}},
		{"v3 v2-keys", ArrayMeta{Format: FormatV3, Shape: []int64{4, 6}, ChunkShape: []int64{4, 6}, DataType: "uint32", FillValue: 7, ChunkKeyEncoding: "v2"}},
		{"v3 0-d", ArrayMeta{Format: FormatV3, Shape: []int64{}, ChunkShape: []int64{}, DataType: "float64", FillValue: "NaN"}},
		{"v3 transpose", ArrayMeta{Format: FormatV3, Shape: []int64{5, 4, 3}, ChunkShape: []int64{2, 3, 2}, DataType: "int32", FillValue: 0,
			Codecs: []CodecSpec{{Name: "transpose", Configuration: map[string]any{"order": []int{2, 0, 1}}}, {Name: "bytes", Configuration: map[string]any{"endian": "big"}}}}},
		{"v2 F big", ArrayMeta{Format: FormatV2, Shape: []int64{5, 7}, ChunkShape: []int64{2, 3}, DataType: ">i4", FillValue: 1, Order: "F", DimensionSeparator: "/"}},
		{"v2 1d", ArrayMeta{Format: FormatV2, Shape: []int64{10}, ChunkShape: []int64{4}, DataType: "<f8", FillValue: 0.5}},
		{"v2 trailing full", ArrayMeta{Format: FormatV2, Shape: []int64{9, 4, 3}, ChunkShape: []int64{2, 4, 3}, DataType: "<u2", FillValue: 9}},
		{"v2 zero-length", ArrayMeta{Format: FormatV2, Shape: []int64{0, 3}, ChunkShape: []int64{2, 2}, DataType: "|u1", FillValue: 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := memory.New()
			for _, g := range []string{"", "g"} {
				if err := CreateGroup(ctx, st, g, GroupMeta{Format: tc.meta.Format}); err != nil {
					t.Fatal(err)
				}
			}
			a, err := CreateArray(ctx, st, "g/arr", tc.meta)
			if err != nil {
				t.Fatal(err)
			}
			size := a.Size()
			item := int64(a.DataType().Size)
			want := refFill(int(size/item), a.FillElement())
			got := make([]byte, size)
			if n, err := a.ReadAt(ctx, got, 0); (err != nil && !errors.Is(err, io.EOF)) || int64(n) != size {
				t.Fatalf("ReadAt empty = %d, %v", n, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("fresh array is not all fill")
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				if size == 0 {
					break
				}
				off := rng.Int64N(size)
				n := rng.Int64N(size-off) + 1
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.IntN(256))
				}
				if _, err := a.WriteAt(ctx, p, off); err != nil {
					t.Fatal(err)
				}
				copy(want[off:], p)
			}
			// Read through a freshly opened hierarchy, in pieces.
			h, err := Open(ctx, st, Options{})
			if err == nil {
				var n *Node
				if n, err = h.Node(ctx, "g/arr"); err == nil {
					a = n.Array
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []int64{1, 3, item, 17, size + 1} {
				if step == 0 {
					continue
				}
				var buf bytes.Buffer
				for off := int64(0); off < size; off += step {
					p := make([]byte, step)
					n, err := a.ReadAt(ctx, p, off)
					if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) == size) {
						t.Fatalf("ReadAt(%d, %d): %d, %v", step, off, n, err)
					}
					buf.Write(p[:n])
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Fatalf("step %d: content differs", step)
				}
			}
			if n, err := a.ReadAt(ctx, make([]byte, 1), size); n != 0 || err != io.EOF {
				t.Errorf("ReadAt at end = %d, %v; want 0, EOF", n, err)
			}
			var elems bytes.Buffer
			if err := a.Elements(ctx, func(e []byte) error { elems.Write(e); return nil }); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(elems.Bytes(), want) {
				t.Errorf("Elements differ from the content")
			}
		})
	}
}

func TestWriteRegion(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	a, err := CreateArray(ctx, st, "", ArrayMeta{Format: FormatV3, Shape: []int64{6, 5}, ChunkShape: []int64{4, 4}, DataType: "uint16", FillValue: 1})
	if err != nil {
		t.Fatal(err)
	}
	region := make([]byte, 3*4*2)
	for i := range 12 {
		binary.LittleEndian.PutUint16(region[2*i:], uint16(100+i))
	}
	if err := a.WriteRegion(ctx, []int64{2, 1}, []int64{3, 4}, region); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, a.Size())
	if _, err := a.ReadAt(ctx, got, 0); err != nil {
		t.Fatal(err)
	}
	for i := range int64(6) {
		for j := range int64(5) {
			v := binary.LittleEndian.Uint16(got[2*(i*5+j):])
			want := uint16(1)
			if i >= 2 && i < 5 && j >= 1 {
				want = uint16(100 + (i-2)*4 + (j - 1))
			}
			if v != want {
				t.Errorf("[%d,%d] = %d, want %d", i, j, v, want)
			}
		}
	}
	if err := a.WriteRegion(ctx, []int64{4, 0}, []int64{3, 1}, make([]byte, 6)); err == nil {
		t.Error("WriteRegion past the end succeeded")
	}
}

// TestV2BloscTypeSize: a v2 Blosc compressor shuffles by the array's item
// size, as numcodecs does, unless the metadata names a typesize.
func TestV2BloscTypeSize(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		dtype string
		cfg   map[string]any
		want  byte
	}{
		{"<f4", map[string]any{"cname": "lz4", "clevel": 5, "shuffle": 1}, 4},
		{"<i8", map[string]any{"cname": "zstd", "clevel": 3, "shuffle": 2}, 8},
		{"|u1", map[string]any{"cname": "lz4", "clevel": 5, "shuffle": -1}, 1},
		{"<f8", map[string]any{"cname": "lz4", "clevel": 5, "shuffle": 1, "typesize": 2}, 2},
	} {
		st := memory.New()
		a, err := CreateArray(ctx, st, "a", ArrayMeta{Format: FormatV2, Shape: []int64{256}, ChunkShape: []int64{256},
			DataType: c.dtype, FillValue: 0, Compressor: &CodecSpec{Name: "blosc", Configuration: c.cfg}})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 256*a.DataType().Size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		if _, err := a.WriteAt(ctx, data, 0); err != nil {
			t.Fatal(err)
		}
		chunk, err := st.Get(ctx, "a/0")
		if err != nil {
			t.Fatal(err)
		}
		if chunk[3] != c.want {
			t.Errorf("%s %v: chunk header typesize %d, want %d", c.dtype, c.cfg, chunk[3], c.want)
		}
		got := make([]byte, len(data))
		if _, err := a.ReadAt(ctx, got, 0); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: read back differs (%v)", c.dtype, err)
		}
	}
}
