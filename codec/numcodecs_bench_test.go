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

// numcodecsBenchProgram writes make bench's data (bench/gen.py: a smooth
// field plus noise, rounded to 1/4096: moderately compressible float32) in
// rows of 1024 elements, encodes it in chunks with one numcodecs codec,
// times numcodecs' decoding of all chunks (best of 5, one thread: the C
// library under the Python call) and prints the decoded MB/s. The raw data
// and the chunks go to files for the Go side (peertest.VsPeer).
const numcodecsBenchProgram = `
import sys, time, json
import numpy as np, numcodecs
raw_path, chunk_dir, config, mib, chunk_bytes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = mib * (1 << 20) // (1024 * 4)
r = np.arange(rows, dtype=np.float64)[:, None]
c = np.arange(1024, dtype=np.float64)[None, :]
v = np.sin(r / 500) * np.cos(c / 70) + 0.05 * np.random.default_rng(1).standard_normal((rows, 1024))
a = (np.round(v * 4096) / 4096).astype("<f4").ravel()
a.tofile(raw_path)
codec = numcodecs.get_codec(config)
per = chunk_bytes // 4
chunks = [codec.encode(a[i:i + per]) for i in range(0, a.size, per)]
for i, c in enumerate(chunks):
    open("%s/%d" % (chunk_dir, i), "wb").write(c)
best = None
for _ in range(5):
    t = time.perf_counter()
    for c in chunks:
        codec.decode(c)
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
print(a.nbytes / best / 1e6)
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
				c.config, strconv.Itoa(numcodecsBenchMiB), strconv.Itoa(numcodecsChunkBytes))
		})
	}
}
