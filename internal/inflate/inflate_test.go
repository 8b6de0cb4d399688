package inflate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// samples returns inputs of the kinds DEFLATE meets: random bytes (stored
// blocks), text, runs, small integers and noisy floats (literals with
// short matches, as in float chunks), at sizes around the block and
// window edges.
func samples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := map[string][]byte{"empty": {}}
	words := []string{"zarr ", "chunk ", "array ", "the ", "of ", "\n", "float32 ", "group "}
	for _, n := range []int{1, 7, 258, 259, 32767, 32768, 32769, 100000, 1 << 20} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(r.Uint32())
		}
		var text []byte
		for len(text) < n {
			text = append(text, words[r.IntN(len(words))]...)
		}
		runs := make([]byte, n)
		for i := range runs {
			runs[i] = byte(i / 300 % 3)
		}
		floats := make([]byte, n/4*4)
		for i := 0; i+4 <= len(floats); i += 4 {
			v := math.Sin(float64(i)/4000) + r.NormFloat64()/64
			binary.LittleEndian.PutUint32(floats[i:], math.Float32bits(float32(math.Round(v*4096)/4096)))
		}
		for kind, data := range map[string][]byte{"random": random, "text": text[:n], "runs": runs, "floats": floats} {
			out[kind+"-"+strconv.Itoa(n)] = data
		}
	}
	return out
}

func deflate(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// TestDecode decodes what compress/flate writes at every level, Huffman
// only (-2) and stored (0) included, into a buffer of exactly the size,
// and checks the bytes read.
func TestDecode(t *testing.T) {
	for name, data := range samples() {
		for _, level := range []int{-2, 0, 1, 5, 9} {
			enc := deflate(t, data, level)
			enc = append(enc, "trailing"...)
			dst := make([]byte, len(data))
			n, read, err := Decode(dst, enc)
			if err != nil {
				t.Fatalf("%s level %d: %v", name, level, err)
			}
			if n != len(data) || !bytes.Equal(dst, data) {
				t.Fatalf("%s level %d: decoded %d bytes, not the input", name, level, n)
			}
			if read != len(enc)-len("trailing") {
				t.Fatalf("%s level %d: read %d bytes of %d", name, level, read, len(enc)-len("trailing"))
			}
		}
	}
}

// TestDecodeSizes: a buffer one byte short fails with ErrTooLong, one
// byte long decodes everything and says so.
func TestDecodeSizes(t *testing.T) {
	for name, data := range samples() {
		if len(data) == 0 {
			continue
		}
		for _, level := range []int{0, 1, 9} {
			enc := deflate(t, data, level)
			if _, _, err := Decode(make([]byte, len(data)-1), enc); !errors.Is(err, ErrTooLong) {
				t.Fatalf("%s level %d, one byte short: %v, want ErrTooLong", name, level, err)
			}
			if n, _, err := Decode(make([]byte, len(data)+1), enc); err != nil || n != len(data) {
				t.Fatalf("%s level %d, one byte over: %d, %v", name, level, n, err)
			}
		}
	}
}

// TestTruncated: every proper prefix of a stream fails, at an offset
// within the prefix.
func TestTruncated(t *testing.T) {
	data := samples()["floats-100000"][:20000]
	for _, level := range []int{0, 1, 9} {
		enc := deflate(t, data, level)
		dst := make([]byte, len(data))
		for cut := range len(enc) {
			_, _, err := Decode(dst, enc[:cut])
			if err == nil {
				t.Fatalf("level %d: %d of %d bytes decode without error", level, cut, len(enc))
			}
			if ce, ok := err.(*CorruptError); ok && (ce.Offset < 0 || ce.Offset > cut) {
				t.Fatalf("level %d: %d of %d bytes: %v: offset outside the input", level, cut, len(enc), err)
			}
		}
	}
}

// TestGzipZlib: the wrappers as compress/gzip and compress/zlib write
// them, several gzip members with zero padding, and bad checksums.
func TestGzipZlib(t *testing.T) {
	data := samples()["text-100000"]
	var gz bytes.Buffer
	for i, part := range [][]byte{data[:40000], data[40000:40000], data[40000:]} {
		w, _ := gzip.NewWriterLevel(&gz, 6)
		if i == 0 {
			w.Name, w.Comment, w.Extra = "name", "comment", []byte("extra")
		}
		w.Write(part)
		w.Close()
		gz.Write([]byte{0, 0, 0})
	}
	dst := make([]byte, len(data))
	if n, err := Gzip(dst, gz.Bytes()); err != nil || n != len(data) || !bytes.Equal(dst, data) {
		t.Fatalf("gzip: %d bytes, %v", n, err)
	}
	bad := bytes.Clone(gz.Bytes())
	bad[len(bad)-3-8] ^= 1 // the last member's CRC
	var ce *ChecksumError
	if _, err := Gzip(dst, bad); !errors.As(err, &ce) {
		t.Fatalf("gzip with a bad CRC: %v", err)
	}
	garbage := append(bytes.Clone(gz.Bytes()), 'x')
	var he *HeaderError
	if _, err := Gzip(dst, garbage); !errors.As(err, &he) {
		t.Fatalf("gzip with garbage after the members: %v", err)
	}

	var zl bytes.Buffer
	w, _ := zlib.NewWriterLevel(&zl, 6)
	w.Write(data)
	w.Close()
	if n, err := Zlib(dst, zl.Bytes()); err != nil || n != len(data) || !bytes.Equal(dst, data) {
		t.Fatalf("zlib: %d bytes, %v", n, err)
	}
	bad = bytes.Clone(zl.Bytes())
	bad[len(bad)-1] ^= 1
	if _, err := Zlib(dst, bad); !errors.As(err, &ce) {
		t.Fatalf("zlib with a bad Adler-32: %v", err)
	}
}

// stdlibInflate decodes src with compress/flate, at most limit bytes.
func stdlibInflate(src []byte, limit int) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(src))
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FuzzDecode compares Decode with compress/flate on any input: the same
// bytes when both succeed, and an error from both otherwise (within the
// 1 MiB output allowed).
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"text-259", "floats-32769", "random-258", "runs-100000"} {
		data := samples()[name]
		for _, level := range []int{-2, 0, 1, 9} {
			f.Add(deflate(f, data, level))
		}
	}
	f.Add([]byte{0x03, 0x00}) // an empty fixed block
	f.Fuzz(func(t *testing.T, src []byte) {
		const limit = 1 << 20
		want, wantErr := stdlibInflate(src, limit)
		dst := make([]byte, limit)
		n, _, err := Decode(dst, src)
		switch {
		case wantErr == nil && len(want) > limit:
			if !errors.Is(err, ErrTooLong) {
				t.Fatalf("compress/flate decodes more than %d bytes; Decode: %d, %v", limit, n, err)
			}
		case wantErr == nil:
			if err != nil {
				t.Fatalf("compress/flate decodes %d bytes; Decode: %v", len(want), err)
			}
			if !bytes.Equal(dst[:n], want) {
				t.Fatalf("decoded %d bytes unlike compress/flate's %d", n, len(want))
			}
		case err == nil:
			t.Fatalf("compress/flate: %v; Decode: %d bytes, no error", wantErr, n)
		}
	})
}

// bitWriter writes a DEFLATE bit stream by hand, for streams no encoder
// writes.
type bitWriter struct {
	out   []byte
	nbits uint
}

// bits appends the n low bits of v, least significant first (header
// fields, extra bits).
func (w *bitWriter) bits(v uint32, n uint) {
	for i := range n {
		if w.nbits%8 == 0 {
			w.out = append(w.out, 0)
		}
		w.out[len(w.out)-1] |= byte(v>>i&1) << (w.nbits % 8)
		w.nbits++
	}
}

// code appends an n-bit Huffman code, most significant bit first.
func (w *bitWriter) code(c uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.bits(c>>uint(i)&1, 1)
	}
}

// fixedLiteral appends literal b (0–143) of the fixed code.
func (w *bitWriter) fixedLiteral(b byte) { w.code(0x30+uint32(b), 8) }

// fixedStart appends the header of a final block of the fixed code.
func (w *bitWriter) fixedStart() { w.bits(1, 1); w.bits(1, 2) }

// fixedEnd appends the end-of-block code (256: seven zero bits).
func (w *bitWriter) fixedEnd() { w.code(0, 7) }

// TestHandWritten decodes streams written bit by bit: matches of the
// fixed code, and what no encoder writes (symbols 286 and 287, distance
// codes 30 and 31, distances before the start of the output).
func TestHandWritten(t *testing.T) {
	var ok bitWriter // "ab", then length 4 (symbol 258) at distance 2 (code 1): "ababab"
	ok.fixedStart()
	ok.fixedLiteral('a')
	ok.fixedLiteral('b')
	ok.code(2, 7)
	ok.code(1, 5)
	ok.fixedEnd()
	dst := make([]byte, 6)
	if n, _, err := Decode(dst, ok.out); err != nil || string(dst[:n]) != "ababab" {
		t.Fatalf("a fixed-code match: %q, %v", dst[:n], err)
	}

	for name, c := range map[string]struct {
		write func(w *bitWriter)
		want  string
	}{
		"distance before the start": {func(w *bitWriter) { w.code(1, 7); w.code(0, 5) }, "too far back"},
		"literal/length symbol 286": {func(w *bitWriter) { w.code(0xc6, 8) }, "invalid literal/length"},
		"literal/length symbol 287": {func(w *bitWriter) { w.code(0xc7, 8) }, "invalid literal/length"},
		"distance code 30":          {func(w *bitWriter) { w.fixedLiteral('a'); w.code(1, 7); w.code(30, 5) }, "invalid distance"},
		"distance code 31":          {func(w *bitWriter) { w.fixedLiteral('a'); w.code(1, 7); w.code(31, 5) }, "invalid distance"},
	} {
		var w bitWriter
		w.fixedStart()
		c.write(&w)
		w.fixedEnd()
		w.bits(0, 16) // enough input that the error is not its end
		_, _, err := Decode(make([]byte, 64), w.out)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a CorruptError saying %q", name, err, c.want)
		}
		if _, ferr := stdlibInflate(w.out, 64); ferr == nil {
			t.Errorf("%s: compress/flate decodes it", name)
		}
	}
}

// TestGzipMemberMatchesOwnOutput: a gzip member's matches reach back to
// its own first byte, not into the member before it.
func TestGzipMemberMatchesOwnOutput(t *testing.T) {
	var first bytes.Buffer
	zw := gzip.NewWriter(&first)
	zw.Write([]byte("abc"))
	zw.Close()
	var w bitWriter // a match of 3 at distance 1, then "x"
	w.fixedStart()
	w.code(1, 7)
	w.code(0, 5)
	w.fixedLiteral('x')
	w.fixedEnd()
	second := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}, w.out...)
	second = binary.LittleEndian.AppendUint32(second, 0) // CRC and size: never reached
	second = binary.LittleEndian.AppendUint32(second, 4)
	_, err := Gzip(make([]byte, 7), append(first.Bytes(), second...))
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "too far back") {
		t.Fatalf("a second member matching the first's bytes: %v", err)
	}
}
