package view

import (
	"testing"

	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

func TestArrayXattrs(t *testing.T) {
	for _, c := range []struct {
		name   string
		array  string // the array's metadata document
		format zarr.Format
		want   map[string]string
	}{
		{
			name: "v3 cube",
			array: `{"zarr_format": 3, "node_type": "array", "shape": [24, 90, 180], "data_type": "float32",
				"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [6, 45, 90]}},
				"chunk_key_encoding": {"name": "default"}, "fill_value": "NaN", "dimension_names": ["time", "lat", "lon"],
				"codecs": [ {"name": "bytes", "configuration": {"endian": "little"}},` + "\n" + `{"name":"zstd"} ]}`,
			format: zarr.FormatV3,
			want: map[string]string{
				"user.zarr.shape":           "24,90,180",
				"user.zarr.chunks":          "6,45,90",
				"user.zarr.dtype":           "<f4",
				"user.zarr.fill_value":      `"NaN"`,
				"user.zarr.codecs":          `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}]`,
				"user.zarr.dimension_names": "time,lat,lon",
				"user.zarr.format":          "3",
			},
		},
		{
			name:   "v2 scalar without fill value",
			array:  `{"zarr_format": 2, "shape": [], "chunks": [], "dtype": "<i8", "compressor": null, "filters": null, "fill_value": null, "order": "C"}`,
			format: zarr.FormatV2,
			want: map[string]string{
				"user.zarr.shape":      "",
				"user.zarr.chunks":     "",
				"user.zarr.dtype":      "<i8",
				"user.zarr.fill_value": "null",
				"user.zarr.codecs":     "[]",
				"user.zarr.format":     "2",
			},
		},
		{
			name: "variable-length strings, 2022 draft",
			array: `{"shape": [5], "data_type": "|O", "chunk_grid": {"type": "regular", "chunk_shape": [2], "separator": "/"},
				"chunk_memory_layout": "C", "compressor": null, "fill_value": "", "extensions": [],
				"attributes": {"filters": [{"id": "vlen-utf8"}]}}`,
			format: zarr.FormatV3Draft2022,
			want: map[string]string{
				"user.zarr.shape":      "5",
				"user.zarr.chunks":     "2",
				"user.zarr.dtype":      "string",
				"user.zarr.fill_value": `""`,
				"user.zarr.codecs":     `[{"name":"vlen-utf8"}]`,
				"user.zarr.format":     "3-draft-2022",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := ArrayXattrs(parseArray(t, c.format, c.array))
			got := map[string]string{}
			for i, a := range x {
				if i > 0 && x[i-1].Name >= a.Name {
					t.Errorf("names not sorted: %q before %q", x[i-1].Name, a.Name)
				}
				got[a.Name] = string(a.Value)
			}
			if len(got) != len(c.want) {
				t.Errorf("got %d attributes %v, want %d", len(got), got, len(c.want))
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// parseArray parses the metadata document of an array of the given format
// (for the 2022 v3 draft, its array.json as zarr-python 2.13 writes it).
func parseArray(t *testing.T, format zarr.Format, doc string) *meta.Array {
	t.Helper()
	var a *meta.Array
	var err error
	switch format {
	case zarr.FormatV2:
		a, err = meta.ParseV2Array([]byte(doc), nil)
	case zarr.FormatV3:
		var n meta.V3Node
		if n, err = meta.ParseV3Node([]byte(doc)); err == nil {
			a, err = meta.ParseV3Array(n)
		}
	case zarr.FormatV3Draft2022:
		var l *meta.Draft
		l, err = meta.DetectDraft([]byte(`{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []}`))
		if err == nil {
			_, a, err = l.ParseNode("array.json", zarr.KindArray, []byte(doc), "a")
		}
	}
	if err != nil || a == nil {
		t.Fatalf("%v: %v", format, err)
	}
	return a
}
