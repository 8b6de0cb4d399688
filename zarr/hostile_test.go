package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

// The documents and the errors they must give are in hostile_cases_test.go;
// the fuzz targets seeded with them, in hostile_fuzz_test.go.

const (
	goodV2Array = `{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": null, "filters": null, "fill_value": 0, "order": "C"}`
	goodV3Array = `{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`
)

// goodDraftArray is the good sibling in a store of the 2022 v3 draft,
// goodDraft19Array in one of the 2019 draft.
const (
	goodDraftArray = `{"shape": [4], "data_type": "<i2", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
	"chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}}`
	goodDraft19Array = `{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "shape": [4], "data_type": "<i2",
	"chunk_grid": {"type": "regular", "chunk_shape": [2]}, "chunk_memory_layout": "C", "compressor": null,
	"fill_value": 0, "extensions": [], "attributes": {}}`
	draft19Entry = `{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "application/json", "extensions": []}`
	draft22Entry = `{"zarr_format": "https://purl.org/zarr/spec/core/3.0", "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"}, "extensions": []}`
)

var goodData = []byte{1, 0, 2, 0, 3, 0, 4, 0}

// hostileStore returns the keys of a store holding the hostile document
// doc, named as in testdata/hostile/meta, beside a good array "good"; it
// returns the path of the hostile node too.
func hostileStore(name string, doc []byte) (keys map[string][]byte, path string) {
	switch {
	case strings.HasPrefix(name, "v2-"):
		return map[string][]byte{
			".zgroup":      []byte(`{"zarr_format": 2}`),
			"good/.zarray": []byte(goodV2Array), "good/0": goodData[:4], "good/1": goodData[4:],
			"bad/.zarray": doc, "bad/0": goodData[:4],
		}, "bad"
	case strings.HasPrefix(name, "v3-"):
		return map[string][]byte{
			"zarr.json":      []byte(`{"zarr_format": 3, "node_type": "group"}`),
			"good/zarr.json": []byte(goodV3Array), "good/c/0": goodData[:4], "good/c/1": goodData[4:],
			"bad/zarr.json": doc, "bad/c/0": goodData[:4],
		}, "bad"
	case strings.HasPrefix(name, "d22-"):
		keys := map[string][]byte{
			"zarr.json":            []byte(draft22Entry),
			"meta/group.json":      []byte(`{"attributes": {}}`),
			"meta/good.array.json": []byte(goodDraftArray),
			"data/good/c0":         goodData[:4], "data/good/c1": goodData[4:],
			"data/bad/c0": goodData[:4],
		}
		switch {
		case strings.HasSuffix(name, ".zarr.json"):
			keys["zarr.json"] = doc
			return keys, ""
		case strings.HasSuffix(name, ".group.json"):
			keys["meta/bad.group.json"] = doc
		default:
			keys["meta/bad.array.json"] = doc
		}
		return keys, "bad"
	case strings.HasPrefix(name, "d19-"):
		keys := map[string][]byte{
			"zarr.json":            []byte(draft19Entry),
			"meta/root.group":      []byte(`{"zarr_format": "http://purl.org/zarr/spec/protocol/core/3.0", "extensions": [], "attributes": {}}`),
			"meta/root/good.array": []byte(goodDraft19Array),
			"data/good/0":          goodData[:4], "data/good/1": goodData[4:],
			"data/bad/0": goodData[:4],
		}
		switch {
		case strings.HasSuffix(name, ".zarr.json"):
			keys["zarr.json"] = doc
			return keys, ""
		case strings.HasSuffix(name, ".group"):
			keys["meta/root/bad.group"] = doc
		default:
			keys["meta/root/bad.array"] = doc
		}
		return keys, "bad"
	case strings.HasPrefix(name, "v1-"):
		return map[string][]byte{"meta": doc, "0": goodData[:4]}, ""
	}
	return nil, ""
}

// plainNodeType returns the kind a document's node_type names plainly
// ("array" or "group", exactly as written), or KindUnknown.
func plainNodeType(doc []byte) Kind {
	var obj map[string]json.RawMessage
	if len(doc) > MaxDocumentSize || json.Unmarshal(doc, &obj) != nil {
		return KindUnknown
	}
	switch string(obj["node_type"]) {
	case `"array"`:
		return KindArray
	case `"group"`:
		return KindGroup
	}
	return KindUnknown
}

// nodeError returns the error that reading a node's data gives.
func nodeError(n *Node) error {
	switch {
	case n.Err != nil:
		return n.Err
	case n.Array != nil && n.Array.Err != nil:
		return n.Array.Err
	case n.Array == nil:
		return errors.New("not an array")
	}
	return nil
}

// checkHostileNode opens a store with a hostile node and checks its error,
// that the node still lists with its document as stored, and that the
// good sibling reads normally.
func checkHostileNode(t *testing.T, name string, doc []byte, want hostileWant) {
	t.Helper()
	ctx := context.Background()
	keys, path := hostileStore(name, doc)
	if keys == nil {
		t.Fatalf("%s: no store layout for this name", name)
	}
	st, err := memory.FromMap(keys)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil && path == "" {
		// The root's document is read by Open: a v1 store (one array, at
		// the root) whose meta cannot be read fails as a whole.
		if !errors.Is(err, want.is) || !strings.Contains(err.Error(), want.msg) {
			t.Errorf("Open: %q, want an error matching %v and containing %q", err, want.is, want.msg)
		}
		return
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	n, err := h.Node(ctx, path)
	if err != nil {
		t.Fatalf("Node(%q): %v", path, err)
	}
	got := nodeError(n)
	if got == nil {
		t.Fatalf("node %q: no error, want one matching %v", path, want.is)
	}
	if !errors.Is(got, want.is) || !strings.Contains(got.Error(), want.msg) {
		t.Errorf("node %q: error %q, want one matching %v and containing %q", path, got, want.is, want.msg)
	}
	// The errno the mount gives follows from the class: EOPNOTSUPP for
	// unsupported, EIO otherwise. The two classes must not overlap.
	if errors.Is(got, ErrUnsupported) && errors.Is(got, ErrInvalidMetadata) {
		t.Errorf("node %q: error %q is both unsupported and invalid", path, got)
	}
	// A broken array whose kind can be told still shows as an array (whose
	// data then fails to read), not as an empty group; a broken draft
	// group document is a group.
	draftArray := strings.HasSuffix(name, ".array") || strings.HasSuffix(name, ".array.json")
	if (strings.HasPrefix(name, "v2-") || strings.HasPrefix(name, "v1-") || draftArray || strings.HasPrefix(name, "v3-") && plainNodeType(doc) == KindArray) && n.Kind != KindArray {
		t.Errorf("node %q: kind %v, want array", path, n.Kind)
	}
	if (strings.HasSuffix(name, ".group") || strings.HasSuffix(name, ".group.json")) && n.Kind != KindGroup {
		t.Errorf("node %q: kind %v, want group", path, n.Kind)
	}
	// A v3 document whose node type cannot be told makes a node of
	// unknown kind, not a group.
	if strings.HasPrefix(name, "v3-") && plainNodeType(doc) == KindUnknown && n.Kind != KindUnknown {
		t.Errorf("node %q: kind %v, want unknown", path, n.Kind)
	}
	if n.Array != nil && n.Array.Err == nil {
		t.Errorf("node %q: usable array despite %v", path, got)
	}
	if len(doc) <= MaxDocumentSize && (len(n.Documents) == 0 || !bytes.Equal(n.Documents[0].Data, doc)) {
		t.Errorf("node %q: documents %d, first not the stored document", path, len(n.Documents))
	}
	if path == "" {
		return
	}
	children, err := h.Children(ctx, "")
	if err != nil {
		t.Fatalf("Children: %v", err)
	}
	var names []string
	for _, c := range children {
		names = append(names, c.Name())
	}
	if strings.Join(names, ",") != "bad,good" {
		t.Errorf("children %v, want [bad good]", names)
	}
	g, err := h.Node(ctx, "good")
	if err != nil || g.Array == nil || g.Array.Err != nil {
		t.Fatalf("good sibling: %v %+v", err, g)
	}
	buf := make([]byte, len(goodData))
	if k, err := g.Array.ReadAt(ctx, buf, 0); err != nil || k != len(buf) || !bytes.Equal(buf, goodData) {
		t.Errorf("good sibling: read %d %v: % x", k, err, buf)
	}
}

func TestHostileMetadata(t *testing.T) {
	dir := filepath.Join("testdata", "hostile", "meta")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		want, ok := hostileMeta[name]
		if !ok {
			t.Errorf("%s: no expected error in hostileMeta", name)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { checkHostileNode(t, name, doc, want) })
	}
	for name := range hostileMeta {
		if !seen[name] {
			t.Errorf("hostileMeta names %s, which is not in %s", name, dir)
		}
	}
}

// TestHostileMetadataHuge: documents over MaxDocumentSize are refused
// without being read whole (built at test time: 100 MiB is too large to
// keep in the repository).
func TestHostileMetadataHuge(t *testing.T) {
	huge := bytes.Repeat([]byte(" "), 100<<20)
	copy(huge, goodV2Array)
	t.Run("v2-100MiB.zarray", func(t *testing.T) {
		checkHostileNode(t, "v2-100MiB.zarray", huge, invalid("limit for metadata documents"))
	})
	over := huge[:MaxDocumentSize+1]
	for _, name := range []string{"v3-over-limit.zarr.json", "v1-over-limit.meta"} {
		t.Run(name, func(t *testing.T) {
			checkHostileNode(t, name, over, invalid("limit for metadata documents"))
		})
	}
	// Just over the limit is refused, just under it is read.
	for _, size := range []int{MaxDocumentSize, MaxDocumentSize + 1} {
		doc := bytes.Repeat([]byte(" "), size)
		copy(doc, goodV2Array)
		keys, _ := hostileStore("v2-", doc)
		st, _ := memory.FromMap(keys)
		h, err := Open(context.Background(), st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node(context.Background(), "bad")
		if err != nil {
			t.Fatal(err)
		}
		if refused := n.Err != nil; refused != (size > MaxDocumentSize) {
			t.Errorf("%d-byte document: error %v", size, n.Err)
		}
	}
}

// Consolidated metadata naming paths that fail key validation: those
// entries name no node and do not list; the good ones still work.
func TestHostileConsolidatedPaths(t *testing.T) {
	ctx := context.Background()
	bad := []string{"../../x", "/etc", "a//b", "a\\b", "./c", "d/..", "nul\x00"}
	dir := filepath.Join("testdata", "hostile", "consolidated")
	for _, name := range []string{"zmetadata-bad-paths.json", "v3-bad-paths.zarr.json"} {
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			keys := map[string][]byte{"good/0": goodData[:4], "good/1": goodData[4:], "good/c/0": goodData[:4], "good/c/1": goodData[4:]}
			if strings.HasPrefix(name, "v3-") {
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
				t.Fatal(err)
			}
			children, err := h.Children(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range children {
				names = append(names, c.Name())
			}
			sort.Strings(names)
			if strings.Join(names, ",") != "good" {
				t.Errorf("children %q, want only good", names)
			}
			for _, p := range bad {
				if n, err := h.Node(ctx, p); err == nil && n.Err == nil && n.Path != "" && n.Path != "d" {
					t.Errorf("Node(%q) = %q, a node named by an invalid consolidated path", p, n.Path)
				}
			}
			g, err := h.Node(ctx, "good")
			if err != nil || g.Array == nil || g.Array.Err != nil {
				t.Fatalf("good: %v", err)
			}
			buf := make([]byte, 8)
			if _, err := g.Array.ReadAt(ctx, buf, 0); err != nil || !bytes.Equal(buf, goodData) {
				t.Errorf("good: %v % x", err, buf)
			}
		})
	}
}

// hostileSeeds returns the files of testdata/hostile/meta whose names
// start with prefix, for fuzz corpora.
