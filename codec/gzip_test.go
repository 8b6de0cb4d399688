package codec

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// gzipVariants returns gzip and zlib chunks of data in the shapes the
// wrappers allow and the ways they break: several members, zero padding,
// optional header fields, a header CRC that is wrong (Python does not
// check it), trailing bytes, truncation and bad checksums.
func gzipVariants(t *testing.T, data []byte) map[string][]byte {
	member := func(part []byte, hdr func(*gzip.Writer)) []byte {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, 5)
		if hdr != nil {
			hdr(w)
		}
		w.Write(part)
		w.Close()
		return b.Bytes()
	}
	one := member(data, nil)
	half := len(data) / 2
	two := append(member(data[:half], nil), member(data[half:], nil)...)
	named := member(data, func(w *gzip.Writer) { w.Name, w.Comment, w.Extra = "a.bin", "a comment", []byte("xx") })
	// FHCRC with a CRC that is not the header's: set the flag, insert two bytes.
	hcrc := append(append(bytes.Clone(one[:10]), 0xde, 0xad), one[10:]...)
	hcrc[3] |= 1 << 1
	badCRC := bytes.Clone(one)
	badCRC[len(badCRC)-8] ^= 0xff
	badSize := bytes.Clone(one)
	badSize[len(badSize)-4] ^= 1
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, 5)
	zw.Write(data)
	zw.Close()
	zl := z.Bytes()
	badAdler := bytes.Clone(zl)
	badAdler[len(badAdler)-1] ^= 1
	// FDICT: the flag, a check that fits, and a dictionary's Adler-32.
	flg := zl[1]&0xc0 | 0x20
	flg += byte(31 - (uint(zl[0])<<8|uint(flg))%31)
	fdict := append([]byte{zl[0], flg, 0, 0, 0, 1}, zl[2:]...)
	if binary.BigEndian.Uint16(fdict)%31 != 0 || fdict[1]&0x20 == 0 {
		t.Fatal("fdict header")
	}
	return map[string][]byte{
		"gzip-one":            one,
		"gzip-two-members":    two,
		"gzip-zero-padding":   append(bytes.Clone(two), 0, 0, 0, 0),
		"gzip-padding-member": append(append(bytes.Clone(one[:0]), member(data[:half], nil)...), append([]byte{0, 0}, member(data[half:], nil)...)...),
		"gzip-named":          named,
		"gzip-hcrc-wrong":     hcrc,
		"gzip-trailing-x":     append(bytes.Clone(one), 'x'),
		"gzip-trailing-magic": append(bytes.Clone(one), 0x1f, 0x8b),
		"gzip-truncated-3":    one[:len(one)-3],
		"gzip-no-trailer":     one[:len(one)-8],
		"gzip-bad-crc":        badCRC,
		"gzip-bad-size":       badSize,
		"gzip-method-7":       append([]byte{0x1f, 0x8b, 7}, one[3:]...),
		"gzip-empty":          {},
		"gzip-zeros":          {0, 0, 0},
		"zlib-one":            zl,
		"zlib-trailing":       append(bytes.Clone(zl), "trailing bytes"...),
		"zlib-truncated-2":    zl[:len(zl)-2],
		"zlib-bad-adler":      badAdler,
		"zlib-fdict":          fdict,
	}
}

// TestGzipZlibAsNumcodecs decodes every variant with the codecs and with
// numcodecs' GZip and Zlib (the oracle): both succeed with the same bytes,
// or both fail.
func TestGzipZlibAsNumcodecs(t *testing.T) {
	peertest.NeedPython(t)
	data := bytes.Repeat([]byte("zarr chunk of floats 0.125 0.25 0.5\n"), 3000)
	variants := gzipVariants(t, data)
	dir := t.TempDir()
	var args []string
	for name, b := range variants {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out := peertest.Oracle(t, "codec/gzip_zlib_as_numcodecs.py", args...)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		name, verdict := f[0], f[1]
		var c DecoderInto = Gzip{Level: 5}
		if strings.HasPrefix(name, "zlib") {
			c = Zlib{Level: 5}
		}
		if verdict == "error" {
			if err := c.DecodeInto(make([]byte, len(data)), variants[name]); err == nil {
				t.Errorf("%s: numcodecs fails (%s), zarrfs decodes it", name, f[2])
			}
			continue
		}
		want, rerr := os.ReadFile(filepath.Join(dir, name+".out"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		if n, _ := strconv.Atoi(f[2]); n != len(want) || n != len(data) && name != "gzip-empty" {
			t.Fatalf("%s: numcodecs decodes %d bytes (%d in its file), not %d", name, n, len(want), len(data))
		}
		got := make([]byte, len(want))
		if err := c.DecodeInto(got, variants[name]); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: numcodecs decodes it to %d bytes; zarrfs: %v", name, len(want), err)
		}
	}
	if n := len(strings.Split(strings.TrimSpace(string(out)), "\n")); n != len(variants) {
		t.Errorf("numcodecs answered for %d variants of %d", n, len(variants))
	}
}
