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

// TestObjectArraysPeer: object arrays of any elements that numcodecs
// encodes with json2 and msgpack2 decode, as ObjectType, to each element's
// JSON text as Python's json module writes it.
func TestObjectArraysPeer(t *testing.T) {
	dir := t.TempDir()
	peertest.Oracle(t, "codec/object_peer.py", dir)
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
