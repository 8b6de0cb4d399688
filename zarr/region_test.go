package zarr

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/store/memory"
)

// stridedRef picks the strided region out of want, an array's whole
// contents (C order, item bytes an element).
func stridedRef(want []byte, ashape, start, shape, step []int64, item int64) []byte {
	out := make([]byte, 0, nd.Product(shape)*item)
	astride := nd.Strides(ashape, 1)
	k := make([]int64, len(shape))
	for range nd.Product(shape) {
		var e int64
		for i := range k {
			e += (start[i] + k[i]*step[i]) * astride[i]
		}
		out = append(out, want[e*item:(e+1)*item]...)
		nd.Odometer(k, shape)
	}
	return out
}

// TestReadStrided reads boxes and strided regions (planes, every k-th
// row and column, single elements) of the read-path arrays through every
// read path and compares them with the same elements of their contents.
func TestReadStrided(t *testing.T) {
	ctx := context.Background()
	for _, ar := range readPathArrays {
		mem := memory.New()
		want := writeReadPathArray(t, mem, ar.meta, 1)
		for _, o := range readPathOptions {
			t.Run(ar.name+"/"+o.name, func(t *testing.T) {
				a := openArrayNode(t, mem, o.opts).Array
				item := int64(a.DataType().Size)
				rng := rand.New(rand.NewPCG(8, 9))
				check := func(start, shape, step []int64) {
					t.Helper()
					dst := make([]byte, nd.Product(shape)*item)
					var err error
					if step == nil {
						err = a.ReadRegion(ctx, start, shape, dst)
						step = []int64{1, 1}
					} else {
						err = a.ReadStrided(ctx, start, shape, step, dst)
					}
					if err != nil {
						t.Fatalf("region at %v of shape %v, step %v: %v", start, shape, step, err)
					}
					if !bytes.Equal(dst, stridedRef(want, a.Shape(), start, shape, step, item)) {
						t.Fatalf("region at %v of shape %v, step %v differs", start, shape, step)
					}
				}
				h, w := a.Shape()[0], a.Shape()[1]
				check([]int64{0, 0}, []int64{h, w}, nil)
				check([]int64{h / 2, 0}, []int64{1, w}, nil)
				check([]int64{0, w / 2}, []int64{h, 1}, nil)
				check([]int64{h - 1, w - 1}, []int64{1, 1}, nil)
				check([]int64{0, 0}, []int64{(h + 2) / 3, (w + 6) / 7}, []int64{3, 7})
				check([]int64{1, 5}, []int64{(h - 2) / 100, (w - 6) / 130}, []int64{100, 130}) // steps past whole chunks
				for range 40 {
					y, x := rng.Int64N(h), rng.Int64N(w)
					sy, sx := rng.Int64N(5)+1, rng.Int64N(5)+1
					check([]int64{y, x}, []int64{rng.Int64N((h-1-y)/sy+1) + 1, rng.Int64N((w-1-x)/sx+1) + 1}, []int64{sy, sx})
				}
			})
		}
	}
}

// TestReadStridedInvalid: regions outside the array, of the wrong rank or
// size, and steps below 1 are refused; empty ones read nothing; a rank-0
// array reads its element.
func TestReadStridedInvalid(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{10, 20}, ChunkShape: []int64{4, 8}, DataType: "uint8", FillValue: 0}, 1)
	a := openArrayNode(t, mem, Options{}).Array
	for _, c := range []struct {
		start, shape, step []int64
		n                  int
	}{
		{[]int64{0}, []int64{1}, nil, 1},
		{[]int64{0, 0}, []int64{11, 1}, nil, 11},
		{[]int64{-1, 0}, []int64{1, 1}, nil, 1},
		{[]int64{10, 0}, []int64{1, 1}, nil, 1},
		{[]int64{0, 0}, []int64{5, 1}, []int64{3, 1}, 5},
		{[]int64{0, 0}, []int64{1, 1}, []int64{0, 1}, 1},
		{[]int64{0, 0}, []int64{2, 2}, nil, 3},
	} {
		err := a.ReadStrided(ctx, c.start, c.shape, c.step, make([]byte, c.n))
		if err == nil {
			t.Errorf("region at %v of shape %v, step %v read", c.start, c.shape, c.step)
		}
	}
	if err := a.ReadRegion(ctx, []int64{10, 20}, []int64{0, 0}, nil); err != nil {
		t.Errorf("empty region: %v", err)
	}
	mem = memory.New()
	if err := CreateGroup(ctx, mem, "", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	w, err := CreateArray(ctx, mem, "a", ArrayMeta{Format: FormatV3, Shape: []int64{}, ChunkShape: []int64{}, DataType: "int32", FillValue: 0})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 2, 3, 4}
	if _, err := w.WriteAt(ctx, want, 0); err != nil {
		t.Fatal(err)
	}
	a = openArrayNode(t, mem, Options{}).Array
	got := make([]byte, 4)
	if err := a.ReadRegion(ctx, nil, nil, got); err != nil || !bytes.Equal(got, want) {
		t.Errorf("rank 0: %v, %v; want %v", got, err, want)
	}
	if err := a.ReadRegion(ctx, []int64{0}, []int64{1}, got); err == nil {
		t.Error("rank 0: a region of rank 1 read")
	}
}

// TestReadRegionChunksTouched: a region reads only the chunks that hold
// its elements, each once, and no more (no read-ahead); of a sharded
// array it needs little of, only ranges of the shards.
func TestReadRegionChunksTouched(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name                string
		codecs              []CodecSpec
		start, shape, step  []int64
		wantWhole, wantSome int
	}{
		// A 2×2 box in the corner of 4 chunks of 8×8.
		{"box", nil, []int64{7, 7}, []int64{2, 2}, nil, 4, 0},
		// Every 8th row and column from (3, 3): one element of each of
		// the 8×8 chunks.
		{"strided", nil, []int64{3, 3}, []int64{8, 8}, []int64{8, 8}, 64, 0},
		// Every 16th row: the chunks of every other chunk row.
		{"rows", nil, []int64{0, 0}, []int64{4, 64}, []int64{16, 1}, 32, 0},
		{"sharded", []CodecSpec{shardingSpec([]int64{4, 4})}, []int64{7, 7}, []int64{2, 2}, nil, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.New()
			want := writeReadPathArray(t, mem, ArrayMeta{Format: FormatV3, Shape: []int64{72, 64}, ChunkShape: []int64{8, 8}, DataType: "uint16", FillValue: 0,
				Codecs: c.codecs}, 2)
			st := &rangeCounter{Store: mem}
			a := openArrayNode(t, st, Options{}).Array
			step := c.step
			if step == nil {
				step = []int64{1, 1}
			}
			dst := make([]byte, nd.Product(c.shape)*2)
			st.whole, st.ranged = 0, 0
			if err := a.ReadStrided(ctx, c.start, c.shape, step, dst); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, stridedRef(want, a.Shape(), c.start, c.shape, step, 2)) {
				t.Fatal("region differs")
			}
			if st.whole != c.wantWhole || (c.wantSome > 0) != (st.ranged > 0) {
				t.Errorf("%d whole and %d ranged reads, want %d whole and ranged ones: %v", st.whole, st.ranged, c.wantWhole, c.wantSome > 0)
			}
		})
	}
}

// TestReadOrthogonal reads random orthogonal selections (sorted index
// lists per dimension, with runs and gaps) of the read-path arrays and
// compares them with the same elements of their contents; unsorted,
// repeated or out-of-range indices are refused.
func TestReadOrthogonal(t *testing.T) {
	ctx := context.Background()
	for _, ar := range readPathArrays {
		mem := memory.New()
		want := writeReadPathArray(t, mem, ar.meta, 1)
		t.Run(ar.name, func(t *testing.T) {
			a := openArrayNode(t, mem, Options{}).Array
			item := int64(a.DataType().Size)
			rng := rand.New(rand.NewPCG(10, 11))
			pick := func(n int64) []int64 {
				var idx []int64
				p := rng.Float64()
				for x := range n {
					if rng.Float64() < p {
						idx = append(idx, x)
					}
				}
				return idx
			}
			for range 30 {
				indices := [][]int64{pick(a.Shape()[0]), pick(a.Shape()[1])}
				dst := make([]byte, int64(len(indices[0])*len(indices[1]))*item)
				if err := a.ReadOrthogonal(ctx, indices, dst); err != nil {
					t.Fatal(err)
				}
				var ref []byte
				for _, y := range indices[0] {
					for _, x := range indices[1] {
						e := y*a.Shape()[1] + x
						ref = append(ref, want[e*item:(e+1)*item]...)
					}
				}
				if !bytes.Equal(dst, ref) {
					t.Fatalf("selection of %d × %d elements differs", len(indices[0]), len(indices[1]))
				}
			}
			for _, bad := range [][][]int64{
				{{1, 0}, {0}},
				{{0, 0}, {0}},
				{{0}, {a.Shape()[1]}},
				{{-1}, {0}},
				{{0}},
			} {
				if err := a.ReadOrthogonal(ctx, bad, make([]byte, item)); err == nil {
					t.Errorf("indices %v read", bad)
				}
			}
		})
	}
}
