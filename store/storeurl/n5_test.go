package storeurl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenN5: a local directory holding an N5 container opens as the Zarr
// v3 hierarchy that reads it (store/n5); a Zarr directory is unchanged.
func TestOpenN5(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for name, data := range map[string]string{
		"attributes.json":   `{"n5": "4.0.0"}`,
		"d/attributes.json": `{"dimensions": [3], "blockSize": [2], "dataType": "uint8", "compression": {"type": "raw"}}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIt(st)
	for key, want := range map[string]string{"zarr.json": `"node_type":"group"`, "d/zarr.json": `"name":"n5_default"`} {
		b, err := st.Get(ctx, key)
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %s, %v; want %s", key, b, err, want)
		}
	}
	// With a zarr.json beside it, the container is read as Zarr.
	if err := os.WriteFile(filepath.Join(root, "zarr.json"), []byte(`{"zarr_format": 3, "node_type": "group"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeIt(st2)
	if _, err := st2.Get(ctx, "d/zarr.json"); err == nil {
		t.Errorf("a Zarr directory shows an N5 conversion")
	}
}
