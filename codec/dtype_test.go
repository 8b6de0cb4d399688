package codec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestParseNumpyType(t *testing.T) {
	cases := []struct {
		in   string
		want NumpyType
		str  string
	}{
		{"<i4", NumpyType{Kind: 'i', Size: 4}, "<i4"},
		{">f8", NumpyType{Kind: 'f', Size: 8, Big: true}, ">f8"},
		{"|b1", NumpyType{Kind: 'b', Size: 1}, "|b1"},
		{"|u1", NumpyType{Kind: 'u', Size: 1}, "|u1"},
		{"u1", NumpyType{Kind: 'u', Size: 1}, "|u1"},
		{">u1", NumpyType{Kind: 'u', Size: 1}, "|u1"},
		{"=i2", NumpyType{Kind: 'i', Size: 2}, "<i2"},
		{"<U4", NumpyType{Kind: 'U', Size: 16}, "<U4"},
		{"|S7", NumpyType{Kind: 'S', Size: 7}, "|S7"},
		{"<M8[ns]", NumpyType{Kind: 'M', Size: 8, Unit: "ns"}, "<M8[ns]"},
		{">m8[D]", NumpyType{Kind: 'm', Size: 8, Big: true, Unit: "D"}, ">m8[D]"},
		{"|O", NumpyType{Kind: 'O'}, "|O8"},
		{"<c16", NumpyType{Kind: 'c', Size: 16}, "<c16"},
		{"<f2", NumpyType{Kind: 'f', Size: 2}, "<f2"},
		{"|V3", NumpyType{Kind: 'V', Size: 3}, "|V3"},
	}
	for _, tc := range cases {
		got, err := ParseNumpyType(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseNumpyType(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if s := got.String(); s != tc.str {
			t.Errorf("%q: String() = %q, want %q", tc.in, s, tc.str)
		}
	}
	for _, bad := range []string{"", "<", "<i3", "<f1", "<x4", "<i", "<i-4", "<b2", "<i4[ns]", "<M8[ns", "|O4", "<U0", "<i99999999999"} {
		if _, err := ParseNumpyType(bad); err == nil {
			t.Errorf("ParseNumpyType(%q) accepted", bad)
		}
	}
}

func TestFloatToInt(t *testing.T) {
	// Values NumPy 1.24 gives on x86-64 for float64.astype(...).
	cases := []struct {
		v      float64
		size   int
		signed bool
		want   uint64
	}{
		{1.9, 4, true, 1},
		{-1.9, 4, true, 0xffffffffffffffff},
		{1e10, 4, true, 1 << 31},
		{1e10, 1, true, 1 << 31},
		{300.7, 1, false, 300},
		{-1.5, 1, false, 0xffffffffffffffff},
		{1e20, 8, true, 1 << 63},
		{1e20, 8, false, 0},
		{-5, 4, false, 0xfffffffffffffffb},
		{1e20, 4, false, 1 << 63},
	}
	for _, tc := range cases {
		got := floatToIntBits(tc.v, tc.size, tc.signed)
		mask := uint64(1)<<(8*tc.size) - 1
		if tc.size == 8 {
			mask = ^uint64(0)
		}
		if got&mask != tc.want&mask {
			t.Errorf("floatToIntBits(%v, %d, %v) = %x, want %x", tc.v, tc.size, tc.signed, got&mask, tc.want&mask)
		}
	}
}

func FuzzParseNumpyType(f *testing.F) {
	for _, s := range []string{"<i4", "<M8[ns]", "|O", "<U4"} {
		f.Add(s)
	}
	// The data types of the engine's hostile .zarray documents.
	paths, _ := filepath.Glob(filepath.Join("..", "zarr", "testdata", "hostile", "meta", "v2-*.zarray"))
	for _, p := range paths {
		var doc struct{ DType any }
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &doc) == nil {
			if s, ok := doc.DType.(string); ok {
				f.Add(s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		nt, err := ParseNumpyType(s)
		if err != nil {
			return
		}
		back, err := ParseNumpyType(nt.String())
		if err != nil || back != nt {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, nt, nt.String(), back, err)
		}
	})
}
