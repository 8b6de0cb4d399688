package meta

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// This file reads consolidated metadata (v2 .zmetadata, the v3 root's
// inline consolidated_metadata), whose size grows with the hierarchy: a
// hierarchy of 100,000 arrays has one of tens of megabytes, over
// MaxDocumentSize, the bound for a single node's document. It is walked
// once, member by member, and each node's document stays where it is in
// the one buffer read from the store (a sub-slice, parsed only when the
// node is opened): no map of copies, no allocation per node.

// ConsolidatedEntry is a member of consolidated metadata's "metadata"
// object: its name (a store key such as "a/.zarray" in v2, a node path
// such as "a/b" in v3) and its value, the node's document, a sub-slice of
// the consolidated document, not checked beyond being JSON (with bare
// NaN and Infinity, as Python writes them).
type ConsolidatedEntry struct {
	Key string
	Doc []byte
	// At is where Doc starts in the object walked: an index keeps it in
	// place of Doc (ConsolidatedIndex).
	At int
}

// TopMember returns the value of the member name of the object doc, a
// sub-slice of doc, or nil when it has none. Unlike DecodeObject it takes
// a document of any size and makes no copy: it walks the members in one
// pass, checking each value as JSON (bare NaN and Infinity allowed),
// and the last of repeated names wins, as with encoding/json.
func TopMember(docName string, doc []byte, name string) ([]byte, error) {
	start, end, err := topMemberAt(docName, doc, name)
	if err != nil || start < 0 {
		return nil, err
	}
	return doc[start:end:end], nil
}

// topMemberAt is TopMember saying where the value stands in doc
// (doc[start:end]); start is -1 when there is none.
func topMemberAt(docName string, doc []byte, name string) (start, end int, err error) {
	start = -1
	err = walkObjectAt(docName, doc, func(n []byte, escaped bool, s, e int) {
		if !escaped && string(n) == name || escaped && pyjson.UnescapedName(n) == name {
			start, end = s, e
		}
	})
	return start, end, err
}

// ErrTooManyMembers is the error of ConsolidatedEntries for an object
// with more members than it was allowed.
var ErrTooManyMembers = errors.New("meta: too many members")

// ConsolidatedEntries walks obj, the value of consolidated metadata's
// "metadata" member, and returns its members sorted by Key (for
// repeated keys, the last). Each Doc is a sub-slice of obj; the keys are
// substrings of one string: the allocations do not grow with the number
// of members but for the list itself. An object of more than max members
// (when max > 0) is refused with ErrTooManyMembers (consolidatedMembers).
func ConsolidatedEntries(docName string, obj []byte, max int) ([]ConsolidatedEntry, error) {
	keys, ms, err := consolidatedMembers(docName, obj, max)
	if err != nil {
		return nil, err
	}
	entries := make([]ConsolidatedEntry, len(ms))
	for i, m := range ms {
		entries[i] = ConsolidatedEntry{Key: keys[m.key:m.keyEnd], Doc: obj[m.doc:m.docEnd:m.docEnd], At: int(m.doc)}
	}
	return entries, nil
}

// consMember places a member of consolidated metadata: its key in a string
// of keys, its value in the object walked. It holds no pointer: a list
// of them for 100,000 arrays is not scanned by the collector.
type consMember struct{ key, keyEnd, doc, docEnd uint32 }

// consolidatedMembers walks obj as ConsolidatedEntries does and returns
// its members, sorted by key (for repeated keys, the last), and the
// string of their keys. The list costs 16 bytes a member, whatever its
// size (`"a":0,` is 6 bytes): an object of more than max members (when
// max > 0) is refused with ErrTooManyMembers. An object or keys of 4 GiB
// or more are refused.
func consolidatedMembers(docName string, obj []byte, max int) (string, []consMember, error) {
	if int64(len(obj)) > math.MaxUint32 {
		return "", nil, fmt.Errorf("%w: %s: a \"metadata\" object of 4 GiB or more", ErrInvalidMetadata, docName)
	}
	var (
		names []byte
		ms    []consMember
	)
	err := walkObjectAt(docName, obj, func(n []byte, escaped bool, start, end int) {
		if max > 0 && len(ms) > max || int64(len(names)) > math.MaxUint32 {
			return // refused below
		}
		if escaped {
			n = []byte(pyjson.UnescapedName(n))
		}
		ms = append(ms, consMember{uint32(len(names)), uint32(len(names) + len(n)), uint32(start), uint32(end)})
		names = append(names, n...)
	})
	if err != nil {
		return "", nil, err
	}
	if max > 0 && len(ms) > max {
		return "", nil, fmt.Errorf("%w: %s: %w (over %d)", ErrInvalidMetadata, docName, ErrTooManyMembers, max)
	}
	if int64(len(names)) > math.MaxUint32 {
		return "", nil, fmt.Errorf("%w: %s: keys of 4 GiB or more", ErrInvalidMetadata, docName)
	}
	keys := string(names) // one string: every key is a substring of it
	byKey := func(a, b consMember) int { return strings.Compare(keys[a.key:a.keyEnd], keys[b.key:b.keyEnd]) }
	if !slices.IsSortedFunc(ms, byKey) {
		slices.SortStableFunc(ms, byKey)
	}
	// Repeated keys: the last (sorting was stable) wins.
	out := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && byKey(ms[i+1], m) == 0 {
			continue
		}
		out = append(out, m)
	}
	return keys, slices.Clip(out), nil
}

// FindConsolidated returns the document of key among entries (sorted, as
// ConsolidatedEntries returns them), or nil.
func FindConsolidated(entries []ConsolidatedEntry, key string) []byte {
	i, ok := slices.BinarySearchFunc(entries, key, func(e ConsolidatedEntry, k string) int { return cmp.Compare(e.Key, k) })
	if !ok {
		return nil
	}
	return entries[i].Doc
}

// walkObjectAt is pyjson.WalkAt, its error saying which document.
func walkObjectAt(docName string, doc []byte, fn func(name []byte, escaped bool, start, end int)) error {
	if err := pyjson.WalkAt(doc, fn); err != nil {
		return fmt.Errorf("%w: %s is not a JSON object: %v", ErrInvalidMetadata, docName, err)
	}
	return nil
}

// walkObject is pyjson.Walk, its error saying which document and matching
// ErrInvalidMetadata.
func walkObject(docName string, doc []byte, fn func(name []byte, escaped bool, value []byte)) error {
	if err := pyjson.Walk(doc, fn); err != nil {
		return fmt.Errorf("%w: %s is not a JSON object: %v", ErrInvalidMetadata, docName, err)
	}
	return nil
}

// ConsolidatedDocument returns the document doc, a value of consolidated
// metadata, as a node's document shown in a mount: indented with indent,
// bare NaN and Infinity as strings (as DecodeObject reads them).
func ConsolidatedDocument(doc []byte, indent string) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, pyjson.Turn(doc), "", indent); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WithoutMember returns the object doc without its member name (a new
// document, compact), for a document too large to keep whose other
// members are small: a v3 root zarr.json without its consolidated
// metadata.
func WithoutMember(docName string, doc []byte, name string) ([]byte, error) {
	out := []byte{'{'}
	err := walkObject(docName, doc, func(n []byte, escaped bool, value []byte) {
		if !escaped && string(n) == name || escaped && pyjson.UnescapedName(n) == name {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), n...), '"', ':'), value...)
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// CompactInPlace removes the white space outside strings from the JSON
// document doc, in place, and returns the shorter document (a prefix of
// doc's memory): consolidated metadata as zarr-python writes it, indented
// by 4 at three levels, is about half white space, which a hierarchy
// would otherwise keep for its life. doc must be the caller's own.
func CompactInPlace(doc []byte) []byte {
	w := 0
	for r := 0; r < len(doc); r++ {
		c := doc[r]
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			// Copy the string whole, escapes and all.
			doc[w] = c
			w++
			for r++; r < len(doc); r++ {
				c = doc[r]
				doc[w] = c
				w++
				if c == '\\' && r+1 < len(doc) {
					r++
					doc[w] = doc[r]
					w++
				} else if c == '"' {
					break
				}
			}
			continue
		}
		doc[w] = c
		w++
	}
	return doc[:w]
}
