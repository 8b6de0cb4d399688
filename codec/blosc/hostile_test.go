package blosc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Hostile Blosc chunks live in testdata/hostile, one file per case, all
// for a decoded size of hostileSize bytes: damage to each inner codec's
// streams (BloscLZ, LZ4, Snappy, zlib, Zstandard) and to the header and
// block table. ZARRFS_WRITE_HOSTILE=1 go test -run TestWriteHostileBlosc
// rewrites them.

const hostileSize = 4096

// hostileBlosc maps every file of testdata/hostile to the error it gives.
// Names are COMPRESSOR-DAMAGE.blosc; the compressors' damage is the same
// for each (see hostileDamage).
func hostileBlosc(name string) error {
	switch {
	case strings.HasSuffix(name, "-version-3.blosc"), strings.HasSuffix(name, "-codec-7.blosc"):
		return ErrUnsupported
	case strings.HasSuffix(name, "-one-too-long.blosc"):
		// Bytes after cbytes are ignored, as c-blosc ignores them (z5py
		// writes such chunks): this one decodes.
		return nil
	}
	return ErrCorrupt
}

var hostileCompressors = []Compressor{BloscLZ, LZ4, Snappy, Zlib, Zstd}

// hostileDamage returns the damaged variants of a valid chunk.
func hostileDamage(chunk []byte, rng *rand.Rand) map[string][]byte {
	mut := func(f func(b []byte)) []byte { b := bytes.Clone(chunk); f(b); return b }
	h, _ := ParseHeader(chunk)
	table := HeaderSize + 4*h.NumBlocks()
	start0 := int(binary.LittleEndian.Uint32(chunk[HeaderSize:]))
	return map[string][]byte{
		"truncated-1":    chunk[:len(chunk)-1],
		"truncated-half": chunk[:len(chunk)/2],
		"one-too-long":   append(bytes.Clone(chunk), 0),
		"claims-2GiB":    put32(chunk, 4, 1<<31),
		"claims-4GiB-1":  put32(chunk, 4, 1<<32-1),
		"blocksize-huge": put32(chunk, 8, 1<<31-1),
		"blocksize-0":    put32(chunk, 8, 0),
		"cbytes-huge":    put32(chunk, 12, 1<<31),
		"typesize-0":     mut(func(b []byte) { b[3] = 0 }),
		"version-3":      mut(func(b []byte) { b[0] = 3 }),
		"codec-7":        mut(func(b []byte) { b[2] = b[2]&0x1f | 7<<5 }),
		"start-past-end": put32(chunk, HeaderSize, uint32(len(chunk))),
		"start-in-table": put32(chunk, HeaderSize, uint32(table-2)),
		"stream-huge":    put32(chunk, start0, 1<<31-1),
		"stream-garbage": mut(func(b []byte) {
			for i := start0 + 4; i < len(b); i++ {
				b[i] = byte(rng.Uint32())
			}
		}),
	}
}

func TestWriteHostileBlosc(t *testing.T) {
	if os.Getenv("ZARRFS_WRITE_HOSTILE") != "1" {
		t.Skip("set ZARRFS_WRITE_HOSTILE=1 to rewrite testdata/hostile")
	}
	dir := filepath.Join("testdata", "hostile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	src := testData(0, hostileSize, 3)
	for _, c := range hostileCompressors {
		chunk, err := Compress(src, Options{Compressor: c, Level: 5, Shuffle: ByteShuffle, TypeSize: 4, BlockSize: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := ParseHeader(chunk); h.Memcpyed() {
			t.Fatalf("%v: the chunk is stored raw", c)
		}
		for damage, b := range hostileDamage(chunk, rng) {
			if err := os.WriteFile(filepath.Join(dir, c.String()+"-"+damage+".blosc"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func hostileFiles(t testing.TB) map[string][]byte {
	t.Helper()
	dir := filepath.Join("testdata", "hostile")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestHostileBlosc decodes every hostile chunk whole and in part: each
// fails with its error, and allocates at most twice the decoded size plus
// 1 MiB.
func TestHostileBlosc(t *testing.T) {
	files := hostileFiles(t)
	if want := len(hostileCompressors) * 15; len(files) != want {
		t.Fatalf("%d files in testdata/hostile, want %d", len(files), want)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	// Warm the decoders' one-time state.
	src := testData(0, hostileSize, 3)
	for _, c := range hostileCompressors {
		chunk, _ := Compress(src, Options{Compressor: c, Level: 5, Shuffle: ByteShuffle, TypeSize: 4, BlockSize: 1024})
		if err := Decompress(make([]byte, hostileSize), chunk); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, name := range names {
		chunk, want := files[name], hostileBlosc(name)
		dst := make([]byte, hostileSize)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := Decompress(dst, chunk)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, want) {
			t.Errorf("%s: Decompress: %v, want %v", name, err, want)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 2*hostileSize+1<<20 {
			t.Errorf("%s: Decompress allocated %d bytes", name, d)
		}
		if err := DecompressRange(dst[:100], chunk, 1500); err == nil && !strings.Contains(name, "stream-") && !strings.Contains(name, "start-") && !strings.Contains(name, "one-too-long") {
			// Damage to one block's stream or start only shows when that
			// block is decoded; everything else is in the header.
			t.Errorf("%s: DecompressRange: no error", name)
		}
	}
}
