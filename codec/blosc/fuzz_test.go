package blosc

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzDecompress feeds arbitrary chunks to the decoder: it must never
// panic, never allocate what the header claims beyond a small bound, and a
// range decode must agree with the whole decode.
func FuzzDecompress(f *testing.F) {
	for i, c := range []Compressor{BloscLZ, LZ4, LZ4HC, Snappy, Zlib, Zstd} {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			src := testData(i, 700+int(sh)*300, uint64(i))
			chunk, err := Compress(src, Options{Compressor: c, Level: 5, Shuffle: sh, TypeSize: 2 + i, BlockSize: 128})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(chunk)
		}
	}
	for _, b := range hostileFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, chunk []byte) {
		fuzzChunk(t, chunk)
		// Most mutations change the length; fix cbytes so the fuzzer
		// gets past the header check.
		if len(chunk) >= HeaderSize {
			patched := bytes.Clone(chunk)
			binary.LittleEndian.PutUint32(patched[12:], uint32(len(chunk)))
			fuzzChunk(t, patched)
		}
	})
}

func fuzzChunk(t *testing.T, chunk []byte) {
	n, err := DecodedSize(chunk)
	if err != nil || n > 1<<20 {
		return
	}
	whole := make([]byte, n)
	wholeErr := Decompress(whole, chunk)
	if n < 3 {
		return
	}
	off, size := n/3, n/2
	part := make([]byte, size)
	if err := DecompressRange(part, chunk, off); err == nil && wholeErr == nil && !bytes.Equal(part, whole[off:off+size]) {
		t.Fatal("range decode differs from the whole decode")
	}
}

// FuzzBloscLZ checks that the BloscLZ compressor round-trips and that the
// decoder survives arbitrary streams.
func FuzzBloscLZ(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"), uint8(5))
	f.Add(testData(0, 5000, 1), uint8(9))
	f.Add(testData(3, 300, 2), uint8(1))
	table := make([]int32, 1<<12)
	f.Fuzz(func(t *testing.T, data []byte, level uint8) {
		out := make([]byte, len(data))
		_ = bloscLZDecompress(out, data)
		clevel := int(level%9) + 1
		c := bloscLZCompress(make([]byte, 0, len(data)), data, clevel, len(data), table)
		if c == nil {
			return
		}
		if len(c) > len(data) {
			t.Fatalf("compressed %d bytes into %d, above maxOut", len(data), len(c))
		}
		got := make([]byte, len(data))
		if err := bloscLZDecompress(got, c); err != nil {
			t.Fatalf("decoding own stream: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("round trip differs")
		}
	})
}

// FuzzCompress checks that Compress accepts any data with any valid
// options and that its chunks decode to the data.
func FuzzCompress(f *testing.F) {
	f.Add(testData(0, 1000, 1), uint8(1), uint8(5), uint8(1), uint16(4), uint16(0))
	f.Add(testData(2, 300, 1), uint8(0), uint8(9), uint8(2), uint16(250), uint16(128))
	f.Add([]byte{}, uint8(5), uint8(1), uint8(0), uint16(300), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, c, level, sh uint8, ts, bs uint16) {
		o := Options{Compressor: Compressor(c % 6), Level: int(level % 10), Shuffle: Shuffle(sh % 3),
			TypeSize: int(ts%300) + 1, BlockSize: int(bs)}
		chunk, err := Compress(data, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if len(chunk) > len(data)+HeaderSize {
			t.Fatalf("%+v: %d bytes became a chunk of %d", o, len(data), len(chunk))
		}
		got := make([]byte, len(data))
		if err := Decompress(got, chunk); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%+v: round trip differs", o)
		}
	})
}
