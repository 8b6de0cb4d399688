package peertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vsPeerHead and vsPeerTail surround the program of VsPeer, which sets a
// (a one-dimensional numpy array) and codec (a numcodecs codec) from args
// (its arguments, strings). The tail writes a to raw_path, encodes it in
// chunks of chunk_bytes, writes them to chunk_dir/0, chunk_dir/1, …,
// times the peer's decoding of them all (best of 5) and prints its MB/s.
const (
	vsPeerHead = `
import sys, time
import numpy as np, numcodecs
raw_path, chunk_dir, chunk_bytes, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
`
	vsPeerTail = `
a.tofile(raw_path)
per = chunk_bytes // a.itemsize
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
)

// VsPeer benchmarks decode against a Python peer decoding the same chunks.
// program sets a, the data, and codec, the peer's codec, from args (see
// vsPeerHead); the peer then encodes a in chunks of chunkBytes and times
// its own decoding of them. VsPeer times decode of every chunk, one after
// another, into a buffer of the whole data, checks the bytes, and reports
// the peer's speed as "<name>-MB/s" and the ratio as "x-<name>". It
// returns the chunks.
func VsPeer(b *testing.B, name, program string, chunkBytes int, decode func(dst, chunk []byte) error, args ...string) [][]byte {
	b.Helper()
	dir := b.TempDir()
	raw := filepath.Join(dir, "raw")
	out := RunPython(b, vsPeerHead+program+vsPeerTail, append([]string{raw, dir, strconv.Itoa(chunkBytes)}, args...)...)
	theirs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("%s timing %q: %v", name, out, err)
	}
	src, err := os.ReadFile(raw)
	if err != nil {
		b.Fatal(err)
	}
	var chunks [][]byte
	for i := 0; i*chunkBytes < len(src); i++ {
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
			if err := decode(dst[i*chunkBytes:min(len(dst), (i+1)*chunkBytes)], chunk); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if !bytes.Equal(dst, src) {
		b.Fatalf("decoded bytes differ from the data %s encoded", name)
	}
	ours := float64(len(src)) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	b.ReportMetric(theirs, name+"-MB/s")
	b.ReportMetric(ours/theirs, "x-"+name)
	return chunks
}
