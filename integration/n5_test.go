package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestMountN5: an N5 container zarr-python 2.13's N5Store writes mounts
// as the Zarr v3 hierarchy that reads it (store/n5): each attributes.json
// shown as a zarr.json, data in N5's axis order (zarr-python's array
// transposed), the same through cat and tree.
func TestMountN5(t *testing.T) {
	peertest.NeedPython(t)
	root, ref := filepath.Join(t.TempDir(), "c.n5"), filepath.Join(t.TempDir(), "arr.bin")
	peertest.RunPython(t, `
import sys, numpy as np, zarr, numcodecs
g = zarr.group(store=zarr.N5Store(sys.argv[1]))
g.attrs["hello"] = "world"
a = g.create_dataset("sub/arr", shape=(5, 7), chunks=(2, 3), dtype=">u2", compressor=numcodecs.GZip(level=1))
a[:] = np.arange(35).reshape(5, 7) * 3
open(sys.argv[2], "wb").write(np.ascontiguousarray(a[:].T).astype("<u2").tobytes())
`, root, ref)
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "cat N5 sub/arr", mustZarrfs(t, "cat", root, "sub/arr"), want)
	if tree := string(mustZarrfs(t, "tree", root)); !strings.Contains(tree, "arr") || !strings.Contains(tree, "(7, 5)") {
		t.Errorf("tree of the N5 container:\n%s", tree)
	}
	m := mountStore(t, root)
	if b, err := os.ReadFile(filepath.Join(m.dir, "sub", "arr", "data")); err != nil || !bytes.Equal(b, want) {
		t.Errorf("MOUNT/sub/arr/data: % x, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(m.dir, "zarr.json")); err != nil || !strings.Contains(string(b), `"hello":"world"`) {
		t.Errorf("MOUNT/zarr.json: %s, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(m.dir, "sub", "arr", "zarr.json")); err != nil || !strings.Contains(string(b), `"n5_default"`) {
		t.Errorf("MOUNT/sub/arr/zarr.json: %s, %v", b, err)
	}
}
