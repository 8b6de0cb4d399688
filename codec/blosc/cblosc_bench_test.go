package blosc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// cbloscBenchMiB is the amount of float32 data each configuration of
// BenchmarkVsCBlosc decodes: 64 MiB in 4 MiB chunks.
const (
	cbloscBenchMiB   = 64
	cbloscChunkBytes = 4 << 20
)

// cbloscBenchProgram writes the bench data (a smooth field plus noise:
// moderately compressible float32), encodes it in 4 MiB chunks with
// numcodecs.Blosc (c-blosc 1.x) for one configuration, times c-blosc's
// single-threaded decoding (best of 5) and prints the decoded MB/s. The raw
// data and the chunks go to files for the Go side.
const cbloscBenchProgram = `
import sys, time
import numpy as np, numcodecs
from numcodecs import blosc
raw_path, chunk_dir, cname, shuffle, mib, chunk_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
n = mib * (1 << 20) // 4
rng = np.random.default_rng(42)
x = np.linspace(0, 60, n, dtype=np.float64)
a = (np.sin(x) * 100 + np.cos(x * 7.3) * 20 + 280 + rng.normal(0, 0.05, n)).astype("<f4")
a.tofile(raw_path)
blosc.use_threads = False
blosc.set_nthreads(1)
codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)
per = chunk_bytes // 4
chunks = [codec.encode(a[i:i + per]) for i in range(0, n, per)]
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
			dir := b.TempDir()
			raw := filepath.Join(dir, "raw")
			out := peertest.RunPython(b, cbloscBenchProgram, raw, dir, c.cname, strconv.Itoa(c.shuffle),
				strconv.Itoa(cbloscBenchMiB), strconv.Itoa(cbloscChunkBytes))
			cblosc, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatalf("c-blosc timing %q: %v", out, err)
			}
			src, err := os.ReadFile(raw)
			if err != nil {
				b.Fatal(err)
			}
			var chunks [][]byte
			for i := 0; i*cbloscChunkBytes < len(src); i++ {
				chunk, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)))
				if err != nil {
					b.Fatal(err)
				}
				chunks = append(chunks, chunk)
			}
			dst := make([]byte, len(src))
			b.SetBytes(int64(len(src)))
			b.ResetTimer()
			for b.Loop() {
				for i, chunk := range chunks {
					if err := Decompress(dst[i*cbloscChunkBytes:min(len(dst), (i+1)*cbloscChunkBytes)], chunk); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			if !bytes.Equal(dst, src) {
				b.Fatal("decoded bytes differ from the data c-blosc encoded")
			}
			mbps := float64(len(src)) * float64(b.N) / b.Elapsed().Seconds() / 1e6
			b.ReportMetric(cblosc, "cblosc-MB/s")
			b.ReportMetric(mbps/cblosc, "x-cblosc")
			ratio := 0
			for _, ch := range chunks {
				ratio += len(ch)
			}
			b.ReportMetric(float64(len(src))/float64(ratio), "ratio")
		})
	}
}
