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
	want := peertest.Oracle(t, "view/peer_vlen_array_text.py", root)
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
