package codec

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	izstd "github.com/zarrfs/zarrfs/internal/zstd"
)

func init() {
	Register(newZstd, "zstd", "numcodecs.zstd",
		"https://purl.org/zarr/spec/codec/zstd/1.0", // GDAL 3.6 (v3 draft of 2022, zarr-python 2.13's URI pattern)
	)
}

// Zstd is the bytes→bytes codec "zstd" (RFC 8878): the v3 extension and
// numcodecs Zstd.
type Zstd struct {
	Level    int  // zstd level; 0 is the default (3)
	Checksum bool // write the frame checksum
}

func newZstd(cfg Config) (Codec, error) {
	var c Zstd
	if _, err := cfg.Decode("zstd", "level", &c.Level); err != nil {
		return nil, err
	}
	if _, err := cfg.Decode("zstd", "checksum", &c.Checksum); err != nil {
		return nil, err
	}
	return c, nil
}

// Name implements Codec.
func (Zstd) Name() string { return "zstd" }

// EncodedSize implements BytesToBytes.
func (Zstd) EncodedSize(int) int { return -1 }

type zstdKey struct {
	level    zstd.EncoderLevel
	checksum bool
	// single forces a single-segment frame: the encoder writes the content
	// size of small inputs only then.
	single bool
}

var (
	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[zstdKey]*zstd.Encoder{}

	// zstdStreams holds streaming decoders for frames of unknown decoded
	// size, read through readExact so that they stop at UnknownSizeCap
	// (DecodeAll would decode, and allocate, all a frame holds).
	zstdStreams sync.Pool
)

// zstdStream returns a streaming decoder of data, and a function that puts
// it back in the pool.
func zstdStream(data []byte) (*zstd.Decoder, func(), error) {
	r := bytes.NewReader(data)
	if d, ok := zstdStreams.Get().(*zstd.Decoder); ok && d.Reset(r) == nil {
		return d, func() { d.Reset(nil); zstdStreams.Put(d) }, nil
	}
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(UnknownSizeCap+1),
		zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, nil, err
	}
	return d, func() { d.Reset(nil); zstdStreams.Put(d) }, nil
}

// encoder returns the shared encoder for c's settings and an input of n
// bytes (EncodeAll is safe for concurrent use).
func (c Zstd) encoder(n int) (*zstd.Encoder, error) {
	level := c.Level
	if level == 0 {
		level = 3 // zstd's default level
	}
	key := zstdKey{zstd.EncoderLevelFromZstd(level), c.Checksum, n <= zstd.MinWindowSize}
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	if e := zstdEncoders[key]; e != nil {
		return e, nil
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(key.level),
		zstd.WithEncoderCRC(key.checksum), zstd.WithZeroFrames(true), zstd.WithSingleSegment(key.single))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	zstdEncoders[key] = e
	return e, nil
}

// Encode implements BytesToBytes. The frame records its content size, which
// numcodecs needs to decode it.
func (c Zstd) Encode(data []byte) ([]byte, error) {
	e, err := c.encoder(len(data))
	if err != nil {
		return nil, err
	}
	return e.EncodeAll(data, nil), nil
}

// zstdMaxOutput bounds what n bytes of zstd frames can decode to: every
// block (at most 128 KiB of output) has a 3-byte header.
func zstdMaxOutput(n int) int64 { return (int64(n)/3 + 1) << 17 }

// Decode implements BytesToBytes. A frame that declares more than
// decodedSize bytes fails before anything is allocated for it, and no
// frame decodes past decodedSize.
func (Zstd) Decode(data []byte, decodedSize int) ([]byte, error) {
	if decodedSize < 0 {
		// The decoder allocates the content size a frame declares: refuse
		// a claim no frame of this length can make good (each block of at
		// most 128 KiB takes at least 3 bytes) before it does.
		var h zstd.Header
		if h.Decode(data) == nil && h.HasFCS && h.FrameContentSize > uint64(zstdMaxOutput(len(data))) {
			return nil, Corruptf("zstd", "frame of %d bytes declares %d", len(data), h.FrameContentSize)
		}
		d, done, err := zstdStream(data)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer done()
		return readExact(d, "zstd", -1)
	}
	return decodeNew(Zstd{}, data, decodedSize)
}

var _ DecoderInto = Zstd{}

// DecodeInto implements DecoderInto (internal/zstd: a frame that declares
// more than len(dst) bytes fails before it is decoded).
func (Zstd) DecodeInto(dst, data []byte) error {
	if err := izstd.DecodeInto(dst, data); err != nil {
		return Corruptf("zstd", "%w", err)
	}
	return nil
}
