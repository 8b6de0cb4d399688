package zarr

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestReaderDisagreements pins the three rules of wild.go with stores as
// netCDF-c 4.9.0 writes them (integration's TestWildNetCDF compares them
// with the readers themselves).
func TestReaderDisagreements(t *testing.T) {
	ctx := context.Background()
	v2 := func(dtype, fill string) string {
		return `{"zarr_format": 2, "shape": [4], "dtype": "` + dtype + `", "chunks": [4], "fill_value": ` + fill + `, "order": "C", "compressor": null, "filters": null}`
	}
	h, err := Open(ctx, memStore(t, map[string]string{
		".zgroup":    `{"zarr_format": 2}`,
		"c/.zarray":  v2("<U1", "null"),
		"c/0":        "abcd",
		"be/.zarray": v2(">i4", "-2147483647"),
		"be/0":       "\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x00\x01\x00\x00",
		"u/.zarray":  v2("<u8", "18446744073709551614"),
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) ([]byte, error) {
		n, err := h.Node(ctx, path)
		if err != nil || n.Array == nil {
			t.Fatalf("%s: %v %v", path, err, n.Err)
		}
		p := make([]byte, n.Array.Size())
		_, err = n.Array.ReadAt(ctx, p, 0)
		return p, err
	}
	// <U1 holding one byte per character: refused, saying why.
	if _, err := read("c"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "netCDF-c 4.9.0") {
		t.Errorf("c: %v; want ErrCorrupt naming netCDF-c's char data", err)
	}
	// >i4 holding little-endian bytes: read as the dtype says.
	if p, err := read("be"); err != nil || binary.LittleEndian.Uint32(p) != 0x01000000 {
		t.Errorf("be: % x, %v; want the bytes read big-endian", p, err)
	}
	// A uint64 fill of 2^64−2, exactly.
	if p, err := read("u"); err != nil || binary.LittleEndian.Uint64(p[8:]) != 1<<64-2 {
		t.Errorf("u: % x, %v; want 2^64−2", p, err)
	}
}
