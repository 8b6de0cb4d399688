package blosc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

// twoBlockChunk returns a chunk of two identical, compressible blocks of
// 64 KiB (lz4, shuffle, typesize 4: split into 4 streams each).
func twoBlockChunk(t testing.TB) ([]byte, []byte) {
	t.Helper()
	block := testData(0, 1<<16, 1)
	src := append(bytes.Clone(block), block...)
	chunk, err := Compress(src, Options{Compressor: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 4, BlockSize: 1 << 14}) // c-blosc multiplies it by the typesize
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(chunk)
	if err != nil || h.NumBlocks() != 2 || h.Memcpyed() || h.Flags&flagDontSplit != 0 {
		t.Fatalf("test chunk is not two split blocks: %+v %v", h, err)
	}
	return chunk, src
}

func put32(b []byte, off int, v uint32) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

func TestCorruptChunks(t *testing.T) {
	chunk, src := twoBlockChunk(t)
	start0 := int(binary.LittleEndian.Uint32(chunk[16:]))
	start1 := int(binary.LittleEndian.Uint32(chunk[20:]))
	mut := func(f func(b []byte)) []byte { b := bytes.Clone(chunk); f(b); return b }
	tests := []struct {
		name  string
		chunk []byte
		size  int
		want  error
	}{
		{"empty", nil, len(src), ErrCorrupt},
		{"short header", chunk[:15], len(src), ErrCorrupt},
		{"truncated", chunk[:len(chunk)-1], len(src), ErrCorrupt},
		{"truncated, cbytes patched", put32(chunk[:len(chunk)-5], 12, uint32(len(chunk)-5)), len(src), ErrCorrupt},
		{"wrong expected size", chunk, len(src) - 1, ErrCorrupt},
		{"claims 2 GiB", put32(chunk, 4, 1<<31), len(src), ErrCorrupt},
		{"claims 2 GiB - 1", put32(chunk, 4, 1<<31-1), len(src), ErrCorrupt},
		{"version 3", mut(func(b []byte) { b[0] = 3 }), len(src), ErrUnsupported},
		{"versionlz 2", mut(func(b []byte) { b[1] = 2 }), len(src), ErrUnsupported},
		{"reserved flag", mut(func(b []byte) { b[2] |= flagReserved }), len(src), ErrCorrupt},
		{"codec format 5", mut(func(b []byte) { b[2] = b[2]&0x1f | 5<<5 }), len(src), ErrUnsupported},
		{"typesize 0", mut(func(b []byte) { b[3] = 0 }), len(src), ErrCorrupt},
		{"block size 0", put32(chunk, 8, 0), len(src), ErrCorrupt},
		{"block size above nbytes", put32(chunk, 8, uint32(len(src)+1)), len(src), ErrCorrupt},
		{"block size 1: table too big", put32(chunk, 8, 1), len(src), ErrCorrupt},
		{"memcpyed, wrong cbytes", mut(func(b []byte) { b[2] |= flagMemcpyed }), len(src), ErrCorrupt},
		{"start in the header", put32(chunk, 16, 4), len(src), ErrCorrupt},
		{"start in the table", put32(chunk, 20, 20), len(src), ErrCorrupt},
		{"start past the end", put32(chunk, 20, uint32(len(chunk))), len(src), ErrCorrupt},
		{"start negative", put32(chunk, 20, 0xffffffff), len(src), ErrCorrupt},
		{"starts overlap", put32(chunk, 20, uint32(start0)), len(src), ErrCorrupt},
		{"stream size negative", put32(chunk, start1, 0x80000000), len(src), ErrCorrupt},
		{"stream size past the end", put32(chunk, start1, uint32(len(chunk))), len(src), ErrCorrupt},
		{"stream size off by one", put32(chunk, start0, binary.LittleEndian.Uint32(chunk[start0:])+1), len(src), ErrCorrupt},
		{"dont-split flag flipped", mut(func(b []byte) { b[2] |= flagDontSplit }), len(src), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]byte, tt.size)
			err := Decompress(dst, tt.chunk)
			if !errors.Is(err, tt.want) {
				t.Errorf("Decompress: %v, want %v", err, tt.want)
			}
			// A range across both blocks meets the same damage, except
			// what only a whole decode sees.
			wholeOnly := tt.name == "starts overlap" || tt.name == "wrong expected size"
			if err := DecompressRange(dst[:10], tt.chunk, 1<<16-5); err == nil && !wholeOnly {
				t.Errorf("DecompressRange: no error")
			}
		})
	}
}

// TestHugeClaimAllocatesNothing checks that a header claiming 2 GiB is
// rejected before anything of that size is allocated.
func TestHugeClaimAllocatesNothing(t *testing.T) {
	chunk, _ := twoBlockChunk(t)
	for _, claim := range []uint32{1 << 31, 1<<31 - 17, 1 << 30} {
		bad := put32(chunk, 4, claim)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := DecodedSize(bad)
		err2 := Decompress(make([]byte, 8192), bad)
		runtime.ReadMemStats(&after)
		if err == nil && claim > MaxBufferSize {
			t.Errorf("DecodedSize accepted a claim of %d bytes", claim)
		}
		if !errors.Is(err2, ErrCorrupt) {
			t.Errorf("Decompress with a claim of %d bytes: %v", claim, err2)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("claim of %d bytes allocated %d bytes", claim, d)
		}
	}
}

// TestMemcpyedIgnoresShuffle decodes a memcpyed chunk whose shuffle bits
// are set (as c-blosc writes them): the payload is the data as it is.
func TestMemcpyedIgnoresShuffle(t *testing.T) {
	src := testData(3, 1000, 7)
	chunk, err := Compress(src, Options{Compressor: LZ4, Level: 0, Shuffle: ByteShuffle, TypeSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if chunk[2]&(flagMemcpyed|flagShuffle) != flagMemcpyed|flagShuffle {
		t.Fatalf("flags %#x: want memcpyed and shuffle", chunk[2])
	}
	got := make([]byte, len(src))
	if err := Decompress(got, chunk); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("memcpyed chunk: %v", err)
	}
}

func TestBloscLZCorrupt(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		n    int
	}{
		{"empty stream", nil, 1},
		{"literal overruns input", []byte{4, 'a'}, 5},
		{"literal overruns output", []byte{4, 'a', 'b', 'c', 'd', 'e'}, 3},
		{"match before any output", []byte{0, 'a', 1 << 5, 5, 0}, 10},
		{"trailing match", []byte{0, 'a', 1 << 5, 0}, 4},
		{"match overruns output", []byte{0, 'a', 6 << 5, 0, 0, 'b'}, 4},
		{"truncated long length", []byte{0, 'a', 7 << 5, 255}, 400},
		{"truncated far distance", []byte{0, 'a', 1<<5 | 31, 255, 0}, 10},
		{"short output", []byte{1, 'a', 'b'}, 3},
	}
	for _, tt := range tests {
		if err := bloscLZDecompress(make([]byte, tt.n), tt.src); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	// A run: one literal, then a match at distance 1, then a literal.
	got := make([]byte, 6)
	if err := bloscLZDecompress(got, []byte{0, 'x', 2 << 5, 0, 0, 'y'}); err != nil || string(got) != "xxxxxy" {
		t.Errorf("run: %q, %v", got, err)
	}
}

// TestTruncatedChunks cuts chunks of every inner codec at every length,
// with the header's cbytes left alone and patched to the new length: every
// one must fail with ErrCorrupt.
func TestTruncatedChunks(t *testing.T) {
	for i, c := range []Compressor{BloscLZ, LZ4, LZ4HC, Snappy, Zlib, Zstd} {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			src := testData(i, 3000, uint64(sh))
			chunk, err := Compress(src, Options{Compressor: c, Level: 5, Shuffle: sh, TypeSize: 4, BlockSize: 1000})
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, len(src))
			for n := range len(chunk) {
				if err := Decompress(dst, chunk[:n]); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%v %v cut to %d of %d bytes: %v", c, sh, n, len(chunk), err)
				}
				if n >= HeaderSize {
					if err := Decompress(dst, put32(chunk[:n], 12, uint32(n))); !errors.Is(err, ErrCorrupt) {
						t.Errorf("%v %v cut to %d of %d bytes, cbytes patched: %v", c, sh, n, len(chunk), err)
					}
				}
			}
		}
	}
}
