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
// document (V2ConsolidatedMetadata, V3ConsolidatedMetadata) and indexes
// it (ConsolidatedIndex): which document each key has, which nodes are
// below a group. The walking itself is consolidated.go's.

// V2ConsolidatedMetadata returns the "metadata" object of a .zmetadata
// document, a sub-slice of doc, walked once whatever its size.
func V2ConsolidatedMetadata(doc []byte) ([]byte, error) {
	md, err := TopMember(V2Consolidated, doc, "metadata")
	if err != nil {
		return nil, err
	}
	if len(md) == 0 || md[0] != '{' {
		return nil, fmt.Errorf("%w: no \"metadata\" object", ErrInvalidMetadata)
	}
	return md, nil
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
// the members of its "metadata" object sorted by key, each node's
// document a sub-slice of the document read.
type ConsolidatedIndex struct {
	// entries are the members of the "metadata" object, sorted by key,
	// those whose key is not a valid store key left out.
	entries []ConsolidatedEntry
	// v3 says the keys are node paths ("a/b", v3) rather than
	// document keys ("a/b/.zarray", v2).
	v3 bool
}

// NewConsolidatedIndex indexes the members of the "metadata" object obj
// of consolidated metadata read from the document docName (v3: the keys
// are node paths), refusing with ErrTooManyMembers more than max members
// (ConsolidatedEntries). A key that is not a valid store key ("../x",
// "/etc", "a//b") names no node: it is left out.
func NewConsolidatedIndex(docName string, obj []byte, v3 bool, max int) (*ConsolidatedIndex, error) {
	entries, err := ConsolidatedEntries(docName, obj, max)
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if store.ValidateKey(e.Key) == nil {
			out = append(out, e)
		}
	}
	clear(entries[len(out):])
	return &ConsolidatedIndex{entries: out, v3: v3}, nil
}

// Len returns the number of members indexed.
func (c *ConsolidatedIndex) Len() int { return len(c.entries) }

// ArrayIndex returns the index, below Len, of the member describing the
// array at p (its .zarray in v2): the same whenever it is asked for.
func (c *ConsolidatedIndex) ArrayIndex(p string) int {
	key := p
	if !c.v3 {
		key = store.Join(p, V2ArrayDoc)
	}
	i, _ := findPrefix(c.entries, key)
	return i
}

// Doc returns the consolidated document stored under key ("a/.zarray",
// "a/zarr.json"), and whether there is one.
func (c *ConsolidatedIndex) Doc(key string) ([]byte, bool) {
	if c.v3 {
		p, ok := strings.CutSuffix(key, "/"+V3Doc)
		if !ok {
			return nil, false // the root's document is the root zarr.json itself
		}
		key = p
	}
	d := FindConsolidated(c.entries, key)
	return d, d != nil
}

// HasNode reports whether the consolidated metadata describes the node
// at p.
func (c *ConsolidatedIndex) HasNode(p string) bool {
	for _, doc := range []string{V3Doc, V2ArrayDoc, V2GroupDoc} {
		if _, ok := c.Doc(store.Join(p, doc)); ok {
			return true
		}
	}
	return false
}

// ChildNames returns the sorted names of the nodes the consolidated
// metadata describes directly below the group at p: the keys below p
// form one run of the sorted entries, found by binary search.
func (c *ConsolidatedIndex) ChildNames(p string) []string {
	prefix := store.DirPrefix(p)
	lo, _ := findPrefix(c.entries, prefix)
	var names []string
	for _, e := range c.entries[lo:] {
		rest, ok := strings.CutPrefix(e.Key, prefix)
		if !ok {
			break
		}
		var name string
		if c.v3 {
			if strings.Contains(rest, "/") {
				continue
			}
			name = rest
		} else {
			n, doc, ok := strings.Cut(rest, "/")
			if !ok || strings.Contains(doc, "/") || doc != V2ArrayDoc && doc != V2GroupDoc && doc != V3Doc {
				continue
			}
			name = n
		}
		// The keys below one child are one run ("a/" prefixes them
		// all): a name repeats only right after itself.
		if len(names) > 0 && names[len(names)-1] == name {
			continue
		}
		names = append(names, name)
	}
	return sortedUnique(names)
}

// findPrefix returns the index of the first entry whose key is not
// before prefix.
func findPrefix(entries []ConsolidatedEntry, prefix string) (int, bool) {
	lo, hi := 0, len(entries)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if entries[m].Key < prefix {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(entries) && entries[lo].Key == prefix
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
