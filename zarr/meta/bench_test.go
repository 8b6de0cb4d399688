package meta

import (
	"testing"

	"github.com/zarrfs/zarrfs/internal/treegen"
)

// The documents below are what loading a v2 node parses, the metadata
// cost of listing a directory: v2Docs are .zarray documents with the
// .zattrs beside them (nil for none), as their writers lay them out.
var v2Docs = []struct {
	name         string
	zarray, attr string
}{
	// make bench's tree (bench/benchdata, internal/treegen): zarr-python 2,
	// no compressor.
	{"tree", treegen.ArrayDoc, ""},
	// zarr-python 2's default Blosc compressor.
	{"blosc", `{
    "chunks": [
        512,
        1024
    ],
    "compressor": {
        "blocksize": 0,
        "clevel": 5,
        "cname": "lz4",
        "id": "blosc",
        "shuffle": 1
    },
    "dimension_separator": ".",
    "dtype": "<f4",
    "fill_value": 0.0,
    "filters": null,
    "order": "C",
    "shape": [
        131072,
        1024
    ],
    "zarr_format": 2
}`, ""},
	// A variable of a netCDF file written by xarray's to_zarr: NaN fill
	// value, CF attributes (one a bare NaN, as Python's json writes it)
	// and _ARRAY_DIMENSIONS.
	{"xarray", `{
    "chunks": [
        1,
        721,
        1440
    ],
    "compressor": {
        "blocksize": 0,
        "clevel": 5,
        "cname": "lz4",
        "id": "blosc",
        "shuffle": 1
    },
    "dtype": "<f4",
    "fill_value": "NaN",
    "filters": null,
    "order": "C",
    "shape": [
        8760,
        721,
        1440
    ],
    "zarr_format": 2
}`, `{
    "_ARRAY_DIMENSIONS": [
        "time",
        "latitude",
        "longitude"
    ],
    "cell_methods": "time: mean",
    "coordinates": "height",
    "long_name": "Near-Surface Air Temperature",
    "missing_value": NaN,
    "standard_name": "air_temperature",
    "units": "K",
    "valid_range": [
        150.0,
        350.0
    ]
}`},
}

// BenchmarkParseV2Array measures what loading a v2 array parses: its
// .zattrs, when it has one (ParseAttributes), then its .zarray.
func BenchmarkParseV2Array(b *testing.B) {
	for _, d := range v2Docs {
		b.Run(d.name, func(b *testing.B) {
			zarray, attr := []byte(d.zarray), []byte(d.attr)
			b.ReportAllocs()
			for b.Loop() {
				var attrs []byte
				if len(attr) > 0 {
					var err error
					if attrs, err = ParseAttributes(V2AttrsDoc, attr); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := ParseV2Array(zarray, attrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseV2Group measures what loading a v2 group parses: a
// zarr-python .zgroup, and the attributes of a dataset xarray wrote.
func BenchmarkParseV2Group(b *testing.B) {
	zgroup := []byte("{\n    \"zarr_format\": 2\n}")
	attr := []byte(`{
    "Conventions": "CF-1.7",
    "history": "2024-01-01 00:00:00 GMT by grib_to_netcdf-2.28.1",
    "institution": "European Centre for Medium-Range Weather Forecasts",
    "title": "ERA5 hourly data on single levels"
}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := ParseV2Group(zgroup); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseAttributes(V2AttrsDoc, attr); err != nil {
			b.Fatal(err)
		}
	}
}
