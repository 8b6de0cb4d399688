package peertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// VsPeer benchmarks decode against a Python peer decoding the same chunks.
// program, the name of an oracle program (see Oracle), sets a (a
// one-dimensional numpy array), the data, and codec, the peer's codec (a
// numcodecs codec), from args (a list of strings); vspeer.py then encodes a in chunks of chunkBytes and times
// its own decoding of them. VsPeer times decode of every chunk, one after
// another, into a buffer of the whole data, checks the bytes, and reports
// the peer's speed as "<name>-MB/s" and the ratio as "x-<name>". It
// returns the chunks.
func VsPeer(b *testing.B, name, program string, chunkBytes int, decode func(dst, chunk []byte) error, args ...string) [][]byte {
	b.Helper()
	dir := b.TempDir()
	raw := filepath.Join(dir, "raw")
	out := Oracle(b, "vspeer.py", append([]string{filepath.Join(OraclesDir(), filepath.FromSlash(program)), raw, dir, strconv.Itoa(chunkBytes)}, args...)...)
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
