package view

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/zarr"
)

// netcdfOf opens st (bigGroup's) with read-ahead off and returns the
// dataset.nc of its root group.
func netcdfOf(t testing.TB, st *countingStore) *netcdfFile {
	t.Helper()
	ctx := context.Background()
	h, err := zarr.Open(ctx, st, zarr.Options{NoReadAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	root, err := h.Node(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var children []*zarr.Node // as listed (the counting store cannot list)
	for _, p := range []string{"lat", "t"} {
		c, err := h.Node(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		children = append(children, c)
	}
	f, _ := Find(New(h, Config{}).Files(root, children), "dataset.nc").(*netcdfFile)
	if f == nil {
		t.Fatal("no dataset.nc")
	}
	return f
}

// bigGroup writes a group holding t (float32, 8 × 64 × 64 in chunks of
// 1 × 32 × 32, element i = i) and its coordinate lat.
func bigGroup(t testing.TB) *countingStore {
	mem := newStore(t)
	data := make([]byte, 8*64*64*4)
	for i := range 8 * 64 * 64 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	writeArray(t, mem, "t", zarr.ArrayMeta{Shape: []int64{8, 64, 64}, ChunkShape: []int64{1, 32, 32}, DataType: "float32",
		FillValue: 0, DimensionNames: []string{"time", "lat", "lon"}}, data)
	writeArray(t, mem, "lat", zarr.ArrayMeta{Shape: []int64{64}, ChunkShape: []int64{64}, DataType: "float64",
		FillValue: 0, DimensionNames: []string{"lat"}}, make([]byte, 64*8))
	return newCountingStore(mem)
}

// TestNetCDFReadsOnlyChunksUnder: a read of dataset.nc decodes only the
// chunks under the bytes asked for, and its values are the array's
// elements, big-endian; a read across an element boundary and the padding
// works too.
func TestNetCDFReadsOnlyChunksUnder(t *testing.T) {
	ctx := context.Background()
	st := bigGroup(t)
	f := netcdfOf(t, st)
	l, err := f.lay(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v := l.vars[len(l.vars)-1] // t, the larger, is last
	// Element (3, 40, 10): chunk 3/1/0 only.
	elem := int64((3*64+40)*64 + 10)
	p := make([]byte, 6) // the element, and half the next one
	if n, err := f.ReadAt(ctx, p, v.begin+4*elem); n != len(p) || err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	if got := math.Float32frombits(binary.BigEndian.Uint32(p)); got != float32(elem) {
		t.Errorf("value %v, want %v", got, elem)
	}
	if want := binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(elem+1)))[:2]; !slices.Equal(p[4:], want) {
		t.Errorf("next element's first bytes %x, want %x", p[4:], want)
	}
	var keys []string
	for k := range st.reads {
		if strings.HasPrefix(k, "t/c/") {
			keys = append(keys, k)
		}
	}
	if !slices.Equal(keys, []string{"t/c/3/1/0"}) {
		t.Errorf("read chunks %v, want only t/c/3/1/0", keys)
	}
	// lat is 512 bytes: no padding. The header's end and lat's start.
	q := make([]byte, 16)
	if n, err := f.ReadAt(ctx, q, int64(len(l.header))-8); n != 16 || err != nil || !slices.Equal(q[:8], l.header[len(l.header)-8:]) {
		t.Errorf("read across the header's end: %d, %v", n, err)
	}
}

// BenchmarkNetCDFFirstValue reads the first value of the largest variable
// of a freshly opened group's dataset.nc, as a tool does after opening it:
// chunks/op is how many chunks of that variable the store was asked for.
func BenchmarkNetCDFFirstValue(b *testing.B) {
	ctx := context.Background()
	st := bigGroup(b)
	chunks := 0
	for b.Loop() {
		st.reads = map[string]int{}
		f := netcdfOf(b, st)
		l, err := f.lay(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		p := make([]byte, 4)
		if _, err := f.ReadAt(ctx, p, l.vars[len(l.vars)-1].begin); err != nil {
			b.Fatal(err)
		}
		for k := range st.reads {
			if strings.HasPrefix(k, "t/c/") {
				chunks++
			}
		}
	}
	b.ReportMetric(float64(chunks)/float64(b.N), "chunks/op")
}

// TestNetCDFClassicTypes: small int64 variables are stored as NC_INT when
// their values fit 32 bits, as NC_DOUBLE when they are exact as doubles,
// and stay NC_INT64 otherwise; uint16 is NC_SHORT with _Unsigned unless
// the file is CDF-5 anyway. Every value read back, at every offset, is the
// element converted.
func TestNetCDFClassicTypes(t *testing.T) {
	i64 := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	for _, c := range []struct {
		name    string
		values  []int64
		version byte
		be      func(int64) []byte // a value as the file holds it
	}{
		{"int32 range", []int64{-5, 0, 1 << 30}, 1, func(v int64) []byte { return binary.BigEndian.AppendUint32(nil, uint32(int32(v))) }},
		{"double range", []int64{-1 << 53, 0, 1 << 40}, 1, func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(float64(v))) }},
		{"int64 range", []int64{0, 1<<53 + 1, 7}, 5, func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }},
	} {
		mem := newStore(t)
		writeArray(t, mem, "v", zarr.ArrayMeta{Shape: []int64{3}, ChunkShape: []int64{2}, DataType: "int64", FillValue: 0,
			DimensionNames: []string{"n"}}, i64(c.values...))
		writeArray(t, mem, "u", zarr.ArrayMeta{Shape: []int64{3}, ChunkShape: []int64{3}, DataType: "uint16", FillValue: 65535,
			DimensionNames: []string{"n"}}, []byte{1, 0, 0xff, 0xff, 0, 0x80})
		ctx := context.Background()
		h, err := zarr.Open(ctx, mem, zarr.Options{})
		if err != nil {
			t.Fatal(err)
		}
		root, _ := h.Node(ctx, "")
		var children []*zarr.Node
		for _, p := range []string{"u", "v"} {
			n, _ := h.Node(ctx, p)
			children = append(children, n)
		}
		f := Find(New(h, Config{}).Files(root, children), "dataset.nc").(*netcdfFile)
		l, err := f.lay(ctx)
		if err != nil {
			t.Fatal(err)
		}
		checkHeader(t, l)
		if l.version != c.version {
			t.Errorf("%s: CDF-%d, want CDF-%d", c.name, l.version, c.version)
		}
		var want []byte
		for _, v := range c.values {
			want = append(want, c.be(v)...)
		}
		size, _ := f.Size(ctx)
		all := make([]byte, size)
		if _, err := f.ReadAt(ctx, all, 0); err != nil {
			t.Fatal(err)
		}
		// u is laid out first (smaller), v last.
		v := l.vars[1]
		if got := all[v.begin : v.begin+v.size]; !slices.Equal(got, want) {
			t.Errorf("%s: v holds %x, want %x", c.name, got, want)
		}
		for off := v.begin; off < v.begin+v.size; off++ { // reads starting inside elements
			b := make([]byte, v.begin+v.size-off)
			if _, err := f.ReadAt(ctx, b, off); err != nil || !slices.Equal(b, want[off-v.begin:]) {
				t.Errorf("%s: read at %d: %x, %v", c.name, off, b, err)
			}
		}
		u := l.vars[0]
		if got := all[u.begin : u.begin+u.size]; !slices.Equal(got, []byte{0, 1, 0xff, 0xff, 0x80, 0}) {
			t.Errorf("%s: u holds %x", c.name, got)
		}
		hdr := string(l.header)
		if unsigned := strings.Contains(hdr, "_Unsigned"); unsigned != (c.version != 5) {
			t.Errorf("%s: _Unsigned in the header: %v", c.name, unsigned)
		}
	}
}
