package zarr

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/treegen"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
)

// A large .zmetadata in a directory is not kept: each node's document is
// read from the file, at its offset, when the node is opened, and is the
// document a store without file information (which keeps the
// .zmetadata, as a remote one does) gives. Once the file has changed
// (another size, or the same size at another time), a node not yet
// opened reports an error, said once in the log, and no other document.
func TestConsolidatedReadFromFile(t *testing.T) {
	ctx := context.Background()
	tree := treegen.Tree{Arrays: 4000, GroupSize: 100}
	for _, change := range []string{"size", "time"} {
		t.Run(change, func(t *testing.T) {
			d := t.TempDir()
			if err := tree.Write(d); err != nil {
				t.Fatal(err)
			}
			zmPath := filepath.Join(d, v2Consolidated)
			zm, err := os.ReadFile(zmPath)
			if err != nil {
				t.Fatal(err)
			}
			if len(zm) <= compactAbove {
				t.Fatalf(".zmetadata is %d bytes, not over %d", len(zm), compactAbove)
			}
			st, err := dir.Open(d, dir.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			h, err := Open(ctx, st, Options{Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
			if err != nil {
				t.Fatal(err)
			}
			if h.consolidated == nil || h.consolidated.file == nil {
				t.Fatal("the .zmetadata's documents are not read from the file")
			}
			if b := h.prefetched[v2Consolidated]; b != nil {
				t.Errorf("the hierarchy keeps %d bytes of .zmetadata", len(b))
			}
			// The same .zmetadata in a store that says nothing of its
			// files: kept, as before.
			mem := memory.New()
			mem.Set(ctx, v2Consolidated, zm)
			mem.Set(ctx, v2GroupDoc, []byte(treegen.GroupDoc))
			kept, err := Open(ctx, mem, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if kept.consolidated == nil || kept.consolidated.file != nil {
				t.Fatal("a memory store's .zmetadata is not kept")
			}
			for _, i := range []int{0, 1234, tree.Arrays - 1} {
				p := tree.Path(i)
				n, err := h.Node(ctx, p)
				if err != nil || n.Err != nil || n.Array == nil {
					t.Fatalf("%s: %v, %v", p, err, n)
				}
				k, err := kept.Node(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if string(n.Documents[0].Data) != string(k.Documents[0].Data) || !slices.Equal(n.Array.Shape(), []int64{64}) {
					t.Errorf("%s: %s read from the file, %s kept", p, n.Documents[0].Data, k.Documents[0].Data)
				}
			}
			// The root shows .zmetadata as stored.
			root, err := h.Node(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(root.Documents, func(d Document) bool { return d.Name == v2Consolidated })
			if got, err := root.Documents[i].Bytes(ctx); err != nil || string(got) != string(zm) {
				t.Errorf(".zmetadata: %d bytes, %v; want the %d stored", len(got), err, len(zm))
			}
			switch change {
			case "size":
				err = os.WriteFile(zmPath, append(zm, '\n'), 0o644)
			case "time":
				err = os.Chtimes(zmPath, time.Time{}, time.Now().Add(time.Hour))
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{7, 3001} {
				n, err := h.Node(ctx, tree.Path(i))
				if err == nil && n.Err != nil {
					err = n.Err
				}
				if !errors.Is(err, ErrInvalidMetadata) || !errors.Is(err, errConsolidatedChanged) {
					t.Errorf("%s after the change: %v; want ErrInvalidMetadata, changed", tree.Path(i), err)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "changed since the mount") {
				t.Errorf("logged %q; want one line saying .zmetadata changed", lines)
			}
		})
	}
}
