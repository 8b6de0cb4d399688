package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// This file walks documents of any size without copying them (consolidated
// metadata grows with the hierarchy: tens of megabytes for 100,000
// arrays): each value is checked and handed on as a sub-slice.

// Walk calls fn for each member of the JSON object doc (white space around
// it allowed): its name as it stands between the quotes (escaped tells
// whether it holds an escape or a byte beyond ASCII, for UnescapedName),
// and its value, sub-slices of doc. Values may hold Python's bare NaN and
// Infinity. It refuses anything that is not one JSON object, saying what
// and at which byte.
func Walk(doc []byte, fn func(name []byte, escaped bool, value []byte)) error {
	return WalkAt(doc, func(name []byte, escaped bool, start, end int) {
		fn(name, escaped, doc[start:end:end])
	})
}

// WalkAt is Walk handing on where each value stands in doc (doc[start:end])
// rather than the value: what an index of a large document's members
// keeps in place of sub-slices (meta.ConsolidatedIndex).
func WalkAt(doc []byte, fn func(name []byte, escaped bool, start, end int)) error {
	bad := func(i int, what string) error {
		return fmt.Errorf("%s at byte %d", what, i)
	}
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return bad(i, "no object")
	}
	i = SkipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		if SkipSpace(doc, i+1) != len(doc) {
			return bad(i+1, "data after the object")
		}
		return nil
	}
	for {
		end, plain, ok := ScanString(doc, i)
		if !ok {
			return bad(i, "bad member name")
		}
		name := doc[i+1 : end-1]
		if i = SkipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return bad(i, "no colon")
		}
		start := SkipSpace(doc, i+1)
		if i, ok = SkipValue(doc, start, 1); !ok {
			return bad(i, "bad value")
		}
		fn(name, !plain, start, i)
		if i = SkipSpace(doc, i); i >= len(doc) {
			return bad(i, "unterminated object")
		}
		switch doc[i] {
		case '}':
			if SkipSpace(doc, i+1) != len(doc) {
				return bad(i+1, "data after the object")
			}
			return nil
		case ',':
			i = SkipSpace(doc, i+1)
		default:
			return bad(i, "no comma")
		}
	}
}

// UnescapedName returns the member name n (as it stands between its
// quotes, checked by ScanString) as encoding/json decodes it.
func UnescapedName(n []byte) string {
	var s string
	q := make([]byte, 0, len(n)+2)
	q = append(append(append(q, '"'), n...), '"')
	if json.Unmarshal(q, &s) != nil {
		return string(bytes.ToValidUTF8(n, []byte("\uFFFD")))
	}
	return s
}

// SkipValue checks the JSON value at doc[i] (not white space), the
// depth-th nested, and returns the index just after it. It takes bare
// NaN, Infinity and -Infinity, as Python writes them, any string as a
// member name and repeated names; containers nested beyond MaxDepth are
// refused. It is Scan's scanner in its lenient mode.
func SkipValue(doc []byte, i, depth int) (int, bool) {
	s := scanner{doc: doc, lenient: true}
	return s.value(i, depth)
}
