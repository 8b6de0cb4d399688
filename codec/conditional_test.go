package codec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// conditionalSpecConfig is the configuration of the spec's Example 1
// (codecs/conditional/README.md, "Configuration (zarr.json)"): shuffle
// of 4-byte elements, then zstd at level 5.
const conditionalSpecConfig = `{"codecs": [
	{"name": "shuffle", "configuration": {"element_size": 4}},
	{"name": "zstd", "configuration": {"level": 5}}]}`

// conditionalGzipConfig holds two compressors under a 16-bit header, as
// header_bits allows ("for future expansion of the codec pipeline"): the
// header is two bytes and bits 2…15 are reserved.
const conditionalGzipConfig = `{"codecs": [
	{"name": "zstd", "configuration": {"level": 3}},
	{"name": "gzip", "configuration": {"level": 5}}], "header_bits": 16}`

func newConditionalFromJSON(t testing.TB, config string) *Conditional {
	t.Helper()
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	c, err := New("conditional", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Conditional)
}

func TestConditionalPeerNumcodecs(t *testing.T) {
	out := peertest.Oracle(t, "codec/conditional_chunks.py")
	codecs := map[string]*Conditional{
		"spec":   newConditionalFromJSON(t, conditionalSpecConfig),
		"gzip16": newConditionalFromJSON(t, conditionalGzipConfig),
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct {
			Config      string
			Mask        int
			Chunk, Want string
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		chunk, _ := hex.DecodeString(c.Chunk)
		want, _ := hex.DecodeString(c.Want)
		got, err := codecs[c.Config].Decode(chunk, len(want))
		if err != nil {
			t.Errorf("%s mask %02b (%d bytes): %v", c.Config, c.Mask, len(chunk), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s mask %02b: decoded bytes differ from NumPy's", c.Config, c.Mask)
		}
		// Told a wrong size, the same chunk is corrupt.
		if _, err := codecs[c.Config].Decode(chunk, len(want)-4); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s mask %02b, size-4: %v, want ErrCorrupt", c.Config, c.Mask, err)
		}
		n++
	}
	if n != 16 {
		t.Fatalf("%d chunks from python, want 16", n)
	}
}

func TestConditionalConfig(t *testing.T) {
	for _, tc := range []struct {
		config      string
		headerBytes int // 0: an error is wanted
	}{
		{conditionalSpecConfig, 1},
		{conditionalGzipConfig, 2},
		// The default: ceil(len(codecs)/8)*8 bits.
		{`{"codecs": ["crc32c","crc32c","crc32c","crc32c","crc32c","crc32c","crc32c","crc32c","crc32c"]}`, 2},
		{`{"codecs": ["crc32c"], "header_bits": 8}`, 1},
		{`{"codecs": ["crc32c"], "header_bits": 12}`, 0},            // not a multiple of 8
		{`{"codecs": ["crc32c"], "header_bits": 0}`, 0},             // fewer bits than codecs
		{`{"codecs": ["crc32c"], "header_bits": -8}`, 0},            // negative
		{`{"codecs": ["crc32c"], "header_bits": 1099511627776}`, 0}, // absurd
		{`{"codecs": [{"name": "bytes"}]}`, 0},                      // array→bytes: "MUST all be bytes -> bytes"
		{`{"codecs": [{"name": "transpose", "configuration": {"order": [0]}}]}`, 0},
		{`{"codecs": []}`, 0},
		{`{}`, 0},
		{`{"codecs": [{"name": "no-such-codec", "must_understand": false}]}`, 0}, // would shift the bits
		{`{"codecs": ["crc32c"], "mask": 1}`, 0},
	} {
		var cfg Config
		if err := json.Unmarshal([]byte(tc.config), &cfg); err != nil {
			t.Fatal(err)
		}
		c, err := New("conditional", cfg)
		if tc.headerBytes == 0 {
			if err == nil {
				t.Errorf("%s: no error", tc.config)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.config, err)
			continue
		}
		if got := c.(*Conditional).headerBytes; got != tc.headerBytes {
			t.Errorf("%s: header of %d bytes, want %d", tc.config, got, tc.headerBytes)
		}
	}
}

// TestConditionalBitOrder checks the bit order and the reverse order of
// decoding with codecs whose effect is visible without a compressor:
// shuffles of 2-, 3- and 4-byte elements (bit 0 → codecs[0], "using a
// little-endian bit order"; decoding iterates "in reverse order"). The
// encoded bytes are written out by hand from numcodecs' Shuffle (the i-th
// byte of every element, for i = 0, 1, …).
func TestConditionalBitOrder(t *testing.T) {
	c := newConditionalFromJSON(t, `{"codecs": [
		{"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}},
		{"name": "numcodecs.shuffle", "configuration": {"elementsize": 3}},
		{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}], "header_bits": 24}`)
	data := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, tc := range []struct {
		header, body []byte
	}{
		{[]byte{0, 0, 0}, data},
		{[]byte{1, 0, 0}, []byte{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}},
		{[]byte{2, 0, 0}, []byte{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}},
		{[]byte{4, 0, 0}, []byte{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
		// Bits 0 and 2: shuffle by 4 of (shuffle by 2 of data); undone
		// in the other order.
		{[]byte{5, 0, 0}, []byte{0, 8, 5, 2, 10, 7, 4, 1, 9, 6, 3, 11}},
	} {
		got, err := c.Decode(append(bytes.Clone(tc.header), tc.body...), len(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("header %x: got %v, %v; want %v", tc.header, got, err, data)
		}
	}
	// Bit 3 is past the three codecs, in the first byte; bit 16 is in
	// the third: both reserved.
	for _, h := range [][]byte{{8, 0, 0}, {0, 0, 1}} {
		if _, err := c.Decode(append(bytes.Clone(h), data...), len(data)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("header %x: %v, want ErrCorrupt", h, err)
		}
	}
}

func TestConditionalHostile(t *testing.T) {
	spec := newConditionalFromJSON(t, conditionalSpecConfig)
	wide := newConditionalFromJSON(t, conditionalGzipConfig)
	for _, tc := range []struct {
		name string
		c    *Conditional
		data []byte
		size int
	}{
		{"empty", spec, nil, 0},
		{"empty-size-unknown", spec, nil, -1},
		{"short-header", wide, []byte{0}, 0},
		{"reserved-bit-2", spec, []byte{0x04, 1, 2, 3, 4}, 4},
		{"reserved-bit-7", spec, []byte{0x80, 1, 2, 3, 4}, 4},
		{"reserved-bit-in-second-byte", wide, []byte{0, 0x01, 1, 2, 3, 4}, 4},
		{"zstd-on-raw-bytes", spec, []byte{0x02, 1, 2, 3, 4}, 4},
		{"gzip-on-raw-bytes", wide, []byte{0x02, 0, 1, 2, 3, 4}, 4},
		{"raw-too-long", spec, []byte{0, 1, 2, 3, 4, 5}, 4},
		{"raw-too-short", spec, []byte{0, 1, 2}, 4},
		{"shuffle-wrong-size", spec, []byte{0x01, 1, 2, 3}, 4},
	} {
		if _, err := tc.c.Decode(tc.data, tc.size); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func TestConditionalEncode(t *testing.T) {
	c := newConditionalFromJSON(t, conditionalGzipConfig)
	data := []byte("chunk bytes")
	enc, err := c.Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	// The spec's default runtime bitmask is all 0s: a zero header, the
	// data as it is.
	if want := append([]byte{0, 0}, data...); !bytes.Equal(enc, want) {
		t.Fatalf("Encode = %x, want %x", enc, want)
	}
	if got, err := c.Decode(enc, len(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Decode(Encode) = %q, %v", got, err)
	}
	if got := c.EncodedSize(10); got != -1 {
		t.Errorf("EncodedSize with compressors = %d, want -1", got)
	}
	if got := newConditionalFromJSON(t, `{"codecs": ["numcodecs.shuffle"]}`).EncodedSize(10); got != 11 {
		t.Errorf("EncodedSize with shuffle = %d, want 11", got)
	}
}

func FuzzConditional(f *testing.F) {
	spec := newConditionalFromJSON(f, conditionalSpecConfig)
	wide := newConditionalFromJSON(f, conditionalGzipConfig)
	f.Add([]byte{}, 4)
	f.Add([]byte{0, 1, 2, 3, 4}, 4)
	f.Add([]byte{1, 1, 2, 3, 4}, 4)
	f.Add([]byte{3, 0x28, 0xb5, 0x2f, 0xfd, 0, 0x58, 0x21, 0, 0, 1, 2, 3, 4}, 4)
	f.Add([]byte{0xff, 0xff, 1, 2, 3, 4}, -1)
	f.Add([]byte{2, 0, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, 1<<20)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size > 1<<20 {
			size = 1 << 20
		}
		for _, c := range []*Conditional{spec, wide} {
			out, err := c.Decode(data, size)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not match ErrCorrupt", err)
				}
				continue
			}
			if size >= 0 && len(out) != size {
				t.Fatalf("decoded %d bytes, want %d", len(out), size)
			}
		}
	})
}
