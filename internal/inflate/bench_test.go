package inflate

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// benchChunk is a gzip chunk for the benchmarks: $ZARRFS_BENCH_GZIP (a
// chunk of make bench's v2-gzip store, say), or noisy floats compressed
// here.
func benchChunk(b *testing.B) (enc []byte, size int) {
	if p := os.Getenv("ZARRFS_BENCH_GZIP"); p != "" {
		enc, err := os.ReadFile(filepath.Clean(p))
		if err != nil {
			b.Fatal(err)
		}
		r, err := kgzip.NewReader(bytes.NewReader(enc))
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := out.ReadFrom(r); err != nil {
			b.Fatal(err)
		}
		return enc, out.Len()
	}
	data := samples()["floats-1048576"]
	var buf bytes.Buffer
	w, _ := kgzip.NewWriterLevel(&buf, 5)
	w.Write(data)
	w.Close()
	return buf.Bytes(), len(data)
}

// BenchmarkGzip decodes one gzip chunk into a reused buffer: this
// package's Gzip and klauspost/compress's reader (which the codec used
// before), in MB/s of output.
func BenchmarkGzip(b *testing.B) {
	enc, size := benchChunk(b)
	dst := make([]byte, size)
	b.Run("inflate", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if n, err := Gzip(dst, enc); err != nil || n != size {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		b.SetBytes(int64(size))
		r, _ := kgzip.NewReader(bytes.NewReader(enc))
		for b.Loop() {
			r.Reset(bytes.NewReader(enc))
			if _, err := io.ReadFull(r, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
