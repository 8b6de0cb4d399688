package codec

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Hostile chunks live in testdata/hostile, one file per case, all for a
// chunk of 64×64 int16 (8192 bytes) — or, for "vlen-" files, 64 strings.
// The part of the name before the first "-" names the codec chain
// (hostileChains); every case must fail with the error in hostileChunks.
// The cases too large to keep (bombs inflating to a gigabyte) are built at
// test time (hostileGenerated). ZARRFS_WRITE_HOSTILE=1 go test -run
// TestWriteHostileChunks ./codec rewrites the files.

var hostileSpec = ArraySpec{Shape: []int{64, 64}, DataType: DataType{"int16", 2}, FillValue: []byte{0, 0}}

var hostileVlenSpec = ArraySpec{Shape: []int{64}, DataType: DataType{"string", 0}}

const (
	hostileBytes  = `{"name": "bytes", "configuration": {"endian": "little"}}`
	hostileShard  = `{"name": "sharding_indexed", "configuration": {"chunk_shape": [32, 32], "codecs": [` + hostileBytes + `], "index_codecs": [` + hostileBytes + `, {"name": "crc32c"}], "index_location": "end"}}`
	hostileBlosc  = `{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}`
	hostileBloscZ = `{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}`
)

// hostileChains maps a name prefix to its v3 codec list.
var hostileChains = map[string]string{
	"raw":    `[` + hostileBytes + `]`,
	"gzip":   `[` + hostileBytes + `, {"name": "gzip", "configuration": {"level": 5}}]`,
	"zlib":   `[` + hostileBytes + `, {"name": "zlib", "configuration": {"level": 5}}]`,
	"zstd":   `[` + hostileBytes + `, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]`,
	"blosc":  `[` + hostileBytes + `, ` + hostileBlosc + `]`,
	"bloscz": `[` + hostileBytes + `, ` + hostileBloscZ + `]`,
	"lz4":    `[` + hostileBytes + `, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]`,
	"crc32c": `[` + hostileBytes + `, {"name": "crc32c"}]`,
	"bz2":    `[` + hostileBytes + `, {"name": "numcodecs.bz2", "configuration": {"level": 9}}]`,
	"lzma":   `[` + hostileBytes + `, {"name": "numcodecs.lzma", "configuration": {}}]`,
	"shard":  `[` + hostileShard + `]`,
	"vlen":   `[{"name": "vlen-utf8"}]`,
	"vlenz":  `[{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 5}}]`,
	"vlenzs": `[{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 3}}]`,
	"vlenb":  `[{"name": "vlen-utf8"}, ` + hostileBlosc + `]`,
	"vlenl":  `[{"name": "vlen-utf8"}, {"name": "numcodecs.lzma", "configuration": {"format": 2}}]`,
	"vlenl2": `[{"name": "vlen-utf8"}, {"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [{"id": 33, "dict_size": 1073741824}]}}]`,
}

// hostileChunks maps every file of testdata/hostile to words of the
// *CorruptError it must give (which matches ErrCorrupt: EIO at the mount),
// or after "unsupported: " words of an error matching ErrUnsupported
// (EOPNOTSUPP).
var hostileChunks = map[string]string{
	"raw-truncated-1.bin":    "decoded 8191 bytes, want 8192",
	"raw-truncated-half.bin": "decoded 4096 bytes, want 8192",
	"raw-one-too-long.bin":   "decoded 8193 bytes, want 8192",
	"raw-empty.bin":          "decoded 0 bytes, want 8192",

	"gzip-truncated-1.bin":    "gzip",
	"gzip-truncated-half.bin": "gzip",
	"gzip-one-too-long.bin":   "gzip",
	"gzip-garbage.bin":        "gzip",
	"gzip-decodes-short.bin":  "decoded 8190 bytes, want 8192",
	"gzip-decodes-long.bin":   "decodes to more than 8192 bytes",
	"gzip-bad-crc.bin":        "checksum",

	"zlib-truncated-1.bin": "zlib",
	"zlib-garbage.bin":     "zlib",

	"zstd-truncated-1.bin":    "zstd",
	"zstd-truncated-half.bin": "zstd",
	"zstd-one-too-long.bin":   "zstd",
	"zstd-garbage.bin":        "zstd",
	"zstd-frame-4GiB.bin":     "frame declares 4294967296 bytes, want 8192",
	"zstd-no-size-long.bin":   "zstd",
	"zstd-bad-checksum.bin":   "zstd",

	"blosc-header-2GiB.bin":     "blosc",
	"blosc-truncated-1.bin":     "blosc",
	"blosc-truncated-half.bin":  "blosc",
	"blosc-garbage.bin":         "blosc",
	"blosc-version-unknown.bin": "unsupported: chunk format version 69",
	"blosc-blocksize-huge.bin":  "blosc",
	"bloscz-frame-4GiB.bin":     "blosc",

	"lz4-header-2GiB.bin": "lz4",
	"lz4-truncated-1.bin": "lz4",
	"lz4-garbage.bin":     "lz4",

	"bz2-truncated-1.bin":  "bz2",
	"bz2-garbage.bin":      "bz2",
	"bz2-decodes-long.bin": "decodes to more than 8192 bytes",
	"lzma-truncated-1.bin": "lzma",
	"lzma-garbage.bin":     "lzma",

	"crc32c-mismatch.bin":     "crc32c",
	"crc32c-data-flipped.bin": "crc32c",
	"crc32c-too-short.bin":    "crc32c",

	"shard-offset-past-end.bin":    "sharding_indexed",
	"shard-offset-into-index.bin":  "sharding_indexed",
	"shard-offset-overflow.bin":    "sharding_indexed",
	"shard-nbytes-overflow.bin":    "sharding_indexed",
	"shard-index-crc.bin":          "crc32c",
	"shard-truncated-1.bin":        "crc32c",
	"shard-shorter-than-index.bin": "sharding_indexed",

	"vlen-count-huge.bin":     "vlen",
	"vlen-length-huge.bin":    "vlen",
	"vlen-truncated.bin":      "vlen",
	"vlenz-garbage.bin":       "gzip",
	"vlenzs-frame-4GiB.bin":   "zstd",
	"vlenzs-frame-256MiB.bin": "frame of 16 bytes declares 268435456",
	"vlenb-claims-512MiB.bin": "decodes to more than 268435456 bytes",
	"vlenb-claims-128MiB.bin": "chunk of 28 bytes claims 134217728",
	"vlenl-dict-1GiB.bin":     "lzma",
	"vlenl2-dict-1GiB.bin":    "vlen",
}

// hostileGenerated lists the cases built at test time, too large to keep.
var hostileGenerated = map[string]string{
	"gzip-bomb-1GiB": "decodes to more than 8192 bytes",
	"zlib-bomb-1GiB": "decodes to more than 8192 bytes",
	// The gzip bomb again, as the compressor of a vlen-utf8 chunk, whose
	// decoded size is unknown: it stops at UnknownSizeCap. The zstd bomb
	// inflates to just past UnknownSizeCap, the costliest case for that
	// bound (a larger one would only be slower while the zstd decoder
	// ignores it: see hostileKnown).
	"vlenz-bomb-1GiB":    "decodes to more than 268435456 bytes",
	"vlenzs-bomb-257MiB": "zstd: corrupt data: decodes to more than 268435456 bytes",
}

// hostileKnown names the cases known to fail their expected error (in
// TestHostileChunks) or their allocation bound (TestHostileChunkAllocs),
// and why: the tests log what they get instead of failing, and fail once
// the case passes, so that its entry is removed with the fix. None is
// known today.
var hostileKnown = map[string]string{}

// hostileData is the valid content of the hostile chunks.
func hostileData() []byte { return testData(8192, 11) }

func hostilePipeline(t testing.TB, name string) *Pipeline {
	t.Helper()
	prefix, _, _ := strings.Cut(name, "-")
	chain, ok := hostileChains[prefix]
	if !ok {
		t.Fatalf("%s: no codec chain for prefix %q", name, prefix)
	}
	codecs, err := ParseCodecList([]byte(chain))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	spec := hostileSpec
	if strings.HasPrefix(prefix, "vlen") {
		spec = hostileVlenSpec
	}
	p, err := NewPipeline(codecs, spec)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

var (
	bombOnce sync.Once
	bombs    map[string][]byte
)

// hostileBombs returns a gzip and a zlib stream of 1 GiB of zeros (some
// MiB each), built once; the gzip one also as a vlen chunk's compressor,
// and a zstd stream of 257 MiB of zeros (8 KiB) for a vlen chunk.
func hostileBombs(t testing.TB) map[string][]byte {
	bombOnce.Do(func() {
		zeros := make([]byte, 1<<20)
		var gz, zl bytes.Buffer
		gw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		for range 1024 {
			gw.Write(zeros)
		}
		gw.Close()
		zw, _ := zlib.NewWriterLevel(&zl, zlib.BestSpeed)
		for range 1024 {
			zw.Write(zeros)
		}
		zw.Close()
		bombs = map[string][]byte{
			"gzip-bomb-1GiB": gz.Bytes(), "zlib-bomb-1GiB": zl.Bytes(), "vlenz-bomb-1GiB": gz.Bytes(),
			"vlenzs-bomb-257MiB": zstdRLEBomb(UnknownSizeCap + 1<<20),
		}
	})
	return bombs
}

// hostileCases returns every hostile chunk by name.
func hostileCases(t testing.TB) map[string][]byte {
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

func TestHostileChunks(t *testing.T) {
	cases := hostileCases(t)
	for name := range hostileChunks {
		if _, ok := cases[name]; !ok {
			t.Errorf("hostileChunks names %s, which is not in testdata/hostile", name)
		}
	}
	bombs := hostileBombs(t)
	// The bombs are what they claim: the gzip trailer's ISIZE is 1 GiB
	// (mod 2^32), the zlib stream the same deflate data.
	if gz := bombs["gzip-bomb-1GiB"]; binary.LittleEndian.Uint32(gz[len(gz)-4:]) != 1<<30 {
		t.Errorf("the gzip bomb does not inflate to 1 GiB")
	}
	for name, b := range bombs {
		cases[name] = b
		t.Logf("%s: %d bytes", name, len(b))
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		want, ok := hostileChunks[name]
		if !ok {
			if want, ok = hostileGenerated[name]; !ok {
				t.Errorf("%s: no expected error in hostileChunks", name)
				continue
			}
		}
		t.Run(name, func(t *testing.T) {
			p := hostilePipeline(t, name)
			out, err := p.Decode(cases[name])
			if err == nil {
				t.Fatalf("decoded %d bytes, want an error", len(out))
			}
			if w, ok := strings.CutPrefix(want, "unsupported: "); ok {
				if !errors.Is(err, ErrUnsupported) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), w) {
					t.Errorf("error %q (%T), want one matching ErrUnsupported containing %q", err, err, w)
				}
				return
			}
			var ce *CorruptError
			ok := errors.Is(err, ErrCorrupt) && errors.As(err, &ce) && strings.Contains(err.Error(), want)
			if why, known := hostileKnown[name]; known {
				if !ok {
					t.Logf("error %q, want one containing %q (known: %s)", err, want, why)
					return
				}
				t.Errorf("error %q as expected: remove %s from hostileKnown", err, name)
			}
			if !ok {
				t.Errorf("error %q (%T), want a *CorruptError containing %q", err, err, want)
			}
		})
	}
}

// TestHostileChunkAllocs decodes every hostile chunk through the real
// pipeline and checks what the decode allocates: at most twice the
// expected chunk size plus 1 MiB. Vlen chunks have no expected size: a
// decoder may then allocate what the stored bytes could expand to
// (2^16 times their size, as lzmaMaxOutput allows), but never what a
// header claims, and never more than twice UnknownSizeCap (the bombs);
// their bound is twice the stored chunk plus 1 MiB plus the smaller of
// the two.
func TestHostileChunkAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation measurement in -short mode")
	}
	cases := hostileCases(t)
	for name, b := range hostileBombs(t) {
		cases[name] = b
	}
	// Warm the pools and one-time state (decoders, tables) with valid
	// chunks first: what is measured is the decode itself.
	for prefix := range hostileChains {
		p := hostilePipeline(t, prefix+"-")
		data := hostileData()
		if strings.HasPrefix(prefix, "vlen") {
			data = vlenOf(64)
		}
		enc, err := p.Encode(data)
		if err != nil {
			t.Fatalf("%s: encode: %v", prefix, err)
		}
		if _, err := p.Decode(enc); err != nil {
			t.Fatalf("%s: decode of a valid chunk: %v", prefix, err)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	var worst string
	var worstRatio float64
	for _, name := range names {
		p := hostilePipeline(t, name)
		in := cases[name]
		limit := uint64(2*hostileSpec.ByteSize() + 1<<20)
		if strings.HasPrefix(name, "bz2-") {
			// bzip2 decodes 900 kB blocks (the size the header names, the
			// same for every chunk numcodecs writes at level 9) through a
			// 3.6 MB table that compress/bzip2 allocates per stream.
			limit += 4 << 20
		}
		if strings.HasPrefix(name, "vlen") {
			limit = uint64(2*len(in) + 1<<20 + min(len(in)<<16, 2*UnknownSizeCap))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := p.Decode(in)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
		got := after.TotalAlloc - before.TotalAlloc
		if why, ok := hostileKnown[name]; ok {
			if got > limit {
				t.Logf("%s: decode allocated %d bytes, more than %d (known: %s)", name, got, limit, why)
			} else {
				t.Errorf("%s: decode allocated %d bytes, within %d: remove it from hostileKnown", name, got, limit)
			}
			continue
		}
		if strings.Contains(name, "-bomb-") {
			t.Logf("%s: decode allocated %d bytes (bound %d)", name, got, limit)
		}
		if got > limit {
			t.Errorf("%s: decode allocated %d bytes, more than %d", name, got, limit)
		}
		if r := float64(got) / float64(limit); r > worstRatio {
			worst, worstRatio = name, r
		}
	}
	t.Logf("%d hostile chunks; the most allocating is %s at %.0f%% of its bound", len(names), worst, 100*worstRatio)

	// The same with a 4 MiB chunk, where the bound is mostly twice the
	// chunk: each chain's valid chunk truncated by one byte and with
	// one byte flipped in its middle, and the bombs.
	big := ArraySpec{Shape: []int{1024, 2048}, DataType: DataType{"int16", 2}, FillValue: []byte{0, 0}}
	data := testData(big.ByteSize(), 5)
	limit := uint64(2*big.ByteSize() + 1<<20)
	var bigWorst string
	var bigRatio float64
	for _, prefix := range slices.Sorted(maps.Keys(hostileChains)) {
		if strings.HasPrefix(prefix, "vlen") {
			continue
		}
		codecs, err := ParseCodecList([]byte(hostileChains[prefix]))
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPipeline(codecs, big)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := p.Encode(data)
		if err != nil {
			t.Fatal(err)
		}
		flipped := bytes.Clone(enc)
		flipped[len(flipped)/2] ^= 0x55
		inputs := map[string][]byte{"truncated": enc[:len(enc)-1], "flipped": flipped}
		if prefix == "gzip" || prefix == "zlib" {
			inputs["bomb"] = cases[prefix+"-bomb-1GiB"]
		}
		limit := limit
		if prefix == "lzma" {
			// The xz decoder holds a dictionary as large as the chunk
			// besides the output, and copies the stream to lower its
			// dictionary sizes: a valid 4 MiB chunk costs 16 MiB too.
			limit = uint64(4*big.ByteSize() + 1<<20)
		}
		for what, in := range inputs {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := p.Decode(in)
			runtime.ReadMemStats(&after)
			got := after.TotalAlloc - before.TotalAlloc
			if err == nil && what != "flipped" {
				t.Errorf("%s, 4 MiB chunk, %s: no error", prefix, what)
			}
			if got > limit {
				t.Errorf("%s, 4 MiB chunk, %s: decode allocated %d bytes, more than %d", prefix, what, got, limit)
			}
			if r := float64(got) / float64(limit); r > bigRatio {
				bigWorst, bigRatio = prefix+" "+what, r
			}
		}
	}
	t.Logf("4 MiB chunks: the most allocating is %s at %.0f%% of its bound", bigWorst, 100*bigRatio)
}
