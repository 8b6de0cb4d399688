package meta

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// This file is DecodeObject's one pass over a document: it checks the
// JSON, the member names and splits the top-level members at once, where
// the general path (json.Valid, splitObject, checkMemberNames) reads the
// document three times. It takes only documents it is sure of, the usual
// ones; any other (not JSON, not an object, a repeated name, a member name
// with an escape or a byte beyond ASCII, deep nesting) is left to the
// general path, which decides and says why. What it returns for a
// document it takes is what the general path returns for it.

// scanOutcome is what scanObject made of a document.
type scanOutcome int

const (
	scanned    scanOutcome = iota // the members are returned
	scanPython                    // a bare NaN or Infinity where a value belongs
	scanOther                     // anything else: left to the general path
)

// maxScanDepth is the nesting beyond which scanObject leaves a document
// to the general path (encoding/json has its own limit).
const maxScanDepth = 200

// manyNames is how many member names an object has before the check of
// repeated names sorts them rather than compares each with the others.
const manyNames = 16

// scanner is the state of scanObject.
type scanner struct {
	doc    []byte
	python bool
	// names holds the member names of the open objects, the innermost's
	// last.
	names   [][]byte
	members []scanMember
}

// scanMember is a top-level member: its name (at nameAt in the
// document), and where its value is.
type scanMember struct {
	name               []byte
	nameAt, start, end int
}

// scanObject checks and splits doc in one pass. When it returns scanned,
// obj holds the top-level members as splitObject returns them for doc
// (the values sharing one copy of doc), and doc is valid JSON that
// checkMemberNames accepts.
func scanObject(doc []byte) (obj map[string]json.RawMessage, outcome scanOutcome) {
	s := scanners.Get().(*scanner)
	defer s.release()
	if outcome = s.scan(doc); outcome != scanned {
		return nil, outcome
	}
	doc = bytes.Clone(doc)
	obj = make(map[string]json.RawMessage, len(s.members))
	for _, m := range s.members {
		obj[memberKey(m.name)] = json.RawMessage(doc[m.start:m.end:m.end])
	}
	return obj, scanned
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
		if outcome == scanPython {
			list, outcome = scanMembers(pythonJSON(doc))
		}
		if outcome == scanned {
			return members{list: list}, nil
		}
	}
	obj, err := DecodeObject(name, doc)
	return members{m: obj}, err
}

// scanMembers is scanObject returning the members in a list, their names
// and values sharing one copy of doc.
func scanMembers(doc []byte) ([]member, scanOutcome) {
	s := scanners.Get().(*scanner)
	defer s.release()
	if outcome := s.scan(doc); outcome != scanned {
		return nil, outcome
	}
	doc = bytes.Clone(doc)
	list := make([]member, len(s.members))
	for i, m := range s.members {
		list[i] = member{doc[m.nameAt : m.nameAt+len(m.name) : m.nameAt+len(m.name)], json.RawMessage(doc[m.start:m.end:m.end])}
	}
	return list, scanned
}

// checkObject is scanObject for a caller that needs no members.
func checkObject(doc []byte) scanOutcome {
	s := scanners.Get().(*scanner)
	defer s.release()
	return s.scan(doc)
}

// scan checks doc, leaving its top-level members in s.members.
func (s *scanner) scan(doc []byte) scanOutcome {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return scanOther
	}
	s.doc = doc
	end, ok := s.object(i, 1)
	if !ok || skipSpace(doc, end) != len(doc) {
		if s.python {
			return scanPython
		}
		return scanOther
	}
	return scanned
}

// scanners holds scanners for reuse: their lists stay allocated.
var scanners = sync.Pool{New: func() any {
	return &scanner{names: make([][]byte, 0, 2*manyNames), members: make([]scanMember, 0, manyNames)}
}}

// release returns s, emptied, to scanners (a large document's lists
// are dropped).
func (s *scanner) release() {
	if cap(s.names) > 1024 || cap(s.members) > 1024 {
		return
	}
	clear(s.names[:cap(s.names)])
	clear(s.members[:cap(s.members)])
	*s = scanner{names: s.names[:0], members: s.members[:0]}
	scanners.Put(s)
}

// value checks the value at doc[i] (not white space), at the given depth
// of nesting, and returns the index just after it.
func (s *scanner) value(i, depth int) (int, bool) {
	doc := s.doc
	if i >= len(doc) {
		return i, false
	}
	switch c := doc[i]; {
	case c == '{':
		return s.object(i, depth+1)
	case c == '[':
		return s.array(i, depth+1)
	case c == '"':
		end, _, ok := scanString(doc, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number(i)
	case c == 't':
		return literal(doc, i, "true")
	case c == 'f':
		return literal(doc, i, "false")
	case c == 'n':
		return literal(doc, i, "null")
	case c == 'N' || c == 'I':
		s.python = true
	}
	return i, false
}

// literal checks that word starts at doc[i].
func literal(doc []byte, i int, word string) (int, bool) {
	if bytes.HasPrefix(doc[i:], []byte(word)) {
		return i + len(word), true
	}
	return i, false
}

// object checks the object at doc[i] == '{', the depth-th open container.
func (s *scanner) object(i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return i, false
	}
	doc := s.doc
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return i + 1, true
	}
	first := len(s.names) // this object's names are s.names[first:]
	defer func() { s.names = s.names[:first] }()
	top := depth == 1
	for {
		if i >= len(doc) || doc[i] != '"' {
			return i, false
		}
		end, plain, ok := scanString(doc, i)
		if !ok || !plain {
			return i, false
		}
		nameAt, name := i+1, doc[i+1:end-1]
		// A few names are checked as they come, many all at once at
		// the end.
		if len(s.names)-first < manyNames {
			for _, n := range s.names[first:] {
				if top && asciiEqualFold(n, name) || bytes.Equal(n, name) {
					return i, false
				}
			}
		}
		s.names = append(s.names, name)
		if i = skipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return i, false
		}
		start := skipSpace(doc, i+1)
		if i, ok = s.value(start, depth); !ok {
			return i, false
		}
		if top {
			s.members = append(s.members, scanMember{name, nameAt, start, i})
		}
		if i = skipSpace(doc, i); i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case '}':
			if len(s.names)-first > manyNames && repeatedName(s.names[first:], top) {
				return i, false
			}
			return i + 1, true
		case ',':
			i = skipSpace(doc, i+1)
		default:
			return i, false
		}
	}
}

// repeatedName reports whether names (plain ASCII) has a name twice, or
// with fold two that differ only in case. It sorts names.
func repeatedName(names [][]byte, fold bool) bool {
	cmp := bytes.Compare
	if fold {
		cmp = asciiCompareFold
	}
	slices.SortFunc(names, cmp)
	for i := 1; i < len(names); i++ {
		if cmp(names[i-1], names[i]) == 0 {
			return true
		}
	}
	return false
}

// asciiCompareFold compares the ASCII strings a and b as their lower
// case.
func asciiCompareFold(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return int(x) - int(y)
		}
	}
	return len(a) - len(b)
}

// plainArrayDimensions returns what dimensionNamesFromAttrs returns for
// attrs, when attrs is an object scan takes whose _ARRAY_DIMENSIONS, if
// it has one, is a list of plain strings: ok is false for anything else,
// which dimensionNamesFromAttrs reads with encoding/json.
func plainArrayDimensions(attrs []byte, rank int) (dims []string, ok bool) {
	const name = "_ARRAY_DIMENSIONS"
	s := scanners.Get().(*scanner)
	defer s.release()
	if s.scan(attrs) != scanned {
		return nil, false
	}
	var raw []byte
	for _, m := range s.members {
		// encoding/json matches a struct field's name in any case.
		if asciiEqualFold(m.name, []byte(name)) {
			raw = attrs[m.start:m.end]
		}
	}
	if raw == nil {
		return nil, true
	}
	if raw[0] != '[' {
		return nil, false
	}
	n := 0
	i := skipSpace(raw, 1)
	for raw[i] != ']' {
		end, plain, ok := scanString(raw, i)
		if !ok || !plain {
			return nil, false
		}
		n++
		if i = skipSpace(raw, end); raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	if n != rank {
		return nil, true
	}
	dims = make([]string, 0, n)
	for i := skipSpace(raw, 1); raw[i] != ']'; {
		end, _, _ := scanString(raw, i)
		dims = append(dims, string(raw[i+1:end-1]))
		if i = skipSpace(raw, end); raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return dims, true
}

// asciiEqualFold reports whether the ASCII strings a and b are equal
// but for the case of letters.
func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x != y && (x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z') {
			return false
		}
	}
	return true
}

// array checks the array at doc[i] == '[', the depth-th open container.
func (s *scanner) array(i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return i, false
	}
	doc := s.doc
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = s.value(i, depth); !ok {
			return i, false
		}
		if i = skipSpace(doc, i); i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case ']':
			return i + 1, true
		case ',':
			i = skipSpace(doc, i+1)
		default:
			return i, false
		}
	}
}

// scanString checks the string at doc[i] and returns the index after
// it; plain is set when it holds only ASCII and no escape.
func scanString(doc []byte, i int) (end int, plain, ok bool) {
	if i >= len(doc) || doc[i] != '"' {
		return i, false, false
	}
	plain = true
	for j := i + 1; j < len(doc); j++ {
		switch c := doc[j]; {
		case c == '"':
			return j + 1, plain, true
		case c < 0x20:
			return j, false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if j++; j >= len(doc) {
				return j, false, false
			}
			switch doc[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(doc) {
					return j, false, false
				}
				for _, h := range doc[j+1 : j+5] {
					if !isHex(h) {
						return j, false, false
					}
				}
				j += 4
			default:
				return j, false, false
			}
		}
	}
	return len(doc), false, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number checks the JSON number at doc[i] and returns the index after it.
func (s *scanner) number(i int) (int, bool) {
	doc := s.doc
	j := i
	if doc[j] == '-' {
		if j++; j >= len(doc) {
			return j, false
		}
		if doc[j] == 'I' {
			s.python = true
			return j, false
		}
	}
	switch {
	case doc[j] == '0':
		j++
	case doc[j] >= '1' && doc[j] <= '9':
		j = digits(doc, j)
	default:
		return j, false
	}
	if j < len(doc) && doc[j] == '.' {
		k := digits(doc, j+1)
		if k == j+1 {
			return k, false
		}
		j = k
	}
	if j < len(doc) && (doc[j] == 'e' || doc[j] == 'E') {
		j++
		if j < len(doc) && (doc[j] == '+' || doc[j] == '-') {
			j++
		}
		k := digits(doc, j)
		if k == j {
			return k, false
		}
		j = k
	}
	return j, true
}

// digits returns the index of the first byte of doc from i on that is not
// a decimal digit.
func digits(doc []byte, i int) int {
	for i < len(doc) && doc[i] >= '0' && doc[i] <= '9' {
		i++
	}
	return i
}

// memberKey returns name as a string, without allocating for the member
// names metadata documents usually have and some of their usual values.
func memberKey(name []byte) string {
	switch string(name) {
	case "zarr_format":
		return "zarr_format"
	case "shape":
		return "shape"
	case "chunks":
		return "chunks"
	case "dtype":
		return "dtype"
	case "compressor":
		return "compressor"
	case "fill_value":
		return "fill_value"
	case "filters":
		return "filters"
	case "order":
		return "order"
	case "dimension_separator":
		return "dimension_separator"
	case "id":
		return "id"
	case "node_type":
		return "node_type"
	case "data_type":
		return "data_type"
	case "chunk_grid":
		return "chunk_grid"
	case "chunk_key_encoding":
		return "chunk_key_encoding"
	case "codecs":
		return "codecs"
	case "attributes":
		return "attributes"
	case "dimension_names":
		return "dimension_names"
	case "storage_transformers":
		return "storage_transformers"
	case "_ARRAY_DIMENSIONS":
		return "_ARRAY_DIMENSIONS"
	case "metadata":
		return "metadata"
	// numcodecs' members, and values zarr-python writes.
	case "blocksize":
		return "blocksize"
	case "clevel":
		return "clevel"
	case "cname":
		return "cname"
	case "shuffle":
		return "shuffle"
	case "level":
		return "level"
	case "blosc":
		return "blosc"
	case "zlib":
		return "zlib"
	case "zstd":
		return "zstd"
	case "lz4":
		return "lz4"
	case "C":
		return "C"
	case "F":
		return "F"
	case ".":
		return "."
	case "/":
		return "/"
	case "<f4":
		return "<f4"
	case "<f8":
		return "<f8"
	case "<i4":
		return "<i4"
	case "<i8":
		return "<i8"
	case "<i2":
		return "<i2"
	case "<u2":
		return "<u2"
	case "<u4":
		return "<u4"
	case "<u8":
		return "<u8"
	case "|u1":
		return "|u1"
	case "|i1":
		return "|i1"
	case "|b1":
		return "|b1"
	case "<c8":
		return "<c8"
	}
	return string(name)
}
