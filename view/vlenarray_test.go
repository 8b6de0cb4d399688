package view

import (
	"bytes"
	"context"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestPeerVLenArrayText: zarr-python writes a ragged array with
// numcodecs.VLenArray (int32 and float32 elements, a missing chunk);
// data.txt holds one JSON list a line, as Python's json writes each
// element's tolist() (compact), and for missing elements the fill value
// zarr-python reads there (0).
func TestPeerVLenArrayText(t *testing.T) {
	peertest.NeedPython(t)
	root := t.TempDir()
	want := peertest.RunPython(t, `
import sys, json, numpy as np, zarr, numcodecs
g = zarr.open_group(sys.argv[1], mode="w")
out = []
for name, dt, vals in [("i", "<i4", [[1, -2, 3], [], [2**31 - 1], [4, 5], None, None]),
                       ("f", "<f4", [[0.1, -1.5], [float("nan")], [1e-7, 3e20], [], [2.0], [0.0]])]:
    z = g.create_dataset(name, shape=(6,), chunks=(4,), dtype=object, object_codec=numcodecs.VLenArray(dt))
    v = np.empty(6, dtype=object)
    v[:] = [np.array(x, dtype=dt) for x in vals if x is not None] + [None] * sum(x is None for x in vals)
    n = sum(x is not None for x in vals)
    z[:n] = v[:n]
    for x in z[:]:
        out.append(json.dumps(x.tolist() if hasattr(x, "tolist") else x, separators=(",", ":")))
sys.stdout.write("\n".join(out) + "\n")
`, root)
	ctx := context.Background()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for _, p := range []string{"i", "f"} {
		n, err := h.Node(ctx, p)
		if err != nil || n.Array == nil || n.Array.Err != nil {
			t.Fatalf("%s: %v %v", p, err, n)
		}
		if err := WriteText(ctx, &got, n.Array); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("data.txt\n%s\nwant (zarr-python, json)\n%s", got.Bytes(), want)
	}
}
