package codec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// vlenOf returns a vlen-encoded chunk of n short strings.
func vlenOf(n int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(n))
	for i := range n {
		s := strings.Repeat("x", i%7)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
		out = append(out, s...)
	}
	return out
}

// hostileSeeds returns the hostile chunks whose names start with prefix
// (all of them for ""), for fuzz corpora.
func hostileSeeds(f *testing.F, prefix string) [][]byte {
	f.Helper()
	cases := hostileCases(f)
	names := make([]string, 0, len(cases))
	for n := range cases {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = cases[n]
	}
	return out
}

// TestWriteHostileChunks rewrites testdata/hostile from the valid
// encodings of hostileData. It runs only with ZARRFS_WRITE_HOSTILE=1.
func TestWriteHostileChunks(t *testing.T) {
	if os.Getenv("ZARRFS_WRITE_HOSTILE") != "1" {
		t.Skip("set ZARRFS_WRITE_HOSTILE=1 to rewrite testdata/hostile")
	}
	data := hostileData()
	rng := rand.New(rand.NewPCG(3, 4))
	garbage := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	enc := func(prefix string, d []byte) []byte {
		p := hostilePipeline(t, prefix+"-")
		b, err := p.Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	encBB := func(c BytesToBytes, d []byte) []byte {
		b, err := c.Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := map[string][]byte{}
	cut := func(prefix string, b []byte) {
		files[prefix+"-truncated-1.bin"] = b[:len(b)-1]
		files[prefix+"-truncated-half.bin"] = b[:len(b)/2]
		files[prefix+"-one-too-long.bin"] = append(bytes.Clone(b), 0)
	}
	cut("raw", data)
	files["raw-empty.bin"] = []byte{}

	gz := enc("gzip", data)
	cut("gzip", gz)
	// Zero bytes after a member are padding to Python's gzip module (and
	// numcodecs): one past the member is anything else.
	files["gzip-one-too-long.bin"] = append(bytes.Clone(gz), 'x')
	files["gzip-garbage.bin"] = garbage(1000)
	files["gzip-decodes-short.bin"] = encBB(Gzip{Level: 5}, data[:8190])
	files["gzip-decodes-long.bin"] = encBB(Gzip{Level: 5}, append(bytes.Clone(data), 1, 2))
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-6] ^= 0xff // the CRC-32 of the gzip trailer
	files["gzip-bad-crc.bin"] = badCRC

	zl := enc("zlib", data)
	files["zlib-truncated-1.bin"] = zl[:len(zl)-1]
	files["zlib-garbage.bin"] = garbage(1000)

	zs := enc("zstd", data)
	cut("zstd", zs)
	files["zstd-garbage.bin"] = append([]byte{0x28, 0xb5, 0x2f, 0xfd}, garbage(1000)...)
	files["zstd-frame-4GiB.bin"] = zstdFrameDeclaring(4 << 30)
	// A frame without a content size that decodes to twice the chunk.
	var zbuf bytes.Buffer
	zw, err := zstd.NewWriter(&zbuf, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(append(bytes.Clone(data), data...))
	zw.Close()
	files["zstd-no-size-long.bin"] = zstdWithoutSize(t, zbuf.Bytes(), 14)
	zbad := bytes.Clone(zs)
	zbad[len(zbad)-1] ^= 0xff
	files["zstd-bad-checksum.bin"] = zbad

	bl := enc("blosc", data)
	cut("blosc", bl)
	// Bytes after cbytes are no damage: c-blosc ignores them, and z5py
	// writes them (blosc's TestPeerTrailingBytes).
	delete(files, "blosc-one-too-long.bin")
	files["blosc-garbage.bin"] = append([]byte{2, 1}, garbage(1000)...)
	files["blosc-version-unknown.bin"] = append([]byte{69}, bl[1:]...)
	files["blosc-header-2GiB.bin"] = append(bloscHeader(2<<30, 1<<16, 16+64), garbage(64)...)
	huge := bytes.Clone(bl)
	binary.LittleEndian.PutUint32(huge[8:], 1<<31) // blocksize
	files["blosc-blocksize-huge.bin"] = huge
	// Blosc around a zstd stream that claims 4 GiB: a memcpy-less chunk
	// of one block whose only stream is a zstd frame declaring 4 GiB.
	frame := zstdFrameDeclaring(4 << 30)
	bz := bloscHeader(8192, 8192, uint32(16+4+4+len(frame)))
	bz[2] = 0x01 | 4<<5 // byte shuffle, zstd
	bz = binary.LittleEndian.AppendUint32(bz, 16+4)
	bz = binary.LittleEndian.AppendUint32(bz, uint32(len(frame)))
	files["bloscz-frame-4GiB.bin"] = append(bz, frame...)

	lz := enc("lz4", data)
	files["lz4-truncated-1.bin"] = lz[:len(lz)-1]
	files["lz4-garbage.bin"] = garbage(1000)
	files["lz4-header-2GiB.bin"] = append([]byte{0, 0, 0, 0x80}, garbage(100)...)

	bzc := enc("bz2", data)
	files["bz2-truncated-1.bin"] = bzc[:len(bzc)-1]
	files["bz2-garbage.bin"] = append([]byte("BZh9"), garbage(500)...)
	files["bz2-decodes-long.bin"] = encBB(mustNew(t, `{"id": "bz2", "level": 9}`).(BytesToBytes), append(bytes.Clone(data), data...))
	xzc := enc("lzma", data)
	files["lzma-truncated-1.bin"] = xzc[:len(xzc)-1]
	files["lzma-garbage.bin"] = append([]byte{0xfd, '7', 'z', 'X', 'Z', 0}, garbage(500)...)

	cr := enc("crc32c", data)
	bad := bytes.Clone(cr)
	bad[len(bad)-1] ^= 1
	files["crc32c-mismatch.bin"] = bad
	bad = bytes.Clone(cr)
	bad[100] ^= 1
	files["crc32c-data-flipped.bin"] = bad
	files["crc32c-too-short.bin"] = cr[:3]

	// Shards: four inner chunks of 32×32 (2048 bytes each), then the
	// index (4 × offset, nbytes) and its crc32c.
	sh := enc("shard", data)
	idxOff := len(sh) - 4*16 - 4
	withEntry := func(i int, off, n uint64) []byte {
		b := bytes.Clone(sh)
		binary.LittleEndian.PutUint64(b[idxOff+16*i:], off)
		binary.LittleEndian.PutUint64(b[idxOff+16*i+8:], n)
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[idxOff:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
		return b
	}
	files["shard-offset-past-end.bin"] = withEntry(1, uint64(len(sh)), 2048)
	files["shard-offset-into-index.bin"] = withEntry(2, uint64(idxOff), 2048)
	files["shard-offset-overflow.bin"] = withEntry(0, 1<<64-16, 2048)
	files["shard-nbytes-overflow.bin"] = withEntry(3, 16, 1<<63)
	bad = bytes.Clone(sh)
	bad[len(bad)-1] ^= 1
	files["shard-index-crc.bin"] = bad
	files["shard-truncated-1.bin"] = sh[:len(sh)-1]
	files["shard-shorter-than-index.bin"] = sh[len(sh)-40:]

	files["vlen-count-huge.bin"] = []byte{0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 'a'}
	vl := vlenOf(64)
	bad = bytes.Clone(vl)
	binary.LittleEndian.PutUint32(bad[4+4*10:], 0x7fffffff) // a length (of an early element)
	files["vlen-length-huge.bin"] = bad[:len(bad)-len(bad)/3]
	files["vlen-truncated.bin"] = vl[:len(vl)-1]
	files["vlenz-garbage.bin"] = garbage(500)
	files["vlenzs-frame-4GiB.bin"] = zstdFrameDeclaring(4 << 30)
	files["vlenzs-frame-256MiB.bin"] = zstdFrameDeclaring(256 << 20)
	// A 28-byte Blosc chunk of one block claiming 512 MiB, more than
	// UnknownSizeCap.
	vb := bloscHeader(512<<20, 512<<20, 28)
	vb[3] = 1 // typesize 1: one stream
	vb = binary.LittleEndian.AppendUint32(vb, 16+4)
	vb = binary.LittleEndian.AppendUint32(vb, 4)
	files["vlenb-claims-512MiB.bin"] = append(vb, 1, 2, 3, 4)
	// The same claiming 128 MiB, under UnknownSizeCap: refused because
	// 28 bytes cannot hold that much.
	vb = bloscHeader(128<<20, 128<<20, 28)
	vb[3] = 1
	vb = binary.LittleEndian.AppendUint32(vb, 16+4)
	vb = binary.LittleEndian.AppendUint32(vb, 4)
	files["vlenb-claims-128MiB.bin"] = append(vb, 1, 2, 3, 4)
	// A .lzma header asking for a 1 GiB dictionary, of unknown size.
	la := []byte{0x5d}
	la = binary.LittleEndian.AppendUint32(la, 1<<30)
	la = binary.LittleEndian.AppendUint64(la, 1<<64-1)
	files["vlenl-dict-1GiB.bin"] = append(la, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	// Raw LZMA2 whose configuration asks for a 1 GiB dictionary.
	files["vlenl2-dict-1GiB.bin"] = []byte{1, 0, 3, 'a', 'b', 'c', 'd', 0}

	dir := filepath.Join("testdata", "hostile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// zstdWithoutSize rewrites the header of a single-segment zstd frame into
// one with a window of 2^windowLog bytes and no content size.
func zstdWithoutSize(t *testing.T, frame []byte, windowLog int) []byte {
	fhd := frame[4]
	if fhd&0x20 == 0 || fhd&0x03 != 0 {
		t.Fatalf("frame header descriptor %#x: not single-segment, or with a dictionary", fhd)
	}
	fcsLen := []int{1, 2, 4, 8}[fhd>>6]
	out := append([]byte{}, frame[:4]...)
	out = append(out, fhd&0x04, byte(windowLog-10)<<3) // keep the checksum flag; window descriptor
	if h := new(zstd.Header); h.Decode(append(out, frame[5+fcsLen:]...)) != nil || h.HasFCS {
		t.Fatalf("rewritten header does not parse or still has a content size")
	}
	return append(out, frame[5+fcsLen:]...)
}

// zstdFrameDeclaring returns a zstd frame whose header declares size bytes
// of content, followed by one empty raw block.
func zstdFrameDeclaring(size uint64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; FCS 8 bytes, single segment
	b = binary.LittleEndian.AppendUint64(b, size)
	return append(b, 0x01, 0x00, 0x00) // last block, raw, 0 bytes
}

// zstdRLEBomb returns a zstd frame without a content size whose blocks
// (4 bytes each: one RLE block of 128 KiB of zeros) decode to size bytes.
func zstdRLEBomb(size int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3} // magic; no FCS, no checksum; 128 KiB window
	const block = 128 << 10
	for n := size; n > 0; n -= block {
		h := uint32(block)<<3 | 1<<1 // RLE block of 128 KiB
		if n <= block {
			h |= 1 // the last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return b
}

// bloscHeader returns a Blosc1 header (version 2, lz4, byte shuffle, 2-byte
// items) claiming nbytes of content in blocks of blocksize, cbytes stored.
func bloscHeader(nbytes, blocksize, cbytes uint32) []byte {
	b := []byte{2, 1, 0x01 | 1<<5, 2}
	b = binary.LittleEndian.AppendUint32(b, nbytes)
	b = binary.LittleEndian.AppendUint32(b, blocksize)
	return binary.LittleEndian.AppendUint32(b, cbytes)
}
