package zarr

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
)

// TestPeerNumcodecsCategorizeObjects: v2 object arrays serialised by
// numcodecs' Categorize alone (astype u1, u2, u4 in both byte orders, i1;
// with and without Zlib; non-ASCII labels) read as numcodecs decodes them,
// and bad ones fail on their own node only.
func TestPeerNumcodecsCategorizeObjects(t *testing.T) {
	peertest.NeedPython(t)
	root := t.TempDir()
	out := peertest.Oracle(t, "zarr/write_categorize.py", root)
	ctx := context.Background()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct {
			Name  string   `json:"name"`
			Elems []string `json:"elems"`
			Want  string   `json:"want"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		cases++
		n, err := h.Node(ctx, c.Name)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if n.Err != nil || n.Array == nil {
			t.Errorf("%s: node error %v (want an array node)", c.Name, n.Err)
			continue
		}
		if c.Want == "unsupported" {
			if !errors.Is(n.Array.Err, codec.ErrUnsupported) {
				t.Errorf("%s: array error %v, want unsupported", c.Name, n.Array.Err)
			}
			if got := n.Array.Shape(); !slices.Equal(got, []int64{4}) {
				t.Errorf("%s: shape %v, want [4] though the data is unsupported", c.Name, got)
			}
			continue
		}
		if n.Array.Err != nil {
			t.Errorf("%s: array error %v", c.Name, n.Array.Err)
			continue
		}
		if !n.Array.Variable() || n.Array.DataType().Name != "string" {
			t.Errorf("%s: Variable %v, data type %q, want variable strings", c.Name, n.Array.Variable(), n.Array.DataType().Name)
		}
		var got []string
		err = n.Array.Elements(ctx, func(e []byte) error {
			got = append(got, hex.EncodeToString(e))
			return nil
		})
		if c.Want == "corrupt" {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Errorf("%s: elements error %v, want corrupt", c.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if !slices.Equal(got, c.Elems) {
			t.Errorf("%s: elements %v, numcodecs decodes %v", c.Name, got, c.Elems)
		}
	}
	if cases != 14 {
		t.Errorf("python wrote %d cases, want 14", cases)
	}
}
