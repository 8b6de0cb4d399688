package view

import (
	"encoding/json"
	"testing"

	"github.com/zarrfs/zarrfs/zarr"
)

func TestArrayXattrs(t *testing.T) {
	for _, c := range []struct {
		name   string
		array  *zarr.Array
		format zarr.Format
		want   map[string]string
	}{
		{
			name: "v3 cube",
			array: &zarr.Array{
				Shape: []int64{24, 90, 180}, ChunkShape: []int64{6, 45, 90},
				DataType:       zarr.DataType{Name: "float32", Size: 4, NumPy: "<f4"},
				FillValue:      json.RawMessage(`"NaN"`),
				DimensionNames: []string{"time", "lat", "lon"},
				Codecs:         json.RawMessage(`[ {"name": "bytes", "configuration": {"endian": "little"}},` + "\n" + `{"name":"zstd"} ]`),
			},
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
			name: "v2 scalar without fill value",
			array: &zarr.Array{
				Shape: []int64{}, ChunkShape: []int64{},
				DataType: zarr.DataType{Name: "int64", Size: 8, NumPy: "<i8"},
				Codecs:   json.RawMessage(`[]`),
			},
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
			array: &zarr.Array{
				Shape: []int64{5}, ChunkShape: []int64{2},
				DataType:  zarr.DataType{Name: "string"},
				FillValue: json.RawMessage(`""`),
				Codecs:    json.RawMessage(`[{"name":"vlen-utf8"}]`),
			},
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
			x := ArrayXattrs(c.array, c.format)
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
