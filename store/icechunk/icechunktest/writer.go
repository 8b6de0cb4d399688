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
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
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

// testWriter writes a repository into dir.
type testWriter struct {
	t          testing.TB
	dir        string
	spec       int
	compressed bool // spec 2: compress virtual locations with a dictionary
	next       byte // for ids
	snaps      []*wSnapshot
}

func (w *testWriter) newID() ID {
	w.next++
	var id ID
	for i := range id {
		id[i] = w.next*7 + byte(i)*13
	}
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

// manifest writes the manifest of one snapshot's chunks for the nodes
// and extents given, returning its id, size and number of refs.
func (w *testWriter) manifest(arrays map[[8]byte][]wChunk) (ID, int, int) {
	id := w.newID()
	b := flatbuffers.NewBuilder(1024)
	var nodeIDs [][8]byte
	for k := range arrays {
		nodeIDs = append(nodeIDs, k)
	}
	sort.Slice(nodeIDs, func(i, j int) bool { return bytes.Compare(nodeIDs[i][:], nodeIDs[j][:]) < 0 })
	var dict []byte
	var enc *zstd.Encoder
	if w.spec == 2 && w.compressed {
		var locs [][]byte
		var hist []byte
		for _, n := range nodeIDs {
			for _, c := range arrays[n] {
				if c.location != "" {
					locs = append(locs, []byte(c.location))
					hist = append(hist, c.location...)
				}
			}
		}
		if len(locs) > 0 {
			// BuildDict wants samples that share content with the
			// history and have bytes of their own: variants of the locations.
			base := len(locs)
			for i := range 64 {
				locs = append(locs, []byte(fmt.Sprintf("%s?v=%x%c", locs[i%base], i*7919, 'A'+i%26)))
			}
			var err error
			dict, err = zstd.BuildDict(zstd.BuildDictOptions{ID: 7, Contents: locs, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
			if err != nil {
				w.t.Fatal(err)
			}
			enc, err = zstd.NewWriter(nil, zstd.WithEncoderDict(dict))
			if err != nil {
				w.t.Fatal(err)
			}
			defer enc.Close()
		}
	}
	nrefs := 0
	var arrs []flatbuffers.UOffsetT
	for _, n := range nodeIDs {
		refs := slices.Clone(arrays[n])
		sort.Slice(refs, func(i, j int) bool { return compareIndex(refs[i].index, refs[j].index) < 0 })
		var offs []flatbuffers.UOffsetT
		for _, c := range refs {
			nrefs++
			b.StartVector(4, len(c.index), 4)
			for i := len(c.index) - 1; i >= 0; i-- {
				b.PrependUint32(c.index[i])
			}
			idx := b.EndVector(len(c.index))
			var inl, loc, etag, cloc flatbuffers.UOffsetT
			if c.inline != nil {
				inl = b.CreateByteVector(c.inline)
			}
			if c.location != "" {
				if enc != nil {
					cloc = b.CreateByteVector(enc.EncodeAll([]byte(c.location), nil))
				} else {
					loc = b.CreateString(c.location)
				}
			}
			if c.etag != "" {
				etag = b.CreateString(c.etag)
			}
			// ChunkRef: index 0, inline 1, offset 2, length 3,
			// chunk_id 4, location 5, checksum_etag 6,
			// checksum_last_modified 7, compressed_location 8.
			b.StartObject(10)
			b.PrependUOffsetTSlot(0, idx, 0)
			if inl != 0 {
				b.PrependUOffsetTSlot(1, inl, 0)
			}
			b.PrependUint64Slot(2, c.offset, 0)
			b.PrependUint64Slot(3, c.length, 0)
			if c.chunkID != nil {
				b.PrependStructSlot(4, objectID(b, c.chunkID[:]), 0)
			}
			if loc != 0 {
				b.PrependUOffsetTSlot(5, loc, 0)
			}
			if etag != 0 {
				b.PrependUOffsetTSlot(6, etag, 0)
			}
			b.PrependUint32Slot(7, c.lastMod, 0)
			if cloc != 0 {
				b.PrependUOffsetTSlot(8, cloc, 0)
			}
			offs = append(offs, b.EndObject())
		}
		rv := TableVector(b, offs)
		// ArrayManifest: node_id 0, refs 1.
		b.StartObject(3)
		b.PrependStructSlot(0, objectID(b, n[:]), 0)
		b.PrependUOffsetTSlot(1, rv, 0)
		arrs = append(arrs, b.EndObject())
	}
	av := TableVector(b, arrs)
	var dv flatbuffers.UOffsetT
	if dict != nil {
		dv = b.CreateByteVector(dict)
	}
	// Manifest: id 0, arrays 1, location_dictionary 2,
	// compression_algorithm 3 (default 1).
	b.StartObject(5)
	b.PrependStructSlot(0, objectID(b, id[:]), 0)
	b.PrependUOffsetTSlot(1, av, 0)
	if dv != 0 {
		b.PrependUOffsetTSlot(2, dv, 0)
	}
	if w.spec == 2 && dict == nil {
		b.PrependUint8Slot(3, 0, 1)
	}
	b.Finish(b.EndObject())
	data := FileBytes(w.spec, typeManifest, b.FinishedBytes())
	w.write("manifests/"+id.String(), data)
	return id, len(data), nrefs
}

// snapshot writes snapshot s (and its manifests).
func (w *testWriter) snapshot(s *wSnapshot) {
	w.snaps = append(w.snaps, s)
	type mfile struct {
		id          ID
		size, nrefs int
	}
	var mfiles []mfile
	refsOf := map[string][]flatbuffers.UOffsetT{} // filled below, per node
	b := flatbuffers.NewBuilder(1024)
	// Manifests: one per extent box (all nodes' chunks in the box
	// sharing a manifest when boxes coincide).
	type box struct {
		node   *wNode
		from   []uint32
		to     []uint32
		manID  ID
		chunks []wChunk
	}
	var boxes []*box
	for i := range s.nodes {
		n := &s.nodes[i]
		if !n.array || len(s.chunks[n.path]) == 0 {
			continue
		}
		split := n.split
		if split == nil {
			var from, to []uint32
			for d := range n.shape {
				from = append(from, 0)
				to = append(to, uint32((n.shape[d]+n.chunks[d]-1)/n.chunks[d]))
			}
			split = [][2][]uint32{{from, to}}
		}
		for _, sp := range split {
			bx := &box{node: n, from: sp[0], to: sp[1]}
			for _, c := range s.chunks[n.path] {
				if covers(bx.from, bx.to, c.index) {
					bx.chunks = append(bx.chunks, c)
				}
			}
			if len(bx.chunks) > 0 {
				boxes = append(boxes, bx)
			}
		}
	}
	for _, bx := range boxes {
		id, size, nrefs := w.manifest(map[[8]byte][]wChunk{bx.node.id: bx.chunks})
		bx.manID = id
		mfiles = append(mfiles, mfile{id, size, nrefs})
	}
	sort.Slice(mfiles, func(i, j int) bool { return bytes.Compare(mfiles[i].id[:], mfiles[j].id[:]) < 0 })
	for _, bx := range boxes {
		b.StartVector(8, len(bx.from), 4)
		for d := len(bx.from) - 1; d >= 0; d-- {
			b.Prep(4, 8)
			b.PrependUint32(bx.to[d])
			b.PrependUint32(bx.from[d])
		}
		ext := b.EndVector(len(bx.from))
		// ManifestRef: object_id 0, extents 1.
		b.StartObject(2)
		b.PrependStructSlot(0, objectID(b, bx.manID[:]), 0)
		b.PrependUOffsetTSlot(1, ext, 0)
		refsOf[bx.node.path] = append(refsOf[bx.node.path], b.EndObject())
	}
	nodes := slices.Clone(s.nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].path < nodes[j].path })
	var nodeOffs []flatbuffers.UOffsetT
	for _, n := range nodes {
		path := b.CreateString(n.path)
		ud := b.CreateByteVector([]byte(n.userData))
		var data flatbuffers.UOffsetT
		kind := byte(2)
		if n.array {
			kind = 1
			var shapeV2 []flatbuffers.UOffsetT
			if w.spec == 2 {
				for d := range n.shape {
					// DimensionShapeV2: array_length 0, num_chunks 1.
					b.StartObject(2)
					b.PrependUint64Slot(0, n.shape[d], 0)
					b.PrependUint32Slot(1, uint32((n.shape[d]+n.chunks[d]-1)/n.chunks[d]), 0)
					shapeV2 = append(shapeV2, b.EndObject())
				}
			}
			var sv2 flatbuffers.UOffsetT
			if w.spec == 2 {
				sv2 = TableVector(b, shapeV2)
			}
			// shape: [DimensionShape] structs (array_length,
			// chunk_length), empty in spec 2.
			rank := len(n.shape)
			if w.spec == 2 {
				rank = 0
			}
			b.StartVector(16, rank, 8)
			for d := rank - 1; d >= 0; d-- {
				b.Prep(8, 16)
				b.PrependUint64(n.chunks[d])
				b.PrependUint64(n.shape[d])
			}
			shape := b.EndVector(rank)
			var names []flatbuffers.UOffsetT
			for _, dn := range n.dimNames {
				var so flatbuffers.UOffsetT
				if dn != "" {
					so = b.CreateString(dn)
				}
				b.StartObject(1)
				if so != 0 {
					b.PrependUOffsetTSlot(0, so, 0)
				}
				names = append(names, b.EndObject())
			}
			var nv flatbuffers.UOffsetT
			if n.dimNames != nil {
				nv = TableVector(b, names)
			}
			mv := TableVector(b, refsOf[n.path])
			// ArrayNodeData: shape 0, dimension_names 1, manifests 2,
			// shape_v2 3.
			b.StartObject(4)
			b.PrependUOffsetTSlot(0, shape, 0)
			if nv != 0 {
				b.PrependUOffsetTSlot(1, nv, 0)
			}
			b.PrependUOffsetTSlot(2, mv, 0)
			if sv2 != 0 {
				b.PrependUOffsetTSlot(3, sv2, 0)
			}
			data = b.EndObject()
		} else {
			b.StartObject(0)
			data = b.EndObject()
		}
		// NodeSnapshot: id 0, path 1, user_data 2, node_data_type 3,
		// node_data 4.
		b.StartObject(6)
		b.PrependStructSlot(0, objectID(b, n.id[:]), 0)
		b.PrependUOffsetTSlot(1, path, 0)
		b.PrependUOffsetTSlot(2, ud, 0)
		b.PrependByteSlot(3, kind, 0)
		b.PrependUOffsetTSlot(4, data, 0)
		nodeOffs = append(nodeOffs, b.EndObject())
	}
	nv := TableVector(b, nodeOffs)
	msg := b.CreateString(s.message)
	meta := TableVector(b, nil)
	// manifest_files (spec 1: ManifestFileInfo structs of 32 bytes: id,
	// 4 bytes of padding, size_bytes, num_chunk_refs, 4 of padding) or
	// manifest_files_v2 (spec 2: tables).
	var mf, mf2 flatbuffers.UOffsetT
	if w.spec == 1 {
		b.StartVector(32, len(mfiles), 8)
		for i := len(mfiles) - 1; i >= 0; i-- {
			b.Prep(8, 32)
			b.Pad(4)
			b.PrependUint32(uint32(mfiles[i].nrefs))
			b.PrependUint64(uint64(mfiles[i].size))
			b.Pad(4)
			objectID(b, mfiles[i].id[:])
		}
		mf = b.EndVector(len(mfiles))
	} else {
		b.StartVector(32, 0, 8)
		mf = b.EndVector(0)
		var offs []flatbuffers.UOffsetT
		for _, m := range mfiles {
			b.StartObject(4)
			b.PrependStructSlot(0, objectID(b, m.id[:]), 0)
			b.PrependUint64Slot(1, uint64(m.size), 0)
			b.PrependUint32Slot(2, uint32(m.nrefs), 0)
			offs = append(offs, b.EndObject())
		}
		mf2 = TableVector(b, offs)
	}
	// Snapshot: id 0, parent_id 1, nodes 2, flushed_at 3, message 4,
	// metadata 5, manifest_files 6, manifest_files_v2 7.
	b.StartObject(9)
	b.PrependStructSlot(0, objectID(b, s.id[:]), 0)
	if w.spec == 1 && s.parent != nil {
		b.PrependStructSlot(1, objectID(b, s.parent[:]), 0)
	}
	b.PrependUOffsetTSlot(2, nv, 0)
	b.PrependUint64Slot(3, uint64(s.at.UnixMicro()), 0)
	b.PrependUOffsetTSlot(4, msg, 0)
	b.PrependUOffsetTSlot(5, meta, 0)
	b.PrependUOffsetTSlot(6, mf, 0)
	if mf2 != 0 {
		b.PrependUOffsetTSlot(7, mf2, 0)
	}
	b.Finish(b.EndObject())
	w.write("snapshots/"+s.id.String(), FileBytes(w.spec, typeSnapshot, b.FinishedBytes()))
}

// refs writes the references: spec 1 ref files, or the spec 2 repo info
// file with every snapshot written so far.
func (w *testWriter) refs(branches, tags map[string]ID, deleted []string) {
	if w.spec == 1 {
		write := func(kind, name string, id ID) {
			w.write("refs/"+kind+"."+name+"/ref.json", []byte(`{"snapshot":"`+id.String()+`"}`))
		}
		for n, id := range branches {
			write("branch", n, id)
		}
		for n, id := range tags {
			write("tag", n, id)
		}
		for _, n := range deleted {
			write("tag", n, w.snaps[0].id)
			w.write("refs/tag."+n+"/ref.json.deleted", nil)
		}
		return
	}
	// SnapshotInfo list sorted by id; parents as indexes into it.
	snaps := slices.Clone(w.snaps)
	sort.Slice(snaps, func(i, j int) bool { return bytes.Compare(snaps[i].id[:], snaps[j].id[:]) < 0 })
	index := map[ID]int{}
	for i, s := range snaps {
		index[s.id] = i
	}
	b := flatbuffers.NewBuilder(1024)
	refVec := func(m map[string]ID) flatbuffers.UOffsetT {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		var offs []flatbuffers.UOffsetT
		for _, n := range names {
			so := b.CreateString(n)
			b.StartObject(2)
			b.PrependUOffsetTSlot(0, so, 0)
			b.PrependUint32Slot(1, uint32(index[m[n]]), 0)
			offs = append(offs, b.EndObject())
		}
		return TableVector(b, offs)
	}
	tv, bv := refVec(tags), refVec(branches)
	sort.Strings(deleted)
	var dels []flatbuffers.UOffsetT
	for _, n := range deleted {
		dels = append(dels, b.CreateString(n))
	}
	dv := TableVector(b, dels)
	var infos []flatbuffers.UOffsetT
	for _, s := range snaps {
		msg := b.CreateString(s.message)
		meta := TableVector(b, nil)
		parent := int32(-1)
		if s.parent != nil {
			parent = int32(index[*s.parent])
		}
		// SnapshotInfo: id 0, parent_offset 1, flushed_at 2, message 3,
		// metadata 4.
		b.StartObject(6)
		b.PrependStructSlot(0, objectID(b, s.id[:]), 0)
		b.PrependInt32Slot(1, parent, 0)
		b.PrependUint64Slot(2, uint64(s.at.UnixMicro()), 0)
		b.PrependUOffsetTSlot(3, msg, 0)
		b.PrependUOffsetTSlot(4, meta, 0)
		infos = append(infos, b.EndObject())
	}
	sv := TableVector(b, infos)
	b.StartObject(3)
	status := b.EndObject()
	uv := TableVector(b, nil)
	rmeta := TableVector(b, nil)
	// Repo: spec_version 0, tags 1, branches 2, deleted_tags 3,
	// snapshots 4, status 5, metadata 6, latest_updates 7.
	b.StartObject(13)
	b.PrependUint8Slot(0, 2, 0)
	b.PrependUOffsetTSlot(1, tv, 0)
	b.PrependUOffsetTSlot(2, bv, 0)
	b.PrependUOffsetTSlot(3, dv, 0)
	b.PrependUOffsetTSlot(4, sv, 0)
	b.PrependUOffsetTSlot(5, status, 0)
	b.PrependUOffsetTSlot(6, rmeta, 0)
	b.PrependUOffsetTSlot(7, uv, 0)
	b.Finish(b.EndObject())
	w.write("repo", FileBytes(2, typeRepoInfo, b.FinishedBytes()))
}

// arrayJSON is an array's zarr.json as zarr-python 3 writes it for
// Icechunk: bytes (little-endian) then zstd.
func arrayJSON(shape, chunks []uint64, dtype, fill string, keyEnc string, dims []string) string {
	m := map[string]any{
		"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": chunks}},
		"chunk_key_encoding": json.RawMessage(keyEnc),
		"fill_value":         json.RawMessage(fill),
		"codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
			map[string]any{"name": "zstd", "configuration": map[string]any{"level": 0, "checksum": false}}},
		"attributes": map[string]any{"written by": "zarrfs test writer"},
	}
	if dims != nil {
		m["dimension_names"] = dims
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const groupJSON = `{"zarr_format":3,"node_type":"group","attributes":{"this":"is a nice group","size":42.0}}`

// zstdChunk encodes the elements of one chunk (little-endian) as the
// arrays' codecs do: bytes, then zstd.
func zstdChunk(vals []float64, itemsize int) []byte {
	raw := make([]byte, len(vals)*itemsize)
	for i, v := range vals {
		switch itemsize {
		case 1:
			raw[i] = byte(int8(v))
		case 2:
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(int16(v)))
		case 4:
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
		}
	}
	return testEncoder.EncodeAll(raw, nil)
}

// chunkVals returns the values of chunk idx of a 2-D array of shape
// (rows, cols) and chunks (cr, cc), elements f(i, j), padded with 0 past
// the edge as Zarr writes edge chunks whole.
func chunkVals(idx []uint32, cr, cc int, f func(i, j int) float64) []float64 {
	out := make([]float64, 0, cr*cc)
	for a := range cr {
		for b := range cc {
			out = append(out, f(int(idx[0])*cr+a, int(idx[1])*cc+b))
		}
	}
	return out
}

// Values of the test repository's arrays, as formulas.
func bigValue(i, j int) float64   { return float64(i*10+j) + 0.5 }
func innerValue(i, j int) float64 { return float64(i*4 - j) }

// Repo is what Write wrote: its directory and the snapshot ids by name.
type Repo struct {
	Dir   string
	Snaps map[string]ID
	// VirtualFile holds the virtual chunk (at offset 7); with
	// Options.VirtualURL the caller copies it there.
	VirtualFile string

	w              *testWriter
	branches, tags map[string]ID
	deleted        []string
}

// SetBranch points branch name at snapshot snap ("s1" … "s5") and writes
// the references again (spec 1: the branch's ref.json; spec 2: the repo
// info file, replaced by a rename as Icechunk's conditional write
// replaces it).
func (r *Repo) SetBranch(name, snap string) {
	r.branches[name] = r.Snaps[snap]
	r.w.refs(r.branches, r.tags, r.deleted)
}

// Write writes, in the manner of the Icechunk project's
// test_can_read_old.py, a repository of spec version spec into a new
// directory, and a file of virtual chunks beside it:
//
//	init  "Repository initialized"        no nodes
//	s1    "empty structure"               /, /group1, /group1/big (float32 10×10, chunks 5×5, fill NaN),
//	                                      /group1/small (int8 5, chunks 1, fill 8)
//	s2    "fill data"                     big = i*10+j+0.5 in native chunks (two chunks in one file),
//	                                      small = 84 inline
//	s3    "set virtual chunk"             big chunk (0,0) virtual, at offset 7 of a file outside the repo   ← main
//	s4    "delete a chunk" (on dev)       small chunk 4 deleted (fill 8)                                     ← tag v1
//	s5    "more structure" (on dev)       /group2/inner (int16 5×4, chunks 2×2, v2 keys "i.j",
//	                                      two manifests split along dimension 0) = i*4-j                     ← dev, tag v2
//
// and tag "gone" deleted.
func Write(t testing.TB, spec int, compressed bool) *Repo {
	t.Helper()
	return WriteWith(t, spec, compressed, Options{})
}

// WriteWith is Write with opts (config.go).
func WriteWith(t testing.TB, spec int, compressed bool, opts Options) *Repo {
	t.Helper()
	top := t.TempDir()
	w := &testWriter{t: t, dir: filepath.Join(top, "repo"), spec: spec, compressed: compressed}
	virt := filepath.Join(top, "virtual.bin")
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	init := &wSnapshot{id: ID{0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34},
		at: day, message: "Repository initialized"}
	w.snapshot(init)

	big := wNode{id: [8]byte{1, 1}, path: "/group1/big", array: true, shape: []uint64{10, 10}, chunks: []uint64{5, 5},
		userData: arrayJSON([]uint64{10, 10}, []uint64{5, 5}, "float32", `"NaN"`,
			`{"name":"default","configuration":{"separator":"/"}}`, []string{"y", "x"}), dimNames: []string{"y", "x"}}
	small := wNode{id: [8]byte{1, 2}, path: "/group1/small", array: true, shape: []uint64{5}, chunks: []uint64{1},
		userData: arrayJSON([]uint64{5}, []uint64{1}, "int8", `8`, `{"name":"default","configuration":{"separator":"/"}}`, nil)}
	structure := []wNode{
		{id: [8]byte{0, 1}, path: "/", userData: `{"zarr_format":3,"node_type":"group","attributes":{}}`},
		{id: [8]byte{0, 2}, path: "/group1", userData: groupJSON},
		big, small,
	}
	s1 := &wSnapshot{id: w.newID(), parent: &init.id, at: day.Add(time.Hour), message: "empty structure", nodes: structure}
	w.snapshot(s1)

	bigChunks := func(virtual bool) []wChunk {
		c00 := zstdChunk(chunkVals([]uint32{0, 0}, 5, 5, bigValue), 4)
		c01 := zstdChunk(chunkVals([]uint32{0, 1}, 5, 5, bigValue), 4)
		c10 := zstdChunk(chunkVals([]uint32{1, 0}, 5, 5, bigValue), 4)
		c11 := zstdChunk(chunkVals([]uint32{1, 1}, 5, 5, bigValue), 4)
		shared, offs := w.chunkFile(c01, c10)
		own, _ := w.chunkFile(c11)
		out := []wChunk{
			{index: []uint32{0, 1}, chunkID: &shared, offset: offs[0], length: uint64(len(c01))},
			{index: []uint32{1, 0}, chunkID: &shared, offset: offs[1], length: uint64(len(c10))},
			{index: []uint32{1, 1}, chunkID: &own, length: uint64(len(c11))},
		}
		if !virtual {
			first, _ := w.chunkFile(c00)
			return append(out, wChunk{index: []uint32{0, 0}, chunkID: &first, length: uint64(len(c00))})
		}
		if err := os.WriteFile(virt, append([]byte("garbage"), c00...), 0o644); err != nil {
			t.Fatal(err)
		}
		loc := "file://" + virt
		if opts.VirtualURL != "" {
			loc = opts.VirtualURL
		}
		return append(out, wChunk{index: []uint32{0, 0}, location: loc, offset: 7, length: uint64(len(c00)),
			lastMod: uint32(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix())})
	}
	smallChunks := func(n int) []wChunk {
		var out []wChunk
		for i := range n {
			out = append(out, wChunk{index: []uint32{uint32(i)}, inline: zstdChunk([]float64{84}, 1)})
		}
		return out
	}
	s2 := &wSnapshot{id: w.newID(), parent: &s1.id, at: day.Add(2 * time.Hour), message: "fill data", nodes: structure,
		chunks: map[string][]wChunk{big.path: bigChunks(false), small.path: smallChunks(5)}}
	w.snapshot(s2)
	s3 := &wSnapshot{id: w.newID(), parent: &s2.id, at: day.Add(3 * time.Hour), message: "set virtual chunk", nodes: structure,
		chunks: map[string][]wChunk{big.path: bigChunks(true), small.path: smallChunks(5)}}
	w.snapshot(s3)
	s4 := &wSnapshot{id: w.newID(), parent: &s3.id, at: day.Add(4 * time.Hour), message: "delete a chunk", nodes: structure,
		chunks: map[string][]wChunk{big.path: s3.chunks[big.path], small.path: smallChunks(4)}}
	w.snapshot(s4)

	inner := wNode{id: [8]byte{2, 1}, path: "/group2/inner", array: true, shape: []uint64{5, 4}, chunks: []uint64{2, 2},
		userData: arrayJSON([]uint64{5, 4}, []uint64{2, 2}, "int16", `0`, `{"name":"v2","configuration":{"separator":"."}}`, nil),
		split:    [][2][]uint32{{{0, 0}, {2, 2}}, {{2, 0}, {3, 2}}}}
	var innerChunks []wChunk
	for ci := range 3 {
		for cj := range 2 {
			idx := []uint32{uint32(ci), uint32(cj)}
			id, _ := w.chunkFile(zstdChunk(chunkVals(idx, 2, 2, innerValue), 2))
			innerChunks = append(innerChunks, wChunk{index: idx, chunkID: &id, length: uint64(len(zstdChunk(chunkVals(idx, 2, 2, innerValue), 2)))})
		}
	}
	more := append(slices.Clone(structure),
		wNode{id: [8]byte{2, 0}, path: "/group2", userData: groupJSON}, inner)
	s5 := &wSnapshot{id: w.newID(), parent: &s4.id, at: day.Add(5 * time.Hour), message: "more structure", nodes: more,
		chunks: map[string][]wChunk{big.path: s4.chunks[big.path], small.path: s4.chunks[small.path], inner.path: innerChunks}}
	w.snapshot(s5)
	w.config(opts.Containers)
	r := &Repo{Dir: w.dir, VirtualFile: virt, Snaps: map[string]ID{"init": init.id, "s1": s1.id, "s2": s2.id, "s3": s3.id, "s4": s4.id, "s5": s5.id},
		w: w, branches: map[string]ID{"main": s3.id, "dev": s5.id}, tags: map[string]ID{"v1": s4.id, "v2": s5.id}, deleted: []string{"gone"}}
	w.refs(r.branches, r.tags, r.deleted)
	return r
}

// Expected returns the elements of each array of snapshot name
// ("s1" … "s5"), C order, as formulas give them; nil: the array is absent.
func Expected(snap, array string) []float64 {
	n := map[string]int{"init": 0, "s1": 1, "s2": 2, "s3": 3, "s4": 4, "s5": 5}[snap]
	switch array {
	case "group1/big":
		if n < 1 {
			return nil
		}
		var out []float64
		for i := range 10 {
			for j := range 10 {
				if n == 1 {
					out = append(out, math.NaN())
				} else {
					out = append(out, float64(float32(bigValue(i, j))))
				}
			}
		}
		return out
	case "group1/small":
		if n < 1 {
			return nil
		}
		out := []float64{8, 8, 8, 8, 8}
		for i := range out {
			if n >= 2 && (i < 4 || n < 4) {
				out[i] = 84
			}
		}
		return out
	case "group2/inner":
		if n < 5 {
			return nil
		}
		var out []float64
		for i := range 5 {
			for j := range 4 {
				out = append(out, innerValue(i, j))
			}
		}
		return out
	}
	return nil
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

// WriteLoop writes into the spec 1 repository at dir a snapshot that is
// its own parent and a branch "loop" to it, and returns its id.
func WriteLoop(t testing.TB, dir string) ID {
	w := &testWriter{t: t, dir: dir, spec: 1, next: 200}
	loop := &wSnapshot{id: w.newID(), at: time.Unix(1, 0), message: "loop"}
	loop.parent = &loop.id
	w.snapshot(loop)
	w.write("refs/branch.loop/ref.json", []byte(`{"snapshot":"`+loop.id.String()+`"}`))
	return loop.id
}
