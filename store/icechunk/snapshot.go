package icechunk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/store"
)

// Snapshot is one snapshot of a repository as a read-only store of Zarr
// v3 keys: NODE/zarr.json is the node's metadata as Icechunk stores it
// (the snapshot's user_data), NODE/CHUNKKEY a chunk resolved through the
// array's manifests. Listing shows the nodes and their zarr.json, not
// chunk keys. A snapshot whose root node is absent (a new repository)
// shows a root zarr.json of an empty group.
type Snapshot struct {
	repo  *Repo
	file  *SnapshotFile
	nodes map[string]*snapNode // by store path: "" root, "a/b"
	kids  map[string][]string  // child names by store path, sorted
}

type snapNode struct {
	node *Node
	enc  keyEncoding
	err  error // the array's metadata cannot be read for its chunk keys
}

// keyEncoding is an array's chunk_key_encoding.
type keyEncoding struct {
	v2  bool
	sep string
}

func newSnapshot(r *Repo, f *SnapshotFile) *Snapshot {
	s := &Snapshot{repo: r, file: f, nodes: map[string]*snapNode{}, kids: map[string][]string{}}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		p := strings.TrimPrefix(n.Path, "/")
		if p != "" && store.ValidateKey(p+"/zarr.json") != nil {
			continue // a name no store key can hold (a backslash, a NUL): not shown
		}
		sn := &snapNode{node: n}
		if n.Array != nil {
			sn.enc, sn.err = chunkKeyEncoding(n.UserData)
		}
		s.nodes[p] = sn
		// Every ancestor lists the next segment, also when a node
		// between is missing.
		for q := p; q != ""; {
			parent, name := "", q
			if i := strings.LastIndexByte(q, '/'); i >= 0 {
				parent, name = q[:i], q[i+1:]
			}
			if !contains(s.kids[parent], name) {
				s.kids[parent] = append(s.kids[parent], name)
			}
			q = parent
		}
	}
	for _, k := range s.kids {
		sort.Strings(k)
	}
	return s
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// chunkKeyEncoding reads an array's chunk_key_encoding from its zarr.json
// (Zarr v3: "default" with separator "/" unless told, or "v2" with ".").
func chunkKeyEncoding(doc []byte) (keyEncoding, error) {
	var m struct {
		Enc *struct {
			Name   string `json:"name"`
			Config struct {
				Separator string `json:"separator"`
			} `json:"configuration"`
		} `json:"chunk_key_encoding"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		return keyEncoding{}, fmt.Errorf("zarr.json: %w", err)
	}
	if m.Enc == nil {
		return keyEncoding{sep: "/"}, nil
	}
	e := keyEncoding{sep: m.Enc.Config.Separator}
	switch m.Enc.Name {
	case "default":
		e.sep = cmpOr(e.sep, "/")
	case "v2":
		e.v2, e.sep = true, cmpOr(e.sep, ".")
	default:
		return e, fmt.Errorf("chunk_key_encoding %q", m.Enc.Name)
	}
	if e.sep != "/" && e.sep != "." {
		return e, fmt.Errorf("chunk key separator %q", e.sep)
	}
	return e, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ID is the snapshot's id.
func (s *Snapshot) ID() ID { return s.file.ID }

// String names the repository and the snapshot.
func (s *Snapshot) String() string { return s.repo.String() + " snapshot " + s.file.ID.String() }

// emptyRoot is the root document of a snapshot without a root node.
var emptyRoot = []byte(`{"zarr_format":3,"node_type":"group","attributes":{}}`)

// Get returns the value of key.
func (s *Snapshot) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

// GetRange returns the range r of key's value.
func (s *Snapshot) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if dir, ok := strings.CutSuffix(key, "zarr.json"); ok && (dir == "" || strings.HasSuffix(dir, "/")) {
		dir = strings.TrimSuffix(dir, "/")
		if n := s.nodes[dir]; n != nil {
			return cut(n.node.UserData, r)
		}
		if dir == "" {
			return cut(emptyRoot, r)
		}
	}
	n, idx, err := s.chunkOf(key)
	if err != nil {
		return nil, err
	}
	ref, err := s.lookup(ctx, n, idx)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s, key, err)
	}
	b, err := s.repo.readRef(ctx, ref, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s, key, err)
	}
	return b, nil
}

func cut(b []byte, r store.ByteRange) ([]byte, error) {
	start, end, err := r.Resolve(int64(len(b)))
	if err != nil {
		return nil, err
	}
	return b[start:end:end], nil
}

// chunkOf finds the array whose chunk key is key and the chunk's index.
func (s *Snapshot) chunkOf(key string) (*snapNode, []uint32, error) {
	// The array is the longest node path that prefixes key.
	for p := key; ; {
		i := strings.LastIndexByte(p, '/')
		parent := ""
		if i >= 0 {
			parent = p[:i]
		}
		if n := s.nodes[parent]; n != nil && n.node.Array != nil {
			rest := strings.TrimPrefix(strings.TrimPrefix(key, parent), "/")
			if n.err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", s, key, n.err)
			}
			idx, ok := n.enc.parse(rest, len(n.node.Array.NumChunks))
			if !ok {
				return nil, nil, fmt.Errorf("%s: %s: %w", s, key, store.ErrNotExist)
			}
			return n, idx, nil
		}
		if i < 0 {
			return nil, nil, fmt.Errorf("%s: %s: %w", s, key, store.ErrNotExist)
		}
		p = parent
	}
}

// parse reads a chunk key (below the array) into a chunk index of rank
// dimensions.
func (e keyEncoding) parse(key string, rank int) ([]uint32, bool) {
	if !e.v2 {
		rest, ok := strings.CutPrefix(key, "c")
		if !ok {
			return nil, false
		}
		if rank == 0 {
			return []uint32{}, rest == ""
		}
		if key, ok = strings.CutPrefix(rest, e.sep); !ok {
			return nil, false
		}
	} else if rank == 0 {
		return []uint32{}, key == "0"
	}
	parts := strings.Split(key, e.sep)
	if len(parts) != rank {
		return nil, false
	}
	idx := make([]uint32, rank)
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return nil, false
		}
		idx[i] = uint32(v)
	}
	return idx, true
}

// lookup finds the reference to chunk idx of array n in the manifest whose
// extents cover it; store.ErrNotExist when none has it (the chunk is the
// fill value).
func (s *Snapshot) lookup(ctx context.Context, n *snapNode, idx []uint32) (*ChunkRef, error) {
	// The chunk grid is the zarr.json's: a spec 1 snapshot written by a
	// spec 2 implementation may count its chunks wrong (snapshot.fbs,
	// DimensionShape), so the manifests alone say what exists.
	a := n.node.Array
	for _, mr := range a.Manifests {
		if !mr.covers(idx) {
			continue
		}
		m, err := s.repo.manifest(ctx, mr.ID)
		if err != nil {
			return nil, err
		}
		if ref := findRef(m.Arrays[n.node.ID], idx); ref != nil {
			return ref, nil
		}
		return nil, store.ErrNotExist
	}
	return nil, store.ErrNotExist
}

// findRef finds the reference to chunk idx in refs, sorted by index.
func findRef(refs []ChunkRef, idx []uint32) *ChunkRef {
	i := sort.Search(len(refs), func(i int) bool { return compareIndex(refs[i].Index, idx) >= 0 })
	if i < len(refs) && compareIndex(refs[i].Index, idx) == 0 {
		return &refs[i]
	}
	return nil
}

// ListDir lists the nodes below dir: keys "zarr.json" when dir is a node,
// prefixes its child nodes' names.
func (s *Snapshot) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.ValidateDir(dir); err != nil {
		return nil, nil, err
	}
	if s.nodes[dir] != nil || dir == "" {
		keys = []string{"zarr.json"}
	}
	return keys, append([]string(nil), s.kids[dir]...), nil
}

// ListPrefix lists the zarr.json keys that begin with prefix.
func (s *Snapshot) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	add := func(k string) {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	if s.nodes[""] == nil {
		add("zarr.json")
	}
	for p := range s.nodes {
		if p == "" {
			add("zarr.json")
		} else {
			add(p + "/zarr.json")
		}
	}
	sort.Strings(out)
	return out, nil
}

// GetRangeInfo is GetRange, with what identifies the value: an ETag made
// of the chunk reference (a native chunk's id, offset and length; a
// virtual chunk's URL, range and condition; a hash of inline bytes or of
// a metadata document), the same in every snapshot that holds the same
// reference, and the snapshot's time as the modification time. A --live
// mount whose branch moved so takes over the chunks it holds decoded
// that the new snapshot still references (store.InfoGetter).
func (s *Snapshot) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	b, err := s.GetRange(ctx, key, r)
	if err != nil {
		return nil, store.Info{}, err
	}
	tag, err := s.tag(ctx, key)
	if err != nil {
		return nil, store.Info{}, err
	}
	return b, store.Info{Size: int64(len(b)), ModTime: s.file.FlushedAt, ETag: tag}, nil
}

// GetIfChanged returns key's value unless its ETag is old's:
// store.ErrNotModified.
func (s *Snapshot) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, store.Info{}, err
	}
	if tag, err := s.tag(ctx, key); err == nil && old.ETag != "" && tag == old.ETag {
		return nil, old, store.ErrNotModified
	}
	return s.GetRangeInfo(ctx, key, store.All)
}

// tag is the ETag of key's value (see GetRangeInfo).
func (s *Snapshot) tag(ctx context.Context, key string) (string, error) {
	if dir, ok := strings.CutSuffix(key, "zarr.json"); ok && (dir == "" || strings.HasSuffix(dir, "/")) {
		if n := s.nodes[strings.TrimSuffix(dir, "/")]; n != nil {
			return hashTag("m", n.node.UserData), nil
		}
		return hashTag("m", emptyRoot), nil
	}
	n, idx, err := s.chunkOf(key)
	if err != nil {
		return "", err
	}
	c, err := s.lookup(ctx, n, idx)
	if err != nil {
		return "", err
	}
	switch {
	case c.Inline != nil:
		return hashTag("i", c.Inline), nil
	case c.Native:
		return fmt.Sprintf(`"n:%s:%d:%d"`, c.ChunkID, c.Offset, c.Length), nil
	default:
		return hashTag("v", fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s\x00%d", c.Location, c.Offset, c.Length, c.ETag, c.LastModified.Unix())), nil
	}
}

func hashTag(kind string, b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + kind + ":" + hex.EncodeToString(sum[:16]) + `"`
}
