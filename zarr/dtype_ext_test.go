package zarr

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/memory"
)

func TestPeerPythonWritesStructured(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	out := peertest.Oracle(t, "zarr/write_structured.py", root, refs)
	h := openDir(t, root)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct{ Name, Descr string }
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(refs, c.Name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			n, got := readArray(t, h, c.Name)
			if !bytes.Equal(got, want) {
				t.Errorf("content differs from python's z[...]:\n got %x\nwant %x", got, want)
			}
			if n.Array.DataType().NumPy != c.Descr {
				t.Errorf("NumPy type %s, want %s", n.Array.DataType().NumPy, c.Descr)
			}
		})
	}
}

// TestV3Struct reads v3 struct and legacy structured arrays written by
// hand: fields packed in order, nested records, parametrized field types,
// fill values as objects and (legacy) base64.
func TestV3Struct(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name, dataType, fill, numpy string
		chunk, want                 []byte // the one stored chunk (2 elements); the content (3 elements)
		endian                      string
	}{
		{"struct", `{"name": "struct", "configuration": {"fields": [{"name": "id", "data_type": "int32"}, {"name": "flags", "data_type": "uint8"}, {"name": "value", "data_type": "float64"}]}}`,
			`{"id": 7, "flags": 1, "value": 0.0}`, "[('id', '<i4'), ('flags', '|u1'), ('value', '<f8')]",
			bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 2),
			append(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 2), 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), ""},
		{"nested", `{"name": "struct", "configuration": {"fields": [{"name": "point", "data_type": {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "int8"}, {"name": "y", "data_type": "uint8"}]}}}, {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}}]}}`,
			`{"point": {"x": -1, "y": 2}, "t": "NaT"}`, "[('point', [('x', '|i1'), ('y', '|u1')]), ('t', '<M8[s]')]",
			bytes.Repeat([]byte{9, 9, 1, 0, 0, 0, 0, 0, 0, 0}, 2),
			append(bytes.Repeat([]byte{9, 9, 1, 0, 0, 0, 0, 0, 0, 0}, 2), 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0x80), ""},
		{"legacy", `{"name": "structured", "configuration": {"fields": [["a", "uint16"], ["b", "float16"]]}}`,
			`"AQACAA=="`, "[('a', '<u2'), ('b', '<f2')]",
			[]byte{5, 0, 0, 0x3c, 6, 0, 0, 0xc0}, []byte{5, 0, 0, 0x3c, 6, 0, 0, 0xc0, 1, 0, 2, 0}, ""},
		{"big", `{"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int16"}, {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [{"name": "c", "data_type": "complex64"}, {"name": "u", "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}}}, {"name": "b", "data_type": "bool"}]}}}]}}`,
			`{"a": 1, "p": {"c": [1.0, "NaN"], "u": "A", "b": true}}`, "[('a', '<i2'), ('p', [('c', '<c8'), ('u', '<U1'), ('b', '|b1')])]",
			append(bytes.Repeat([]byte{0, 1, 0x3f, 0x80, 0, 0, 0x7f, 0xc0, 0, 0, 0, 0, 0, 0x42, 1}, 1), 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x43, 0),
			append(append([]byte{1, 0, 0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 0x42, 0, 0, 0, 1}, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x43, 0, 0, 0, 0),
				1, 0, 0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 0x41, 0, 0, 0, 1), "big"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			endian := c.endian
			if endian == "" {
				endian = "little"
			}
			st := memory.New()
			doc := `{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": ` + c.dataType +
				`, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}, "chunk_key_encoding": {"name": "default"}` +
				`, "fill_value": ` + c.fill + `, "codecs": [{"name": "bytes", "configuration": {"endian": "` + endian + `"}}]}`
			must(t, st.Set(ctx, "zarr.json", []byte(doc)))
			must(t, st.Set(ctx, "c/0", c.chunk))
			h, err := Open(ctx, st, Options{})
			must(t, err)
			n, got := readArray(t, h, "")
			if !bytes.Equal(got, c.want) {
				t.Errorf("content\n got %x\nwant %x", got, c.want)
			}
			if n.Array.DataType().NumPy != c.numpy || n.Array.DataType().Name != "struct" {
				t.Errorf("data type %+v, want NumPy %s", n.Array.DataType(), c.numpy)
			}
		})
	}
}
