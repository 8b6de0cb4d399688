package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

func TestBloscRegistered(t *testing.T) {
	for _, n := range []string{"blosc", "numcodecs.blosc",
		"https://purl.org/zarr/spec/codec/blosc/1.0", "https://purl.org/zarr/spec/codecs/blosc/1.0"} {
		if !Registered(n) {
			t.Errorf("%q is not registered", n)
		}
	}
}

func newBloscFrom(t testing.TB, config string) (Codec, error) {
	t.Helper()
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatalf("config %s: %v", config, err)
	}
	return New("blosc", cfg)
}

func TestBloscConfig(t *testing.T) {
	tests := []struct {
		config string
		want   Blosc
		err    error // nil: any error when wantErr
		bad    bool
	}{
		{config: `{}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscByteShuffle, TypeSize: 1}},
		{config: `{"cname":"zstd","clevel":3,"shuffle":2,"blocksize":0}`,
			want: Blosc{CName: "zstd", CLevel: 3, Shuffle: BloscBitShuffle, TypeSize: 1}},
		{config: `{"cname":"blosclz","clevel":9,"shuffle":-1,"blocksize":4096}`,
			want: Blosc{CName: "blosclz", CLevel: 9, Shuffle: BloscAutoShuffle, TypeSize: 1, BlockSize: 4096}},
		{config: `{"cname":"lz4hc","clevel":5,"shuffle":"bitshuffle","typesize":4,"blocksize":0}`,
			want: Blosc{CName: "lz4hc", CLevel: 5, Shuffle: BloscBitShuffle, TypeSize: 4}},
		{config: `{"cname":"snappy","clevel":1,"shuffle":"noshuffle","typesize":8}`,
			want: Blosc{CName: "snappy", CLevel: 1, Shuffle: BloscNoShuffle, TypeSize: 8}},
		{config: `{"cname":"zlib","shuffle":"shuffle"}`,
			want: Blosc{CName: "zlib", CLevel: 5, Shuffle: BloscByteShuffle, TypeSize: 1}},
		// GDAL writes its BLOSC_SHUFFLE option as given, but BYTE as 1.
		{config: `{"cname":"lz4","clevel":5,"shuffle":"NONE","blocksize":0}`,
			want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscNoShuffle, TypeSize: 1}},
		{config: `{"shuffle":"BIT"}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscBitShuffle, TypeSize: 1}},
		{config: `{"shuffle":"byte"}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscByteShuffle, TypeSize: 1}},
		{config: `{"shuffle":"2"}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscBitShuffle, TypeSize: 1}},
		{config: `{"shuffle":"-1"}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscAutoShuffle, TypeSize: 1}},
		{config: `{"shuffle":1,"nthreads":4,"other":"ignored"}`, want: Blosc{CName: "lz4", CLevel: 5, Shuffle: BloscByteShuffle, TypeSize: 1}},
		{config: `{"cname":"lz5"}`, err: ErrUnsupported, bad: true},
		{config: `{"shuffle":"3"}`, bad: true},
		{config: `{"clevel":10}`, bad: true},
		{config: `{"clevel":-1}`, bad: true},
		{config: `{"shuffle":3}`, bad: true},
		{config: `{"shuffle":"byteshuffle"}`, bad: true},
		{config: `{"shuffle":true}`, bad: true},
		{config: `{"typesize":0}`, bad: true},
		{config: `{"blocksize":-1}`, bad: true},
		{config: `{"cname":5}`, bad: true},
	}
	for _, tt := range tests {
		c, err := newBloscFrom(t, tt.config)
		if tt.bad {
			if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Errorf("%s: error %v, want %v", tt.config, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.config, err)
			continue
		}
		got := c.(Blosc)
		got.compressor = 0
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.config, got, tt.want)
		}
	}
}

func TestBloscDecodeSizes(t *testing.T) {
	c, err := newBloscFrom(t, `{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4}`)
	if err != nil {
		t.Fatal(err)
	}
	b := c.(BytesToBytes)
	raw := testData(100000, 3)
	enc, err := b.Encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{len(raw), -1} {
		got, err := b.Decode(enc, size)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("Decode(size %d): %v", size, err)
		}
	}
	for _, size := range []int{0, len(raw) - 1, len(raw) + 1} {
		if _, err := b.Decode(enc, size); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(size %d): %v, want ErrCorrupt", size, err)
		}
	}
	if _, err := b.Decode(enc[:len(enc)-1], len(raw)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v, want ErrCorrupt", err)
	}
	bad := bytes.Clone(enc)
	bad[0] = 3
	if _, err := b.Decode(bad, len(raw)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("version 3: %v, want ErrUnsupported", err)
	}
	// Headers claiming 2 GiB, or more than UnknownSizeCap, fail before
	// anything of that size is allocated.
	for _, claim := range []uint32{1 << 31, UnknownSizeCap + 1} {
		huge := bytes.Clone(enc)
		binary.LittleEndian.PutUint32(huge[4:], claim)
		for _, size := range []int{len(raw), -1} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := b.Decode(huge, size)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("claim %d, size %d: %v, want ErrCorrupt", claim, size, err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Errorf("claim %d, size %d: allocated %d bytes", claim, size, d)
			}
		}
	}
}

// TestBloscFixtures decodes the numcodecs blosc fixtures through the
// registry, with each fixture's own configuration.
func TestBloscFixtures(t *testing.T) {
	for _, f := range fixtures(t, "blosc") {
		want := readNpy(t, f.Array).Data
		got, err := mustNew(t, f.Config).(BytesToBytes).Decode(f.Encoded, len(want))
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		equalBytes(t, f.Name, got, want)
	}
}

// TestBloscNumcodecs has numcodecs.Blosc and this codec encode the same
// buffers and decode each other's chunks.
func TestBloscNumcodecs(t *testing.T) {
	var cases []peerCase
	var ours []Codec
	dtypes := []struct {
		dtype string
		size  int
	}{{"|u1", 1}, {"<u2", 2}, {"|V3", 3}, {"<f4", 4}, {"<f8", 8}, {"|V12", 12}}
	i := 0
	for _, cname := range []string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"} {
		for _, shuffle := range []int{-1, 0, 1, 2} {
			for _, dt := range dtypes {
				n := []int{17, 96, 1200, 50000, 300000}[i%5] / dt.size * dt.size // numcodecs cannot decode empty chunks
				clevel := []int{1, 5, 9, 0, 3}[i%5]
				i++
				config := fmt.Sprintf(`{"id":"blosc","cname":%q,"clevel":%d,"shuffle":%d,"blocksize":0}`, cname, clevel, shuffle)
				c, err := newBloscFrom(t, fmt.Sprintf(`{"cname":%q,"clevel":%d,"shuffle":%d,"typesize":%d}`, cname, clevel, shuffle, dt.size))
				if err != nil {
					t.Fatal(err)
				}
				raw := testData(n, uint64(i))
				enc, err := c.(BytesToBytes).Encode(raw)
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, peerCase{Config: config, DType: dt.dtype, Raw: raw, Ours: enc})
				ours = append(ours, c)
			}
		}
	}
	runNumcodecs(t, cases)
	for i, c := range cases {
		name := fmt.Sprintf("%s %s %d bytes", c.Config, c.DType, len(c.Raw))
		equalBytes(t, name+": numcodecs decoding ours", c.TheirsDecoded, c.Raw)
		got, err := ours[i].(BytesToBytes).Decode(c.Theirs, len(c.Raw))
		if err != nil {
			t.Errorf("%s: decoding numcodecs' chunk: %v", name, err)
			continue
		}
		equalBytes(t, name+": decoding numcodecs' chunk", got, c.Raw)
		// Same block size, typesize and filter flags as c-blosc chose
		// (AUTOSHUFFLE resolved the same way).
		if len(c.Theirs) >= 16 && len(c.Ours) >= 16 && (c.Theirs[3] != c.Ours[3] || c.Theirs[2]&0xf5 != c.Ours[2]&0xf5 ||
			!bytes.Equal(c.Theirs[8:12], c.Ours[8:12])) {
			t.Errorf("%s: header % x, numcodecs wrote % x", name, c.Ours[:16], c.Theirs[:16])
		}
	}
}

// FuzzBloscDecode feeds arbitrary chunks to the registered codec: it must
// not panic, and what it returns has the size it was asked for.
func FuzzBloscDecode(f *testing.F) {
	c, err := newBloscFrom(f, `{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4}`)
	if err != nil {
		f.Fatal(err)
	}
	b := c.(BytesToBytes)
	for _, n := range []int{0, 100, 5000} {
		enc, err := b.Encode(testData(n, 1))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc, n)
	}
	for _, b := range hostileSeeds(f, "blosc") {
		f.Add(b, 8192)
	}
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size > 1<<20 {
			size = -1
		}
		out, err := b.Decode(data, size)
		if err == nil && size >= 0 && len(out) != size {
			t.Fatalf("decoded %d bytes, want %d", len(out), size)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupported", err)
		}
	})
}
