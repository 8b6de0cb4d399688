package meta

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// This file finds a hierarchy's consolidated metadata in its root
// document (V2ConsolidatedMetadataAt, V3ConsolidatedMetadata) and indexes
// it (ConsolidatedIndex): which document each key has, which nodes are
// below a group. The walking itself is consolidated.go's.

// V2ConsolidatedMetadataAt returns the "metadata" object of a .zmetadata
// document, a sub-slice of doc, walked once whatever its size, and where
// it starts in doc: what an index that does not keep doc adds to its
// members' places (ConsolidatedIndex.Drop).
func V2ConsolidatedMetadataAt(doc []byte) (md []byte, at int, err error) {
	at, end, err := topMemberAt(V2Consolidated, doc, "metadata")
	if err != nil {
		return nil, 0, err
	}
	if at < 0 || doc[at] != '{' {
		return nil, 0, fmt.Errorf("%w: no \"metadata\" object", ErrInvalidMetadata)
	}
	return doc[at:end:end], at, nil
}

// V3ConsolidatedMetadata returns the "metadata" object of the inline
// consolidated_metadata of a v3 root zarr.json, a sub-slice of doc, or
// nil when it has none (or none usable: the root node reports a broken
// document, and the store is listed). A zarr_format that is a string (a
// v3 draft) is refused with codec.ErrUnsupported. The document is walked
// once (TopMember), whatever its size: its members are looked up by their
// exact names (decoding into a struct would match
// "Consolidated_Metadata" too).
func V3ConsolidatedMetadata(doc []byte) ([]byte, error) {
	zf, err := TopMember(V3Doc, doc, "zarr_format")
	if err != nil {
		return nil, nil // the root node reports the problem
	}
	var s string
	if json.Unmarshal(zf, &s) == nil {
		return nil, codec.Unsupportedf("v3 draft hierarchy (zarr_format %q)", s)
	}
	cons, err := TopMember(V3Doc, doc, "consolidated_metadata")
	if err != nil || len(cons) == 0 || cons[0] != '{' {
		return nil, nil
	}
	var kind string
	if k, err := TopMember(V3Doc, cons, "kind"); err != nil || json.Unmarshal(k, &kind) != nil || kind != "inline" {
		return nil, nil
	}
	md, err := TopMember(V3Doc, cons, "metadata")
	if err != nil || len(md) == 0 || md[0] != '{' {
		return nil, nil
	}
	return md, nil
}

// ConsolidatedIndex is the index of a hierarchy's consolidated metadata:
// the members of its "metadata" object sorted by key, and where each
// node's document stands, in the object read (kept) or, once Dropped,
// in the stored document (read again when the node is opened). A large
// hierarchy has one member per array: the index holds no pointer per
// member (the collector does not scan it), 16 bytes and the key's own.
type ConsolidatedIndex struct {
	// keys holds the members' keys (consMember.key); members are those
	// whose key is a valid store key, sorted by key.
	keys    string
	members []consMember
	// data is the "metadata" object indexed, nil once dropped; at is
	// where it stood in the stored document.
	data []byte
	at   int64
	// v3 says the keys are node paths ("a/b", v3) rather than
	// document keys ("a/b/.zarray", v2).
	v3 bool
}

// NewConsolidatedIndex indexes the members of the "metadata" object obj
// of consolidated metadata read from the document docName (v3: the keys
// are node paths), refusing with ErrTooManyMembers more than max members
// (consolidatedMembers). A key that is not a valid store key ("../x",
// "/etc", "a//b") names no node: it is left out. The index keeps obj
// until Drop.
func NewConsolidatedIndex(docName string, obj []byte, v3 bool, max int) (*ConsolidatedIndex, error) {
	keys, ms, err := consolidatedMembers(docName, obj, max)
	if err != nil {
		return nil, err
	}
	out := ms[:0]
	for _, m := range ms {
		if store.ValidateKey(keys[m.key:m.keyEnd]) == nil {
			out = append(out, m)
		}
	}
	return &ConsolidatedIndex{keys: keys, members: slices.Clip(out), data: obj, v3: v3}, nil
}

// Drop forgets the object indexed, which stood at offset at of the
// stored document: Doc no longer answers, and Lookup places each
// member's document in the stored document, to be read from there.
func (c *ConsolidatedIndex) Drop(at int64) {
	c.data, c.at = nil, at
}

// Len returns the number of members indexed.
func (c *ConsolidatedIndex) Len() int { return len(c.members) }

// key returns the key of member i.
func (c *ConsolidatedIndex) key(i int) string {
	m := c.members[i]
	return c.keys[m.key:m.keyEnd]
}

// ArrayIndex returns the index, below Len, of the member describing the
// array at p (its .zarray in v2): the same whenever it is asked for.
func (c *ConsolidatedIndex) ArrayIndex(p string) int {
	key := p
	if !c.v3 {
		key = store.Join(p, V2ArrayDoc)
	}
	i, _ := c.findPrefix(key)
	return i
}

// Lookup returns where the consolidated document stored under key
// ("a/.zarray", "a/zarr.json") stands: in the object indexed, or once
// dropped in the stored document; ok is false when there is none.
func (c *ConsolidatedIndex) Lookup(key string) (off int64, n int, ok bool) {
	if c.v3 {
		p, ok := strings.CutSuffix(key, "/"+V3Doc)
		if !ok {
			return 0, 0, false // the root's document is the root zarr.json itself
		}
		key = p
	}
	i, ok := c.findPrefix(key)
	if !ok {
		return 0, 0, false
	}
	m := c.members[i]
	off = int64(m.doc)
	if c.data == nil {
		off += c.at
	}
	return off, int(m.docEnd - m.doc), true
}

// Doc returns the consolidated document stored under key ("a/.zarray",
// "a/zarr.json"), a sub-slice of the object indexed, and whether there is
// one; nothing once dropped (see Lookup).
func (c *ConsolidatedIndex) Doc(key string) ([]byte, bool) {
	off, n, ok := c.Lookup(key)
	if !ok || c.data == nil {
		return nil, false
	}
	return c.data[off : off+int64(n) : off+int64(n)], true // not dropped: off is in data
}

// HasNode reports whether the consolidated metadata describes the node
// at p.
func (c *ConsolidatedIndex) HasNode(p string) bool {
	for _, doc := range []string{V3Doc, V2ArrayDoc, V2GroupDoc} {
		if _, _, ok := c.Lookup(store.Join(p, doc)); ok {
			return true
		}
	}
	return false
}

// ChildNames returns the sorted names of the nodes the consolidated
// metadata describes directly below the group at p: the keys below p
// form one run of the sorted members, found by binary search, and the
// keys below each child one run within it, passed over by another; so it
// costs a few binary searches a child, whatever lies deeper. The names
// are substrings of the index's keys (no copy).
func (c *ConsolidatedIndex) ChildNames(p string) []string {
	prefix := store.DirPrefix(p)
	var names []string
	for i, _ := c.findPrefix(prefix); i < c.Len(); {
		rest, ok := strings.CutPrefix(c.key(i), prefix)
		if !ok {
			break
		}
		name, _, deeper := strings.Cut(rest, "/")
		if deeper {
			// Past the keys below name: '0' follows '/'.
			i, _ = c.findPrefix(prefix + name + "0")
		} else {
			i++
		}
		if (len(names) == 0 || names[len(names)-1] != name) && c.isNode(prefix+name) {
			names = append(names, name)
		}
	}
	return sortedUnique(names)
}

// isNode reports whether a member describes the node at p: in v3 its key
// is p, in v2 p's .zarray or .zgroup (or a zarr.json).
func (c *ConsolidatedIndex) isNode(p string) bool {
	if c.v3 {
		_, ok := c.findPrefix(p)
		return ok
	}
	for _, doc := range []string{V2ArrayDoc, V2GroupDoc, V3Doc} {
		if _, ok := c.findPrefix(p + "/" + doc); ok {
			return true
		}
	}
	return false
}

// findPrefix returns the index of the first member whose key is not
// before prefix, and whether its key is prefix.
func (c *ConsolidatedIndex) findPrefix(prefix string) (int, bool) {
	lo, hi := 0, c.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.key(m) < prefix {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < c.Len() && c.key(lo) == prefix
}

// sortedUnique sorts names, each once in a run, and removes repeated
// ones: keys sort "a.b/.zarray" before "a/.zarray" ('.' before '/'), names
// "a" before "a.b".
func sortedUnique(names []string) []string {
	sorted := true
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			sorted = false
			break
		}
	}
	if !sorted {
		sort.Strings(names)
		names = slices.Compact(names)
	}
	return names
}
