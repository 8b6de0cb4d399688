package zarr

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestNonFiniteJSON: the bare NaN, Infinity and -Infinity that Python's json
// module writes (zarr-python 2, GDAL and netCDF-c put them in attributes and
// fill values) are read in every format, as the strings Zarr spells them
// with: attributes show "NaN", fill values are NaN. The documents stay as
// stored.
func TestNonFiniteJSON(t *testing.T) {
	ctx := context.Background()
	const f8 = `"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f8", "compressor": null, "filters": null, "order": "C"`
	for _, c := range []struct {
		name   string
		store  map[string]string
		path   string
		doc    string // the document shown as stored
		attrs  string // Node.Attributes, compacted
		fill   float64
		groups []string // nodes that must load without error
	}{{
		name: "v2",
		store: map[string]string{
			".zgroup":   `{"zarr_format": 2}`,
			".zattrs":   `{"nan_attr": NaN, "list": [1, NaN, -Infinity]}`,
			"t/.zarray": `{` + f8 + `, "fill_value": NaN}`,
			"t/.zattrs": `{"missing_value": NaN, "actual_range": [-Infinity, Infinity], "_ARRAY_DIMENSIONS": ["x"]}`,
			"u/.zarray": `{` + f8 + `, "fill_value": Infinity}`,
			"u/.zattrs": `{"s": "NaN \" Infinity"}`,
		},
		path:   "t",
		doc:    `{"missing_value": NaN, "actual_range": [-Infinity, Infinity], "_ARRAY_DIMENSIONS": ["x"]}`,
		attrs:  `{"missing_value":"NaN","actual_range":["-Infinity","Infinity"],"_ARRAY_DIMENSIONS":["x"]}`,
		fill:   math.NaN(),
		groups: []string{"", "u"},
	}, {
		name: "v2 consolidated",
		store: map[string]string{
			".zgroup":    `{"zarr_format": 2}`,
			".zmetadata": `{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {"a": NaN}, "t/.zarray": {` + f8 + `, "fill_value": -Infinity}, "t/.zattrs": {"b": Infinity}}}`,
		},
		path:   "t",
		attrs:  `{"b":"Infinity"}`,
		fill:   math.Inf(-1),
		groups: []string{""},
	}, {
		name: "v3",
		store: map[string]string{
			"zarr.json": `{"zarr_format": 3, "node_type": "group", "attributes": {"nan_attr": NaN}}`,
			"t/zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "float32",
				"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
				"chunk_key_encoding": {"name": "default"}, "fill_value": NaN, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
				"attributes": {"x": [NaN, Infinity, -Infinity, "NaN"]}}`,
		},
		path:   "t",
		attrs:  `{"x":["NaN","Infinity","-Infinity","NaN"]}`,
		fill:   math.NaN(),
		groups: []string{""},
	}, {
		name: "v1",
		store: map[string]string{
			"meta":  `{"zarr_format": 1, "shape": [2], "chunks": [2], "dtype": "<f8", "compression": "none", "compression_opts": null, "fill_value": NaN, "order": "C"}`,
			"attrs": `{"m": -Infinity}`,
		},
		path:  "",
		attrs: `{"m":"-Infinity"}`,
		fill:  math.NaN(),
	}, {
		name: "v3 draft 2022",
		store: map[string]string{
			"zarr.json":            `{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`,
			"meta/root.group.json": `{"attributes": {"g": NaN}}`,
			"meta/root/t.array.json": `{"shape": [2], "data_type": "<f8", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
				"chunk_memory_layout": "C", "fill_value": -Infinity, "extensions": [], "attributes": {"valid_range": [-Infinity, Infinity]}}`,
		},
		path:   "t",
		attrs:  `{"valid_range":["-Infinity","Infinity"]}`,
		fill:   math.Inf(-1),
		groups: []string{""},
	}} {
		t.Run(c.name, func(t *testing.T) {
			h, err := Open(ctx, memStore(t, c.store), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.groups {
				n, err := h.Node(ctx, p)
				if err != nil || n.Err != nil {
					t.Fatalf("node %q: %v, %v", p, err, n.Err)
				}
			}
			n, err := h.Node(ctx, c.path)
			if err != nil {
				t.Fatal(err)
			}
			if n.Err != nil || n.Array == nil || n.Array.Err != nil {
				t.Fatalf("node %q: %v %+v", c.path, n.Err, n.Array)
			}
			if got := string(compactJSON(n.Attributes)); got != c.attrs {
				t.Errorf("attributes %s, want %s", got, c.attrs)
			}
			if c.doc != "" && string(n.Documents[len(n.Documents)-1].Data) != c.doc {
				t.Errorf("document %q, want it as stored %q", n.Documents[len(n.Documents)-1].Data, c.doc)
			}
			p := make([]byte, n.Array.Size())
			if _, err := n.Array.ReadAt(ctx, p, 0); err != nil {
				t.Fatal(err)
			}
			var got float64
			if n.Array.DataType().Size == 4 {
				got = float64(math.Float32frombits(binary.LittleEndian.Uint32(p[4:])))
			} else {
				got = math.Float64frombits(binary.LittleEndian.Uint64(p[8:]))
			}
			if !(got == c.fill || math.IsNaN(got) && math.IsNaN(c.fill)) {
				t.Errorf("element 1 = %v, want %v", got, c.fill)
			}
			if i := n.Info(); string(i.FillValue) == "" || strings.Contains(i.Text(), "error") {
				t.Errorf("info: %+v\n%s", i, i.Text())
			}
		})
	}
}
