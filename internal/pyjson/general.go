package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is the general path for the documents Scan leaves: Split
// splits a document already known to be valid JSON, CheckNames refuses
// the names readers would disagree on.

// Split returns the members of doc, which must be valid JSON, as
// encoding/json decodes them into a map[string]json.RawMessage (the last of
// repeated names wins), in one pass over doc. ok is false when doc is not
// an object. The values share one copy of doc.
func Split(doc []byte) (obj map[string]json.RawMessage, ok bool) {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	doc = bytes.Clone(doc)
	obj = make(map[string]json.RawMessage, 8)
	if i = SkipSpace(doc, i+1); i < len(doc) && doc[i] == '}' {
		return obj, true
	}
	for i < len(doc) && doc[i] == '"' {
		end := ValueEnd(doc, i)
		key, ok := MemberName(doc[i:end])
		if !ok {
			return nil, false
		}
		if i = SkipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = SkipSpace(doc, i+1)
		end = ValueEnd(doc, i)
		if end <= i {
			return nil, false
		}
		obj[key] = json.RawMessage(doc[i:end:end])
		if i = SkipSpace(doc, end); i >= len(doc) {
			return nil, false
		}
		if doc[i] == '}' {
			return obj, true
		}
		if doc[i] != ',' {
			return nil, false
		}
		i = SkipSpace(doc, i+1)
	}
	return nil, false
}

// CheckNames refuses a JSON document (already known to be valid) in
// which an object, at any depth, names a member twice, or whose top-level
// object has two members whose names differ only in case ("shape" and
// "Shape"). Readers disagree on which of two such members counts (Go's
// encoding/json even matches struct fields case-insensitively), so the
// document means different things to different implementations.
//
// doc must be valid JSON (the caller checks that first): the scan below
// only tells member names from values and strings from the rest.
func CheckNames(doc []byte) error {
	// One frame per open container. Frames are reused by depth, and so
	// are their name lists, so a large document costs few allocations.
	type frame struct {
		object bool
		names  [][]byte            // the member names so far, for small objects
		set    map[string]struct{} // all of them, once there are many
	}
	var stack []frame
	depth := 0
	// The top-level names in lower case, in a list while they are few (a
	// metadata document has about ten), then in a map (by lower case).
	var lowBuf [manyNames]string
	lower, folded := lowBuf[:0], map[string][]byte(nil)
	wantName := false
	for i := 0; i < len(doc); {
		switch doc[i] {
		case '{', '[':
			if depth == len(stack) {
				stack = append(stack, frame{names: make([][]byte, 0, manyNames+1)})
			}
			f := &stack[depth]
			f.object, f.names = doc[i] == '{', f.names[:0]
			if f.set != nil {
				clear(f.set)
			}
			depth++
			wantName = doc[i] == '{'
			i++
		case '}', ']':
			depth--
			wantName = false
			i++
		case ',':
			wantName = depth > 0 && stack[depth-1].object
			i++
		case '"':
			j := i + 1
			escaped := false
			for j < len(doc) && doc[j] != '"' {
				if doc[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(doc) {
				return errors.New("unterminated string")
			}
			if wantName {
				name := doc[i+1 : j]
				// Compare names as a JSON decoder reads them
				// (memberName): "\xd8" and "\xe1" are both U+FFFD.
				if escaped || !utf8.Valid(name) {
					s, ok := MemberName(doc[i : j+1])
					if !ok {
						return fmt.Errorf("member name %s is not a JSON string", doc[i:j+1])
					}
					name = []byte(s)
				}
				f := &stack[depth-1]
				dup := false
				if f.set != nil {
					_, dup = f.set[string(name)]
				} else {
					for _, n := range f.names {
						if bytes.Equal(n, name) {
							dup = true
							break
						}
					}
				}
				if dup {
					return fmt.Errorf("member %q appears twice", name)
				}
				f.names = append(f.names, name)
				if f.set == nil && len(f.names) > manyNames {
					f.set = make(map[string]struct{}, 2*manyNames)
					for _, n := range f.names[:len(f.names)-1] {
						f.set[string(n)] = struct{}{}
					}
				}
				if f.set != nil {
					f.set[string(name)] = struct{}{}
				}
				if depth == 1 {
					if err := checkFolded(&lower, &folded, f.names, manyNames); err != nil {
						return err
					}
				}
				wantName = false
			}
			i = j + 1
		default:
			i++
		}
	}
	return nil
}

// checkFolded checks the last of the top-level names (all of them in
// names) against the others in lower case, which *lower holds while there
// are at most many and *folded after.
func checkFolded(lower *[]string, folded *map[string][]byte, names [][]byte, many int) error {
	name := names[len(names)-1]
	key := strings.ToLower(string(name))
	if *folded == nil {
		for i, l := range *lower {
			if l == key {
				return fmt.Errorf("members %q and %q differ only in case", names[i], name)
			}
		}
		if *lower = append(*lower, key); len(*lower) <= many {
			return nil
		}
		*folded = make(map[string][]byte, 2*many)
		for i, l := range *lower {
			(*folded)[l] = names[i]
		}
		return nil
	}
	if k, ok := (*folded)[key]; ok {
		return fmt.Errorf("members %q and %q differ only in case", k, name)
	}
	(*folded)[key] = name
	return nil
}
