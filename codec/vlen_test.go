package codec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

func TestSplitVlen(t *testing.T) {
	good := vlenLayout([]string{"", "a", "héllo"})
	cases := []struct {
		name string
		data []byte
		n    int
		ok   bool
	}{
		{"good", good, 3, true},
		{"any count", good, -1, true},
		{"wrong count", good, 2, false},
		{"no header", good[:3], 3, false},
		{"truncated", good[:len(good)-1], 3, false},
		{"trailing byte", append(append([]byte{}, good...), 0), 3, false},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff}, -1, false},
		{"huge length", []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 'a'}, 1, false},
		{"empty", vlenLayout(nil), 0, true},
	}
	for _, tc := range cases {
		elems, err := splitVlen("test", tc.data, tc.n)
		if tc.ok && (err != nil || len(elems) != 3 && tc.n != 0) {
			t.Errorf("%s: %d elements, %v", tc.name, len(elems), err)
		}
		if !tc.ok && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func FuzzSplitVlen(f *testing.F) {
	f.Add(vlenLayout([]string{"a", "bc"}), 2)
	for _, b := range hostileSeeds(f, "vlen-") {
		f.Add(b, 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		elems, err := splitVlen("fuzz", data, n)
		if err != nil {
			return
		}
		if got := vlenLayout(toStrings(elems)); string(got) != string(data) {
			t.Fatalf("re-encoding gives %q, want %q", got, data)
		}
	})
}

// TestVlenFixtures decodes the numcodecs vlen fixtures and compares them
// with the arrays as python3 reads them (object arrays need pickle).
func TestVlenFixtures(t *testing.T) {
	type item struct {
		codec string
		f     fixture
		want  string
	}
	var items []item
	var args []string
	dir := t.TempDir()
	for _, codec := range []string{"vlen-utf8", "vlen-bytes"} {
		for i, f := range fixtures(t, codec) {
			want := filepath.Join(dir, fmt.Sprintf("%s-%d", codec, i))
			items = append(items, item{codec, f, want})
			args = append(args, f.Array, want)
		}
	}
	peertest.Oracle(t, "codec/vlen_fixtures.py", args...)
	for _, it := range items {
		want, err := os.ReadFile(it.want)
		if err != nil {
			t.Fatal(err)
		}
		arr := readNpy(t, it.f.Array)
		spec := ArraySpec{Shape: arr.Shape, DataType: DataType{"string", 0}}
		c := mustNew(t, it.f.Config).(ArrayToBytes)
		got, err := c.Decode(it.f.Encoded, spec)
		if err != nil {
			t.Errorf("%s: %v", it.f.Name, err)
			continue
		}
		equalBytes(t, it.f.Name, got, want)
		enc, err := c.Encode(want, spec)
		if err != nil {
			t.Fatal(err)
		}
		equalBytes(t, it.f.Name+" encode", enc, it.f.Encoded)
	}
}

// TestVlenPeer: numcodecs decodes what zarrfs encodes and the reverse.
func TestVlenPeer(t *testing.T) {
	elems := []string{"", "a", "héllo wörld", "\x00\x01", strings.Repeat("x", 300)}
	layout := vlenLayout(elems)
	spec := ArraySpec{Shape: []int{len(elems)}, DataType: DataType{"string", 0}}
	for _, id := range []string{"vlen-utf8", "vlen-bytes"} {
		c := mustNew(t, `{"id":"`+id+`"}`).(ArrayToBytes)
		ours, err := c.Encode(layout, spec)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "ours")
		if err := os.WriteFile(p, ours, 0o644); err != nil {
			t.Fatal(err)
		}
		theirs := peertest.Oracle(t, "codec/vlen_peer.py", id, p)
		got, err := c.Decode(theirs, spec)
		if err != nil {
			t.Fatalf("%s: decode numcodecs' encoding: %v", id, err)
		}
		equalBytes(t, id, got, layout)
	}
}

func TestVlenErrors(t *testing.T) {
	c := Vlen{Codec: "vlen-utf8"}
	if _, err := c.Decode(vlenLayout([]string{"a"}), ArraySpec{Shape: []int{2}, DataType: DataType{"string", 0}}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong count: %v", err)
	}
	if _, err := c.Decode(vlenLayout([]string{"a"}), ArraySpec{Shape: []int{1}, DataType: DataType{"int8", 1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("fixed-size type: %v", err)
	}
}

func FuzzVlenDecode(f *testing.F) {
	f.Add(vlenLayout([]string{"a", "bc"}), 2)
	for _, b := range hostileSeeds(f, "vlen-") {
		f.Add(b, 64)
	}
	for _, b := range hostileSeeds(f, "vlen-") {
		f.Add(b, 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		spec := ArraySpec{Shape: []int{n}, DataType: DataType{"bytes", 0}}
		out, err := Vlen{Codec: "vlen-bytes"}.Decode(data, spec)
		if err == nil && string(out) != string(data) {
			t.Fatal("decode changed valid data")
		}
	})
}
