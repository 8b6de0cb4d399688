package zarr

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerConditionalArray reads an array of the conditional codec with
// chunks under every mask through zarr.Array, against NumPy's bytes.
func TestPeerConditionalArray(t *testing.T) {
	peertest.NeedPython(t)
	root := t.TempDir()
	peertest.Oracle(t, "zarr/write_conditional.py", root)
	want, err := os.ReadFile(filepath.Join(root, "want.bin"))
	if err != nil {
		t.Fatal(err)
	}
	h := openDir(t, root)
	if _, got := readArray(t, h, "a"); !bytes.Equal(got, want) {
		t.Errorf("content differs from NumPy's:\n got %x\nwant %x", got, want)
	}
	ctx := context.Background()
	n, err := h.Node(ctx, "bad")
	if err != nil || n.Array == nil || n.Array.Err != nil {
		t.Fatalf("node bad: %v %+v", err, n)
	}
	buf := make([]byte, n.Array.Size())
	if _, err := n.Array.ReadAt(ctx, buf, 0); err == nil {
		t.Errorf("a chunk with a reserved header bit set read without error")
	} else {
		t.Logf("bad chunk: %v", err)
	}
}
