package pyjson

import (
	"bytes"
	"slices"
	"sync"
)

// This file is Scan, one pass over a document that checks the JSON and
// the member names and splits the top-level members at once, where the
// general path (json.Valid, Split, CheckNames) reads the document three
// times: decoding metadata documents was the largest cost of listing a
// mount's directories. It takes only documents it is sure of, the usual
// ones; any other (not JSON, not an object, a repeated name, a member name
// with an escape or a byte beyond ASCII, deep nesting) is left to the
// general path, which decides and says why. What it returns for a
// document it takes is what the general path returns for it.

// Outcome is what Scan made of a document.
type Outcome int

const (
	Scanned Outcome = iota // taken: the members were given
	Python                 // a bare NaN or Infinity where a value belongs: Turn the document and scan again
	Other                  // anything else: left to the general path
)

// manyNames is how many member names an object has before the check of
// repeated names sorts them rather than compares each with the others.
const manyNames = 16

// A Member is a top-level member of a document Scan takes: its name
// (plain ASCII, a sub-slice of the document, at NameAt) and its value,
// doc[Start:End].
type Member struct {
	Name               []byte
	NameAt, Start, End int
}

// Scan checks doc in one pass; when it takes it (Scanned), each is then
// called for its n top-level members in document order (n, the same at
// each call, is for sizing what each fills). doc is then valid JSON that
// CheckNames accepts.
func Scan(doc []byte, each func(n int, m Member)) Outcome {
	s := scanners.Get().(*scanner)
	defer s.release()
	outcome := s.scan(doc)
	if outcome == Scanned && each != nil {
		for _, m := range s.members {
			each(len(s.members), m)
		}
	}
	return outcome
}

// LookupFold scans doc and returns the value of its last top-level member
// whose name equals name but for the case of ASCII letters (as
// encoding/json matches a struct field's name), or nil when it has none.
// A document Scan does not take is left to the caller (outcome).
func LookupFold(doc []byte, name string) (value []byte, outcome Outcome) {
	s := scanners.Get().(*scanner)
	defer s.release()
	if outcome = s.scan(doc); outcome != Scanned {
		return nil, outcome
	}
	for _, m := range s.members {
		if asciiEqualFold(m.Name, []byte(name)) {
			value = doc[m.Start:m.End]
		}
	}
	return value, Scanned
}

// scanner is the state of Scan.
type scanner struct {
	doc    []byte
	python bool
	// lenient is SkipValue's mode: Python's bare tokens are values, any
	// string is a member name, and names are neither checked nor kept.
	lenient bool
	// names holds the member names of the open objects, the innermost's
	// last.
	names   [][]byte
	members []Member
}

// scan checks doc, leaving its top-level members in s.members.
func (s *scanner) scan(doc []byte) Outcome {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return Other
	}
	s.doc = doc
	end, ok := s.object(i, 1)
	if !ok || SkipSpace(doc, end) != len(doc) {
		if s.python {
			return Python
		}
		return Other
	}
	return Scanned
}

// scanners holds scanners for reuse: their lists stay allocated.
var scanners = sync.Pool{New: func() any {
	return &scanner{names: make([][]byte, 0, 2*manyNames), members: make([]Member, 0, manyNames)}
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
		end, _, ok := ScanString(doc, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		end, ok, python := Number(doc, i)
		if python && s.lenient {
			return literal(doc, i, "-Infinity")
		}
		s.python = s.python || python
		return end, ok
	case c == 't':
		return literal(doc, i, "true")
	case c == 'f':
		return literal(doc, i, "false")
	case c == 'n':
		return literal(doc, i, "null")
	case c == 'N' && s.lenient:
		return literal(doc, i, "NaN")
	case c == 'I' && s.lenient:
		return literal(doc, i, "Infinity")
	case c == 'N' || c == 'I':
		s.python = true
	}
	return i, false
}

// object checks the object at doc[i] == '{', the depth-th open container.
func (s *scanner) object(i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	doc := s.doc
	i = SkipSpace(doc, i+1)
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
		end, plain, ok := ScanString(doc, i)
		if !ok || !plain && !s.lenient {
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
		if !s.lenient {
			s.names = append(s.names, name)
		}
		if i = SkipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return i, false
		}
		start := SkipSpace(doc, i+1)
		if i, ok = s.value(start, depth); !ok {
			return i, false
		}
		if top && !s.lenient {
			s.members = append(s.members, Member{name, nameAt, start, i})
		}
		if i = SkipSpace(doc, i); i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case '}':
			if len(s.names)-first > manyNames && repeatedName(s.names[first:], top) {
				return i, false
			}
			return i + 1, true
		case ',':
			i = SkipSpace(doc, i+1)
		default:
			return i, false
		}
	}
}

// array checks the array at doc[i] == '[', the depth-th open container.
func (s *scanner) array(i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	doc := s.doc
	i = SkipSpace(doc, i+1)
	if i < len(doc) && doc[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = s.value(i, depth); !ok {
			return i, false
		}
		if i = SkipSpace(doc, i); i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case ']':
			return i + 1, true
		case ',':
			i = SkipSpace(doc, i+1)
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
