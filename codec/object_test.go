package codec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// objectPeer has numcodecs encode an object array of mixed elements with
// json2 and msgpack2, and writes each encoding and each element as Python's
// json module writes it: json2's own settings (ASCII, sorted keys) for
// json2, ensure_ascii off for msgpack2, whose maps keep their order.
const objectPeer = `
import json, sys, numcodecs, numpy as np
out = sys.argv[1]
elems = ["s", "é <&>", 1, -7, 2.5, 1e20, 1e-7, 100.0, None, True, False, [1, "x", [None]],
         {"b": 1, "a": "é"}, "line\nbreak", 2**63, -2**63]
a = np.empty(len(elems), dtype=object)
a[:] = elems
a = a.reshape(4, 4)
for name, codec, dump in (
        ("json2", numcodecs.JSON(), lambda e: json.dumps(e, ensure_ascii=True, separators=(",", ":"), sort_keys=True)),
        ("msgpack2", numcodecs.MsgPack(), lambda e: json.dumps(e, ensure_ascii=False, separators=(",", ":")))):
    open(out + "/" + name + ".bin", "wb").write(codec.encode(a))
    json.dump([dump(e) for e in elems], open(out + "/" + name + ".json", "w"))
`

// TestObjectArraysPeer: object arrays of any elements that numcodecs
// encodes with json2 and msgpack2 decode, as ObjectType, to each element's
// JSON text as Python's json module writes it.
func TestObjectArraysPeer(t *testing.T) {
	dir := t.TempDir()
	peertest.RunPython(t, objectPeer, dir)
	for _, id := range []string{"json2", "msgpack2"} {
		data, err := os.ReadFile(filepath.Join(dir, id+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		b, _ := os.ReadFile(filepath.Join(dir, id+".json"))
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		c := mustNew(t, `{"id":"`+id+`"}`).(ArrayToBytes)
		out, err := c.Decode(data, ArraySpec{Shape: []int{4, 4}, DataType: DataType{Name: ObjectType}})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		elems, err := splitVlen(id, out, 16)
		if err != nil {
			t.Fatal(err)
		}
		got := toStrings(elems)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", id, got, want)
		}
		// An array of strings still refuses other elements.
		if _, err := c.Decode(data, ArraySpec{Shape: []int{4, 4}, DataType: DataType{Name: "string"}}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s as strings: %v, want unsupported", id, err)
		}
	}
}
