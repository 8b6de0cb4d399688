package meta

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// This file is where metadata documents are read as JSON, for every format,
// through the one reader, package pyjson: the tolerance the writers' own
// readers have (Python's bare NaN, Infinity and -Infinity) and the
// strictness where readers would disagree (repeated member names, names
// differing only in case). Every document goes through DecodeObject
// (attributes through ParseAttributes).

// DecodeObject parses a metadata document into its members, refusing
// documents over MaxDocumentSize, non-JSON and non-objects. Bare NaN,
// Infinity and -Infinity are read as pyjson.Turn turns them.
func DecodeObject(name string, doc []byte) (map[string]json.RawMessage, error) {
	obj, _, err := decodeObject(name, doc, true)
	return obj, err
}

// decodeObject is DecodeObject that also returns doc as pyjson.Turn turns
// it; without members, it may return no obj for a document it accepts. A
// usual document is read in one pass (pyjson.Scan); the others, and those
// it refuses, are read by decodeObjectSlowly.
func decodeObject(name string, doc []byte, members bool) (map[string]json.RawMessage, []byte, error) {
	if len(doc) > MaxDocumentSize {
		return nil, nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrInvalidMetadata, name, len(doc), MaxDocumentSize)
	}
	scan := scanObject
	if !members {
		scan = func(doc []byte) (map[string]json.RawMessage, pyjson.Outcome) { return nil, pyjson.Scan(doc, nil) }
	}
	obj, outcome := scan(doc)
	if outcome == pyjson.Python {
		doc = pyjson.Turn(doc)
		obj, outcome = scan(doc)
	}
	if outcome == pyjson.Scanned {
		return obj, doc, nil
	}
	doc = pyjson.Turn(doc)
	obj, err := decodeObjectSlowly(name, doc)
	return obj, doc, err
}

// decodeObjectSlowly is DecodeObject for a document pyjson.Turn has
// turned, reading it three times: it decides what pyjson.Scan leaves to
// it, and says why it refuses a document.
func decodeObjectSlowly(name string, doc []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(doc) {
		return decodeObjectError(name, doc)
	}
	obj, ok := pyjson.Split(doc)
	if !ok {
		return decodeObjectError(name, doc)
	}
	if err := pyjson.CheckNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// decodeObjectError returns why DecodeObject refuses doc, which is not
// valid JSON or not an object (or, should pyjson.Split have refused what
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
	if err := pyjson.CheckNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// scanObject is pyjson.Scan returning the top-level members in a map as
// pyjson.Split returns them, the values sharing one copy of doc and the
// usual names interned (memberKey).
func scanObject(doc []byte) (obj map[string]json.RawMessage, outcome pyjson.Outcome) {
	var c []byte
	outcome = pyjson.Scan(doc, func(n int, m pyjson.Member) {
		if c == nil {
			c = bytes.Clone(doc)
			obj = make(map[string]json.RawMessage, n)
		}
		obj[memberKey(m.Name)] = json.RawMessage(c[m.Start:m.End:m.End])
	})
	if outcome == pyjson.Scanned && obj == nil {
		obj = map[string]json.RawMessage{}
	}
	return obj, outcome
}

// member is a top-level member of a document: its name and value.
type member struct {
	name  []byte
	value json.RawMessage
}

// members is the top-level members of a document: in a map (DecodeObject's)
// or in a list (scanMembers').
type members struct {
	m    map[string]json.RawMessage
	list []member
}

// lookup returns the member name and whether there is one.
func (o members) lookup(name string) (json.RawMessage, bool) {
	if o.m != nil {
		v, ok := o.m[name]
		return v, ok
	}
	for _, m := range o.list {
		if string(m.name) == name {
			return m.value, true
		}
	}
	return nil, false
}

// get returns the member name, or nil.
func (o members) get(name string) json.RawMessage {
	v, _ := o.lookup(name)
	return v
}

// decodeMembers is DecodeObject returning members: a usual document is
// read in one pass into a list of members (no map built), any other by
// DecodeObject.
func decodeMembers(name string, doc []byte) (members, error) {
	if len(doc) <= MaxDocumentSize {
		list, outcome := scanMembers(doc)
		if outcome == pyjson.Python {
			list, outcome = scanMembers(pyjson.Turn(doc))
		}
		if outcome == pyjson.Scanned {
			return members{list: list}, nil
		}
	}
	obj, err := DecodeObject(name, doc)
	return members{m: obj}, err
}

// scanMembers is pyjson.Scan returning the members in a list, their names
// and values sharing one copy of doc.
func scanMembers(doc []byte) ([]member, pyjson.Outcome) {
	var c []byte
	var list []member
	outcome := pyjson.Scan(doc, func(n int, m pyjson.Member) {
		if c == nil {
			c = bytes.Clone(doc)
			list = make([]member, 0, n)
		}
		end := m.NameAt + len(m.Name)
		list = append(list, member{c[m.NameAt:end:end], json.RawMessage(c[m.Start:m.End:m.End])})
	})
	if outcome == pyjson.Scanned && list == nil {
		list = []member{}
	}
	return list, outcome
}

// plainArrayDimensions returns what dimensionNamesFromAttrs returns for
// attrs, when attrs is an object pyjson.Scan takes whose
// _ARRAY_DIMENSIONS, if it has one, is a list of plain strings: ok is
// false for anything else, which dimensionNamesFromAttrs reads with
// encoding/json.
func plainArrayDimensions(attrs []byte, rank int) (dims []string, ok bool) {
	// encoding/json matches a struct field's name in any case.
	raw, outcome := pyjson.LookupFold(attrs, "_ARRAY_DIMENSIONS")
	if outcome != pyjson.Scanned {
		return nil, false
	}
	if raw == nil {
		return nil, true
	}
	if raw[0] != '[' {
		return nil, false
	}
	n := 0
	i := pyjson.SkipSpace(raw, 1)
	for raw[i] != ']' {
		end, plain, ok := pyjson.ScanString(raw, i)
		if !ok || !plain {
			return nil, false
		}
		n++
		if i = pyjson.SkipSpace(raw, end); raw[i] == ',' {
			i = pyjson.SkipSpace(raw, i+1)
		}
	}
	if n != rank {
		return nil, true
	}
	dims = make([]string, 0, n)
	for i := pyjson.SkipSpace(raw, 1); raw[i] != ']'; {
		end, _, _ := pyjson.ScanString(raw, i)
		dims = append(dims, string(raw[i+1:end-1]))
		if i = pyjson.SkipSpace(raw, end); raw[i] == ',' {
			i = pyjson.SkipSpace(raw, i+1)
		}
	}
	return dims, true
}
