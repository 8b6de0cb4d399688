package blosc

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// float32Chunk returns a 4 MiB float32 series and its lz4+shuffle chunk at
// numcodecs' default level 5.
func float32Chunk(b *testing.B) ([]byte, []byte) {
	src := make([]byte, 4<<20)
	for i := 0; i < len(src); i += 4 {
		v := float32(math.Sin(float64(i)/4000)*1000 + float64(i%97)/10)
		binary.LittleEndian.PutUint32(src[i:], math.Float32bits(v))
	}
	chunk, err := Compress(src, Options{Compressor: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 4})
	if err != nil {
		b.Fatal(err)
	}
	return src, chunk
}

func BenchmarkDecompressLZ4ShuffleFloat32(b *testing.B) {
	src, chunk := float32Chunk(b)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if err := Decompress(dst, chunk); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(src))/float64(len(chunk)), "ratio")
}

func BenchmarkCompressLZ4ShuffleFloat32(b *testing.B) {
	src, _ := float32Chunk(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Compress(src, Options{Compressor: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 4}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecompressNumcodecsChunk decodes the chunk numcodecs.Blosc
// (libblosc 1.21) writes for the same 4 MiB float32 series (lz4, clevel 5,
// shuffle, typesize 4).
func BenchmarkDecompressNumcodecsChunk(b *testing.B) {
	src, _ := float32Chunk(b)
	dir := b.TempDir()
	in := filepath.Join(dir, "in.f4")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		b.Fatal(err)
	}
	chunk := peertest.Oracle(b, "codec/blosc/decompress_numcodecs_chunk.py", in)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if err := Decompress(dst, chunk); err != nil {
			b.Fatal(err)
		}
	}
	if !bytes.Equal(dst, src) {
		b.Fatal("decoded bytes differ")
	}
	b.ReportMetric(float64(len(src))/float64(len(chunk)), "ratio")
}
