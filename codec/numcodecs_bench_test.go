package codec

import (
	"strconv"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// numcodecsBenchMiB is the float32 data each codec of BenchmarkVsNumcodecs
// decodes: 64 MiB in chunks of 2 MiB, the chunk size of make bench.
const (
	numcodecsBenchMiB   = 64
	numcodecsChunkBytes = 2 << 20
)

// BenchmarkVsNumcodecs decodes, one chunk after another, the chunks that
// numcodecs (the C libraries under zarr-python) encoded and decodes, per
// codec, and reports zarrfs's throughput (MB/s), numcodecs' on the same
// chunks ("numcodecs-MB/s", best of 5) and their ratio ("x-numcodecs"):
// the decoders' speed on one core, apart from the mount:
//
//	go test -run NONE -bench VsNumcodecs -cpu 1 ./codec/
func BenchmarkVsNumcodecs(b *testing.B) {
	for _, c := range []struct {
		name, config string
		codec        DecoderInto
	}{
		{"zstd", `{"id": "zstd", "level": 3}`, Zstd{}},
		{"gzip", `{"id": "gzip", "level": 5}`, Gzip{}},
		{"zlib", `{"id": "zlib", "level": 5}`, Zlib{}},
		{"lz4", `{"id": "lz4", "acceleration": 1}`, LZ4{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			peertest.VsPeer(b, "numcodecs", "codec/numcodecs_bench_program.py", numcodecsChunkBytes, c.codec.DecodeInto,
				c.config, strconv.Itoa(numcodecsBenchMiB))
		})
	}
}
