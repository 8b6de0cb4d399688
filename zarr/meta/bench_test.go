package meta

import "testing"

// BenchmarkParseV2Array measures decoding a typical .zarray (zarr-python's
// layout, Blosc compressor), the metadata cost of listing a directory.
func BenchmarkParseV2Array(b *testing.B) {
	doc := []byte(`{
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
}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseV2Array(doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}
