package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestMLTypeViews: an array of an ML type NumPy has no type for
// (bfloat16) has data but no data.npy, and no ENVI or NRRD header, whose
// formats have no such type; its preview.png is the float32 array's of the
// same values (a bfloat16 is the top 16 bits of a float32).
func TestMLTypeViews(t *testing.T) {
	ctx := context.Background()
	vals := []float32{-3.5, 0, 1, 2.25, float32(math.NaN()), 7, 100, -0.125, 3}
	var bf, f32 []byte
	for _, v := range vals {
		bits := math.Float32bits(v) &^ 0xffff // exactly representable in bfloat16
		bf = binary.LittleEndian.AppendUint16(bf, uint16(bits>>16))
		f32 = binary.LittleEndian.AppendUint32(f32, bits)
	}
	doc := func(dtype string) []byte {
		return []byte(`{"zarr_format": 3, "node_type": "array", "shape": [3, 3], "data_type": "` + dtype + `",
			"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 3]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": {}}`)
	}
	st, err := memory.FromMap(map[string][]byte{
		"zarr.json":     []byte(`{"zarr_format": 3, "node_type": "group", "attributes": {}}`),
		"bf/zarr.json":  doc("bfloat16"),
		"bf/c/0/0":      bf,
		"f32/zarr.json": doc("float32"),
		"f32/c/0/0":     f32,
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := New(h, on)
	n, err := h.Node(ctx, "bf")
	if err != nil {
		t.Fatal(err)
	}
	files := v.Files(n, nil)
	for _, name := range []string{"data.npy", "data.hdr", "data.nhdr"} {
		if Find(files, name) != nil {
			t.Errorf("bfloat16 array shows %s", name)
		}
	}
	if Find(files, "data") == nil {
		t.Fatalf("bfloat16 array has no data")
	}
	var x []Xattr
	for _, a := range Xattrs(n) {
		if a.Name == "user.zarr.dtype" {
			x = append(x, a)
		}
	}
	if len(x) != 1 || string(x[0].Value) != "bfloat16" {
		t.Errorf("user.zarr.dtype %v, want bfloat16", x)
	}
	var got, want bytes.Buffer
	if err := Copy(ctx, &got, previewOf(t, st, "bf", on)); err != nil {
		t.Fatal(err)
	}
	if err := Copy(ctx, &want, previewOf(t, st, "f32", on)); err != nil {
		t.Fatal(err)
	}
	if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("bfloat16 preview (%d bytes) differs from float32's (%d bytes)", got.Len(), want.Len())
	}
}

// TestMLStructViews: a record type with an ML field (a v2 structured
// dtype as TensorStore writes it) has data but no data.npy, since NumPy
// has no such record type; a record of NumPy types keeps its data.npy.
func TestMLStructViews(t *testing.T) {
	ctx := context.Background()
	zarray := func(dtype string) []byte {
		return []byte(`{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": ` + dtype + `,
			"fill_value": null, "order": "C", "compressor": null, "filters": null}`)
	}
	st, err := memory.FromMap(map[string][]byte{
		".zgroup":       []byte(`{"zarr_format": 2}`),
		"ml/.zarray":    zarray(`[["w", "bfloat16"], ["s", "<f4"]]`),
		"ml/0":          make([]byte, 12),
		"plain/.zarray": zarray(`[["w", "<u2"], ["s", "<f4"]]`),
		"plain/0":       make([]byte, 12),
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := New(h, on)
	for _, c := range []struct {
		path string
		npy  bool
	}{{"ml", false}, {"plain", true}} {
		n, err := h.Node(ctx, c.path)
		if err != nil {
			t.Fatal(err)
		}
		files := v.Files(n, nil)
		if Find(files, "data") == nil || (Find(files, "data.npy") != nil) != c.npy {
			t.Errorf("%s: data %v, data.npy %v (want %v)", c.path, Find(files, "data") != nil, Find(files, "data.npy") != nil, c.npy)
		}
	}
}
