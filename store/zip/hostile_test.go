package zip

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// hostileMembers are the member names of testdata/hostile/traversal.zip
// that must not be reachable, each with the clean key an unwary reader
// could map it to.
var hostileMembers = map[string]string{
	"../../x":           "x",
	"/etc/passwd":       "etc/passwd",
	"a/../../x":         "x",
	"..\\..\\x":         "x",
	"C:\\evil":          "evil",
	"./zarr.json":       "zarr.json",
	"b//c":              "b/c",
	"nul\x00.zarray":    "nul",
	"":                  "",
	"../../tmp/zarrfs-": "tmp/zarrfs-",
}

// writeTraversalZip writes the archive: a v3 group with one good array
// "good" (int16 [4] = 1 2 3 4) and the hostile members.
func writeTraversalZip() []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		f, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, Modified: time.Unix(1e9, 0).UTC(),
			CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))})
		if err != nil {
			panic(err)
		}
		f.Write(data)
	}
	add("zarr.json", []byte(`{"zarr_format": 3, "node_type": "group"}`))
	add("good/zarr.json", []byte(`{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`))
	add("good/c/0", []byte{1, 0, 2, 0, 3, 0, 4, 0})
	names := make([]string, 0, len(hostileMembers))
	for n := range hostileMembers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		add(n, []byte("hostile member "+n))
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// TestHostileZipMembers opens testdata/hostile/traversal.zip: the hostile
// members are neither listed nor reachable by any key, the good ones read.
func TestHostileZipMembers(t *testing.T) {
	path := filepath.Join("testdata", "hostile", "traversal.zip")
	if os.Getenv("ZARRFS_WRITE_HOSTILE") == "1" {
		if err := os.WriteFile(path, writeTraversalZip(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, writeTraversalZip()) {
		t.Fatalf("%s is missing or stale (ZARRFS_WRITE_HOSTILE=1 rewrites it): %v", path, err)
	}
	s, err := OpenFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	all, err := s.ListPrefix(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"good/c/0", "good/zarr.json", "zarr.json"}; !slices.Equal(all, want) {
		t.Errorf("ListPrefix = %q, want %q", all, want)
	}
	for name, clean := range hostileMembers {
		var ike *store.InvalidKeyError
		if v, err := s.Get(ctx, name); !errors.As(err, &ike) {
			t.Errorf("Get(%q) = %q, %v; want an *InvalidKeyError", name, v, err)
		}
		if clean == "" || clean == "zarr.json" {
			continue
		}
		if v, err := s.Get(ctx, clean); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Get(%q) = %q, %v; the member %q must not be reachable", clean, v, err, name)
		}
	}
	if v, err := s.Get(ctx, "zarr.json"); err != nil || bytes.Contains(v, []byte("hostile")) {
		t.Errorf("Get(zarr.json) = %q, %v; want the real root document", v, err)
	}
	if v, err := s.Get(ctx, "good/c/0"); err != nil || !bytes.Equal(v, []byte{1, 0, 2, 0, 3, 0, 4, 0}) {
		t.Errorf("Get(good/c/0) = %v, %v", v, err)
	}
}
