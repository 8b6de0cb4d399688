package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

func hostileSeeds(f *testing.F, prefix string) [][]byte {
	return peertest.Files(f, "zarr/testdata/hostile/meta/"+prefix+"*")
}

// draftFuzzLayouts are the places FuzzDraftNode puts its document, named
// as hostileStore expects.
var draftFuzzLayouts = []string{"d19-.array", "d19-.group", "d19-.zarr.json", "d22-.array.json", "d22-.group.json", "d22-.zarr.json"}

// FuzzDraftNode opens a store of the 2019 or 2022 v3 draft whose array or
// group document (or entry point) is arbitrary, beside a good array, and
// loads the node: no panic, only invalid-metadata or unsupported errors, a
// usable array reads (whatever the result) and the sibling reads normally.
func FuzzDraftNode(f *testing.F) {
	f.Add(uint8(0), []byte(goodDraft19Array))
	f.Add(uint8(3), []byte(goodDraftArray))
	for _, name := range hostileNames(f) {
		for i, l := range draftFuzzLayouts {
			tag, suffix, _ := strings.Cut(l, "-")
			if strings.HasPrefix(name, tag+"-") && strings.HasSuffix(name, suffix) && (suffix != ".array" || !strings.HasSuffix(name, ".array.json")) {
				b, err := os.ReadFile(filepath.Join("testdata", "hostile", "meta", name))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(uint8(i), b)
			}
		}
	}
	ctx := context.Background()
	classOK := func(err error) bool { return errors.Is(err, ErrInvalidMetadata) || errors.Is(err, ErrUnsupported) }
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		name := draftFuzzLayouts[int(which)%len(draftFuzzLayouts)]
		keys, path := hostileStore(name, doc)
		st, err := memory.FromMap(keys)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{})
		if err != nil {
			if path != "" || !classOK(err) {
				t.Fatalf("Open: %v", err)
			}
			return
		}
		n, err := h.Node(ctx, path)
		if err != nil {
			t.Fatalf("Node(%q): %v", path, err)
		}
		if n.Err != nil && !classOK(n.Err) {
			t.Fatalf("node error %v is neither invalid metadata nor unsupported", n.Err)
		}
		if a := n.Array; a != nil {
			if a.Err != nil && !classOK(a.Err) {
				t.Fatalf("array error %v is neither invalid metadata nor unsupported", a.Err)
			}
			if a.Err == nil && n.Err == nil && a.Size() <= 1<<16 {
				buf := make([]byte, a.Size())
				a.ReadAt(ctx, buf, 0)
			}
		}
		if path == "" {
			return
		}
		g, err := h.Node(ctx, "good")
		if err != nil || g.Array == nil || g.Array.Err != nil {
			t.Fatalf("good sibling: %v %+v", err, g)
		}
		buf := make([]byte, len(goodData))
		if k, err := g.Array.ReadAt(ctx, buf, 0); err != nil || k != len(buf) || !bytes.Equal(buf, goodData) {
			t.Fatalf("good sibling: read %d %v: % x", k, err, buf)
		}
	})
}

// hostileNames returns the names of the files of testdata/hostile/meta.
func hostileNames(f *testing.F) []string {
	f.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "hostile", "meta"))
	if err != nil {
		f.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// FuzzConsolidated opens hierarchies whose consolidated metadata (v2
// .zmetadata, or the v3 root zarr.json) is arbitrary, lists them and loads
// every node: no panic, and no node at a path that is not a valid key.
func FuzzConsolidated(f *testing.F) {
	for _, name := range []string{"zmetadata-bad-paths.json", "v3-bad-paths.zarr.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "hostile", "consolidated", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.HasPrefix(name, "v3-"), "", []byte(nil))
	}
	f.Add([]byte(`{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}, "a/.zgroup": {"zarr_format": 2}, "a/b/.zarray": {}}}`), false, "", []byte(nil))
	// Structured inputs: one entry (path, document) added to a valid
	// consolidated document, so that mutations stay JSON.
	f.Add([]byte(nil), false, "good/.zarray", []byte(goodV2Array))
	f.Add([]byte(nil), true, "good", []byte(goodV3Array))
	for _, b := range hostileSeeds(f, "v2-") {
		f.Add([]byte(nil), false, "good/.zarray", b)
	}
	for _, b := range hostileSeeds(f, "v3-") {
		f.Add([]byte(nil), true, "good", b)
	}
	f.Fuzz(func(t *testing.T, doc []byte, v3 bool, path string, member []byte) {
		ctx := context.Background()
		if len(doc) == 0 && json.Valid(member) {
			meta := map[string]json.RawMessage{path: member}
			if v3 {
				cons := map[string]any{"kind": "inline", "must_understand": false, "metadata": meta}
				doc, _ = json.Marshal(map[string]any{"zarr_format": 3, "node_type": "group", "consolidated_metadata": cons})
			} else {
				meta[".zgroup"] = json.RawMessage(`{"zarr_format": 2}`)
				doc, _ = json.Marshal(map[string]any{"zarr_consolidated_format": 1, "metadata": meta})
			}
		}
		keys := map[string][]byte{"good/0": goodData[:4], "good/c/0": goodData[:4]}
		if v3 {
			keys["zarr.json"] = doc
		} else {
			keys[".zmetadata"] = doc
		}
		st, err := memory.FromMap(keys)
		if err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{})
		if err != nil {
			return
		}
		var walk func(p string, depth int)
		walk = func(p string, depth int) {
			children, err := h.Children(ctx, p)
			if err != nil || depth > 4 {
				return
			}
			for _, c := range children {
				if store.ValidateKey(c.Path) != nil {
					t.Fatalf("child at invalid path %q", c.Path)
				}
				if c.Array != nil && c.Array.Err == nil && c.Err == nil && c.Array.Size() <= 1<<16 {
					buf := make([]byte, c.Array.Size())
					if k, err := c.Array.ReadAt(ctx, buf, 0); err == nil && k != len(buf) {
						t.Fatalf("%q: short read %d of %d", c.Path, k, len(buf))
					}
				}
				walk(c.Path, depth+1)
			}
		}
		walk("", 0)
	})
}
