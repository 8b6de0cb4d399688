package codec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestJSON2Fixtures decodes the numcodecs JSON fixtures of string arrays
// (others must be unsupported) and re-encodes the compact ones byte for
// byte.
func TestJSON2Fixtures(t *testing.T) {
	fs := fixtures(t, "json2")
	dir := t.TempDir()
	var args []string
	for i, f := range fs {
		args = append(args, f.Array, filepath.Join(dir, fmt.Sprint(i)))
	}
	peertest.Oracle(t, "codec/json2_fixtures.py", args...)
	decoded := 0
	for i, f := range fs {
		arr := readNpy(t, f.Array)
		spec := ArraySpec{Shape: arr.Shape, DataType: DataType{"string", 0}}
		c := mustNew(t, f.Config).(ArrayToBytes)
		got, err := c.Decode(f.Encoded, spec)
		want, rerr := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
		if rerr != nil { // not an array of strings
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v, want ErrUnsupported", f.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		decoded++
		equalBytes(t, f.Name, got, want)
		if strings.Contains(f.Config, `"indent": null`) || strings.Contains(f.Config, `"indent":null`) {
			enc, err := c.Encode(want, spec)
			if err != nil {
				t.Fatal(err)
			}
			equalBytes(t, f.Name+" encode", enc, f.Encoded)
		}
	}
	if decoded < 8 {
		t.Errorf("decoded only %d fixtures", decoded)
	}
}

// TestJSON2Peer: numcodecs' JSON codec and zarrfs agree byte for byte on
// awkward strings in a two-dimensional chunk, both ways.
func TestJSON2Peer(t *testing.T) {
	elems := []string{"", "plain", `quo"te`, `back\slash`, "new\nline\ttab\r\b\f", "\x00\x01\x1f\x7f", "é ß 中文", "😀 𝄞", "/slash", "end"}
	layout := vlenLayout(elems)
	spec := ArraySpec{Shape: []int{2, 5}, DataType: DataType{"string", 0}}
	for _, cfg := range []string{`{"id":"json2"}`, `{"id":"json2","ensure_ascii":false}`, `{"id":"json2","separators":[", ",": "]}`} {
		c := mustNew(t, cfg).(ArrayToBytes)
		ours, err := c.Encode(layout, spec)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "ours")
		if err := os.WriteFile(p, ours, 0o644); err != nil {
			t.Fatal(err)
		}
		out := peertest.Oracle(t, "codec/json2_peer.py", cfg, p)
		n := int(out[0]) | int(out[1])<<8 | int(out[2])<<16 | int(out[3])<<24
		theirs, theirDecoding := out[4:4+n], out[4+n:]
		equalBytes(t, cfg+": numcodecs decodes zarrfs", theirDecoding, layout)
		equalBytes(t, cfg+": encoding", ours, theirs)
		got, err := c.Decode(theirs, spec)
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		equalBytes(t, cfg+": zarrfs decodes numcodecs", got, layout)
	}
}

func TestJSON2Errors(t *testing.T) {
	c := mustNew(t, `{"id":"json2"}`).(ArrayToBytes)
	spec := ArraySpec{Shape: []int{2}, DataType: DataType{"string", 0}}
	for _, tc := range []struct {
		data string
		want error
	}{
		{`["a","b","|O",[2]]`, nil},
		{`["a","b","|O",[3]]`, ErrCorrupt},
		{`["a","|O",[2]]`, ErrCorrupt},
		{`["a","b","|O"]`, ErrUnsupported}, // "b" taken as the type
		{`["a",1,"|O",[2]]`, ErrUnsupported},
		{`["a",NaN,"|O",[2]]`, ErrUnsupported},
		{`["a","b","<U1",[2]]`, ErrUnsupported},
		{`["a","b"`, ErrCorrupt},
		{`{}`, ErrCorrupt},
		{`["a","b","|O",[-1,-2]]`, ErrCorrupt},
		{`[["a"],["b"],"|O",[2,1]]`, nil},
		{`[["a"],"b","|O",[2,1]]`, ErrCorrupt},
	} {
		_, err := c.Decode([]byte(tc.data), spec)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.data, err, tc.want)
		}
	}
	if _, err := mustNew(t, `{"id":"json2","indent":1}`).(ArrayToBytes).Encode(vlenLayout([]string{"a", "b"}), spec); !errors.Is(err, ErrUnsupported) {
		t.Errorf("indented encoding: %v", err)
	}
	if _, err := c.Encode(vlenLayout([]string{"a", "\xff"}), spec); err == nil {
		t.Error("invalid UTF-8 encoded")
	}
}

func FuzzJSON2Decode(f *testing.F) {
	f.Add([]byte(`["a","b","|O",[2]]`), 2)
	f.Add([]byte(`[["a","b"],["c","d"],"|O",[2,2]]`), 4)
	f.Add([]byte(`[1,null,{"k":[2.5,"x"]},"|O",[3]]`), 3)
	for _, b := range hostileSeeds(f, "vlen") {
		f.Add(b, 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		for _, dt := range []string{"string", ObjectType} {
			spec := ArraySpec{Shape: []int{n}, DataType: DataType{dt, 0}}
			out, err := JSON2{ID: "json2", ASCII: true, Item: ",", Colon: ":"}.Decode(data, spec)
			if err != nil {
				continue
			}
			if _, err := splitVlen("fuzz", out, n); err != nil {
				t.Fatalf("%s: decoded an invalid layout: %v", dt, err)
			}
		}
	})
}

// TestPeerJSON2NaN: numcodecs.JSON writes NaN, Infinity and -Infinity
// bare, as Python's json module does; an object array's elements decode to
// the text Python's json writes for each, those numbers included, and a
// string that merely reads "NaN" stays a string.
func TestPeerJSON2NaN(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/peer_json2_nan.py")
	enc, want, _ := bytes.Cut(out, []byte{0})
	c, err := New("json2", nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := c.(ArrayToBytes).Decode(enc, ArraySpec{Shape: []int{6}, DataType: DataType{Name: ObjectType}})
	if err != nil {
		t.Fatal(err)
	}
	elems, err := splitVlen("json2", dec, 6)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Join(elems, []byte("\n")); !bytes.Equal(got, want) {
		t.Errorf("elements\n%s\nwant (Python's json)\n%s", got, want)
	}
}
