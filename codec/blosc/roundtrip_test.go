package blosc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// testData returns n bytes of one of several kinds of data: smooth float32
// series, small integers, text, random bytes and zeros.
func testData(kind, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(kind)))
	b := make([]byte, n)
	switch kind % 5 {
	case 0:
		for i := 0; i+4 <= n; i += 4 {
			v := math.Float32bits(float32(math.Sin(float64(i)/400)) * 100)
			b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	case 1:
		for i := range b {
			if i%8 == 0 {
				b[i] = byte(r.IntN(4))
			}
		}
	case 2:
		const text = "the quick brown fox jumps over the lazy dog; zarr chunks compress "
		for i := range b {
			b[i] = text[(i*7+i/100)%len(text)]
		}
	case 3:
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []Compressor{BloscLZ, LZ4, LZ4HC, Snappy, Zlib, Zstd} {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			for _, ts := range []int{1, 2, 3, 4, 8, 12, 16, 17, 250, 300} {
				for i, n := range []int{0, 1, 7, 127, 128, 1000, 4099, 70001} {
					src := testData(i, n, uint64(ts))
					o := Options{Compressor: c, Level: 1 + (i*4)%9, Shuffle: sh, TypeSize: ts}
					chunk, err := Compress(src, o)
					if err != nil {
						t.Fatalf("%+v n=%d: %v", o, n, err)
					}
					got := make([]byte, n)
					if err := Decompress(got, chunk); err != nil {
						t.Fatalf("%+v n=%d: %v", o, n, err)
					}
					if !bytes.Equal(got, src) {
						t.Fatalf("%+v n=%d: round trip differs", o, n)
					}
					if n > 10 {
						part := make([]byte, n/3)
						if err := DecompressRange(part, chunk, n/2); err != nil {
							t.Fatalf("%+v n=%d range: %v", o, n, err)
						}
						if !bytes.Equal(part, src[n/2:n/2+n/3]) {
							t.Fatalf("%+v n=%d: range differs", o, n)
						}
					}
				}
			}
		}
	}
}

func TestDecompressWrongSize(t *testing.T) {
	chunk, err := Compress(testData(0, 1000, 1), Options{Compressor: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 999, 1001} {
		if err := Decompress(make([]byte, n), chunk); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decompress into %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

// TestParallelDecode decodes a chunk above ParallelThreshold whole and in
// ranges, and with one damaged block, on several goroutines.
func TestParallelDecode(t *testing.T) {
	src := testData(0, 3<<20+123, 9)
	chunk, err := Compress(src, Options{Compressor: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 4, BlockSize: 1 << 14})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(chunk)
	if err != nil || h.NumBlocks() < 8 {
		t.Fatalf("want a chunk of many blocks: %+v, %v", h, err)
	}
	got := make([]byte, len(src))
	if err := Decompress(got, chunk); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("whole decode: %v", err)
	}
	for _, r := range [][2]int{{0, 1 << 20}, {12345, 2 << 20}, {len(src) - (1 << 20) - 1, 1<<20 + 1}} {
		part := make([]byte, r[1])
		if err := DecompressRange(part, chunk, r[0]); err != nil || !bytes.Equal(part, src[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: %v", r, err)
		}
	}
	// Damage the size of the first stream of a middle block.
	j := h.NumBlocks() / 2
	start := binary.LittleEndian.Uint32(chunk[HeaderSize+4*j:])
	bad := bytes.Clone(chunk)
	binary.LittleEndian.PutUint32(bad[start:], 1<<30)
	if err := Decompress(got, bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged block %d: %v, want ErrCorrupt", j, err)
	}
}

// TestStreamsStayInBounds checks that decoding a stream writes nothing past
// it, even where the buffer has spare capacity: that capacity holds other
// streams and blocks, decoded on other goroutines and in any order.
func TestStreamsStayInBounds(t *testing.T) {
	src := testData(2, 1<<17, 5)
	for _, c := range []Compressor{BloscLZ, LZ4, LZ4HC, Snappy, Zlib, Zstd} {
		e := blockEncoder{o: Options{Compressor: c, Level: 5}}
		e.alloc(len(src))
		stream := bytes.Clone(e.stream(src, 2*len(src)))
		if len(stream) == 0 {
			t.Fatalf("%v: no stream", c)
		}
		buf := bytes.Repeat([]byte{0xAA}, len(src)+1<<16)
		dec := c
		if c == LZ4HC {
			dec = LZ4 // the same stream format
		}
		if err := decompressStream(dec, buf[:len(src)], stream); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if !bytes.Equal(buf[:len(src)], src) {
			t.Errorf("%v: stream decodes wrong", c)
		}
		if bytes.Count(buf[len(src):], []byte{0xAA}) != 1<<16 {
			t.Errorf("%v: decoding wrote past the stream", c)
		}
	}
}
