package zarr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The quirks of other projects' committed test data (issue 37), each in a
// store built here with the same quirk: the fixture files themselves
// cannot be copied into this repository.

// TestPeerUnicodeNumericFill: zarr-python 2.1 wrote "fill_value": 0 for a
// <U4 array (its committed fixture/15). zarr-python 2.13 reads the number
// as its decimal text ("0", as np.array(0, dtype="<U4") is), and so does
// zarrfs: the missing chunk reads as "0" in UTF-32LE.
func TestPeerUnicodeNumericFill(t *testing.T) {
	peertest.NeedPython(t)
	dir := t.TempDir()
	out := peertest.Oracle(t, "zarr/peer_unicode_numeric_fill.py", dir)
	h := openDir(t, dir)
	_, got := readArray(t, h, "")
	if !bytes.Equal(got, out) {
		t.Fatalf("zarrfs reads %q, zarr-python %q", got, out)
	}
	if fill := []byte("0\x00\x00\x00"); !bytes.Equal(got[len(got)-16:len(got)-12], fill) {
		t.Errorf("the fill element is %q, want \"0\" in UTF-32LE", got[len(got)-16:len(got)-12])
	}
}

// TestDraftRootArrayAndGroup: GDAL's test.zr3 (a 2022-draft store) has
// both meta/root.array.json and meta/root.group.json. zarr-python and GDAL
// show both: the group's children and the array. The root is then a group
// whose node also carries the array, with both documents, so that the
// mount, tree and `cat STORE /` agree.
func TestDraftRootArrayAndGroup(t *testing.T) {
	// The entry point as zarr-python 2.13 and GDAL wrote it.
	const entry = `{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`
	arr := func(shape string) string {
		return `{"shape": ` + shape + `, "data_type": "<i2", "chunk_grid": {"type": "regular", "chunk_shape": ` + shape + `, "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {"a": 1}}`
	}
	h, err := Open(t.Context(), memStore(t, map[string]string{
		"zarr.json":                           entry,
		"meta/root.array.json":                arr("[2]"),
		"meta/root.group.json":                `{"attributes": {"g": 2}}`,
		"meta/root/marvin/android.array.json": arr("[3]"),
		"data/root/c0":                        "\x01\x00\x02\x00",
		"data/root/marvin/android/c0":         "\x03\x00\x04\x00\x05\x00",
	}), Options{})
	must(t, err)
	root, err := h.Node(t.Context(), "")
	must(t, err)
	if root.Kind != KindGroup || root.Err != nil || root.Array == nil {
		t.Fatalf("root: kind %v, error %v, array %v; want a group carrying the array", root.Kind, root.Err, root.Array)
	}
	if got := strings.Join(docNames(root), " "); got != "array.json group.json zarr.json" {
		t.Errorf("root documents %q", got)
	}
	if string(root.Attributes) != `{"g": 2}` {
		t.Errorf("root attributes %s, want the group's", root.Attributes)
	}
	if !strings.Contains(root.Info().Text(), "note:") {
		t.Errorf("info.txt says nothing of the root being both:\n%s", root.Info().Text())
	}
	_, got := readArray(t, h, "")
	if !bytes.Equal(got, []byte{1, 0, 2, 0}) {
		t.Errorf("root array %v", got)
	}
	kids, err := h.Children(t.Context(), "")
	must(t, err)
	if len(kids) != 1 || kids[0].Name() != "marvin" {
		t.Fatalf("root children %v, want marvin", kids)
	}
	_, got = readArray(t, h, "marvin/android")
	if !bytes.Equal(got, []byte{3, 0, 4, 0, 5, 0}) {
		t.Errorf("marvin/android %v", got)
	}
}

// TestV3WithoutCodecs: GDAL 3.8 to 3.10 wrote uncompressed v3 arrays
// without "codecs" (byte_cf1.zr3). The specification makes them invalid;
// GDAL reads them as the bytes codec, little-endian, and so does zarrfs,
// saying so in info.txt. The expected values are the stored bytes read
// little-endian (encoding/binary, not zarrfs).
func TestV3WithoutCodecs(t *testing.T) {
	chunk := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, 0x0102), 0xfffe)
	h, err := Open(t.Context(), memStore(t, map[string]string{
		"zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "int16",
			"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": 7, "attributes": {}}`,
		"c/0": string(chunk),
	}), Options{})
	must(t, err)
	n, got := readArray(t, h, "")
	want := binary.LittleEndian.AppendUint16(bytes.Clone(chunk), 7)
	if !bytes.Equal(got, want) {
		t.Errorf("read % x, want % x", got, want)
	}
	if info := n.Info().Text(); !strings.Contains(info, "no codecs") || !strings.Contains(info, `"name":"bytes"`) {
		t.Errorf("info.txt does not say how the array is read:\n%s", info)
	}
}

// TestUnknownChunkGrid: an array whose chunk grid zarrfs does not know
// keeps its shape, data type and fill value (ls, tree and info.txt show
// them); only reading its contents fails, with ErrUnsupported naming the
// grid (EOPNOTSUPP at the mount).
func TestUnknownChunkGrid(t *testing.T) {
	h, err := Open(t.Context(), memStore(t, map[string]string{
		"zarr.json": v3Group,
		"a/zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": "float32",
			"chunk_grid": {"name": "someday", "configuration": {"x": 1}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
			"codecs": [{"name": "bytes"}], "attributes": {}}`,
	}), Options{})
	must(t, err)
	n, err := h.Node(t.Context(), "a")
	must(t, err)
	if n.Kind != KindArray || n.Err != nil || n.Array == nil {
		t.Fatalf("a: kind %v, error %v, array %v", n.Kind, n.Err, n.Array)
	}
	if s := n.Array.Shape(); len(s) != 2 || s[0] != 4 || s[1] != 6 || n.Array.DataType().Name != "float32" || n.Array.Size() != 96 {
		t.Errorf("a: shape %v, dtype %v, size %d", s, n.Array.DataType(), n.Array.Size())
	}
	if !errors.Is(n.Array.Err, ErrUnsupported) || !strings.Contains(n.Array.Err.Error(), "someday") {
		t.Errorf("a: array error %v, want ErrUnsupported naming the grid", n.Array.Err)
	}
	if _, err := n.Array.ReadAt(t.Context(), make([]byte, 4), 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ReadAt: %v, want ErrUnsupported", err)
	}
	info := n.Info().Text()
	if !strings.Contains(info, "4 × 6") || strings.Contains(info, "chunks:") {
		t.Errorf("info.txt:\n%s", info)
	}
}

// TestScaleOffsetCastValueArray reads the registry's "Float64 to uint8
// with NaN preservation" example as an array: the stored uint8 values
// decode to u / 0.1 − 10 (0 to NaN through scalar_map), and a missing
// chunk is the NaN fill value (the codec-level values are checked against
// NumPy in codec's TestPeerScaleOffsetCastValue).
func TestScaleOffsetCastValueArray(t *testing.T) {
	h, err := Open(t.Context(), memStore(t, map[string]string{
		"zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "float64",
			"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": "NaN", "attributes": {},
			"codecs": [{"name": "scale_offset", "configuration": {"offset": -10, "scale": 0.1}},
				{"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
					"scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}, "bytes"]}`,
		"c/0": "\x00\x01\xff",
	}), Options{})
	must(t, err)
	_, got := readArray(t, h, "")
	for i, want := range []float64{math.NaN(), 1/0.1 - 10, 255/0.1 - 10, math.NaN(), math.NaN()} {
		v := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
		if v != want && !(math.IsNaN(v) && math.IsNaN(want)) {
			t.Errorf("element %d: %v, want %v", i, v, want)
		}
	}
}
