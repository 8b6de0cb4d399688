package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"testing"
)

// allocs returns the bytes f allocates.
func allocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestLZMAAuto(t *testing.T) {
	in := testData(3000, 5)
	auto := mustNew(t, `{"id":"lzma","format":0}`).(BytesToBytes)
	for _, cfg := range []string{`{"id":"lzma","format":1}`, `{"id":"lzma","format":2}`} {
		enc, err := mustNew(t, cfg).(BytesToBytes).Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := auto.Decode(enc, len(in))
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		equalBytes(t, cfg, out, in)
	}
}

// TestLZMAHugeDictionaries: headers that declare 4 GiB dictionaries
// decode with a dictionary of the decoded size.
func TestLZMAHugeDictionaries(t *testing.T) {
	in := testData(5000, 6)
	xzc := mustNew(t, `{"id":"lzma"}`).(BytesToBytes)
	xzData, err := xzc.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	// The first block header follows the 12-byte stream header: size
	// byte, flags, then (with no sizes present) the LZMA2 filter: id
	// 0x21, one property byte.
	h := xzData[12 : 12+(int(xzData[12])+1)*4]
	if h[1]&0xc0 != 0 || h[2] != 0x21 || h[3] != 1 {
		t.Fatalf("unexpected block header % x", h)
	}
	h[4] = 40 // 4 GiB - 1
	binary.LittleEndian.PutUint32(h[len(h)-4:], crc32.ChecksumIEEE(h[:len(h)-4]))

	alone := mustNew(t, `{"id":"lzma","format":2}`).(BytesToBytes)
	aloneData, err := alone.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(aloneData[1:], 0xffffffff)

	for name, tc := range map[string]struct {
		c    BytesToBytes
		data []byte
	}{"xz": {xzc, xzData}, "alone": {alone, aloneData}} {
		var out []byte
		var err error
		n := allocs(func() { out, err = tc.c.Decode(tc.data, len(in)) })
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		equalBytes(t, name, out, in)
		if n > 4<<20 {
			t.Errorf("%s: decoding allocated %d bytes", name, n)
		}
	}
}

func TestLZMACorruptHeaders(t *testing.T) {
	in := testData(5000, 8)
	xzData, _ := mustNew(t, `{"id":"lzma"}`).(BytesToBytes).Encode(in)
	aloneData, _ := mustNew(t, `{"id":"lzma","format":2}`).(BytesToBytes).Encode(in)
	sized := append([]byte(nil), aloneData...)
	binary.LittleEndian.PutUint64(sized[5:], 1<<40)
	cases := []struct {
		name, cfg string
		data      []byte
		size      int
	}{
		{"xz index records another size", `{"id":"lzma"}`, xzData, 1 << 30},
		{"xz no footer", `{"id":"lzma"}`, xzData[:len(xzData)-12], len(in)},
		{"xz short", `{"id":"lzma"}`, xzData[:20], len(in)},
		{"xz not xz", `{"id":"lzma"}`, aloneData, len(in)},
		{"alone declares 1 TiB", `{"id":"lzma","format":2}`, sized, len(in)},
		{"alone short", `{"id":"lzma","format":2}`, aloneData[:5], len(in)},
		{"raw trailing bytes", `{"id":"lzma","format":3,"filters":[{"id":33}]}`, nil, len(in)},
	}
	raw := mustNew(t, `{"id":"lzma","format":3,"filters":[{"id":33}]}`).(BytesToBytes)
	rawData, _ := raw.Encode(in)
	cases[len(cases)-1].data = append(rawData, 0, 0)
	for _, tc := range cases {
		var err error
		n := allocs(func() { _, err = mustNew(t, tc.cfg).(BytesToBytes).Decode(tc.data, tc.size) })
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
		if n > 4<<20 {
			t.Errorf("%s: allocated %d bytes", tc.name, n)
		}
	}
}

func TestLZMAConfigErrors(t *testing.T) {
	for _, cfg := range []string{
		`{"id":"lzma","format":4}`,
		`{"id":"lzma","check":2}`,
		`{"id":"lzma","format":3}`,
		`{"id":"lzma","format":3,"filters":[{"id":3,"dist":257},{"id":33}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":6},{"id":33}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":33},{"id":3}]}`,
		`{"id":"lzma","format":2,"filters":[{"id":3},{"id":4611686018427387905}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":3},{"id":4},{"id":3},{"id":4},{"id":33}]}`,
		`{"id":"lzma","format":3,"filters":[{"id":4}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":4611686018427387905}]}`,
		`{"id":"lzma","format":3,"filters":[{"id":33,"lc":4,"lp":1}]}`,
		`{"id":"lzma","format":3,"filters":[{"id":33,"dict_size":100}]}`,
	} {
		var c Config
		if err := jsonUnmarshal(cfg, &c); err != nil {
			t.Fatal(err)
		}
		delete(c, "id")
		if _, err := New("lzma", c); err == nil {
			t.Errorf("%s accepted", cfg)
		}
	}
}

// bcjData returns n bytes of the instructions the BCJ filters convert
// (x86 CALL/JMP, PowerPC bl, ARM bl, Thumb bl pairs, SPARC call) mixed
// with other bytes, so that a filter has much to do.
func bcjData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]byte, 0, n+8)
	for len(out) < n {
		w := r.Uint32()
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], w)
		switch r.IntN(8) {
		case 0: // x86 call or jmp with a near target
			out = append(out, 0xe8+byte(r.IntN(2)), b[0], b[1], b[2], []byte{0, 0xff}[r.IntN(2)])
			continue
		case 1: // PowerPC bl
			b = [4]byte{0x48 | b[0]&3, b[1], b[2], b[3]&^3 | 1}
		case 2: // ARM bl
			b[3] = 0xeb
		case 3: // Thumb bl pair
			b[1], b[3] = 0xf0|b[1]&7, 0xf8|b[3]&7
		case 4: // SPARC call
			b[0], b[1] = 0x40, b[1]&0x3f
		case 5:
			b[0], b[1] = 0x7f, b[1]|0xc0
		}
		out = append(out, b[:]...)
	}
	return out[:n]
}

// TestLZMAFiltersPeer: Python's lzma module (liblzma) encodes data with
// every filter chain zarrfs reads (delta and the BCJ filters before
// LZMA2, in xz and raw streams) and zarrfs decodes it; it also decodes
// what zarrfs encodes.
func TestLZMAFiltersPeer(t *testing.T) {
	var cases []peerCase
	for i, cfg := range []string{
		`{"id":"lzma","format":1,"filters":[{"id":3,"dist":1},{"id":33,"preset":6}]}`, // GDAL's LZMA codec
		`{"id":"lzma","format":1,"check":1,"filters":[{"id":3,"dist":4},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"check":10,"filters":[{"id":3,"dist":256},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"check":0,"filters":[{"id":4},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":4,"start_offset":4099},{"id":3,"dist":2},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":5},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":5,"start_offset":65536},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":7},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":7,"start_offset":1024},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":8},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":8,"start_offset":2},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":9},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":1,"filters":[{"id":9,"start_offset":8},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":3,"filters":[{"id":3,"dist":3},{"id":33,"preset":1}]}`,
		`{"id":"lzma","format":3,"filters":[{"id":4},{"id":4611686018427387905,"preset":1}]}`,
		`{"id":"lzma","format":0,"filters":[{"id":7},{"id":33,"preset":1}]}`,
	} {
		for _, n := range []int{0, 3, 5, 1000, 70000} {
			raw := bcjData(n, uint64(i*100000+n))
			enc, err := mustNew(t, cfg).(BytesToBytes).Encode(raw)
			if err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
			cases = append(cases, peerCase{Config: cfg, Raw: raw, Ours: enc})
		}
	}
	runPeer(t, "codec/lzma_peer.py", cases)
	for _, c := range cases {
		what := fmt.Sprintf("%s, %d bytes", c.Config, len(c.Raw))
		equalBytes(t, what+": numcodecs decodes zarrfs", c.TheirsDecoded, c.Raw)
		for _, size := range []int{len(c.Raw), -1} {
			got, err := mustNew(t, c.Config).(BytesToBytes).Decode(c.Theirs, size)
			if err != nil {
				t.Errorf("%s: decode numcodecs' %d bytes: %v", what, len(c.Theirs), err)
				continue
			}
			equalBytes(t, what+": zarrfs decodes numcodecs", got, c.Raw)
		}
	}
}
