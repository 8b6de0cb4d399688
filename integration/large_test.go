package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/internal/treegen"
)

// TestLargeConsolidatedMount mounts the hierarchy of issue 42, 100,000
// arrays in 1,000 groups whose .zmetadata (37 MB) is over the 16 MiB limit
// of single documents, generated at test time (metadata only: the store
// holds its root .zgroup and .zmetadata, from which every node is known),
// and lists all of it with find(1). zarr-python's open_consolidated is the
// oracle for what the hierarchy holds. (A race build lists 10,000.)
func TestLargeConsolidatedMount(t *testing.T) {
	needFuse(t)
	tree := treegen.Tree{Arrays: 100000}
	if peertest.RaceBuild {
		tree.Arrays = 10000
	}
	store := filepath.Join(t.TempDir(), "large.zarr")
	if err := tree.Write(store); err != nil {
		t.Fatal(err)
	}
	// The oracle: zarr-python reads the same .zmetadata.
	py := peertest.RunPython(t, `
import sys, zarr
g = zarr.open_consolidated(sys.argv[1], mode="r")
groups = sorted(g.group_keys())
last = g[groups[-1]]
print(len(groups), len(list(last.array_keys())), groups[-1], last[sorted(last.array_keys())[-1]].shape[0])
`, store)
	start := time.Now()
	m := mountStore(t, store)
	t.Logf("mounted in %v", time.Since(start))
	start = time.Now()
	out := run(t, "find", m.dir)
	t.Logf("find listed %d entries in %v", bytes.Count(out, []byte("\n")), time.Since(start))
	dirs := map[int]int{} // directories by depth below the mount
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		rel := strings.TrimPrefix(line, m.dir)
		if strings.HasSuffix(rel, "/.zarray") {
			dirs[2]++
		} else if strings.HasSuffix(rel, "/.zgroup") && strings.Count(rel, "/") == 2 {
			dirs[1]++
		}
	}
	if dirs[1] != tree.Groups() || dirs[2] != tree.Arrays {
		t.Errorf("find shows %d groups and %d arrays, want %d and %d", dirs[1], dirs[2], tree.Groups(), tree.Arrays)
	}
	g := treegen.GroupPath(tree.Groups() - 1)
	kids, err := os.ReadDir(filepath.Join(m.dir, g))
	if err != nil {
		t.Fatal(err)
	}
	arrays := 0
	for _, k := range kids {
		if k.IsDir() {
			arrays++
		}
	}
	last := tree.Path(tree.Arrays - 1)
	if got := strings.Fields(string(py)); len(got) != 4 ||
		got[0] != itoa(tree.Groups()) || got[1] != itoa(arrays) || got[2] != g || got[3] != "64" {
		t.Errorf("zarr-python: %q; the mount: %d groups, %d arrays in %s", got, tree.Groups(), arrays, g)
	}
	// An array known only from the consolidated metadata: its .zarray
	// re-serialised from there, its data the fill value.
	doc, err := os.ReadFile(filepath.Join(m.dir, last, ".zarray"))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if json.Unmarshal(doc, &got) != nil || json.Unmarshal([]byte(treegen.ArrayDoc), &want) != nil || !equalJSON(got, want) {
		t.Errorf("%s/.zarray: %s", last, doc)
	}
	data, err := os.ReadFile(filepath.Join(m.dir, last, "data"))
	if err != nil || len(data) != 64*4 || !bytes.Equal(data, make([]byte, 64*4)) {
		t.Errorf("%s/data: %d bytes, %v; want 256 zero bytes", last, len(data), err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
