// Package icechunk reads Icechunk repositories (spec versions 1 and 2, as
// the Icechunk project documents them in docs/reference/spec-v1.md,
// spec-v2.md and spec-v2-1.md, with the FlatBuffers schemas of
// icechunk-format/flatbuffers/*.fbs): the repository's references
// (branches, tags), its snapshots and their chunk manifests. Each snapshot
// is a store.Store of Zarr v3 keys (Snapshot): the nodes' zarr.json
// documents as Icechunk stores them, and chunk keys resolved through the
// manifests to inline, native (chunks/ in the repository) or virtual
// (a range of another file, with its ETag or modification-time condition)
// bytes. Tree presents a whole repository as one hierarchy:
// branches/NAME/, tags/NAME/ and snapshots/ID/, each a snapshot's tree.
//
// It is read-only: it never writes a repository. Every file is checked
// (magic, spec version, file type, compression) and parsed with bounds
// checked, so a hostile file fails the node that reads it with an error
// matching ErrCorrupt, never a panic.
package icechunk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// ErrCorrupt matches every error about a repository file that is not as
// the spec says (bad header, truncated or inconsistent FlatBuffer).
var ErrCorrupt = errors.New("icechunk: corrupt repository file")

// corruptf returns an error matching ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Magic opens every Icechunk metadata file: "ICE🧊CHUNK" in UTF-8.
const Magic = "ICE\xf0\x9f\xa7\x8aCHUNK"

// headerSize is the binary header's size (spec "Binary File Format"):
// 12 bytes of magic, 24 of implementation name, and one byte each of
// spec version, file type and compression.
const headerSize = 12 + 24 + 3

// File types of the header (spec "Binary File Format").
const (
	TypeSnapshot       = 1
	TypeManifest       = 2
	TypeTransactionLog = 4
	TypeRepoInfo       = 6
)

// maxPayload bounds what one metadata file may decompress to: a snapshot
// or a manifest of millions of chunks fits; a zstd bomb does not.
const maxPayload = 256 << 20

// Header is a metadata file's binary header.
type Header struct {
	Implementation string // the writer, e.g. "ic-2.0.0", right spaces trimmed
	SpecVersion    int    // 1 or 2
	FileType       int
	Compression    int // 0 none, 1 zstd
}

var decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPayload))

// ParseHeader reads the header at the start of data.
func ParseHeader(data []byte) (Header, error) {
	if len(data) < headerSize {
		return Header{}, corruptf("%d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	if string(data[:12]) != Magic {
		return Header{}, corruptf("no Icechunk magic")
	}
	h := Header{
		Implementation: strings.TrimRight(string(data[12:36]), " \x00"),
		SpecVersion:    int(data[36]),
		FileType:       int(data[37]),
		Compression:    int(data[38]),
	}
	if h.SpecVersion != 1 && h.SpecVersion != 2 {
		return h, corruptf("spec version %d (this reader knows 1 and 2)", h.SpecVersion)
	}
	return h, nil
}

// payload checks data's header for the file type want and returns the
// FlatBuffer it holds, decompressed.
func payload(data []byte, want int) (Header, []byte, error) {
	h, err := ParseHeader(data)
	if err != nil {
		return h, nil, err
	}
	if h.FileType != want {
		return h, nil, corruptf("file type %d, want %d", h.FileType, want)
	}
	body := data[headerSize:]
	switch h.Compression {
	case 0:
		return h, body, nil
	case 1:
		out, err := decoder.DecodeAll(body, nil)
		if err != nil {
			return h, nil, corruptf("zstd: %v", err)
		}
		if len(out) > maxPayload {
			return h, nil, corruptf("decompresses to more than %d bytes", maxPayload)
		}
		return h, out, nil
	default:
		return h, nil, corruptf("compression %d (0: none, 1: zstd)", h.Compression)
	}
}

// table is a FlatBuffer table. Its accessors index the buffer without
// checking; parse recovers their out-of-range panics into ErrCorrupt, and
// every loop is bounded by the buffer's size before it allocates.
type table struct{ flatbuffers.Table }

// rootTable returns the root table of the FlatBuffer buf.
func rootTable(buf []byte) table {
	if len(buf) < 8 {
		panic(errTruncated)
	}
	n := flatbuffers.GetUOffsetT(buf)
	return checkTable(buf, n)
}

var errTruncated = errors.New("icechunk: truncated FlatBuffer")

// checkTable returns the table at pos, its vtable checked to lie in buf.
func checkTable(buf []byte, pos flatbuffers.UOffsetT) table {
	if uint64(pos)+4 > uint64(len(buf)) {
		panic(errTruncated)
	}
	vt := int64(pos) - int64(flatbuffers.GetSOffsetT(buf[pos:]))
	if vt < 0 || vt+4 > int64(len(buf)) {
		panic(errTruncated)
	}
	if n := int64(flatbuffers.GetVOffsetT(buf[vt:])); n < 4 || vt+n > int64(len(buf)) {
		panic(errTruncated)
	}
	return table{flatbuffers.Table{Bytes: buf, Pos: pos}}
}

// field returns the absolute position of field id, 0 when absent.
func (t table) field(id int) flatbuffers.UOffsetT {
	o := t.Offset(flatbuffers.VOffsetT(4 + 2*id))
	if o == 0 {
		return 0
	}
	return t.Pos + flatbuffers.UOffsetT(o)
}

func (t table) uint64(id int, def uint64) uint64 {
	if o := t.field(id); o != 0 {
		return t.GetUint64(o)
	}
	return def
}

func (t table) uint32(id int, def uint32) uint32 {
	if o := t.field(id); o != 0 {
		return t.GetUint32(o)
	}
	return def
}

func (t table) int32(id int, def int32) int32 {
	if o := t.field(id); o != 0 {
		return t.GetInt32(o)
	}
	return def
}

func (t table) uint8(id int, def uint8) uint8 {
	if o := t.field(id); o != 0 {
		return t.GetUint8(o)
	}
	return def
}

// bytes returns the byte vector (or string) field id, nil when absent.
func (t table) bytes(id int) []byte {
	o := t.field(id)
	if o == 0 {
		return nil
	}
	return bytes.Clone(t.ByteVector(o))
}

func (t table) string(id int) string { return string(t.bytes(id)) }

// has reports whether field id is present.
func (t table) has(id int) bool { return t.field(id) != 0 }

// inline returns the n bytes of the struct field id (ObjectId12,
// ObjectId8), nil when absent.
func (t table) inline(id, n int) []byte {
	o := t.field(id)
	if o == 0 {
		return nil
	}
	return bytes.Clone(t.Bytes[o : int(o)+n])
}

// vector returns the start and length of the vector field id, each of
// whose elements is elem bytes, checked to lie in the buffer.
func (t table) vector(id, elem int) (start flatbuffers.UOffsetT, n int) {
	o := t.field(id)
	if o == 0 {
		return 0, 0
	}
	o = t.Indirect(o)
	n = int(flatbuffers.GetUOffsetT(t.Bytes[o:]))
	start = o + 4
	if int64(start)+int64(n)*int64(elem) > int64(len(t.Bytes)) {
		panic(errTruncated)
	}
	return start, n
}

// tables returns the tables of the vector of tables field id.
func (t table) tables(id int) []table {
	start, n := t.vector(id, 4)
	out := make([]table, n)
	for i := range out {
		p := start + flatbuffers.UOffsetT(4*i)
		out[i] = checkTable(t.Bytes, p+flatbuffers.GetUOffsetT(t.Bytes[p:]))
	}
	return out
}

// sub returns the table field id; ok is false when absent.
func (t table) sub(id int) (table, bool) {
	o := t.field(id)
	if o == 0 {
		return table{}, false
	}
	return checkTable(t.Bytes, t.Indirect(o)), true
}

// parse runs f, turning the panic of an out-of-range access into an error
// matching ErrCorrupt.
func parse(what string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = corruptf("%s: truncated or inconsistent FlatBuffer (%v)", what, r)
		}
	}()
	f()
	return nil
}

// le reads little-endian integers of a struct inside a vector.
var le = binary.LittleEndian
