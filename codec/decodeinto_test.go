package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestDecodeInto: a pipeline decodes into a caller's buffer exactly what
// Decode returns, and fails where Decode fails, for every chain that can.
func TestDecodeInto(t *testing.T) {
	spec := ArraySpec{Shape: []int{64, 1000}, DataType: DataType{Name: "float32", Size: 4}, FillValue: make([]byte, 4)}
	data := testData(spec.ByteSize(), 7)
	le, be := BytesCodec{}, BytesCodec{Big: true}
	chains := []struct {
		name   string
		codecs []Codec
		into   bool
	}{
		{"bytes", []Codec{le}, false},
		{"bytes-big", []Codec{be}, true},
		{"zstd", []Codec{le, mustNew(t, `{"id":"zstd","level":1}`)}, true},
		{"zstd-checksum", []Codec{le, mustNew(t, `{"id":"zstd","level":3,"checksum":true}`)}, true},
		{"lz4", []Codec{le, mustNew(t, `{"id":"lz4"}`)}, true},
		{"blosc-lz4-shuffle", []Codec{le, mustNew(t, `{"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,"typesize":4}`)}, true},
		{"blosc-zstd-bitshuffle", []Codec{le, mustNew(t, `{"id":"blosc","cname":"zstd","clevel":3,"shuffle":2,"typesize":4}`)}, true},
		{"blosc-blosclz-small-blocks", []Codec{le, mustNew(t, `{"id":"blosc","cname":"blosclz","clevel":9,"shuffle":1,"typesize":4,"blocksize":4096}`)}, true},
		{"zstd-crc32c", []Codec{le, mustNew(t, `{"id":"zstd","level":1}`), mustNew(t, `{"id":"crc32c"}`)}, true},
		{"big-zstd", []Codec{be, mustNew(t, `{"id":"zstd","level":1}`)}, true},
		{"gzip", []Codec{le, mustNew(t, `{"id":"gzip","level":1}`)}, true},
		{"zlib", []Codec{le, mustNew(t, `{"id":"zlib","level":1}`)}, true},
		{"bz2", []Codec{le, mustNew(t, `{"id":"bz2","level":1}`)}, false},
		{"transpose-zstd", []Codec{Transpose{Order: []int{1, 0}}, le, mustNew(t, `{"id":"zstd","level":1}`)}, false},
		// Inner chunks of whole rows decode in place, the others are copied.
		{"sharding-rows", []Codec{mustShard(t, []int{16, 1000}, le, mustNew(t, `{"id":"zstd","level":1}`))}, true},
		{"sharding-tiles", []Codec{mustShard(t, []int{16, 250}, le, mustNew(t, `{"id":"zstd","level":1}`))}, true},
		{"sharding-bytes", []Codec{mustShard(t, []int{8, 1000}, le)}, true},
	}
	for _, c := range chains {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPipeline(c.codecs, spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.CanDecodeInto(); got != c.into {
				t.Fatalf("CanDecodeInto %v, want %v", got, c.into)
			}
			enc, err := p.Encode(data)
			if err != nil {
				t.Fatal(err)
			}
			if !c.into {
				if err := p.DecodeInto(make([]byte, len(data)), enc); err == nil {
					t.Error("DecodeInto of a chain that cannot: no error")
				}
				return
			}
			dst := bytes.Repeat([]byte{0xee}, len(data)+100)
			if err := p.DecodeInto(dst[:len(data)], enc); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst[:len(data)], data) {
				t.Error("DecodeInto decoded other bytes than were encoded")
			}
			if !bytes.Equal(dst[len(data):], bytes.Repeat([]byte{0xee}, 100)) {
				t.Error("DecodeInto wrote past the buffer's length")
			}
			if err := p.DecodeInto(make([]byte, len(data)-4), enc); err == nil {
				t.Error("DecodeInto into a buffer of the wrong size: no error")
			}
			// Every truncation and a few corruptions fail alike both ways
			// (or, rarely, decode alike).
			cases := [][]byte{nil, enc[:1], enc[:len(enc)/2], enc[:len(enc)-1]}
			for _, i := range []int{0, 3, 4, 8, 16, len(enc) / 3} {
				if i < len(enc) {
					bad := bytes.Clone(enc)
					bad[i] ^= 0x5a
					cases = append(cases, bad)
				}
			}
			for i, in := range cases {
				want, werr := p.Decode(bytes.Clone(in))
				got := make([]byte, len(data))
				gerr := p.DecodeInto(got, bytes.Clone(in))
				switch {
				case werr != nil && gerr == nil:
					t.Errorf("case %d: Decode fails (%v), DecodeInto does not", i, werr)
				case werr == nil && gerr != nil:
					t.Errorf("case %d: DecodeInto fails (%v), Decode does not", i, gerr)
				case werr == nil && !bytes.Equal(got, want):
					t.Errorf("case %d: DecodeInto and Decode differ", i)
				case gerr != nil && !errors.Is(gerr, ErrCorrupt) && !errors.Is(gerr, ErrUnsupported):
					t.Errorf("case %d: %v, want ErrCorrupt", i, gerr)
				}
			}
		})
	}
}

// mustShard returns a sharding codec of inner chunks of chunkShape, the
// inner codecs given, and an index checked by CRC-32C at the end.
func mustShard(t *testing.T, chunkShape []int, inner ...Codec) *Sharding {
	t.Helper()
	s, err := NewSharding(chunkShape, inner, []Codec{BytesCodec{}, mustNew(t, `{"id":"crc32c"}`)}, IndexAtEnd)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDecodeIntoHostileSizes: headers that claim another size than the
// buffer fail as corrupt before decoding anything.
func TestDecodeIntoHostileSizes(t *testing.T) {
	spec := ArraySpec{Shape: []int{1 << 20}, DataType: DataType{Name: "uint8", Size: 1}, FillValue: []byte{0}}
	data := testData(1<<20, 3)
	for _, cfg := range []string{`{"id":"zstd","level":1}`, `{"id":"lz4"}`, `{"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,"typesize":1}`, `{"id":"gzip","level":1}`, `{"id":"zlib","level":1}`} {
		c := mustNew(t, cfg).(BytesToBytes)
		big, err := c.Encode(append(bytes.Clone(data), data...)) // twice the size
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPipeline([]Codec{BytesCodec{}, c}, spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.DecodeInto(make([]byte, len(data)), big); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: chunk of twice the size: %v, want ErrCorrupt", cfg, err)
		}
	}
	// An LZ4 header claiming 4 GiB.
	lz := make([]byte, 8)
	binary.LittleEndian.PutUint32(lz, 0xffffffff)
	if err := (LZ4{}).DecodeInto(make([]byte, 16), lz); !errors.Is(err, ErrCorrupt) {
		t.Errorf("lz4 claiming 4 GiB: %v", err)
	}
}

// TestDecodeIntoAllocs: decoding a 4 MiB chunk into a buffer allocates
// little (Decode allocates the chunk; Blosc takes scratch space for the
// blocks its goroutines decode, some 256 KiB a decode).
func TestDecodeIntoAllocs(t *testing.T) {
	if peertest.RaceBuild {
		// Under -race, sync.Pool drops a share of what is put back, so
		// Blosc's block scratch is allocated again: not the product's
		// figures.
		t.Skip("allocation counts under the race detector are not the product's")
	}
	spec := ArraySpec{Shape: []int{1 << 20}, DataType: DataType{Name: "float32", Size: 4}, FillValue: make([]byte, 4)}
	data := testData(spec.ByteSize(), 5)
	for _, cfg := range []string{`{"id":"zstd","level":1}`, `{"id":"lz4"}`, `{"id":"blosc","cname":"lz4","clevel":5,"shuffle":1,"typesize":4}`} {
		p, err := NewPipeline([]Codec{BytesCodec{}, mustNew(t, cfg)}, spec)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := p.Encode(data)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(data))
		if err := p.DecodeInto(dst, enc); err != nil { // warm the decoders' pools
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 4 {
			if err := p.DecodeInto(dst, enc); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 2<<20 {
			t.Errorf("%s: 4 decodes of 4 MiB into a buffer allocated %d bytes", cfg, d)
		}
	}
}

// intoArrayCodec is the bytes codec as an ArrayDecoderInto, as sharding
// would be.
type intoArrayCodec struct{ BytesCodec }

func (intoArrayCodec) DecodeInto(dst, data []byte, decoded ArraySpec) error {
	if err := checkSize("test", len(data), len(dst)); err != nil {
		return err
	}
	copy(dst, data)
	return nil
}

func TestArrayDecoderInto(t *testing.T) {
	spec := ArraySpec{Shape: []int{1000}, DataType: DataType{Name: "uint16", Size: 2}, FillValue: []byte{0, 0}}
	data := testData(spec.ByteSize(), 9)
	p, err := NewPipeline([]Codec{intoArrayCodec{}, mustNew(t, `{"id":"crc32c"}`)}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CanDecodeInto() {
		t.Fatal("an ArrayDecoderInto cannot decode into a buffer")
	}
	enc, err := p.Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(data))
	if err := p.DecodeInto(dst, enc); err != nil || !bytes.Equal(dst, data) {
		t.Fatalf("DecodeInto: %v, equal %v", err, bytes.Equal(dst, data))
	}
	enc[0] ^= 1
	if err := p.DecodeInto(dst, enc); !errors.Is(err, ErrCorrupt) {
		t.Errorf("checksum mismatch: %v", err)
	}
}
