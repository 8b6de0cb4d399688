package integration

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// writeFiles writes files (path → content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQuirkStores: stores with the quirks of other projects' committed
// test data (issue 37), built here as those projects' fixtures are, read
// the same through the CLI and through a mount.
//
//   - a 2022-draft root with both root.array.json and root.group.json
//     (GDAL's test.zr3): the root directory shows both documents, the
//     array's data and the group's children; `zarrfs cat STORE /` prints
//     the same data, `zarrfs tree` lists the children;
//   - a rectilinear chunk grid: cat, data and preview.png;
//   - an array with a chunk grid zarrfs does not know: ls and tree show
//     its shape and dtype, and only opening data fails (EOPNOTSUPP).
func TestQuirkStores(t *testing.T) {
	draft := t.TempDir()
	arr := func(shape string) string {
		return `{"shape": ` + shape + `, "data_type": "<i2", "chunk_grid": {"type": "regular", "chunk_shape": ` + shape + `, "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}}`
	}
	writeFiles(t, draft, map[string]string{
		"zarr.json":                           `{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`,
		"meta/root.array.json":                arr("[2]"),
		"meta/root.group.json":                `{"attributes": {}}`,
		"meta/root/marvin/android.array.json": arr("[3]"),
		"data/root/c0":                        "\x01\x00\x02\x00",
		"data/root/marvin/android/c0":         "\x03\x00\x04\x00\x05\x00",
	})
	grid := t.TempDir()
	writeFiles(t, grid, map[string]string{
		"zarr.json": `{"zarr_format": 3, "node_type": "group", "attributes": {}}`,
		"a/zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": "float32",
			"chunk_grid": {"name": "someday", "configuration": {}}, "chunk_key_encoding": {"name": "default"},
			"fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": {}}`,
	})

	// A rectilinear grid (chunk_shapes [[1, 2], [[2, 2]]] on a 3 × 4 uint8
	// array): the chunks [1, 2], [1, 2], [2, 2], [2, 2], row-major inside.
	rect := t.TempDir()
	writeFiles(t, rect, map[string]string{
		"zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [3, 4], "data_type": "uint8",
			"chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[1, 2], [[2, 2]]]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": {}}`,
		"c/0/0": "\x00\x01", "c/0/1": "\x02\x03", "c/1/0": "\x04\x05\x08\x09", "c/1/1": "\x06\x07\x0a\x0b",
	})
	rectData := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	sameBytes(t, "cat RECT /", mustZarrfs(t, "cat", rect, "/"), rectData)

	rootData := []byte{1, 0, 2, 0}
	sameBytes(t, "cat DRAFT /", mustZarrfs(t, "cat", draft, "/"), rootData)
	sameBytes(t, "cat DRAFT marvin/android", mustZarrfs(t, "cat", draft, "marvin/android"), []byte{3, 0, 4, 0, 5, 0})
	if tree := string(mustZarrfs(t, "tree", draft)); !strings.Contains(tree, "android") {
		t.Errorf("tree of the draft store does not list marvin/android:\n%s", tree)
	}
	for _, out := range []string{string(mustZarrfs(t, "ls", grid)), string(mustZarrfs(t, "tree", grid))} {
		if !strings.Contains(out, "(4, 6)") || !strings.Contains(out, "float32") {
			t.Errorf("ls/tree lose the shape or dtype of the array with an unknown grid:\n%s", out)
		}
	}

	m := mountStore(t, draft)
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, want := range []string{"array.json", "group.json", "zarr.json", "data", "data.npy", "info.txt", "marvin"} {
		if !slices.Contains(names, want) {
			t.Errorf("mount root lists %v, without %s", names, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(m.dir, "data")); err != nil || !bytes.Equal(b, rootData) {
		t.Errorf("MOUNT/data: % x, %v; want what cat prints", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(m.dir, "marvin", "android", "data")); err != nil || !bytes.Equal(b, []byte{3, 0, 4, 0, 5, 0}) {
		t.Errorf("MOUNT/marvin/android/data: % x, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(m.dir, "info.txt")); !strings.Contains(string(b), "note:") {
		t.Errorf("info.txt does not say the root is both:\n%s", b)
	}

	r := mountStore(t, rect)
	if b, err := os.ReadFile(filepath.Join(r.dir, "data")); err != nil || !bytes.Equal(b, rectData) {
		t.Errorf("RECT/data: % x, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "preview.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("RECT/preview.png: %d bytes, %v", len(b), err)
	}

	g := mountStore(t, grid)
	info, err := os.ReadFile(filepath.Join(g.dir, "a", "info.txt"))
	if err != nil || !strings.Contains(string(info), "4 × 6") {
		t.Errorf("a/info.txt: %v\n%s", err, info)
	}
	if _, err := os.ReadFile(filepath.Join(g.dir, "a", "data")); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("a/data: %v, want EOPNOTSUPP", err)
	}
}
