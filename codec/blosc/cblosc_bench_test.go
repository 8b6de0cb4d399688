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
			chunks := peertest.VsPeer(b, "cblosc", "codec/blosc/cblosc_bench_program.py", cbloscChunkBytes, Decompress,
				c.cname, strconv.Itoa(c.shuffle), strconv.Itoa(cbloscBenchMiB))
			stored := 0
			for _, ch := range chunks {
				stored += len(ch)
			}
			b.ReportMetric(float64(cbloscBenchMiB<<20)/float64(stored), "ratio")
		})
	}
}
