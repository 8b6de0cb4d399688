package blosc

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// cbloscBenchMiB is the amount of float32 data each configuration of
// BenchmarkVsCBlosc decodes: 64 MiB in 4 MiB chunks.
const (
	cbloscBenchMiB   = 64
	cbloscChunkBytes = 4 << 20
)

// cbloscBenchProgram makes the bench data (a smooth field plus noise:
// moderately compressible float32) and numcodecs.Blosc (c-blosc 1.x) for
// one configuration, decoding on one thread, for peertest.VsPeer.
const cbloscBenchProgram = `
from numcodecs import blosc
cname, shuffle, mib = args[0], int(args[1]), int(args[2])
n = mib * (1 << 20) // 4
rng = np.random.default_rng(42)
x = np.linspace(0, 60, n, dtype=np.float64)
a = (np.sin(x) * 100 + np.cos(x * 7.3) * 20 + 280 + rng.normal(0, 0.05, n)).astype("<f4")
blosc.use_threads = False
blosc.set_nthreads(1)
codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)
`

// BenchmarkVsCBlosc decodes the same 64 MiB of float32 data that c-blosc
// (through numcodecs, one thread) decodes, per configuration, and reports
// zarrfs's throughput (MB/s), c-blosc's ("cblosc-MB/s") and their ratio
// ("x-cblosc"). Run it with -cpu 1,2 for the single-core figure and the
// two-core speed-up:
//
//	go test -run NONE -bench VsCBlosc -cpu 1,2 ./codec/blosc/
func BenchmarkVsCBlosc(b *testing.B) {
	for _, c := range []struct {
		cname   string
		shuffle int
	}{
		{"lz4", 1},
		{"zstd", 1},
		{"blosclz", 2},
		{"zlib", 1},
	} {
		name := fmt.Sprintf("%s+%s", c.cname, []string{"noshuffle", "shuffle", "bitshuffle"}[c.shuffle])
		b.Run(name, func(b *testing.B) {
			chunks := peertest.VsPeer(b, "cblosc", cbloscBenchProgram, cbloscChunkBytes, Decompress,
				c.cname, strconv.Itoa(c.shuffle), strconv.Itoa(cbloscBenchMiB))
			stored := 0
			for _, ch := range chunks {
				stored += len(ch)
			}
			b.ReportMetric(float64(cbloscBenchMiB<<20)/float64(stored), "ratio")
		})
	}
}
