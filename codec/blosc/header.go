// Package blosc reads and writes Blosc1 chunks, the format c-blosc 1.x
// writes and numcodecs.Blosc stores in Zarr arrays, in pure Go.
//
// A chunk is a 16-byte header, a table of block starts and the blocks, each
// optionally split into one stream per byte of the element type, each
// stream compressed with an inner codec (BloscLZ, LZ4, LZ4HC, Snappy, zlib
// or Zstandard) after a byte or bit shuffle. The layout follows c-blosc
// 1.21 (docs/BLOSC.md in this repository): block starts are
// offsets from the start of the chunk, a block is split only when the
// dont-split flag is clear, typesize <= 16, blocksize/typesize >= 128 and it
// is not the last short block, and bitshuffle leaves blocks whose element
// count is not a multiple of 8 unchanged.
//
// Decompress checks the header against the size the caller expects before
// it touches the payload (DecodedSize reads that size for callers that do
// not know it), and both Decompress and DecompressRange check every offset
// and length inside the chunk before they use it. Blocks are independent:
// DecompressRange decodes only the blocks a byte range covers, and big
// chunks are decoded on several goroutines. Compress writes chunks as
// c-blosc 1.21 lays them out. Errors match ErrCorrupt or ErrUnsupported.
package blosc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var (
	// ErrCorrupt marks a chunk that is not a valid Blosc1 chunk.
	ErrCorrupt = errors.New("blosc: corrupt chunk")
	// ErrUnsupported marks a valid-looking chunk or an option this package
	// does not implement (another format version, an unknown inner codec).
	ErrUnsupported = errors.New("blosc: unsupported")
)

// Error is the error of this package: its Kind (ErrCorrupt or
// ErrUnsupported), what is wrong, and the cause when another error was (an
// inner codec's). It matches its Kind and unwraps to its cause.
type Error struct {
	Kind   error
	Reason string // what is wrong, the cause's message included
	Err    error  // the cause, or nil
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Reason }

// Unwrap returns the Kind and the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func corruptf(format string, args ...any) error { return newError(ErrCorrupt, format, args) }

func unsupportedf(format string, args ...any) error { return newError(ErrUnsupported, format, args) }

// newError formats as fmt.Errorf does; an error formatted with %w is the
// cause.
func newError(kind error, format string, args []any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: kind, Reason: err.Error(), Err: errors.Unwrap(err)}
}

// HeaderSize is the size of the Blosc1 chunk header.
const HeaderSize = 16

const (
	formatVersion = 2 // the only chunk format version of c-blosc 1.x

	flagShuffle    = 0x01
	flagMemcpyed   = 0x02
	flagBitShuffle = 0x04
	flagReserved   = 0x08
	flagDontSplit  = 0x10

	minBufferSize = 128 // MIN_BUFFERSIZE: smaller buffers are stored raw; split threshold
	maxSplits     = 16  // MAX_SPLITS: larger types are never split
	maxTypeSize   = 255 // BLOSC_MAX_TYPESIZE
	// MaxBufferSize is the largest buffer c-blosc 1.x compresses
	// (BLOSC_MAX_BUFFERSIZE).
	MaxBufferSize = 1<<31 - 1 - HeaderSize
	// maxBlockSize is BLOSC_MAX_BLOCKSIZE.
	maxBlockSize = (1<<31 - 1 - maxTypeSize*4) / 3
)

// Codec formats stored in bits 5-7 of the flags byte.
const (
	formatBloscLZ = 0
	formatLZ4     = 1 // lz4 and lz4hc
	formatSnappy  = 2
	formatZlib    = 3
	formatZstd    = 4
)

// Header is the 16-byte header of a Blosc1 chunk.
type Header struct {
	Version   uint8 // chunk format version (2)
	VersionLZ uint8 // inner codec format version (1)
	Flags     uint8
	TypeSize  int // bytes per element, 1..255
	NBytes    int // decoded size
	BlockSize int // decoded bytes per block; the last block may be shorter
	CBytes    int // whole chunk size, header included
}

// Memcpyed reports whether the payload is the decoded data stored raw.
func (h Header) Memcpyed() bool { return h.Flags&flagMemcpyed != 0 }

// Compressor returns the inner codec that wrote the streams. LZ4 and LZ4HC
// write the same format and both read as LZ4.
func (h Header) Compressor() (Compressor, error) {
	switch h.Flags >> 5 {
	case formatBloscLZ:
		return BloscLZ, nil
	case formatLZ4:
		return LZ4, nil
	case formatSnappy:
		return Snappy, nil
	case formatZlib:
		return Zlib, nil
	case formatZstd:
		return Zstd, nil
	}
	return 0, unsupportedf("inner codec format %d", h.Flags>>5)
}

// NumBlocks returns the number of blocks of a chunk that is not memcpyed.
func (h Header) NumBlocks() int {
	if h.NBytes == 0 {
		return 0
	}
	return (h.NBytes + h.BlockSize - 1) / h.BlockSize
}

// ParseHeader reads and checks the header of chunk: the format version, the
// reserved flag, the sizes (cbytes must not exceed len(chunk): bytes after
// cbytes are ignored, as c-blosc ignores them and z5py writes them), the block size,
// the inner codec and, for memcpyed chunks, that the payload holds exactly
// nbytes. It allocates nothing.
func ParseHeader(chunk []byte) (Header, error) {
	if len(chunk) < HeaderSize {
		return Header{}, corruptf("%d bytes, shorter than the %d-byte header", len(chunk), HeaderSize)
	}
	h := Header{
		Version:   chunk[0],
		VersionLZ: chunk[1],
		Flags:     chunk[2],
		TypeSize:  int(chunk[3]),
		NBytes:    int(binary.LittleEndian.Uint32(chunk[4:])),
		BlockSize: int(binary.LittleEndian.Uint32(chunk[8:])),
		CBytes:    int(binary.LittleEndian.Uint32(chunk[12:])),
	}
	if h.Version != formatVersion {
		return h, unsupportedf("chunk format version %d (c-blosc 1.x writes version %d)", h.Version, formatVersion)
	}
	if h.CBytes > len(chunk) || h.CBytes < HeaderSize {
		return h, corruptf("header says %d bytes, chunk has %d", h.CBytes, len(chunk))
	}
	if h.NBytes > MaxBufferSize {
		return h, corruptf("decoded size %d exceeds the Blosc1 limit %d", h.NBytes, MaxBufferSize)
	}
	if h.NBytes == 0 {
		return h, nil
	}
	if h.Flags&flagReserved != 0 {
		return h, corruptf("reserved flag bit 3 set (flags %#02x)", h.Flags)
	}
	if h.TypeSize < 1 {
		return h, corruptf("typesize 0")
	}
	if h.BlockSize <= 0 || h.BlockSize > maxBlockSize || h.BlockSize > h.NBytes {
		return h, corruptf("block size %d for %d bytes", h.BlockSize, h.NBytes)
	}
	if h.Memcpyed() {
		if h.CBytes != h.NBytes+HeaderSize {
			return h, corruptf("memcpyed chunk of %d bytes holds %d, want %d", h.CBytes, h.CBytes-HeaderSize, h.NBytes)
		}
		return h, nil
	}
	if _, err := h.Compressor(); err != nil {
		return h, err
	}
	if h.VersionLZ != 1 {
		return h, unsupportedf("inner codec format version %d", h.VersionLZ)
	}
	if h.NumBlocks() > (h.CBytes-HeaderSize)/4 {
		return h, corruptf("%d blocks do not fit their start table in %d bytes", h.NumBlocks(), h.CBytes)
	}
	return h, nil
}
