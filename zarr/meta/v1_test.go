package meta

import (
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
)

func TestV1Invalid(t *testing.T) {
	base := `"shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0, "order": "C", "compression": "none", "compression_opts": null`
	cases := []struct {
		name, meta  string
		unsupported bool
	}{
		{"not json", `{`, false},
		{"format 2", `{` + base + `, "zarr_format": 2}`, false},
		{"no format", `{` + base + `}`, false},
		{"rank mismatch", `{"shape": [4], "chunks": [2, 2], "dtype": "<i4", "zarr_format": 1}`, false},
		{"order", `{"shape": [4], "chunks": [2], "dtype": "<i4", "order": "K", "zarr_format": 1}`, false},
		{"zlib opts", `{"shape": [4], "chunks": [2], "dtype": "<i4", "compression": "zlib", "compression_opts": {}, "zarr_format": 1}`, false},
		{"blosc opts", `{"shape": [4], "chunks": [2], "dtype": "<i4", "compression": "blosc", "compression_opts": 3, "zarr_format": 1}`, false},
		{"fill", `{"shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": "x", "zarr_format": 1}`, false},
		{"unknown compression", `{"shape": [4], "chunks": [2], "dtype": "<i4", "compression": "snappy", "zarr_format": 1}`, true},
		{"object dtype", `{"shape": [4], "chunks": [2], "dtype": "|O", "zarr_format": 1}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseV1Array([]byte(c.meta))
			if c.unsupported {
				if err != nil || a == nil || !errors.Is(a.err, codec.ErrUnsupported) {
					t.Fatalf("ParseV1Array = %+v, %v; want an array with an unsupported error", a, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidMetadata) {
				t.Fatalf("ParseV1Array = %+v, %v; want ErrInvalidMetadata", a, err)
			}
		})
	}
}

func FuzzParseV1Array(f *testing.F) {
	f.Add([]byte(`{"shape": [4, 3], "chunks": [2, 2], "dtype": "<f8", "fill_value": NaN, "order": "F", "compression": "blosc", "compression_opts": {"cname": "lz4", "clevel": 3, "shuffle": 1}, "zarr_format": 1}`))
	f.Add([]byte(`{"shape": [4], "chunks": [2], "dtype": "|S3", "compression": "zlib", "compression_opts": 1, "zarr_format": 1}`))
	for _, b := range hostileSeeds(f, "v1-") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, err := ParseV1Array(doc)
		if err == nil && a == nil {
			t.Fatal("nil array without an error")
		}
		if err != nil && !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, codec.ErrUnsupported) {
			t.Fatalf("error %v is neither invalid metadata nor unsupported", err)
		}
	})
}
