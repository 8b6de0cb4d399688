// Package icechunktest writes Icechunk repositories for tests: a small writer of Icechunk repositories for tests, following the spec
// (icechunk-python/docs/docs/reference/spec-v1.md, spec-v2.md,
// spec-v2-1.md of github.com/earth-mover/icechunk) and its FlatBuffers
// schemas (icechunk-format/flatbuffers/{common,snapshot,manifest,repo}.fbs):
// the 39-byte binary header ("Binary File Format": magic, 24-byte
// implementation name padded with spaces, spec version, file type,
// compression 1 = zstd) before a zstd-compressed FlatBuffer; ids in
// Crockford base 32 in paths; spec 1 references as refs/branch.NAME/
// ref.json and refs/tag.NAME/ref.json (a ref.json.deleted tombstone for a
// deleted tag) and parents in the snapshot file; spec 2 references,
// snapshot infos and parents in the repo info file at "repo", shapes as
// shape_v2 (num_chunks), manifest_files_v2, and virtual locations
// optionally zstd-compressed with the manifest's location_dictionary.
// It writes no transaction logs (a reader needs none: spec-v2-1.md "For
// implementers"). It shares no code with package icechunk, whose reader
// it tests.
package icechunktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// wNode is a node to write: a group, or an array with its chunks.
type wNode struct {
	id       [8]byte
	path     string
	userData string
	array    bool
	shape    []uint64 // array length per dimension
	chunks   []uint64 // chunk length per dimension
	dimNames []string
	// manifests: each manifest's extents (from, to per dim); nil: one
	// manifest covering everything.
	split [][2][]uint32
}

// wChunk is a chunk reference to write.
type wChunk struct {
	index    []uint32
	inline   []byte
	chunkID  *ID
	location string
	offset   uint64
	length   uint64
	etag     string
	lastMod  uint32
}

// wSnapshot is a snapshot to write.
type wSnapshot struct {
	id      ID
	parent  *ID
	at      time.Time
	message string
	nodes   []wNode
	chunks  map[string][]wChunk // by node path
}

// Fataler is what the writer needs of a test (testing.TB has it): a
// way to stop on an error.
type Fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// testWriter writes a repository into dir.
type testWriter struct {
	t          Fataler
	dir        string
	spec       int
	compressed bool // spec 2: compress virtual locations with a dictionary
	next       int  // for ids
	snaps      []*wSnapshot
	flexConfig []byte // spec 2: the repo info's config (FlexBuffers)
}

func (w *testWriter) newID() ID {
	w.next++
	var id ID
	for i := range id {
		id[i] = byte(w.next)*7 + byte(i)*13
	}
	// Past 255 ids (WriteArray's chunk files), the higher bits too; the
	// first 255 are as they always were.
	id[0] ^= byte(w.next >> 8)
	id[1] ^= byte(w.next >> 16)
	return id
}

func (w *testWriter) write(rel string, data []byte) {
	w.t.Helper()
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	// Replaced whole, never seen half written.
	if err := os.WriteFile(p+".tmp", data, 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		w.t.Fatal(err)
	}
}

// FileBytes puts the binary header before the zstd-compressed payload.
func FileBytes(spec, fileType int, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteString(fmt.Sprintf("%-24s", "zarrfs-test-writer"))
	b.Write([]byte{byte(spec), byte(fileType), 1})
	b.Write(testEncoder.EncodeAll(payload, nil))
	return b.Bytes()
}

// testEncoder compresses the test files (EncodeAll is safe for
// concurrent use).
var testEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))

// chunkFile writes a native chunk file holding parts back to back and
// returns its id and each part's offset.
func (w *testWriter) chunkFile(parts ...[]byte) (ID, []uint64) {
	id := w.newID()
	var b bytes.Buffer
	var offs []uint64
	for _, p := range parts {
		offs = append(offs, uint64(b.Len()))
		b.Write(p)
	}
	w.write("chunks/"+id.String(), b.Bytes())
	return id, offs
}

func objectID(b *flatbuffers.Builder, id []byte) flatbuffers.UOffsetT {
	b.Prep(1, len(id))
	for i := len(id) - 1; i >= 0; i-- {
		b.PlaceByte(id[i])
	}
	return b.Offset()
}

func TableVector(b *flatbuffers.Builder, offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	return b.EndVector(len(offs))
}

// Constants of the spec ("Binary File Format").
const (
	magic        = "ICE\xf0\x9f\xa7\x8aCHUNK"
	typeSnapshot = 1
	typeManifest = 2
	typeRepoInfo = 6
)

// ID is a 12-byte object id.
type ID [12]byte

// String is the id in Crockford base 32, as paths name it.
func (id ID) String() string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var out []byte
	var acc uint32
	bits := 0
	for _, c := range id {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, alphabet[acc>>bits&31])
		}
	}
	return string(append(out, alphabet[acc<<(5-bits)&31]))
}

// compareIndex orders chunk indexes as manifests sort them.
func compareIndex(a, b []uint32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

// covers reports whether the box [from, to) holds idx.
func covers(from, to, idx []uint32) bool {
	for i, v := range idx {
		if v < from[i] || v >= to[i] {
			return false
		}
	}
	return true
}
