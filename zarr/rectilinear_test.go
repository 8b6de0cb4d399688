package zarr

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerRectilinear reads the arrays of the oracle zarr/write_rectilinear.py whole,
// in parts (ranges across chunks of different shapes) and by orthogonal
// selection (what previews use), and checks the README's worked example:
// "the array index (20, 15) resolves to the chunk grid index (1, 0) and
// the chunk index (4, 15)".
func TestPeerRectilinear(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.Oracle(t, "zarr/write_rectilinear.py", root, refs)
	ctx := context.Background()
	h := openDir(t, root)
	for _, name := range []string{"spec", "sharded", "diagram"} {
		want := readFile(t, filepath.Join(refs, name+".bin"))
		n, got := readArray(t, h, name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: whole read differs from NumPy's array", name)
			continue
		}
		if !strings.Contains(n.Info().Text(), "rectilinear") {
			t.Errorf("%s: info.txt does not name the grid", name)
		}
		a := n.Array
		for _, r := range [][2]int64{{1, 17}, {100, 3000}, {int64(len(want)) - 41, int64(len(want))}} {
			size := int64(len(want))
			off, end := min(r[0], size/2)/int64(a.DataType().Size)*int64(a.DataType().Size), min(r[1], size)
			p := make([]byte, end-off)
			if k, err := a.ReadAt(ctx, p, off); k != len(p) || err != nil || !bytes.Equal(p, want[off:end]) {
				t.Errorf("%s: ReadAt(%d, %d) = %d, %v (equal %v)", name, off, len(p), k, err, bytes.Equal(p, want[off:end]))
			}
		}
	}
	// A small read of the sharded array decodes only the inner chunks it
	// needs (a random reader's read: not sequential).
	sh, err := openDir(t, root).Node(ctx, "sharded") // nothing cached yet
	must(t, err)
	shWant := readFile(t, filepath.Join(refs, "sharded.bin"))
	before := partialDecodes.Load()
	p := make([]byte, 8)
	if k, err := sh.Array.ReadAt(ctx, p, 4*(4*10+6)); k != 8 || err != nil || !bytes.Equal(p, shWant[4*46:4*46+8]) {
		t.Errorf("sharded: ReadAt of 2 elements = %d, %v", k, err)
	}
	if partialDecodes.Load() == before {
		t.Errorf("sharded: the small read decoded whole shards")
	}

	// An orthogonal selection, as a preview's plane: rows 3, 9, 20, 25
	// and every fifth column of the diagram's array.
	n, err := h.Node(ctx, "diagram")
	must(t, err)
	want := readFile(t, filepath.Join(refs, "diagram.bin"))
	rows, cols := []int64{3, 9, 20, 25}, []int64{0, 5, 10, 15, 20, 25, 30, 35}
	sel := make([]byte, len(rows)*len(cols))
	must(t, n.Array.ReadOrthogonal(ctx, [][]int64{rows, cols}, sel))
	for i, r := range rows {
		for j, c := range cols {
			if sel[i*len(cols)+j] != want[r*38+c] {
				t.Errorf("diagram[%d, %d] = %d, want %d", r, c, int8(sel[i*len(cols)+j]), int8(want[r*38+c]))
			}
		}
	}
	l := n.Array.Layout()
	c0, s0, _ := l.Locate(0, 20)
	c1, s1, _ := l.Locate(1, 15)
	if c0 != 1 || c1 != 0 || 20-s0 != 4 || 15-s1 != 15 {
		t.Errorf("(20, 15) is in chunk (%d, %d) at (%d, %d), want (1, 0) at (4, 15)", c0, c1, 20-s0, 15-s1)
	}
	// Writing is refused (the engine writes regular grids only).
	if _, err := n.Array.WriteAt(ctx, []byte{1}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WriteAt: %v, want ErrUnsupported", err)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	must(t, err)
	return b
}
