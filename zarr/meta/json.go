package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is where metadata documents are read as JSON, for every format:
// the tolerance the writers' own readers have (Python's bare NaN, Infinity
// and -Infinity) and the strictness where readers would disagree (repeated
// member names, names differing only in case). Every document goes through
// DecodeObject (attributes through ParseAttributes).

// DecodeObject parses a metadata document into its members, refusing
// documents over MaxDocumentSize, non-JSON and non-objects. Bare NaN,
// Infinity and -Infinity are read as pythonJSON turns them.
func DecodeObject(name string, doc []byte) (map[string]json.RawMessage, error) {
	obj, _, err := decodeObject(name, doc, true)
	return obj, err
}

// decodeObject is DecodeObject that also returns doc as pythonJSON turns
// it; without members, it may return no obj for a document it accepts. A
// usual document is read in one pass (scanObject); the others, and those
// it refuses, are read by decodeObjectSlowly.
func decodeObject(name string, doc []byte, members bool) (map[string]json.RawMessage, []byte, error) {
	if len(doc) > MaxDocumentSize {
		return nil, nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrInvalidMetadata, name, len(doc), MaxDocumentSize)
	}
	scan := scanObject
	if !members {
		scan = func(doc []byte) (map[string]json.RawMessage, scanOutcome) { return nil, checkObject(doc) }
	}
	obj, outcome := scan(doc)
	if outcome == scanPython {
		doc = pythonJSON(doc)
		obj, outcome = scan(doc)
	}
	if outcome == scanned {
		return obj, doc, nil
	}
	doc = pythonJSON(doc)
	obj, err := decodeObjectSlowly(name, doc)
	return obj, doc, err
}

// decodeObjectSlowly is DecodeObject for a document pythonJSON has turned,
// reading it three times: it decides what scanObject leaves to it, and
// says why it refuses a document.
func decodeObjectSlowly(name string, doc []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(doc) {
		return decodeObjectError(name, doc)
	}
	obj, ok := splitObject(doc)
	if !ok {
		return decodeObjectError(name, doc)
	}
	if err := checkMemberNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// decodeObjectError returns why DecodeObject refuses doc, which is not
// valid JSON or not an object (or, should splitObject have refused what
// encoding/json accepts, decodes it as encoding/json does).
func decodeObjectError(name string, doc []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%w: %s is not JSON: %v", ErrInvalidMetadata, name, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrInvalidMetadata, name)
	}
	// Anything but white space after the object is refused (dec.More
	// would miss a stray "}" or "]").
	if rest := doc[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, fmt.Errorf("%w: %s has data after the JSON object", ErrInvalidMetadata, name)
	}
	if err := checkMemberNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// splitObject returns the members of doc, which must be valid JSON, as
// encoding/json decodes them into a map[string]json.RawMessage (the last of
// repeated names wins), in one pass over doc: decoding metadata documents
// was the largest cost of listing a mount's directories. ok is false when
// doc is not an object. The values share one copy of doc.
func splitObject(doc []byte) (obj map[string]json.RawMessage, ok bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	doc = bytes.Clone(doc)
	obj = make(map[string]json.RawMessage, 8)
	if i = skipSpace(doc, i+1); i < len(doc) && doc[i] == '}' {
		return obj, true
	}
	for i < len(doc) && doc[i] == '"' {
		end := valueEnd(doc, i)
		key, ok := memberName(doc[i:end])
		if !ok {
			return nil, false
		}
		if i = skipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
		end = valueEnd(doc, i)
		if end <= i {
			return nil, false
		}
		obj[key] = json.RawMessage(doc[i:end:end])
		if i = skipSpace(doc, end); i >= len(doc) {
			return nil, false
		}
		if doc[i] == '}' {
			return obj, true
		}
		if doc[i] != ',' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
	}
	return nil, false
}

// skipSpace returns the index of the first byte of doc from i on that is
// not JSON white space.
func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
}

// valueEnd returns the index just after the JSON value of valid JSON that
// starts at doc[i], or at most len(doc).
func valueEnd(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"':
		for j := i + 1; j < len(doc); j++ {
			switch doc[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(doc)
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				j = valueEnd(doc, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(doc)
	default: // a number, true, false or null
		j := i
		for j < len(doc) && !strings.ContainsRune(",}] \t\r\n", rune(doc[j])) {
			j++
		}
		return j
	}
}

// memberName returns the string a quoted member name of valid JSON stands
// for, as encoding/json reads it (escapes decoded, invalid UTF-8 replaced).
func memberName(quoted []byte) (string, bool) {
	if len(quoted) < 2 {
		return "", false
	}
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// checkMemberNames refuses a JSON document (already known to be valid) in
// which an object, at any depth, names a member twice, or whose top-level
// object has two members whose names differ only in case ("shape" and
// "Shape"). Readers disagree on which of two such members counts (Go's
// encoding/json even matches struct fields case-insensitively), so the
// document means different things to different implementations.
//
// doc must be valid JSON (DecodeObject checks that first): the scan below
// only tells member names from values and strings from the rest.
func checkMemberNames(doc []byte) error {
	// One frame per open container. Frames are reused by depth, and so
	// are their name lists, so a large document costs few allocations.
	type frame struct {
		object bool
		names  [][]byte            // the member names so far, for small objects
		set    map[string]struct{} // all of them, once there are many
	}
	const manyNames = 16
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
					s, ok := memberName(doc[i : j+1])
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

// pythonJSON returns doc with the bare NaN, Infinity and -Infinity that
// Python's json module writes for non-finite floats (zarr-python 2, GDAL
// and netCDF-c write them in attributes and fill values) turned into the
// strings "NaN", "Infinity" and "-Infinity", the way Zarr spells them in
// fill values (and zarr-python 3 in attributes). Only values are turned:
// a bare token where a member name belongs, or any other spelling
// ("nan", "+Infinity"), stays as it is and is refused as not JSON, as
// Python refuses it. doc itself is returned when nothing is turned.
func pythonJSON(doc []byte) []byte {
	if !bytes.Contains(doc, []byte("NaN")) && !bytes.Contains(doc, []byte("Infinity")) {
		return doc
	}
	var out []byte // nil until a token is turned
	done := 0      // doc[:done] is in out
	var objects []bool
	wantName := false
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; c {
		case '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			wantName = false
		case '{', '[':
			objects = append(objects, c == '{')
			wantName = c == '{'
		case '}', ']':
			if len(objects) > 0 {
				objects = objects[:len(objects)-1]
			}
			wantName = false
		case ',':
			wantName = len(objects) > 0 && objects[len(objects)-1]
		case ':':
			wantName = false
		case 'N', 'I', '-':
			if wantName || !valueStart(doc, i) {
				continue
			}
			for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
				if bytes.HasPrefix(doc[i:], []byte(tok)) {
					out = append(append(append(append(out, doc[done:i]...), '"'), tok...), '"')
					i += len(tok) - 1
					done = i + 1
					break
				}
			}
		}
	}
	if out == nil {
		return doc
	}
	return append(out, doc[done:]...)
}

// valueStart reports whether a value can begin at doc[i]: the last byte
// before it that is not white space opens a list, follows a member name or
// separates items, or there is none.
func valueStart(doc []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch doc[i] {
		case ' ', '\t', '\r', '\n':
		case '[', ':', ',':
			return true
		default:
			return false
		}
	}
	return true
}
