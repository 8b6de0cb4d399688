package blosc

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// naiveShuffle and naiveBitshuffle state the layouts bit by bit.
func naiveShuffle(src []byte, ts int) []byte {
	n := len(src) / ts
	dst := bytes.Clone(src)
	for i := range n {
		for j := range ts {
			dst[j*n+i] = src[i*ts+j]
		}
	}
	return dst
}

func naiveBitshuffle(src []byte, ts int) []byte {
	n := len(src) / ts
	dst := bytes.Clone(src)
	if n%8 != 0 {
		return dst
	}
	clear(dst[:n*ts])
	for e := range n {
		for j := range ts {
			for b := range 8 {
				bit := src[e*ts+j] >> b & 1
				row := 8*j + b
				dst[row*(n/8)+e/8] |= bit << (e % 8)
			}
		}
	}
	return dst
}

func TestShuffleLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, ts := range []int{1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 255} {
		for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 1000, 4096 + 3} {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			got := make([]byte, n)
			shuffle(got, src, ts)
			if want := naiveShuffle(src, ts); !bytes.Equal(got, want) {
				t.Errorf("shuffle ts=%d n=%d differs from the definition", ts, n)
			}
			back := make([]byte, n)
			unshuffle(back, got, ts)
			if !bytes.Equal(back, src) {
				t.Errorf("unshuffle ts=%d n=%d does not invert shuffle", ts, n)
			}
			bitshuffle(got, src, ts)
			if want := naiveBitshuffle(src, ts); !bytes.Equal(got, want) {
				t.Errorf("bitshuffle ts=%d n=%d differs from the definition", ts, n)
			}
			bitunshuffle(back, got, ts)
			if !bytes.Equal(back, src) {
				t.Errorf("bitunshuffle ts=%d n=%d does not invert bitshuffle", ts, n)
			}
		}
	}
}

func TestComputeBlockSize(t *testing.T) {
	// Values c-blosc 1.21 chooses (the peer test compares many more).
	tests := []struct {
		c                          Compressor
		clevel, ts, nbytes, forced int
		want                       int
	}{
		{LZ4, 5, 4, 4 << 20, 0, 512 << 10},
		{LZ4, 5, 4, 100, 0, 100},
		{LZ4, 5, 4, 3, 0, 1},
		{Zstd, 5, 4, 4 << 20, 0, 256 << 10},
		{Zstd, 9, 8, 4 << 20, 0, 1 << 20},
		{BloscLZ, 1, 1, 4 << 20, 0, 64 << 10},
		{LZ4, 0, 4, 4 << 20, 0, 8 << 10},
		{LZ4, 5, 4, 70000, 256, 256},
		{LZ4, 5, 17, 70000, 0, 69989},
		{Zlib, 9, 2, 4 << 20, 0, 512 << 10},
	}
	for _, tt := range tests {
		if got := computeBlockSize(tt.c, tt.clevel, tt.ts, tt.nbytes, tt.forced); got != tt.want {
			t.Errorf("computeBlockSize(%v, clevel %d, ts %d, %d, forced %d) = %d, want %d",
				tt.c, tt.clevel, tt.ts, tt.nbytes, tt.forced, got, tt.want)
		}
	}
}

// TestUnshuffleSIMD compares the vector kernels (where the architecture has
// them) with the portable code on random streams of every length up to a
// few vectors and some long ones, for every typesize, tails included.
func TestUnshuffleSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lengths := []int{1 << 16, 1<<16 + 13, 262144, 262144 - 5}
	for n := range 600 {
		lengths = append(lengths, n)
	}
	for _, ts := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16} {
		for _, n := range lengths {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			got, want := make([]byte, n), make([]byte, n)
			unshuffle(got, src, ts)
			unshuffleFrom(want, src, ts, 0)
			if !bytes.Equal(got, want) {
				t.Fatalf("unshuffle ts=%d n=%d differs from the portable code", ts, n)
			}
		}
	}
}

func FuzzUnshuffle(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!"), uint8(4))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 100), uint8(8))
	f.Fuzz(func(t *testing.T, src []byte, ts uint8) {
		if ts == 0 {
			return
		}
		got, want := make([]byte, len(src)), make([]byte, len(src))
		unshuffle(got, src, int(ts))
		unshuffleFrom(want, src, int(ts), 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("unshuffle ts=%d n=%d differs from the portable code", ts, len(src))
		}
		back := make([]byte, len(src))
		shuffle(back, got, int(ts))
		if !bytes.Equal(back, src) {
			t.Fatalf("shuffle does not invert unshuffle ts=%d n=%d", ts, len(src))
		}
	})
}

func BenchmarkUnshuffle(b *testing.B) {
	for _, ts := range []int{2, 4, 8} {
		src := make([]byte, 256<<10)
		for i := range src {
			src[i] = byte(i * 7)
		}
		dst := make([]byte, len(src))
		b.Run("simd/"+strconv.Itoa(ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				unshuffle(dst, src, ts)
			}
		})
		b.Run("go/"+strconv.Itoa(ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				unshuffleFrom(dst, src, ts, 0)
			}
		})
	}
}

// TestBitunshuffleSIMD compares bitunshuffle (vector kernels where the
// architecture has them) with the definition on random data of many
// lengths and typesizes, the plane buffer given or not.
func TestBitunshuffleSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	lengths := []int{1 << 16, 1<<16 + 8*13, 262144, 262144 - 40}
	for n := 0; n < 2000; n += 8 {
		lengths = append(lengths, n)
	}
	for _, ts := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, n := range lengths {
			n = n*ts + r.IntN(ts) // whole elements and a tail
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			want := naiveBitshuffle(src, ts) // shuffled: unshuffle it back
			got := make([]byte, n)
			bitunshuffleBuf(got, bytes.Clone(want), nil, ts)
			if !bytes.Equal(got, src) {
				t.Fatalf("bitunshuffle ts=%d n=%d does not invert the definition", ts, n)
			}
			clear(got)
			bitunshuffleBuf(got, bytes.Clone(want), make([]byte, n), ts)
			if !bytes.Equal(got, src) {
				t.Fatalf("bitunshuffle ts=%d n=%d with a buffer does not invert the definition", ts, n)
			}
		}
	}
}

func FuzzBitunshuffle(f *testing.F) {
	f.Add(bytes.Repeat([]byte("0123456789abcdef"), 20), uint8(4))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 300), uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, ts uint8) {
		if ts == 0 {
			return
		}
		shuffled := naiveBitshuffle(src, int(ts))
		got := make([]byte, len(src))
		bitunshuffle(got, shuffled, int(ts))
		if !bytes.Equal(got, src) {
			t.Fatalf("bitunshuffle ts=%d n=%d does not invert the definition", ts, len(src))
		}
	})
}

func BenchmarkBitunshuffle(b *testing.B) {
	for _, ts := range []int{1, 4, 8} {
		src := make([]byte, 256<<10)
		for i := range src {
			src[i] = byte(i * 7)
		}
		dst, buf := make([]byte, len(src)), make([]byte, len(src))
		b.Run(strconv.Itoa(ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				bitunshuffleBuf(dst, src, buf, ts)
			}
		})
	}
}
