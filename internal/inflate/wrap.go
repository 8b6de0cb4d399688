package inflate

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
)

// A HeaderError reports a gzip or zlib wrapper that is not one.
type HeaderError struct {
	Format string // "gzip" or "zlib"
	Reason string
}

func (e *HeaderError) Error() string { return "inflate: " + e.Format + ": " + e.Reason }

// A ChecksumError reports a stream whose decoded bytes do not match the
// checksum or length its wrapper records.
type ChecksumError struct {
	Format string // "gzip" or "zlib"
	What   string // "CRC-32", "length", "Adler-32"
}

func (e *ChecksumError) Error() string {
	return "inflate: " + e.Format + ": " + e.What + " checksum does not match the data"
}

// Gzip decodes the gzip members of src, one after another, into dst, as
// Python's gzip module reads them: zero bytes between and after members
// are skipped, anything else must be another member. It returns the
// number of bytes written, which is less than len(dst) when the members
// decode to less; to more, ErrTooLong. Header checksums (FHCRC) are read
// but not checked, as Python does not. No input at all is no members:
// 0 bytes, as Python reads it.
func Gzip(dst, src []byte) (int, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	o := 0
	for len(src) > 0 {
		body, err := gzipHeader(src)
		if err != nil {
			return o, err
		}
		src = src[body:]
		n, read, err := d.decode(dst, o, src)
		if err != nil {
			return o + n, err
		}
		src = src[read:]
		if len(src) < 8 {
			return o + n, &HeaderError{"gzip", "the trailer is cut short"}
		}
		if crc32.ChecksumIEEE(dst[o:o+n]) != binary.LittleEndian.Uint32(src) {
			return o + n, &ChecksumError{"gzip", "CRC-32"}
		}
		if uint32(n) != binary.LittleEndian.Uint32(src[4:]) {
			return o + n, &ChecksumError{"gzip", "length"}
		}
		src = bytes.TrimLeft(src[8:], "\x00") // padding
		o += n
	}
	return o, nil
}

// gzip header flags (RFC 1952, 2.3.1).
const (
	gzipFHCRC    = 1 << 1
	gzipFEXTRA   = 1 << 2
	gzipFNAME    = 1 << 3
	gzipFCOMMENT = 1 << 4
)

// gzipHeader returns the length of the gzip member header at the start of
// src.
func gzipHeader(src []byte) (int, error) {
	short := &HeaderError{"gzip", "the header is cut short"}
	if len(src) < 10 {
		return 0, short
	}
	if src[0] != 0x1f || src[1] != 0x8b {
		return 0, &HeaderError{"gzip", "not a gzip member (no magic number)"}
	}
	if src[2] != 8 {
		return 0, &HeaderError{"gzip", "compression method is not deflate"}
	}
	flags, at := src[3], 10
	if flags&gzipFEXTRA != 0 {
		if at+2 > len(src) {
			return 0, short
		}
		at += 2 + int(binary.LittleEndian.Uint16(src[at:]))
	}
	for _, f := range []byte{gzipFNAME, gzipFCOMMENT} {
		if flags&f == 0 {
			continue
		}
		for at < len(src) && src[at] != 0 {
			at++
		}
		at++ // the terminating zero
	}
	if flags&gzipFHCRC != 0 {
		at += 2
	}
	if at > len(src) {
		return 0, short
	}
	return at, nil
}

// Zlib decodes the zlib stream at the start of src into dst and checks its
// Adler-32. It returns the number of bytes written, which is less than
// len(dst) when the stream decodes to less; to more, ErrTooLong. Bytes
// after the stream are ignored, as zlib's decompress ignores them.
func Zlib(dst, src []byte) (int, error) {
	if len(src) < 2 {
		return 0, &HeaderError{"zlib", "the header is cut short"}
	}
	cmf, flg := src[0], src[1]
	switch {
	case cmf&15 != 8:
		return 0, &HeaderError{"zlib", "compression method is not deflate"}
	case cmf>>4 > 7:
		return 0, &HeaderError{"zlib", "window larger than 32 KiB"}
	case (uint(cmf)<<8|uint(flg))%31 != 0:
		return 0, &HeaderError{"zlib", "header check bits do not match"}
	case flg&0x20 != 0:
		return 0, &HeaderError{"zlib", "preset dictionaries are not supported"}
	}
	src = src[2:]
	n, read, err := Decode(dst, src)
	if err != nil {
		return n, err
	}
	if read+4 > len(src) {
		return n, &HeaderError{"zlib", "the trailer is cut short"}
	}
	if adler32.Checksum(dst[:n]) != binary.BigEndian.Uint32(src[read:]) {
		return n, &ChecksumError{"zlib", "Adler-32"}
	}
	return n, nil
}
