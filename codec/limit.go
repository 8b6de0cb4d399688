package codec

import (
	"errors"
	"io"
)

// readExact reads the whole decoded stream r, which must yield exactly size
// bytes (or, when size < 0, at most MaxUnknownSize bytes). It never reads
// more than one byte past the limit, so a decompression bomb costs at most
// the size the caller expects. name is the codec, for messages.
func readExact(r io.Reader, name string, size int) ([]byte, error) {
	if size < 0 {
		out, err := io.ReadAll(io.LimitReader(r, MaxUnknownSize+1))
		if err != nil {
			return nil, Corruptf(name, "%v", err)
		}
		if len(out) > MaxUnknownSize {
			return nil, Corruptf(name, "decodes to more than %d bytes", MaxUnknownSize)
		}
		return out, nil
	}
	out := make([]byte, size)
	n, err := io.ReadFull(r, out)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, Corruptf(name, "decoded %d bytes, want %d", n, size)
		}
		return nil, Corruptf(name, "after %d bytes: %v", n, err)
	}
	// One more read makes the decompressor check its trailer and shows
	// whether the stream is longer than it should be.
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return nil, Corruptf(name, "decodes to more than %d bytes", size)
	case errors.Is(err, io.EOF):
		return out, nil
	default:
		return nil, Corruptf(name, "%v", err)
	}
}

// checkSize fails with a *CorruptError unless n is the decoded size the
// caller wants (any size when want < 0).
func checkSize(name string, n, want int) error {
	if want >= 0 && n != want {
		return Corruptf(name, "decoded %d bytes, want %d", n, want)
	}
	if want < 0 && n > MaxUnknownSize {
		return Corruptf(name, "decodes to more than %d bytes", MaxUnknownSize)
	}
	return nil
}
