package codec

import "encoding/binary"

// splitVlen parses the numcodecs vlen layout of exactly n elements (a
// little-endian uint32 count, then a uint32 length and the bytes of each
// element) and returns the elements as sub-slices of data. Every length is
// checked against the bytes that remain before anything is sliced.
func splitVlen(name string, data []byte, n int) ([][]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf(name, "vlen data of %d bytes has no header", len(data))
	}
	count := binary.LittleEndian.Uint32(data)
	if n >= 0 && uint64(count) != uint64(n) {
		return nil, Corruptf(name, "vlen data holds %d elements, want %d", count, n)
	}
	rest := data[4:]
	// Each element needs at least its 4-byte length.
	if uint64(count) > uint64(len(rest))/4 {
		return nil, Corruptf(name, "vlen data of %d bytes cannot hold %d elements", len(data), count)
	}
	elems := make([][]byte, count)
	for i := range elems {
		if len(rest) < 4 {
			return nil, Corruptf(name, "vlen element %d: truncated length", i)
		}
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(l) > uint64(len(rest)) {
			return nil, Corruptf(name, "vlen element %d: length %d, only %d bytes left", i, l, len(rest))
		}
		elems[i] = rest[:l:l]
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return nil, Corruptf(name, "vlen data has %d bytes after the last element", len(rest))
	}
	return elems, nil
}
