package icechunk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// ID is a 12-byte object id (snapshot, manifest, chunk).
type ID [12]byte

// String is the id in Crockford base 32 as the spec writes it in paths:
// uppercase, no padding, zero bits appended (20 characters).
func (id ID) String() string { return crockford(id[:]) }

const crockfordAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func crockford(b []byte) string {
	var sb strings.Builder
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			sb.WriteByte(crockfordAlphabet[acc>>bits&31])
		}
	}
	if bits > 0 {
		sb.WriteByte(crockfordAlphabet[acc<<(5-bits)&31])
	}
	return sb.String()
}

// ParseID reads a 20-character Crockford base 32 snapshot id (case
// insensitive; O read as 0, I and L as 1, as Crockford allows).
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 20 {
		return id, fmt.Errorf("icechunk id %q: not 20 characters", s)
	}
	var acc uint64
	bits, n := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c | 0x20 {
		case 'o':
			c = '0'
		case 'i', 'l':
			c = '1'
		}
		v := strings.IndexByte(crockfordAlphabet, byte(strings.ToUpper(string(c))[0]))
		if v < 0 {
			return id, fmt.Errorf("icechunk id %q: %q is not Crockford base 32", s, c)
		}
		acc = acc<<5 | uint64(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			if n < len(id) {
				id[n] = byte(acc >> bits)
			}
			n++
		}
	}
	return id, nil
}

// SnapshotFile is a parsed snapshot file (snapshot.fbs, table Snapshot).
type SnapshotFile struct {
	Spec      int
	ID        ID
	Parent    *ID // spec 1 only; spec 2 keeps parents in the repo info
	FlushedAt time.Time
	Message   string
	Nodes     []Node // sorted by path
	size      int    // bytes held (about), for the cache
}

// nodeSize is about what a parsed node and its Snapshot entries hold
// besides its bytes.
const nodeSize = 256

// Node is a NodeSnapshot: a group or an array at an absolute path.
type Node struct {
	ID       [8]byte
	Path     string // "/", "/a", "/a/b"
	UserData []byte // the node's zarr.json
	Array    *ArrayData
}

// ArrayData is an ArrayNodeData: the array's shape in chunks and its
// manifests.
type ArrayData struct {
	NumChunks []uint64 // per dimension
	Manifests []ManifestRef
}

// ManifestRef points to a manifest covering a box of chunk indexes.
type ManifestRef struct {
	ID       ID
	From, To []uint32 // per dimension, To exclusive
}

// covers reports whether the manifest covers the chunk at idx.
func (m ManifestRef) covers(idx []uint32) bool {
	if len(idx) != len(m.From) {
		return false
	}
	for i, v := range idx {
		if v < m.From[i] || v >= m.To[i] {
			return false
		}
	}
	return true
}

// maxRank bounds the dimensions of an array and of a chunk index.
const maxRank = 64

// ParseSnapshot parses a snapshot file.
func ParseSnapshot(data []byte) (*SnapshotFile, error) {
	h, buf, err := payload(data, TypeSnapshot)
	if err != nil {
		return nil, err
	}
	s := &SnapshotFile{Spec: h.SpecVersion, size: len(buf)}
	err = parse("snapshot", func() {
		root := rootTable(buf)
		copy(s.ID[:], root.inline(0, 12))
		if p := root.inline(1, 12); p != nil {
			var id ID
			copy(id[:], p)
			s.Parent = &id
		}
		s.FlushedAt = time.UnixMicro(int64(root.uint64(3, 0))).UTC()
		s.Message = root.string(4)
		for _, nt := range root.tables(2) {
			s.Nodes = append(s.Nodes, parseNode(nt))
		}
		s.size += nodeSize * len(s.Nodes)
	})
	if err != nil {
		return nil, err
	}
	for i, n := range s.Nodes {
		if !validPath(n.Path) {
			return nil, corruptf("snapshot %s: node path %q is not canonical", s.ID, n.Path)
		}
		if i > 0 && s.Nodes[i-1].Path >= n.Path {
			return nil, corruptf("snapshot %s: nodes not sorted by path (%q after %q)", s.ID, n.Path, s.Nodes[i-1].Path)
		}
	}
	return s, nil
}

// validPath reports whether p is a node path as common.fbs defines it.
func validPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// parseNode reads a NodeSnapshot table: id 0, path 1, user_data 2,
// node_data_type 3, node_data 4.
func parseNode(t table) Node {
	n := Node{Path: t.string(1), UserData: t.bytes(2)}
	copy(n.ID[:], t.inline(0, 8))
	if t.uint8(3, 0) != 1 { // NodeData: 1 Array, 2 Group
		return n
	}
	at, ok := t.sub(4)
	if !ok {
		panic("array node without node_data")
	}
	a := &ArrayData{}
	// ArrayNodeData: shape 0 ([DimensionShape], spec 1), dimension_names
	// 1, manifests 2, shape_v2 3 ([DimensionShapeV2], spec 2).
	if at.has(3) {
		for _, d := range at.tables(3) {
			a.NumChunks = append(a.NumChunks, uint64(d.uint32(1, 0)))
		}
	} else {
		start, n := at.vector(0, 16)
		for i := range n {
			o := int(start) + 16*i
			length, chunk := le.Uint64(at.Bytes[o:]), le.Uint64(at.Bytes[o+8:])
			nc := uint64(0)
			if chunk > 0 {
				nc = length/chunk + min(length%chunk, 1)
			}
			a.NumChunks = append(a.NumChunks, nc)
		}
	}
	if len(a.NumChunks) > maxRank {
		panic("rank over 64")
	}
	for _, mt := range at.tables(2) {
		var m ManifestRef
		copy(m.ID[:], mt.inline(0, 12))
		start, k := mt.vector(1, 8)
		if k != len(a.NumChunks) {
			panic("manifest extents of another rank than the array")
		}
		for i := range k {
			o := int(start) + 8*i
			m.From = append(m.From, le.Uint32(mt.Bytes[o:]))
			m.To = append(m.To, le.Uint32(mt.Bytes[o+4:]))
		}
		a.Manifests = append(a.Manifests, m)
	}
	n.Array = a
	return n
}

// ManifestFile is a parsed manifest file (manifest.fbs, table Manifest):
// its chunk references by array node id.
type ManifestFile struct {
	ID     ID
	Arrays map[[8]byte][]ChunkRef // each sorted by index
	size   int                    // bytes held (about), for the cache
}

// refSize is about what a parsed ChunkRef holds besides its bytes.
const refSize = 128

// ChunkRef is one chunk reference: Inline, ChunkID (when Native) or
// Location says where its bytes are.
type ChunkRef struct {
	Index   []uint32
	Inline  []byte
	Native  bool
	ChunkID ID
	// Location is a virtual reference's URL (decompressed when the
	// manifest stored it compressed).
	Location string
	Offset   uint64
	Length   uint64
	// ETag and LastModified are a virtual reference's condition: the
	// object must still have this ETag, or not be modified after this
	// time.
	ETag         string
	LastModified time.Time
}

// ParseManifest parses a manifest file.
func ParseManifest(data []byte) (*ManifestFile, error) {
	_, buf, err := payload(data, TypeManifest)
	if err != nil {
		return nil, err
	}
	m := &ManifestFile{Arrays: map[[8]byte][]ChunkRef{}, size: len(buf)}
	var dict []byte
	type pending struct {
		node [8]byte
		i    int
		loc  []byte
	}
	var todo []pending
	err = parse("manifest", func() {
		root := rootTable(buf)
		copy(m.ID[:], root.inline(0, 12))
		dict = root.bytes(2)
		for _, at := range root.tables(1) {
			var node [8]byte
			copy(node[:], at.inline(0, 8))
			refs := at.tables(1)
			out := make([]ChunkRef, 0, len(refs))
			// The indexes share one array (one allocation, not one a
			// reference), sized for the first reference's rank.
			var arena []uint32
			for _, rt := range refs {
				var r ChunkRef
				start, n := rt.vector(0, 4)
				if n > maxRank {
					panic("chunk index of rank over 64")
				}
				if cap(arena)-len(arena) < n {
					arena = make([]uint32, 0, max(n*len(refs), 64))
				}
				for i := range n {
					arena = append(arena, le.Uint32(rt.Bytes[int(start)+4*i:]))
				}
				r.Index = arena[len(arena)-n : len(arena) : len(arena)]
				r.Inline = rt.bytes(1)
				r.Offset, r.Length = rt.uint64(2, 0), rt.uint64(3, 0)
				if o := rt.field(4); o != 0 {
					r.Native = true
					copy(r.ChunkID[:], rt.Bytes[o:int(o)+12])
				}
				r.Location = rt.string(5)
				r.ETag = rt.string(6)
				if lm := rt.uint32(7, 0); lm != 0 {
					r.LastModified = time.Unix(int64(lm), 0).UTC()
				}
				if cl := rt.bytes(8); cl != nil && r.Location == "" {
					todo = append(todo, pending{node, len(out), cl})
				}
				out = append(out, r)
			}
			m.Arrays[node] = out
		}
	})
	if err != nil {
		return nil, err
	}
	if len(todo) > 0 {
		locs := make([][]byte, len(todo))
		for i, p := range todo {
			locs[i] = p.loc
		}
		out, err := decompressLocations(dict, locs)
		if err != nil {
			return nil, corruptf("manifest %s: compressed locations: %v", m.ID, err)
		}
		for i, p := range todo {
			m.Arrays[p.node][p.i].Location = out[i]
		}
	}
	for node, refs := range m.Arrays {
		m.size += refSize * len(refs)
		for i := range refs {
			if i > 0 && compareIndex(refs[i-1].Index, refs[i].Index) >= 0 {
				return nil, corruptf("manifest %s: chunk refs of node %x not sorted", m.ID, node)
			}
		}
	}
	return m, nil
}

// compareIndex orders chunk indexes lexicographically, as manifests sort
// them.
func compareIndex(a, b []uint32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return len(a) - len(b)
}

// RepoInfo is the parsed repo info file of a spec 2 repository (repo.fbs,
// table Repo), or the references of a spec 1 repository.
type RepoInfo struct {
	Spec      int
	Branches  map[string]ID
	Tags      map[string]ID
	Snapshots []SnapshotInfo // as the file lists them (spec 1: as found)
	Config    []byte         // spec 2: the configuration, FlexBuffers (ParseConfigFlex)
}

// SnapshotInfo summarises one snapshot.
type SnapshotInfo struct {
	ID        ID
	Parent    int // index in RepoInfo.Snapshots, -1 for none
	FlushedAt time.Time
	Message   string
}

// ParseRepoInfo parses a spec 2 repo info file.
func ParseRepoInfo(data []byte) (*RepoInfo, error) {
	h, buf, err := payload(data, TypeRepoInfo)
	if err != nil {
		return nil, err
	}
	r := &RepoInfo{Spec: h.SpecVersion, Branches: map[string]ID{}, Tags: map[string]ID{}}
	type ref struct {
		name string
		idx  uint32
	}
	var branches, tags []ref
	err = parse("repo info", func() {
		root := rootTable(buf)
		// Repo: spec_version 0, tags 1, branches 2, deleted_tags 3,
		// snapshots 4.
		for _, st := range root.tables(4) {
			var s SnapshotInfo
			copy(s.ID[:], st.inline(0, 12))
			s.Parent = int(st.int32(1, 0))
			s.FlushedAt = time.UnixMicro(int64(st.uint64(2, 0))).UTC()
			s.Message = st.string(3)
			r.Snapshots = append(r.Snapshots, s)
		}
		for _, t := range root.tables(1) {
			tags = append(tags, ref{t.string(0), t.uint32(1, 0)})
		}
		for _, t := range root.tables(2) {
			branches = append(branches, ref{t.string(0), t.uint32(1, 0)})
		}
		// status 5, metadata 6, latest_updates 7, repo_before_updates
		// 8, config 9 (FlexBuffers).
		r.Config = root.bytes(9)
	})
	if err != nil {
		return nil, err
	}
	for i := range r.Snapshots {
		if p := r.Snapshots[i].Parent; p < -1 || p >= len(r.Snapshots) {
			return nil, corruptf("repo info: snapshot %s: parent index %d out of range", r.Snapshots[i].ID, p)
		}
	}
	for _, set := range []struct {
		refs []ref
		to   map[string]ID
		kind string
	}{{branches, r.Branches, "branch"}, {tags, r.Tags, "tag"}} {
		for _, x := range set.refs {
			if int(x.idx) >= len(r.Snapshots) {
				return nil, corruptf("repo info: %s %q: snapshot index %d out of range", set.kind, x.name, x.idx)
			}
			set.to[x.name] = r.Snapshots[x.idx].ID
		}
	}
	return r, nil
}

// parseRefJSON reads a spec 1 reference file: {"snapshot": "ID"}.
func parseRefJSON(data []byte) (ID, error) {
	var v struct {
		Snapshot string `json:"snapshot"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&v); err != nil {
		return ID{}, corruptf("reference file: %v", err)
	}
	id, err := ParseID(v.Snapshot)
	if err != nil {
		return ID{}, corruptf("reference file: %v", err)
	}
	return id, nil
}

// maxLocation bounds one decompressed virtual chunk location.
const maxLocation = 64 << 10

// decompressLocations decompresses the compressed_location fields of a
// manifest, zstd frames made with the manifest's location_dictionary
// (manifest.fbs: "zstd dictionary compression").
func decompressLocations(dict []byte, locs [][]byte) ([]string, error) {
	if len(dict) == 0 {
		return nil, errors.New("compressed locations without a location_dictionary")
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderDicts(dict),
		zstd.WithDecoderMaxMemory(maxLocation), zstd.WithDecoderMaxWindow(maxLocation))
	if err != nil {
		return nil, fmt.Errorf("location dictionary: %w", err)
	}
	defer d.Close()
	out := make([]string, len(locs))
	for i, l := range locs {
		b, err := d.DecodeAll(l, nil)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}
