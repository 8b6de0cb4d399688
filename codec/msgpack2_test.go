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

// TestMsgPack2Fixtures decodes the numcodecs MsgPack fixtures of string
// arrays (others must be unsupported) and re-encodes them byte for byte.
func TestMsgPack2Fixtures(t *testing.T) {
	fs := fixtures(t, "msgpack2")
	dir := t.TempDir()
	var args []string
	for i, f := range fs {
		args = append(args, f.Array, filepath.Join(dir, fmt.Sprint(i)))
	}
	peertest.Oracle(t, "codec/msgpack2_fixtures.py", args...)
	decoded := 0
	for i, f := range fs {
		arr := readNpy(t, f.Array)
		spec := ArraySpec{Shape: arr.Shape, DataType: DataType{"string", 0}}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(i)+".bin")); err == nil {
			spec.DataType = DataType{"bytes", 0}
		}
		c := mustNew(t, f.Config).(ArrayToBytes)
		got, err := c.Decode(f.Encoded, spec)
		want, rerr := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
		if rerr != nil {
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
		enc, err := c.Encode(want, spec)
		if err != nil {
			t.Fatal(err)
		}
		equalBytes(t, f.Name+" encode", enc, f.Encoded)
	}
	if decoded < 4 {
		t.Errorf("decoded only %d fixtures", decoded)
	}
}

// TestMsgPack2Peer: numcodecs' MsgPack codec and zarrfs agree byte for
// byte, both ways, on strings and byte strings of every header size.
func TestMsgPack2Peer(t *testing.T) {
	elems := []string{"", "a", strings.Repeat("b", 31), strings.Repeat("c", 32), strings.Repeat("é", 200),
		strings.Repeat("d", 70000), "😀", "x", "y", "z"}
	layout := vlenLayout(elems)
	for _, tc := range []struct {
		config string
		dt     DataType
		shape  []int
	}{
		{`{"id":"msgpack2"}`, DataType{"string", 0}, []int{2, 5}},
		{`{"id":"msgpack2"}`, DataType{"bytes", 0}, []int{10}},
		{`{"id":"msgpack2","use_bin_type":false}`, DataType{"string", 0}, []int{5, 2}},
	} {
		spec := ArraySpec{Shape: tc.shape, DataType: tc.dt}
		c := mustNew(t, tc.config).(ArrayToBytes)
		ours, err := c.Encode(layout, spec)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "ours")
		if err := os.WriteFile(p, ours, 0o644); err != nil {
			t.Fatal(err)
		}
		out := peertest.Oracle(t, "codec/msgpack2_peer.py", tc.config, p)
		n := int(out[0]) | int(out[1])<<8 | int(out[2])<<16 | int(out[3])<<24
		theirs, theirDecoding := out[4:4+n], out[4+n:]
		name := fmt.Sprintf("%s %s %v", tc.config, tc.dt.Name, tc.shape)
		equalBytes(t, name+": numcodecs decodes zarrfs", theirDecoding, layout)
		equalBytes(t, name+": encoding", ours, theirs)
		got, err := c.Decode(theirs, spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		equalBytes(t, name+": zarrfs decodes numcodecs", got, layout)
	}
}

func TestMsgPack2Errors(t *testing.T) {
	c := MsgPack2{UseBinType: true}
	spec := ArraySpec{Shape: []int{2}, DataType: DataType{"string", 0}}
	good := []byte{0x94, 0xa1, 'a', 0xa1, 'b', 0xa2, '|', 'O', 0x91, 2}
	if out, err := c.Decode(good, spec); err != nil || string(out) != string(vlenLayout([]string{"a", "b"})) {
		t.Fatalf("good data: %q, %v", out, err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"truncated", good[:len(good)-1], ErrCorrupt},
		{"trailing", append(append([]byte{}, good...), 0), ErrCorrupt},
		{"count", []byte{0x94, 0xa1, 'a', 0xa1, 'b', 0xa2, '|', 'O', 0x91, 3}, ErrCorrupt},
		{"number", []byte{0x94, 0xa1, 'a', 0x01, 0xa2, '|', 'O', 0x91, 2}, ErrUnsupported},
		{"nil", []byte{0x94, 0xa1, 'a', 0xc0, 0xa2, '|', 'O', 0x91, 2}, ErrUnsupported},
		{"type", []byte{0x94, 0xa1, 'a', 0xa1, 'b', 0xa2, '<', 'i', 0x91, 2}, ErrUnsupported},
		{"huge array", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, ErrCorrupt},
		{"huge str", []byte{0x94, 0xdb, 0xff, 0xff, 0xff, 0xff}, ErrCorrupt},
		{"empty", nil, ErrCorrupt},
	} {
		if _, err := c.Decode(tc.data, spec); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzMsgPack2Decode(f *testing.F) {
	f.Add([]byte{0x94, 0xa1, 'a', 0xa1, 'b', 0xa2, '|', 'O', 0x91, 2}, 2)
	f.Add([]byte{0x95, 0x01, 0xc0, 0x81, 0xa1, 'k', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xa2, '|', 'O', 0x91, 3}, 3)
	for _, b := range hostileSeeds(f, "vlen") {
		f.Add(b, 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		for _, dt := range []string{"bytes", ObjectType} {
			spec := ArraySpec{Shape: []int{n}, DataType: DataType{dt, 0}}
			out, err := MsgPack2{UseBinType: true}.Decode(data, spec)
			if err != nil {
				continue
			}
			if _, err := splitVlen("fuzz", out, n); err != nil {
				t.Fatalf("%s: decoded an invalid layout: %v", dt, err)
			}
		}
	})
}

// TestPeerMsgPack2Bytes: numcodecs.MsgPack writes bytes elements of an
// object array as msgpack bin; each decodes to Python's repr of it
// (JSON has no byte strings), as zarr-python's users see them, str
// elements to their JSON text.
func TestPeerMsgPack2Bytes(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/peer_msgpack2_bytes.py")
	enc, want, _ := bytes.Cut(out, []byte{0, 0, 0})
	c, err := New("msgpack2", nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := c.(ArrayToBytes).Decode(enc, ArraySpec{Shape: []int{6}, DataType: DataType{Name: ObjectType}})
	if err != nil {
		t.Fatal(err)
	}
	elems, err := splitVlen("msgpack2", dec, 6)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Join(elems, []byte("\n")); !bytes.Equal(got, want) {
		t.Errorf("elements\n%s\nwant (Python)\n%s", got, want)
	}
}
