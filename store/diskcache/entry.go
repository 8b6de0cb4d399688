package diskcache

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// An entry file is a fixed head, a JSON header and the value's bytes:
//
//	0   8 bytes  magic "ZFSCACH1"
//	8   uint32   length H of the header, little-endian
//	12  uint32   CRC-32C of everything after these 16 bytes (header and data)
//	16  H bytes  header (JSON: header below)
//	16+H         the bytes (header.Len of them)
//
// A file of any other length, with another checksum, or whose header names
// another store, key or range is corrupt: it is removed and read again
// from the store, never served.
const (
	magic    = "ZFSCACH1"
	headSize = 16
	// maxHeader bounds the header a reader accepts (keys are at most
	// store.MaxKeyLength bytes).
	maxHeader = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header says what an entry holds.
type header struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	Range string `json:"range"`
	// Size, ETag and ModTime are what the store said of the whole value
	// (store.Info); Size -1 when it did not say.
	Size    int64  `json:"size"`
	ETag    string `json:"etag,omitempty"`
	ModTime int64  `json:"mtime,omitempty"` // Unix nanoseconds; 0: unknown
	// Missing records that the key was not in the store (an answer
	// store.ErrNotExist), so that a missing chunk (the fill value) costs
	// no request either.
	Missing bool  `json:"missing,omitempty"`
	Len     int64 `json:"len"`
}

// entry is a decoded entry file.
type entry struct {
	header
	data []byte
}

// info returns what the store said of the whole value.
func (e *entry) info() store.Info {
	info := store.Info{Size: e.Size, ETag: e.ETag}
	if e.ModTime != 0 {
		info.ModTime = time.Unix(0, e.ModTime)
	}
	return info
}

// headerInfo fills the validators of h from info.
func headerInfo(h *header, info store.Info) {
	h.Size, h.ETag = info.Size, info.ETag
	if !info.ModTime.IsZero() {
		h.ModTime = info.ModTime.UnixNano()
	}
}

// errCorrupt reports an entry file that must not be served.
var errCorrupt = errors.New("diskcache: corrupt cache entry")

// encode returns the head of the file holding h and data: what precedes
// data in it (data follows unchanged, not copied).
func encode(h header, data []byte) ([]byte, error) {
	h.Len = int64(len(data))
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	b := make([]byte, headSize, headSize+len(hj))
	copy(b, magic)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(hj)))
	b = append(b, hj...)
	crc := crc32.Update(crc32.Checksum(b[headSize:], castagnoli), castagnoli, data)
	binary.LittleEndian.PutUint32(b[12:], crc)
	return b, nil
}

// checkHead checks the fixed head at the start of b of an entry file of
// size bytes, and returns the length of its header and its checksum.
func checkHead(b []byte, size int64) (hl int64, sum uint32, err error) {
	if len(b) < headSize || string(b[:8]) != magic {
		return 0, 0, fmt.Errorf("%w: no entry head", errCorrupt)
	}
	hl = int64(binary.LittleEndian.Uint32(b[8:]))
	if hl > maxHeader || headSize+hl > size {
		return 0, 0, fmt.Errorf("%w: header of %d bytes in a file of %d", errCorrupt, hl, size)
	}
	return hl, binary.LittleEndian.Uint32(b[12:]), nil
}

// parseHeader decodes the header hj of an entry file holding n bytes of
// data after it, which must be the entry of (id, key, rng). Only the
// checksum, which needs the data, is left to the caller.
func parseHeader(hj []byte, n int64, id, key, rng string) (*entry, error) {
	var e entry
	if err := json.Unmarshal(hj, &e.header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", errCorrupt, err)
	}
	if e.Len != n {
		return nil, fmt.Errorf("%w: %d bytes of data, header says %d", errCorrupt, n, e.Len)
	}
	if e.Missing && e.Len != 0 {
		return nil, fmt.Errorf("%w: a missing key's entry with %d bytes of data", errCorrupt, e.Len)
	}
	if e.Store != id || e.Key != key || e.Range != rng {
		return nil, fmt.Errorf("%w: holds %s %q %s, not %s %q %s", errCorrupt, e.Store, e.Key, e.Range, id, key, rng)
	}
	return &e, nil
}
