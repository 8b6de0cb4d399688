package codec

import "testing"

// Benchmarks of the decoders on a 4 MiB chunk.

func benchBytesToBytes(b *testing.B, c BytesToBytes) {
	in := testData(4<<20, 1)
	enc, err := c.Encode(in)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Decode(enc, len(in)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGzipDecode(b *testing.B) { benchBytesToBytes(b, Gzip{Level: 5}) }
func BenchmarkZstdDecode(b *testing.B) { benchBytesToBytes(b, Zstd{}) }
func BenchmarkLZ4Decode(b *testing.B)  { benchBytesToBytes(b, LZ4{}) }
func BenchmarkDeltaDecode(b *testing.B) {
	benchBytesToBytes(b, Delta{DType: NumpyType{Kind: 'i', Size: 4}, AsType: NumpyType{Kind: 'i', Size: 4}})
}
func BenchmarkShuffleDecode(b *testing.B) { benchBytesToBytes(b, Shuffle{ElementSize: 4}) }

func BenchmarkTransposeDecode(b *testing.B) {
	spec := ArraySpec{Shape: []int{1024, 1024}, DataType: DataType{"float32", 4}}
	in := testData(spec.ByteSize(), 1)
	c := Transpose{Order: []int{1, 0}}
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if _, err := c.Decode(in, spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBytesBigDecode(b *testing.B) {
	spec := ArraySpec{Shape: []int{1 << 20}, DataType: DataType{"float32", 4}}
	in := testData(spec.ByteSize(), 1)
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if _, err := (BytesCodec{Big: true}).Decode(in, spec); err != nil {
			b.Fatal(err)
		}
	}
}
