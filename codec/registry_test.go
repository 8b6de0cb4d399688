package codec

import "testing"

// TestRegisteredNames checks every name this package promises to register.
func TestRegisteredNames(t *testing.T) {
	names := []string{
		"bytes", "endian", "https://purl.org/zarr/spec/codecs/endian/1.0",
		"transpose",
		"gzip", "numcodecs.gzip", "https://purl.org/zarr/spec/codec/gzip/1.0",
		"https://purl.org/zarr/spec/codecs/gzip/1.0", "https://purl.org/zarr/spec/codec/gzip",
		"http://purl.org/zarr/spec/codec/gzip",
		"zlib", "numcodecs.zlib", "https://purl.org/zarr/spec/codec/zlib/1.0",
		"zstd", "numcodecs.zstd",
		"crc32c", "numcodecs.crc32c",
		"lz4", "numcodecs.lz4", "https://purl.org/zarr/spec/codec/lz4/1.0",
		"lzma", "numcodecs.lzma", "https://purl.org/zarr/spec/codec/lzma/1.0",
		"bz2", "numcodecs.bz2", "https://purl.org/zarr/spec/codec/bz2/1.0",
		"crc32", "numcodecs.crc32", "adler32", "numcodecs.adler32", "fletcher32", "numcodecs.fletcher32",
		"vlen-utf8", "vlen-bytes", "numcodecs.vlen-utf8", "numcodecs.vlen-bytes",
		"delta", "fixedscaleoffset", "quantize", "astype", "shuffle", "numcodecs.shuffle",
		"packbits", "categorize", "bitround", "numcodecs.bitround",
		"numcodecs.delta", "numcodecs.fixedscaleoffset", "numcodecs.quantize", "numcodecs.astype", "numcodecs.packbits",
		"json2", "numcodecs.json2", "json", "msgpack2", "numcodecs.msgpack2",
		"jenkins_lookup3", "numcodecs.jenkins_lookup3",
	}
	for _, n := range names {
		if !Registered(n) {
			t.Errorf("%q is not registered", n)
		}
	}
}
