package codec

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// compressorConfigs are the bytes→bytes compressors of part A with the
// levels a test tries.
var compressorConfigs = []string{
	`{"id":"gzip","level":1}`, `{"id":"gzip","level":-1}`, `{"id":"gzip","level":0}`, `{"id":"gzip","level":9}`,
	`{"id":"zlib","level":1}`, `{"id":"zlib","level":-1}`, `{"id":"zlib","level":0}`, `{"id":"zlib","level":9}`,
	`{"id":"zstd","level":0}`, `{"id":"zstd","level":-5}`, `{"id":"zstd","level":1}`, `{"id":"zstd","level":22}`,
	`{"id":"zstd","level":3,"checksum":true}`,
	`{"id":"crc32c"}`,
	`{"id":"lz4","acceleration":1}`, `{"id":"lz4"}`,
	`{"id":"bz2","level":1}`, `{"id":"bz2","level":9}`,
	`{"id":"crc32"}`, `{"id":"adler32"}`, `{"id":"fletcher32"}`,
	`{"id":"crc32","location":"end"}`, `{"id":"crc32c","location":"start"}`,
	`{"id":"lzma"}`, `{"id":"lzma","format":1,"check":-1,"preset":1,"filters":null}`,
	`{"id":"lzma","format":1,"check":0}`, `{"id":"lzma","format":1,"check":1}`, `{"id":"lzma","format":1,"check":10}`,
	`{"id":"lzma","format":2,"check":-1}`,
	`{"id":"lzma","format":3,"check":-1,"filters":[{"id":33,"preset":1}]}`,
	`{"id":"lzma","format":3,"filters":[{"id":4611686018427387905,"preset":6,"lc":2,"lp":1,"pb":1}]}`,
	`{"id":"lzma","format":1,"filters":[{"id":3,"dist":4},{"id":33,"preset":1}]}`,
	`{"id":"lzma","format":3,"filters":[{"id":4},{"id":33,"preset":1}]}`,
}

// unchecked tells the configurations whose data carries no checksum, so
// that a changed byte can decode to other data without an error.
func unchecked(cfg string) bool {
	return strings.Contains(cfg, "lz4") || strings.Contains(cfg, `"format":2`) ||
		strings.Contains(cfg, `"format":3`) || strings.Contains(cfg, `"check":0`)
}

// notInNumcodecs tells the configurations numcodecs 0.11 cannot run
// (among them xz with filters, which it passes on to the decoder, where
// Python refuses them; TestLZMAFiltersPeer runs those).
func notInNumcodecs(cfg string) bool {
	return strings.Contains(cfg, "crc32c") || cfg == `{"id":"fletcher32"}` ||
		strings.Contains(cfg, "checksum") || strings.Contains(cfg, "location") ||
		strings.Contains(cfg, `"format":1,"filters":[{"id":3`)
}

func TestCompressorsRoundTrip(t *testing.T) {
	for _, cfg := range compressorConfigs {
		for _, n := range []int{0, 1, 100, 70000} {
			t.Run(fmt.Sprintf("%s/%d", cfg, n), func(t *testing.T) {
				c := mustNew(t, cfg).(BytesToBytes)
				in := testData(n, uint64(n))
				enc, err := c.Encode(in)
				if err != nil {
					t.Fatal(err)
				}
				if want := c.EncodedSize(n); want >= 0 && len(enc) != want {
					t.Errorf("EncodedSize(%d) = %d, Encode gave %d bytes", n, want, len(enc))
				}
				for _, size := range []int{n, -1} {
					dec, err := c.Decode(enc, size)
					if err != nil {
						t.Fatalf("Decode(size %d): %v", size, err)
					}
					equalBytes(t, fmt.Sprintf("decode size %d", size), dec, in)
				}
			})
		}
	}
}

func TestCompressorsCorrupt(t *testing.T) {
	const n = 5000
	in := testData(n, 7)
	for _, cfg := range compressorConfigs {
		c := mustNew(t, cfg).(BytesToBytes)
		enc, err := c.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		flipped := bytes.Clone(enc)
		flipped[len(flipped)/2] ^= 0x55
		cases := []struct {
			name string
			data []byte
			size int
		}{
			{"truncated by 1", enc[:len(enc)-1], n},
			{"truncated by half", enc[:len(enc)/2], n},
			{"empty", nil, n},
			{"garbage", testData(len(enc), 99), n},
			{"flipped byte", flipped, n},
			{"one byte too long", enc, n - 1},
			{"one byte too short", enc, n + 1},
		}
		for _, tc := range cases {
			t.Run(cfg+"/"+tc.name, func(t *testing.T) {
				out, err := c.Decode(tc.data, tc.size)
				if tc.name == "flipped byte" && err == nil && (bytes.Equal(out, in) || unchecked(cfg)) {
					// A flip in a stored block's padding can be harmless,
					// and without a checksum a changed literal goes unnoticed.
					return
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("Decode = %d bytes, %v; want ErrCorrupt", len(out), err)
				}
			})
		}
	}
}

// bomb returns a stream that decompresses to 1 GiB of zeros. It is built
// from one compressed MiB repeated, so it costs little to make.
func bomb(t *testing.T, id string) []byte {
	t.Helper()
	zeros := make([]byte, 1<<20)
	var unit bytes.Buffer
	var out []byte
	switch id {
	case "gzip":
		// Non-final deflate blocks end byte-aligned after a flush, so a
		// block can be repeated; then a final empty block and the trailer.
		w, _ := flate.NewWriter(&unit, flate.BestCompression)
		w.Write(zeros)
		w.Flush()
		out = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
		var sum uint32
		for i := 0; i < 1024; i++ {
			out = append(out, unit.Bytes()...)
			sum = crc32.Update(sum, crc32.IEEETable, zeros)
		}
		out = append(out, 3, 0)
		out = binary.LittleEndian.AppendUint32(out, sum)
		out = binary.LittleEndian.AppendUint32(out, 0) // 1 GiB mod 2^32
	case "zstd":
		// Frames without a content size, concatenated.
		w, _ := zstd.NewWriter(&unit, zstd.WithEncoderConcurrency(1))
		w.Write(zeros)
		w.Close()
		out = bytes.Repeat(unit.Bytes(), 1024)
	}
	return out
}

func TestDecompressionBomb(t *testing.T) {
	gz := bomb(t, "gzip")
	zs := bomb(t, "zstd")
	// The same zeros with a frame header that declares 1 GiB.
	declared, err := (Zstd{}).Encode(make([]byte, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(declared); err != nil || !h.HasFCS {
		t.Fatalf("zstd encoder wrote no content size: %v", err)
	}
	cases := []struct {
		name  string
		codec BytesToBytes
		data  []byte
	}{
		{"gzip 1 GiB", Gzip{}, gz},
		{"zstd 1 GiB in frames without size", Zstd{}, zs},
		{"zstd declares 1 MiB", Zstd{}, declared},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := tc.codec.Decode(tc.data, 1000)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("Decode = %v, want ErrCorrupt", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("Decode allocated %d bytes", alloc)
			}
			if elapsed > 2*time.Second {
				t.Errorf("Decode took %v", elapsed)
			}
		})
	}
}

// TestCompressorsPeer has numcodecs encode random data that zarrfs decodes,
// and decode what zarrfs encodes.
func TestCompressorsPeer(t *testing.T) {
	var cases []peerCase
	for i, cfg := range compressorConfigs {
		if notInNumcodecs(cfg) {
			continue
		}
		for _, n := range []int{1, 1000, 20000} {
			raw := testData(n, uint64(i*1000+n))
			enc, err := mustNew(t, cfg).(BytesToBytes).Encode(raw)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, peerCase{Config: cfg, Raw: raw, Ours: enc})
		}
	}
	runNumcodecs(t, cases)
	for _, c := range cases {
		equalBytes(t, c.Config+": numcodecs decodes zarrfs", c.TheirsDecoded, c.Raw)
		got, err := mustNew(t, c.Config).(BytesToBytes).Decode(c.Theirs, len(c.Raw))
		if err != nil {
			t.Errorf("%s: decode numcodecs' %d bytes: %v", c.Config, len(c.Theirs), err)
			continue
		}
		equalBytes(t, c.Config+": zarrfs decodes numcodecs", got, c.Raw)
	}
}

// TestCompressorFixtures decodes the numcodecs fixtures byte for byte.
func TestCompressorFixtures(t *testing.T) {
	for _, dir := range []string{"gzip", "zlib", "zstd", "crc32c", "lz4", "bz2", "crc32", "adler32", "lzma"} {
		for _, f := range fixtures(t, dir) {
			arr := readNpy(t, f.Array)
			c := mustNew(t, f.Config).(BytesToBytes)
			got, err := c.Decode(f.Encoded, len(arr.Data))
			if err != nil {
				t.Errorf("%s: %v", f.Name, err)
				continue
			}
			equalBytes(t, f.Name, got, arr.Data)
		}
	}
}

func FuzzGzipDecode(f *testing.F)       { fuzzBytesToBytes(f, Gzip{Level: 1}) }
func FuzzZlibDecode(f *testing.F)       { fuzzBytesToBytes(f, Zlib{Level: 1}) }
func FuzzZstdDecode(f *testing.F)       { fuzzBytesToBytes(f, Zstd{Checksum: true}) }
func FuzzCRC32CDecode(f *testing.F)     { fuzzBytesToBytes(f, newChecksum32("crc32c")) }
func FuzzLZ4Decode(f *testing.F)        { fuzzBytesToBytes(f, LZ4{}) }
func FuzzBZ2Decode(f *testing.F)        { fuzzBytesToBytes(f, BZ2{Level: 1}) }
func FuzzCRC32Decode(f *testing.F)      { fuzzBytesToBytes(f, newChecksum32("crc32")) }
func FuzzAdler32Decode(f *testing.F)    { fuzzBytesToBytes(f, newChecksum32("adler32")) }
func FuzzFletcher32Decode(f *testing.F) { fuzzBytesToBytes(f, Fletcher32{}) }
func FuzzLZMADecode(f *testing.F)       { fuzzBytesToBytes(f, mustNew(f, `{"id":"lzma"}`).(BytesToBytes)) }
func FuzzLZMAChainDecode(f *testing.F) {
	fuzzBytesToBytes(f, mustNew(f, `{"id":"lzma","format":1,"check":1,"filters":[{"id":4},{"id":3,"dist":4},{"id":33}]}`).(BytesToBytes))
}
func FuzzLZMAAloneDecode(f *testing.F) {
	fuzzBytesToBytes(f, mustNew(f, `{"id":"lzma","format":2}`).(BytesToBytes))
}
func FuzzLZMARawDecode(f *testing.F) {
	fuzzBytesToBytes(f, mustNew(f, `{"id":"lzma","format":3,"filters":[{"id":33}]}`).(BytesToBytes))
}

// fuzzBytesToBytes checks that c's decoder never panics, returns exactly
// the size asked for or an error, and round-trips what it decodes.
func fuzzBytesToBytes(f *testing.F, c BytesToBytes) {
	for _, n := range []int{0, 10, 300} {
		enc, err := c.Encode(testData(n, 1))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc, n)
	}
	for _, b := range hostileSeeds(f, "") {
		f.Add(b, 8192)
	}
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size > 1<<20 {
			size = 1 << 20
		}
		if size < -1 {
			size = -1
		}
		out, err := c.Decode(data, size)
		if err != nil {
			return
		}
		if size >= 0 && len(out) != size {
			t.Fatalf("Decode gave %d bytes, want %d", len(out), size)
		}
		enc, err := c.Encode(out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decode(enc, len(out))
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("round trip of decoded data failed: %v", err)
		}
	})
}

// TestZstdHugeFrameUnknownSize: with no expected size, a frame that
// declares more than UnknownSizeCap fails before anything is allocated.
func TestZstdHugeFrameUnknownSize(t *testing.T) {
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; single segment, 8-byte content size
	frame = binary.LittleEndian.AppendUint64(frame, 1<<40)
	frame = append(frame, 1, 0, 0) // a last raw block of 0 bytes
	var err error
	n := allocs(func() { _, err = (Zstd{}).Decode(frame, -1) })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode = %v, want ErrCorrupt", err)
	}
	if n > 8<<20 {
		t.Errorf("Decode allocated %d bytes", n)
	}
}

// TestBombIsValid checks that the bombs really inflate (the first 3 MiB
// is enough), so that TestDecompressionBomb tests the size limit.
func TestBombIsValid(t *testing.T) {
	gr, err := gzip.NewReader(bytes.NewReader(bomb(t, "gzip")))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zstd.NewReader(bytes.NewReader(bomb(t, "zstd")))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for name, r := range map[string]io.Reader{"gzip": gr, "zstd": zr} {
		buf := make([]byte, 3<<20)
		if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, make([]byte, len(buf))) {
			t.Errorf("%s bomb does not inflate to zeros: %v", name, err)
		}
	}
}

// TestConcurrent decodes and encodes from many goroutines: codecs are
// shared values with pooled (de)compressors (run with -race).
func TestConcurrent(t *testing.T) {
	in := testData(20000, 11)
	var wg sync.WaitGroup
	for _, cfg := range []string{`{"id":"gzip"}`, `{"id":"zlib"}`, `{"id":"zstd"}`, `{"id":"lz4"}`} {
		c := mustNew(t, cfg).(BytesToBytes)
		enc, err := c.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					out, err := c.Decode(enc, len(in))
					if err != nil || !bytes.Equal(out, in) {
						t.Errorf("%s: concurrent decode: %v", cfg, err)
						return
					}
					if _, err := c.Encode(in); err != nil {
						t.Errorf("%s: concurrent encode: %v", cfg, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}
