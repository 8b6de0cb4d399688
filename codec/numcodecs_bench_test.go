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

// numcodecsBenchProgram makes make bench's data (bench/gen.py: a smooth
// field plus noise, rounded to 1/4096: moderately compressible float32) in
// rows of 1024 elements, and one numcodecs codec from its JSON
// configuration, for peertest.VsPeer.
const numcodecsBenchProgram = `
import json
config, mib = json.loads(args[0]), int(args[1])
rows = mib * (1 << 20) // (1024 * 4)
r = np.arange(rows, dtype=np.float64)[:, None]
c = np.arange(1024, dtype=np.float64)[None, :]
v = np.sin(r / 500) * np.cos(c / 70) + 0.05 * np.random.default_rng(1).standard_normal((rows, 1024))
a = (np.round(v * 4096) / 4096).astype("<f4").ravel()
codec = numcodecs.get_codec(config)
`

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
			peertest.VsPeer(b, "numcodecs", numcodecsBenchProgram, numcodecsChunkBytes, c.codec.DecodeInto,
				c.config, strconv.Itoa(numcodecsBenchMiB))
		})
	}
}
