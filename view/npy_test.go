package view

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

var update = flag.Bool("update", false, "rewrite testdata golden files from the python peer")

// npyCase is one .npy header case; testdata/npy/NAME.hdr holds the header
// NumPy writes for it.
type npyCase struct {
	Name       string  `json:"name"`
	Descr      string  `json:"descr"`
	Shape      []int64 `json:"shape"`
	WriteArray bool    `json:"write_array"` // small enough for np.lib.format.write_array
}

func npyCases() []npyCase {
	huge := make([]int64, 22000) // a header longer than 65535 bytes: format 2.0
	for i := range huge {
		huge[i] = 1
	}
	return []npyCase{
		{"f4_3x4", "<f4", []int64{3, 4}, true},
		{"f8_scalar", "<f8", nil, true},
		{"u1_5", "|u1", []int64{5}, true},
		{"i2_empty", "<i2", []int64{0, 7}, true},
		{"b1_2x3x4", "|b1", []int64{2, 3, 4}, true},
		{"S7_10", "|S7", []int64{10}, true},
		{"U7_2x2", "<U7", []int64{2, 2}, true},
		{"M8ns_3", "<M8[ns]", []int64{3}, true},
		{"c16_1x1x1x1x1x1", "<c16", []int64{1, 1, 1, 1, 1, 1}, true},
		{"f4_24x90x180", "<f4", []int64{24, 90, 180}, true},
		{"struct_3", "[('a', '<i4'), ('b', '<f8', (2,))]", []int64{3}, true},
		{"struct_nested_2x2", "[('t', '<M8[ns]'), ('s', [('x', '<i2'), ('y', '|S3')]), ('u', '<U2', (2, 2))]", []int64{2, 2}, true},
		{"u8_big", "<u8", []int64{123456789012345678, 3}, false},
		{"f4_rank22000", "<f4", huge, false},
	}
}

func TestNpyHeaderGolden(t *testing.T) {
	for _, c := range npyCases() {
		t.Run(c.Name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "npy", c.Name+".hdr"))
			if err != nil {
				t.Fatalf("golden file: %v (regenerate with go test -run TestNpyHeaderPeer -update)", err)
			}
			got := NpyHeader(c.Descr, c.Shape)
			if !bytes.Equal(got, want) {
				t.Fatalf("header differs from NumPy's\n got %q\nwant %q", trunc(got), trunc(want))
			}
			if len(got)%npyAlign != 0 {
				t.Errorf("header length %d is not a multiple of %d", len(got), npyAlign)
			}
			major := byte(1)
			if len(got) > npyMaxV1Header {
				major = 2
			}
			if got[6] != major {
				t.Errorf("format version %d, want %d", got[6], major)
			}
		})
	}
}

// TestNpyHeaderPeer compares NpyHeader with what the installed NumPy writes
// now (and rewrites the golden files with -update).
func TestNpyHeaderPeer(t *testing.T) {
	cases := npyCases()
	arg, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	out := peertest.Oracle(t, "view/numpy_headers.py", string(arg))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("numpy printed %d headers for %d cases", len(lines), len(cases))
	}
	for i, line := range lines {
		name, hx, ok := strings.Cut(line, " ")
		if !ok || name != cases[i].Name {
			t.Fatalf("unexpected numpy output line %q", trunc([]byte(line)))
		}
		want, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(filepath.Join("testdata", "npy", name+".hdr"), want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := NpyHeader(cases[i].Descr, cases[i].Shape); !bytes.Equal(got, want) {
			t.Errorf("%s: header differs from NumPy's\n got %q\nwant %q", name, trunc(got), trunc(want))
		}
	}
}

func TestPyStr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<f4", "'<f4'"},
		{"<M8[ns]", "'<M8[ns]'"},
		{"a'b", `"a'b"`},
		{`a'"b`, `'a\'"b'`},
		{"a\\b\n\x01\xff", `'a\\b\n\x01\xff'`},
	} {
		if got := pyStr(c.in); got != c.want {
			t.Errorf("pyStr(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// trunc shortens b for failure messages.
func trunc(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:200:200], "…"...)
	}
	return b
}

// FuzzNpyHeader checks the invariants NumPy's reader relies on for any
// type string and shape: the magic string, the version chosen by length,
// the length field, 64-byte alignment and the final newline.
func FuzzNpyHeader(f *testing.F) {
	f.Add("<f4", []byte{3, 4})
	f.Add("|S7", []byte{})
	f.Add("<M8[ns]", bytes.Repeat([]byte{1}, 300))
	f.Fuzz(func(t *testing.T, descr string, dims []byte) {
		shape := make([]int64, 0, len(dims)*64)
		for _, d := range dims {
			for range 64 { // long enough shapes to need format 2.0
				shape = append(shape, int64(d)<<20)
			}
		}
		h := NpyHeader(descr, shape)
		if !bytes.HasPrefix(h, []byte("\x93NUMPY")) || len(h)%npyAlign != 0 || h[len(h)-1] != '\n' {
			t.Fatalf("malformed header %q", trunc(h))
		}
		var hlen, prefix int
		switch h[6] {
		case 1:
			hlen, prefix = int(binary.LittleEndian.Uint16(h[8:])), 10
		case 2:
			hlen, prefix = int(binary.LittleEndian.Uint32(h[8:])), 12
			if len(h) <= npyMaxV1Header {
				t.Fatalf("format 2.0 for a %d-byte header", len(h))
			}
		default:
			t.Fatalf("version %d", h[6])
		}
		if prefix+hlen != len(h) || !bytes.HasPrefix(h[prefix:], []byte("{'descr': ")) {
			t.Fatalf("length field %d for a %d-byte header", hlen, len(h))
		}
	})
}
