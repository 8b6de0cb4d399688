package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/n5"
)

// TestPeerN5Container: a container zarr-python writes reads through the
// registry's conversion of attributes.json (store/n5) as zarr-python
// reads it, with its groups, attributes and an implicit group.
func TestPeerN5Container(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.Oracle(t, "zarr/write_n5.py", root, refs)
	ctx := context.Background()
	d, err := dir.Open(root, dir.Options{})
	must(t, err)
	st, ok, err := n5.Open(ctx, d)
	if err != nil || !ok {
		t.Fatalf("n5.Open: %v, %v", ok, err)
	}
	h, err := Open(ctx, st, Options{CacheSize: 1 << 20})
	must(t, err)
	for _, p := range []string{"raw", "grp/gzip", "grp/zlib", "bz2", "xz", "blosc", "implicit/deep/u1"} {
		want, err := os.ReadFile(filepath.Join(refs, strings.ReplaceAll(p, "/", "_")+".bin"))
		must(t, err)
		_, got := readArray(t, h, p)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: data differs from zarr-python's (%d bytes, want %d)", p, len(got), len(want))
		}
	}
	// The shape is N5's dimensions (zarr-python's reversed).
	n, err := h.Node(ctx, "raw")
	must(t, err)
	if s := n.Array.Shape(); len(s) != 2 || s[0] != 7 || s[1] != 5 {
		t.Errorf("raw: shape %v, want [7 5]", s)
	}
	for _, c := range []struct{ path, attrs string }{{"", `{"title":"n5 test"}`}, {"grp", `{"units":"m"}`}, {"implicit", `{}`}} {
		n, err := h.Node(ctx, c.path)
		must(t, err)
		if n.Array != nil || n.Err != nil {
			t.Errorf("%q: not a group: %v", c.path, n.Err)
			continue
		}
		var got, want any
		json.Unmarshal(n.Attributes, &got)
		json.Unmarshal([]byte(c.attrs), &want)
		if b1, b2 := mustJSON(got), mustJSON(want); b1 != b2 {
			t.Errorf("%q: attributes %s, want %s", c.path, b1, b2)
		}
	}
	kids, err := h.Children(ctx, "")
	must(t, err)
	var names []string
	for _, k := range kids {
		names = append(names, k.Name())
	}
	if mustJSON(names) != `["blosc","bz2","grp","implicit","raw","xz"]` {
		t.Errorf("root children %v", names)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
