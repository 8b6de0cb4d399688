package zarr

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
)

func TestPeerPythonWritesVlen(t *testing.T) {
	peertest.NeedPython(t)
	root := t.TempDir()
	out := peertest.Oracle(t, "zarr/write_vlen.py", root)
	ctx := context.Background()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct {
			Name  string   `json:"name"`
			Elems []string `json:"elems"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		n, err := h.Node(ctx, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		if n.Err != nil || n.Array == nil || n.Array.Err != nil {
			t.Errorf("%s: node error %v, array %+v", c.Name, n.Err, n.Array)
			continue
		}
		if !n.Array.Variable() || n.Array.Size() != 0 {
			t.Errorf("%s: Variable %v, Size %d", c.Name, n.Array.Variable(), n.Array.Size())
		}
		if _, err := n.Array.ReadAt(ctx, make([]byte, 1), 0); err == nil {
			t.Errorf("%s: ReadAt of a variable-length array succeeded", c.Name)
		}
		var got []string
		err = n.Array.Elements(ctx, func(e []byte) error {
			got = append(got, hex.EncodeToString(e))
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if !slices.Equal(got, c.Elems) {
			t.Errorf("%s: elements %v, python has %v", c.Name, got, c.Elems)
		}
	}
}
